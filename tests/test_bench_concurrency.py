"""bench/concurrency.py stays runnable: a tiny run prints its table and writes its JSON.

Latency itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_concurrency_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "concurrency.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "concurrency.py"), "--claims", "300",
         "--steady-claims", "200", "--repeats", "1", "--dir", str(tmp_path / "stores"),
         "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| measure |" in result.stdout
    rows = {row["measure"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["reads completed during the sweep"]["median"] >= 0
    assert "read p99 during the sweep" in rows
    steady = rows["consolidate(), steady state"]
    assert steady["samples"] and steady["target"] == "<= 300"
    assert "merged" in rows["consolidate(), cold sweep"]["note"]
