"""bench/multihop.py stays runnable, and its race stays a race: at a tiny size the loop
reports a chain that was never true and traversal reports none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_multihop_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "multihop.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "multihop.py"), "--chains", "8",
         "--graph-size", "300", "--latency-queries", "3", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| strategy |" in result.stdout
    report = json.loads(out.read_text())
    assert [row["strategy"] for row in report["recall"]] == [
        "search loop", "traversal", "traversal, min_hops=d", "traversal, predicates"
    ]
    predicates = report["recall"][-1]
    assert predicates["recall@2 hops"] == predicates["recall@3 hops"] == 100.0
    race = report["race"]
    assert race["search loop: false chains"] == race["pairs"] == 8
    assert race["traversal: false chains"] == race["traversal after the write"] == 0
    assert report["latency"]["claims"] == 300
