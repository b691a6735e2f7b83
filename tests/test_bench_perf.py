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
    assert any(m.startswith("add()") for m in measures)


def test_the_telemetry_control_has_no_emission_points_and_still_runs(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("telemetry_cost", ROOT / "bench" / "telemetry_cost.py")
    assert spec is not None and spec.loader is not None
    telemetry_cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(telemetry_cost)
    assert telemetry_cost.build_control(tmp_path) >= 6
    control = (tmp_path / "memvara" / "_ingest.py").read_text()
    assert ".record(" not in control  # every emission is gone
    assert telemetry_cost.run(tmp_path, 30) > 0
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "telemetry_cost.py"), "--runs", "1", "--turns", "30"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "median difference" in result.stdout


def test_the_search_benchmark_runs_at_a_tiny_size() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "search.py"), "--sizes", "40", "--queries", "3"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| 40 |" in result.stdout
