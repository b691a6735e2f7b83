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


def test_the_write_timings_run_at_a_tiny_size() -> None:
    pytest.importorskip("agents", reason="the openai-agents extra is not installed")
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "adapters.py"), "--writes", "--sizes", "3", "20",
         "--repeats", "2"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    rows = [line.split("|") for line in result.stdout.splitlines() if line.startswith("| `")]
    agents = [(row[1].strip(" `"), row[2].strip()) for row in rows if "Agents" in row[1]]
    assert agents == [
        ("OpenAI Agents MemvaraSession.add_items(), one item", "3"),
        ("OpenAI Agents add_items(), one item, a new session object each", "3"),
        ("OpenAI Agents MemvaraSession.add_items(), one item", "20"),
        ("OpenAI Agents add_items(), one item, a new session object each", "20"),
    ]
    assert "one write per call, 2 calls at each size" in result.stdout
    assert all(len(row) == 6 and float(row[3]) > 0 for row in rows)
