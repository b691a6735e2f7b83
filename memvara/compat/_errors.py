"""The two errors the mem0 shim adds to memvara's tree.

``MemoryNotFoundError`` is memvara's ``ClaimNotFoundError`` and, because mem0 raises
``ValueError`` for an unknown memory id, a ``ValueError`` too: code written against mem0
(``except ValueError``) and code written against memvara (``except ClaimNotFoundError``)
both catch it. ``NoTranslationError`` is raised by a mem0 call or argument that memvara
cannot honour without meaning something else, and says why.
"""

from __future__ import annotations

from .. import ClaimNotFoundError, MemvaraError

__all__ = ["MemoryNotFoundError", "NoTranslationError"]


class MemoryNotFoundError(ClaimNotFoundError, ValueError):
    """No memory with this id is visible in the call's scope (mem0 raises ``ValueError``)."""

    code = "memory_not_found"

    def __init__(self, memory_id: str) -> None:
        self.claim_id = self.memory_id = memory_id
        self.argument = "memory_id"
        MemvaraError.__init__(self, f"memory_id: no memory {memory_id!r} is visible in this scope")


class NoTranslationError(MemvaraError, NotImplementedError):
    """A mem0 call or argument with no honest memvara counterpart; the message says why
    and what to use instead."""

    code = "no_translation"

    def __init__(self, call: str, reason: str) -> None:
        self.call = call
        self.reason = reason
        super().__init__(f"{call}: {reason}")
