"""bench/mem0_real.py and bench/mem0_compat.py stay runnable against the real mem0ai
(the bench extra; skipped without it): tiny runs print their tables and write JSON.

Speed is measured by running the scripts, never asserted here; what is asserted is what
the harness establishes whatever the machine: the call counts and the final states."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(script: str, *args: str) -> str:
    pytest.importorskip("mem0", reason="mem0ai (the bench extra) is not installed")
    result = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args],
                            capture_output=True, text=True, timeout=600, check=True)
    return result.stdout


def test_the_mem0_comparison_runs_once(tmp_path: Path) -> None:
    out = tmp_path / "real.json"
    printed = run("mem0_real.py", "--runs", "1", "--json", str(out))
    assert "| metric | mem0 " in printed
    rows = {r["metric"]: r["values"] for r in json.loads(out.read_text())["rows"]}
    assert rows["model calls on the write path"][0] == "105"  # mem0: one call a turn
    assert rows["model calls on the write path"][2] == "1"  # memvara: one batched call
    assert rows["current values correct"][1:] == ["10 / 10", "10 / 10"]
    assert rows["stale values left live"][1:] == ["0", "0"]
    assert rows["live rows"][1:] == ["10", "10"]
    assert rows["packages installed"][1] == "2"


def test_the_compatibility_costs_run_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "compat.json"
    printed = run("mem0_compat.py", "--rows", "600", "--calls", "10", "--repeats", "1",
                  "--json", str(out))
    assert "| measure |" in printed
    rows = {r["measure"]: r for r in json.loads(out.read_text())["rows"]}
    assert "600 rows (360 ADD, 180 UPDATE, 60 DELETE)" in rows["import_mem0(), fresh file store (s)"]["note"]
    assert rows["import_mem0() of the same file again (s)"]["note"] == "changes nothing"
