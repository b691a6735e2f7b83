"""The adapters' package is an edge: importing memvara, or ``memvara.integrations``,
imports no agent framework, and every handle on one memory shares the one predicate
registry the adapters declare their predicates in."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from memvara import AsyncMemvara, Memvara

FRAMEWORKS = ("langchain_core", "llama_index", "langgraph", "crewai", "agents", "pydantic_ai")


def test_importing_memvara_and_its_integrations_package_imports_no_framework() -> None:
    code = f"""
        import sys
        import memvara
        import memvara.integrations
        print(sorted({{m.split(".")[0] for m in sys.modules}} & set({FRAMEWORKS!r})))
    """
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_every_handle_on_one_memory_shares_its_registry(mem: Memvara) -> None:
    scoped = mem.scope(user="ana")
    assert scoped.registry is mem.registry
    wrapped = AsyncMemvara(mem)
    assert wrapped.registry is mem.registry
    assert wrapped.scope(user="ana").registry is mem.registry
