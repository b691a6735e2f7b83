"""``memvara demo``: the two-clock story, and its rule for what is already at its path:
re-create its own store, leave everything else alone."""

from __future__ import annotations

import hashlib
import io
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memvara import Memvara, NullLLM
from memvara.cli import main, run_demo
from memvara.cli._demo import DemoPathError, is_demo_store
from tests.cli_story import SCRIPT, run


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_demo_tells_the_two_clock_story(tmp_path: Path) -> None:
    out = io.StringIO()
    path = str(tmp_path / "demo.db")
    stats = run_demo(path, out)
    text = out.getvalue()
    lines = {line.split("  ")[1].strip(): line.rsplit("  ", 1)[1].strip()
             for line in text.splitlines() if line.startswith("  ") and "['" in line}
    # get_all() answers no question: it lists every live claim, her employer included
    assert lines["now (everything true today)"] == "['Lisbon', 'Acme Corp.']"
    assert lines["as_of=Jul (what we believed in July)"] == "['Acme Corp.', 'Berlin']"
    assert lines["valid_at=Jul (the late news is visible)"] == "['Lisbon', 'Acme Corp.']"
    assert "Berlin   ended    valid 2026-01-06 .. 2026-06-24" in text
    assert stats == {"episodes": 0, "claims": 3, "live_claims": 2, "ended_claims": 1,
                     "invalidated": 0, "embeddings": 0}  # three claims: too few to embed yet
    assert Path(path).exists() and is_demo_store(path)
    again = io.StringIO()
    run_demo(path, again)  # its own store: re-created, the same output
    assert again.getvalue() == text


def test_main_runs_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "d.db")
    status, out, _ = run(capsys, "demo", "--path", path)
    assert status == 0 and "stats():" in out
    # a reader in between (read-only, leaving its -shm/-wal) does not make it someone else's
    assert run(capsys, "stats", "--db", path, "--user", "alice")[0] == 0
    status, out, err = run(capsys, "demo", "--path", path)
    assert (status, err) == (0, "") and "stats():" in out


def test_the_demo_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["demo", "--path", "~/demo.db"]) == 0
    assert f"a memory in {tmp_path / 'demo.db'}" in capsys.readouterr().out
    assert (tmp_path / "demo.db").exists()


def test_a_store_with_more_than_the_story_is_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "demo.db"
    run_demo(str(path), io.StringIO())
    with Memvara(str(path), user="alice", llm=NullLLM()) as mem:
        mem.remember("alice", "likes", "tea")  # now it holds the user's own fact too
    before = digest(path)
    status, out, err = run(capsys, "demo", "--path", str(path))
    assert (status, out) == (2, "")
    assert err == (f"memvara demo: {path} exists and is not a demo store (it holds something"
                   " other than the demo's story); it is left as it is: pass another --path,"
                   " or remove it yourself\n")
    assert digest(path) == before


@pytest.mark.parametrize("make", ["text", "other_store", "other_sqlite", "newer", "empty"])
def test_what_the_demo_did_not_make_is_left_alone(tmp_path: Path, make: str) -> None:
    path = tmp_path / "memvara-demo.db"
    if make == "text":
        path.write_text("my notes, not a database\n")
    elif make == "other_store":
        with Memvara(str(path), user="alice", llm=NullLLM()) as mem:
            mem.remember("alice", "lives_in", "Berlin")
    elif make == "other_sqlite":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE mine (x)")
        conn.commit()
        conn.close()
    elif make == "newer":
        run_demo(str(path), io.StringIO())
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    else:
        path.write_bytes(b"")
    before = digest(path)
    with pytest.raises(DemoPathError, match="is not a demo store"):
        run_demo(str(path), io.StringIO())
    assert digest(path) == before


def test_a_link_to_a_demo_store_is_left_alone(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    run_demo(str(real), io.StringIO())
    link = tmp_path / "link.db"
    link.symlink_to(real)
    with pytest.raises(DemoPathError, match="is not a demo store"):
        run_demo(str(link), io.StringIO())
    assert link.is_symlink() and real.exists()


def test_files_beside_a_missing_store_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    wal = tmp_path / "demo.db-wal"
    wal.write_bytes(b"someone's write-ahead log")
    with pytest.raises(DemoPathError) as refused:
        run_demo(str(path), io.StringIO())
    assert str(refused.value) == (f"{path} does not exist, but {wal} does: files the demo did"
                                  " not make; remove them yourself, or pass another --path")
    assert wal.read_bytes() == b"someone's write-ahead log" and not path.exists()


def test_a_folder_or_a_missing_folder_is_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "demo", "--path", str(tmp_path))
    assert status == 2
    assert err == (f"memvara demo: {tmp_path} is a folder; pass the path of a file to write"
                   f" the demo store to, such as --path {tmp_path / 'memvara-demo.db'}\n")
    status, _, err = run(capsys, "demo", "--path", str(tmp_path / "no" / "demo.db"))
    assert status == 2 and "does not exist; create it first" in err and err.count("\n") == 1


@pytest.mark.skipif(not SCRIPT.exists(), reason="the memvara console script is not installed")
def test_the_readme_command_twice_in_a_fresh_folder(tmp_path: Path) -> None:
    env = {**os.environ, "MEMVARA_DB": ""}
    for _ in range(2):  # the second run finds the demo's own store and re-creates it
        done = subprocess.run([str(SCRIPT), "demo"], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert "Timeline of alice/lives_in" in done.stdout
    (tmp_path / "memvara-demo.db").write_text("now it is mine")
    done = subprocess.run([str(SCRIPT), "demo"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("memvara demo: memvara-demo.db exists and is not a demo store (it"
                           " holds something other than the demo's story); it is left as it"
                           " is: pass another --path, or remove it yourself\n")
    assert (tmp_path / "memvara-demo.db").read_text() == "now it is mine"
