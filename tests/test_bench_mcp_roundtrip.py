"""bench/mcp_roundtrip.py stays runnable: a tiny run prints its table and writes its JSON.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the bench drives the server with the MCP SDK (the dev extra)")

ROOT = Path(__file__).resolve().parents[1]


def test_the_mcp_bench_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "mcp.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mcp_roundtrip.py"), "--size", "50", "--calls", "3",
         "--rounds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True, cwd=ROOT,
    )
    assert "| memory_search | MCP: SDK stdio client -> memvara-mcp | 50 |" in done.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [(r["call"], len(r["samples"])) for r in rows] == [
        ("search()", 3), ("memory_search", 3), ("memory_search", 3),
        ("add()", 3), ("memory_add", 3), ("memory_add", 3)]
    assert all(r["p50"] > 0 and r["p99"] >= r["p50"] for r in rows)


def test_the_bench_refuses_a_size_too_small() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "mcp_roundtrip.py"), "--size", "5"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "--size needs at least 10" in done.stderr
