"""bench/add_statements.py stays runnable, and counts what one add() asks SQLite.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import add_statements  # noqa: E402 - the bench folder is put on the path just above


def test_a_run_of_one_line_is_one_statement() -> None:
    lines = ["BEGIN", "INSERT a", "INSERT a", "INSERT a", "INSERT b", "COMMIT"]
    assert add_statements._statements(lines) == (4, 2)
    assert add_statements._statements([]) == (0, 0)


def test_each_kind_of_turn_is_counted(tmp_path: Path) -> None:
    rows = dict((kind, (statements, triggers)) for kind, statements, triggers in
                add_statements.count_statements(str(tmp_path / "s.db"), 200, 10))
    assert list(rows) == list(add_statements.KINDS)
    assert rows["filler"] == (1, 0)  # a copy of a turn said just before: its lookup alone
    # a stored turn opens and commits a transaction; a fact writes a claim on top
    assert rows["question"][0] >= 4 and rows["question"] == rows["remark"]
    assert rows["fact (lives_in)"][0] > rows["question"][0]


def test_the_script_prints_both_tables(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "add_statements.py"), "--claims", "200",
         "--warm", "10", "--history", "0,3", "--reads", "5", "--repeats", "1"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| the mix's mean |" in result.stdout
    assert "| 3 |" in result.stdout  # the slot read's row for 3 ended claims
