"""bench/adapters.py stays runnable: a tiny run prints its table, one row per way in.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_adapters_benchmark_runs_at_a_tiny_size() -> None:
    for module, extra in (("langchain_core", "langchain"), ("llama_index.core", "llama-index"),
                          ("langgraph.store.base", "langgraph")):
        pytest.importorskip(module, reason=f"the {extra} extra is not installed")
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "adapters.py"), "--claims", "200", "--queries", "3"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [
        "search(k=4)", "LangChain MemvaraRetriever.invoke()",
        "LlamaIndex MemvaraRetriever.retrieve()", "LangGraph MemvaraStore.search() (no target)",
        "LangGraph MemvaraStore.search(), 40 items its own (no target)",
    ]
    assert "200 claims, 3 questions each, k=4" in result.stdout
    assert all(row.count("|") == 7 for row in rows)
