"""bench/transfer.py stays runnable: a tiny run prints its table and writes its JSON.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_transfer_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "transfer.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "transfer.py"), "--claims", "300",
         "--repeats", "1", "--dir", str(tmp_path / "files"), "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| measure |" in result.stdout
    rows = {row["measure"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["export_jsonl(mem, path)"]["target"] == "<= 10"
    assert rows["import_jsonl(fresh, path)"]["passed"] is True
    assert "300 claims" in rows["export_jsonl(mem, path)"]["note"]
    assert rows["round trip: record lines identical"]["passed"] is True
