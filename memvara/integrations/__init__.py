"""Adapters that let agent frameworks use memvara as their memory.

Each framework has a submodule of its own (``memvara.integrations.langchain``,
``.llamaindex``, ``.langgraph``, ...) behind an extra of the same name. This package
imports none of them, so ``import memvara.integrations`` never pulls in a framework;
each adapter's docstring says what of memvara it keeps and what the framework's
interface makes it lose.
"""
