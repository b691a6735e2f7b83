"""bench/wal_pages.py stays runnable, and reads a write-ahead log's commits right.

Its counts are pages, not timings; speed is never asserted here."""

from __future__ import annotations

import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import wal_pages  # noqa: E402 - the bench folder is put on the path just above


def test_each_commit_is_read_from_the_frame_headers(tmp_path: Path) -> None:
    path = str(tmp_path / "w.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", ("a" * 10_000,))  # an overflow chain
    conn.execute("INSERT INTO t VALUES ('b')")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    wal = (tmp_path / "w.db-wal").read_bytes()
    conn.close()
    commits = wal_pages.wal_commits(wal, size)
    assert len(commits) == 3
    assert len(commits[1]) >= 3 and len(commits[2]) < len(commits[1])
    assert all(1 <= page <= pages for commit in commits for page in commit)
    # a frame not followed by its commit's last one is not a commit
    unfinished = struct.pack(">II", 2, 0) + bytes(16 + size)
    assert wal_pages.wal_commits(wal + unfinished, size) == commits


def test_distinct_pages_a_commit_count_whole_windows() -> None:
    commits = [[1, 2], [1, 3], [4, 1]]  # frames 1 2 1 | 3 4 1
    assert wal_pages.distinct_per_commit(commits, 3) == 5 / 3  # 2 + 3 pages, 3 commits
    assert wal_pages.distinct_per_commit(commits, 6) == 4 / 3
    assert wal_pages.distinct_per_commit(commits, 7) is None


def test_a_scattered_bulk_call_dirties_more_of_the_slot_index(tmp_path: Path) -> None:
    rows = {(r.layout, r.kind): r for layout in ("root", "users")
            for r in wal_pages.count_pages(str(tmp_path / f"{layout}.db"), 2_000, layout,
                                           ["fresh", "bulk"], 1, [1_000])}
    assert rows["root", "fresh"].commits == 500 and rows["root", "bulk"].commits == 1
    fresh = rows["users", "fresh"]
    assert fresh.frames >= fresh.commits and fresh.distinct[1_000] is not None
    # the bulk call's 5,000 claims land in every user's part of the scope-led index
    assert rows["users", "bulk"].by_tree["claims_slot"] > rows["root", "bulk"].by_tree[
        "claims_slot"]


def test_the_script_prints_its_table() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "wal_pages.py"), "--size", "500", "--kinds",
         "revise", "--layouts", "users", "--repeats", "1", "--windows", "100,10000"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| users | 500 | revise | 500 |" in result.stdout
    assert result.stdout.rstrip().endswith(" | - |")  # no 10,000-frame window filled
