"""bench/perf.py stays runnable: a tiny run prints its table and writes its JSON.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_perf_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "perf.py"), "--sizes", "120", "--repeats", "1",
         "--row-budget-s", "0.5", "--sample-cap-s", "0.1", "--dir", str(tmp_path / "stores"),
         "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| measure |" in result.stdout
    rows = json.loads(out.read_text())["rows"]
    measures = {row["measure"] for row in rows}
    assert any(m.startswith("remember()") for m in measures)
    assert any(m.startswith("bytes on disk") for m in measures)
