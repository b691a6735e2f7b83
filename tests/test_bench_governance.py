"""bench/governance.py stays runnable: a tiny run prints its table and writes its JSON.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_governance_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "governance.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "governance.py"), "--claims", "200",
         "--samples", "2", "--calls", "3", "--records", "50", "--prune", "120",
         "--repeats", "1", "--dir", str(tmp_path / "files"), "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| measure |" in result.stdout
    rows = {row["measure"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["verify()"]["note"] == "ok=True, 50 records"
    assert rows["prune(timedelta(days=30))"]["note"] == "120 ended claims moved"
    assert rows["remember(), fresh slot: on / off (wall)"]["target"] == ">= 0.85"
    assert len(rows["remember(), revise ONE slot, log on"]["samples"]) == 2
