"""bench/add_cost.py stays runnable, and its table's ratios are the medians' ratios.

Its figures are timings; speed is never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import add_cost  # noqa: E402 - the bench folder is put on the path just above


def test_the_table_gives_each_variant_s_median_spread_and_ratio_to_the_base() -> None:
    results = {"on": {"wall": [110.0, 130.0, 120.0], "user": [90.0, 100.0, 80.0]},
               "off": {"wall": [100.0, 90.0, 95.0], "user": [70.0, 75.0, 80.0]},
               "base": {"wall": [100.0, 100.0, 110.0], "user": [80.0, 80.0, 60.0]}}
    lines = add_cost.table(results, "abc123").splitlines()
    assert lines[2] == "| write log on (the default) | 120.0 | 110.0-130.0 | 90.0 | 1.200 | 1.125 |"
    assert lines[3] == "| write log off | 95.0 | 90.0-100.0 | 75.0 | 0.950 | 0.938 |"
    assert lines[4] == "| `abc123` | 100.0 | 100.0-110.0 | 80.0 | 1.000 | 1.000 |"


def test_a_base_with_no_measured_cpu_has_no_ratio() -> None:
    results = {"on": {"wall": [110.0], "user": [0.0]}, "off": {"wall": [100.0], "user": [0.0]},
               "base": {"wall": [100.0], "user": [0.0]}}
    lines = add_cost.table(results, "abc123").splitlines()
    assert lines[2] == "| write log on (the default) | 110.0 | 110.0-110.0 | 0.0 | 1.100 | n/a |"
    assert lines[4] == "| `abc123` | 100.0 | 100.0-100.0 | 0.0 | 1.000 | n/a |"


def test_it_runs_the_three_processes_and_removes_its_worktree() -> None:
    pytest.importorskip("numpy", reason="the bench's environment line names numpy's version")
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "add_cost.py"), "--base", "HEAD", "--rounds", "1",
         "--stores", "1", "--calls", "3", "--warm", "1"],
        check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # a failure shows the bench's (and its child's) traceback
    out = done.stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert [row.split(" | ")[0] for row in rows[1:]] == [
        "| write log on (the default)", "| write log off", "| `HEAD`"]
    # three calls may take less user CPU than one clock tick: the ratio is then n/a
    assert rows[3].endswith(("| 1.000 | 1.000 |", "| 1.000 | n/a |"))
    trees = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], check=True,
                           capture_output=True, text=True).stdout
    assert "memvara-add-base-" not in trees


def test_bad_counts_are_refused() -> None:
    with pytest.raises(SystemExit):
        add_cost.main(["--rounds", "0"])
