"""The ``memvara`` command's read commands (``stats``, ``search``, ``history``,
``get-all``, ``why``, ``episodes``), its options and its errors: each through
``main([...])``, and a few through the installed console script and ``python -m``."""

from __future__ import annotations

import importlib
import io
import json
import os
import runpy
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memvara import Memvara, NullLLM
from memvara.cli import _app, _commands, main
from tests.cli_story import ROOT, SCRIPT, Story, run, write_story
from tests.cli_story import story  # noqa: F401 - the fixture the tests below take

ALL = "live,ended,retired"


def read(path: str) -> Memvara:
    return Memvara(path, user="alice", read_only=True, llm=NullLLM())


# --- the read commands, as tables and as JSON ------------------------------------------

def test_stats(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "stats", "--db", story.path, "--user", "alice")
    assert status == 0 and err == ""
    assert out.splitlines()[0].split() == ["count", "value"]
    assert "live_claims   2" in out and "invalidated   1" in out
    status, out, _ = run(capsys, "stats", "--db", story.path, "--user", "alice", "--json")
    with read(story.path) as mem:
        assert json.loads(out) == mem.stats()
    _, out, _ = run(capsys, "stats", "--db", story.path, "--user", "bob", "--json")
    assert json.loads(out)["claims"] == 1  # scopes are apart


def test_search(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "search", "--db", story.path, "--user", "alice", "-k", "1",
                         "where does alice live")
    assert status == 0
    header, row = out.splitlines()
    assert header.split() == ["score", "kind", "id", "state", "text"]
    assert story.lisbon in row and row.endswith("alice lives in Lisbon")
    _, out, _ = run(capsys, "search", "--db", story.path, "--user", "alice", "--json",
                    "--episodes", "--states", ALL, "Berlin")
    found = json.loads(out)
    assert {r["kind"] for r in found} == {"claim", "episode"}
    assert {r["id"] for r in found} >= {story.berlin, story.turn}
    assert all(set(r) == {"kind", "id", "text", "score", "explain", "claim", "episode"}
               for r in found)
    _, out, _ = run(capsys, "search", "--db", story.path, "--user", "alice", "zeppelin")
    assert out == "(no matches)\n"


def test_search_at_an_instant(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "search", "--db", story.path, "--user", "alice", "--json",
                    "--as-of", "2026-07-15T00:00:00+00:00", "lives")
    objects = [r["claim"]["object"] for r in json.loads(out)]
    assert objects[0] == "Berlin" and "Lisbon" not in objects  # Lisbon: not yet heard in July


def test_history(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "history", "--db", story.path, "--user", "alice",
                         "alice", "lives_in")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "object", "state", "valid_from", "valid_to",
                                "recorded_at", "invalidated_at"]
    assert lines[1].split() == [story.berlin, "Berlin", "ended", "2026-01-06T00:00:00Z",
                                "2026-06-24T00:00:00Z", "2026-01-06T00:00:00Z", "-"]
    assert lines[2].split()[:5] == [story.lisbon, "Lisbon", "live", "2026-06-24T00:00:00Z", "-"]
    # options after the command, in any order, the way the brief's example has them
    status, out, _ = run(capsys, "history", "--db", story.path, "--user", "alice", "--json",
                         "alice", "lives_in")
    with read(story.path) as mem:
        assert json.loads(out) == [c.to_dict() for c in mem.history("alice", "lives_in")]
    _, out, _ = run(capsys, "history", "alice", "lives_in", "--db", story.path, "--user",
                    "alice", "--json", "--known-at", "2026-07-01T00:00:00Z")
    rewound = json.loads(out)
    assert [(c["object"], c["state"]) for c in rewound] == [("Berlin", "live")]
    _, out, _ = run(capsys, "history", "--db", story.path, "--user", "alice", "alice", "owns")
    assert out == "(no claims)\n"


def test_get_all(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "get-all", "--db", story.path, "--user", "alice")
    assert status == 0
    assert [line.split()[3] for line in out.splitlines()[1:-1]] == ["Lisbon", "tea"]
    assert out.splitlines()[-1] == "2 claims"
    _, out, _ = run(capsys, "get-all", "--db", story.path, "--user", "alice", "--json",
                    "--states", ALL, "--predicate", "works_at", "--subject", "alice")
    assert [(c["id"], c["state"]) for c in json.loads(out)] == [(story.acme, "retired")]
    _, out, _ = run(capsys, "get-all", "--db", story.path, "--user", "alice",
                    "--states", ALL, "--predicate", "works_at", "--subject", "alice")
    assert out.splitlines()[-1] == "1 claim"  # not "1 claims"
    _, out, _ = run(capsys, "get-all", "--db", story.path, "--user", "alice", "--states",
                    "live, ended", "--limit", "1", "--offset", "1")
    assert out.splitlines()[-1] == "1 of 3 claims, from offset 1"
    _, out, _ = run(capsys, "get-all", "--db", story.path, "--user", "alice", "--json",
                    "--limit", "1")
    assert len(json.loads(out)) == 1
    _, out, _ = run(capsys, "get-all", "--db", story.path, "--valid-at",
                    "2026-03-01T00:00:00+01:00")
    assert out == "0 claims\n"  # the root scope holds none of alice's claims


def test_why(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "why", "--db", story.path, "--user", "alice", story.berlin)
    assert status == 0
    assert f"claim       {story.berlin}  alice lives_in Berlin  (ended)" in out
    assert "extractor   rules:v1" in out
    assert f"closed by   {story.lisbon}  alice lives_in Lisbon  (live)" in out
    assert f"  {story.turn}  2026-01-06T00:00:00Z  user: I live in Berlin" in out
    _, out, _ = run(capsys, "why", "--db", story.path, "--user", "alice", story.acme)
    assert "extractor   remember" in out and "sources     -" in out and "turns       0" in out
    _, out, _ = run(capsys, "why", "--db", story.path, "--user", "alice", "--json", story.berlin)
    with read(story.path) as mem:
        found = mem.why(story.berlin)
        assert found is not None and json.loads(out) == found.to_dict()


def test_why_of_an_unknown_claim_is_status_1(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "why", "--db", story.path, "--user", "bob", story.berlin)
    assert (status, out) == (1, "")
    assert err.startswith(f"memvara why: no claim {story.berlin!r} is visible in this scope")
    status, out, _ = run(capsys, "why", "--db", story.path, "--json", "c9-00000000")
    assert (status, json.loads(out)) == (1, None)


def test_episodes(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "episodes", "--db", story.path, "--user", "alice")
    assert status == 0
    assert out.splitlines()[1].split() == [story.turn, "2026-01-06T00:00:00Z", "user", "I",
                                           "live", "in", "Berlin"]
    _, out, _ = run(capsys, "episodes", "--db", story.path, "--user", "alice", "--json",
                    "--roles", "user,assistant", "--limit", "5")
    with read(story.path) as mem:
        assert json.loads(out) == [e.to_dict() for e in mem.episodes()]
    _, out, _ = run(capsys, "episodes", "--db", story.path, "--user", "alice", "--roles", "tool")
    assert out == "(no turns)\n"


def test_table_cells_are_one_printable_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "odd.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.remember("eve", "note", "line one\nline two\x1b[31m red " + "x" * 80)
    _, out, _ = run(capsys, "get-all", "--db", path)
    assert "\x1b" not in out and len(out.splitlines()) == 3  # header, the claim, the count
    flat = "line one line two [31m red " + "x" * 80
    assert f"  {flat[:45]}...  live" in out.splitlines()[1]  # cut to 48 characters


# --- where the store is ----------------------------------------------------------------

def test_db_from_the_environment_and_home(story: Story, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMVARA_DB", story.path)
    assert run(capsys, "stats", "--user", "alice", "--json")[0] == 0
    monkeypatch.setenv("HOME", str(Path(story.path).parent))
    monkeypatch.delenv("MEMVARA_DB")
    status, out, _ = run(capsys, "stats", "--db", "~/story.db", "--user", "alice", "--json")
    assert status == 0 and json.loads(out)["claims"] == 4
    status, _, err = run(capsys, "stats")
    assert (status, err) == (2, "memvara stats: which store? pass --db PATH, or set MEMVARA_DB\n")


def test_a_read_where_no_store_is_creates_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["stats"], ["search", "x"], ["history", "a", "b"], ["get-all"],
                    ["why", "c1-00000000"], ["episodes"], ["export"], ["timeline", "a", "b"]):
        path = str(tmp_path / "none.db")
        status, out, err = run(capsys, command[0], "--db", path, *command[1:])
        assert (status, out) == (2, "")
        assert err.startswith(f"memvara {command[0]}: no memvara store at {path} (nothing was"
                              " created); make one with `memvara import --db")
        assert list(tmp_path.iterdir()) == []


def test_paths_that_are_not_stores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "stats", "--db", str(tmp_path))
    assert status == 2
    assert err == (f"memvara stats: {tmp_path} is a folder, not a file; pass a file path to"
                   f" --db, such as {tmp_path / 'memory.db'}\n")
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just some words " * 10)
    status, _, err = run(capsys, "get-all", "--db", str(text))
    assert status == 2 and err.startswith(f"memvara get-all: {text}: not a memvara store")
    assert err.count("\n") == 1
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    status, _, err = run(capsys, "stats", "--db", str(other))
    assert status == 2 and "not a memvara store" in err and err.count("\n") == 1


def test_a_store_from_a_newer_memvara(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(story.path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    status, _, err = run(capsys, "stats", "--db", story.path)
    assert status == 2
    assert err.startswith(f"memvara stats: {story.path}: written by a newer memvara")
    assert err.count("\n") == 1


# --- bad options: one line, status 2 ------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["get-all", "--valid-at", "2026-01-01T00:00:00"],
     "memvara get-all: --valid-at: expected an ISO-8601 instant with a UTC offset"),
    (["history", "--known-at", "yesterday", "a", "b"], "memvara history: --known-at: expected"),
    (["get-all", "--as-of", "2026-01-01T00:00:00Z", "--valid-at", "2026-01-01T00:00:00Z"],
     "memvara get-all: --as-of: pass as_of alone"),
    (["get-all", "--states", "live,gone"],
     "memvara get-all: --states: unknown value 'gone'; expected a comma-separated list drawn"
     " from live, ended, retired"),
    (["search", "--states", ",", "x"], "memvara search: --states: expected a comma-separated"),
    (["search", "-k", "0", "x"], "memvara search: -k: expected an int from 1"),
    (["search", "-k", "ten", "x"],
     "memvara: argument -k: invalid int value: 'ten' (see memvara search --help)"),
    (["get-all", "--limit", "-1"], "memvara get-all: --limit: expected an int from 0"),
    (["episodes", "--offset", "many"], "memvara: argument --offset: invalid int value"),
    (["episodes", "--roles", "robot"], "memvara episodes: --roles: expected a non-empty list"),
    (["history", "a"], "memvara: the following arguments are required: PREDICATE"
     " (see memvara history --help)"),
    (["history", " ", "lives_in"], "memvara history: SUBJECT: must not be empty"),
    (["get-all", "--subject", " "], "memvara get-all: --subject: must not be empty"),
    (["search", ""], "memvara search: QUERY: must not be empty"),
    (["stats", "--user", ""], "memvara stats: --user: a scope level must be"),
    (["stats", "--valid-at", "2026-01-01T00:00:00Z"],
     "memvara: unrecognized arguments: --valid-at 2026-01-01T00:00:00Z"
     " (see memvara stats --help)"),
    (["forget"], "memvara: argument COMMAND: invalid choice: 'forget'"),
])
def test_bad_options(story: Story, capsys: pytest.CaptureFixture[str], argv: list[str],
                     expected: str) -> None:
    status, out, err = run(capsys, argv[0], "--db", story.path, *argv[1:])
    assert (status, out) == (2, "")
    assert err.startswith(expected), err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_run_as_a_module(monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["memvara", "--version"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("memvara.cli", run_name="__main__")
    assert done.value.code == 0 and capsys.readouterr().out == "memvara 0.1.0\n"
    assert importlib.import_module("memvara.cli.__main__").main is main  # imported, it runs nothing


def test_version_help_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--version")
    assert (status, out) == (0, "memvara 0.1.0\n")
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "Options follow the command" in out and "timeline" in out
    status, out, _ = run(capsys, "history", "--help")
    assert status == 0 and "--known-at INSTANT" in out and "SUBJECT" in out
    status, _, err = run(capsys)
    assert status == 2 and err.startswith("memvara: the following arguments are required: COMMAND")


# --- what is not a command's fault ---------------------------------------------------------

def test_an_interrupt_and_a_closed_pipe(story: Story, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(*_: object) -> int:
        raise KeyboardInterrupt

    def gone(*_: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(_commands.COMMANDS, "stats", interrupted)
    assert run(capsys, "stats", "--db", story.path) == (130, "", "memvara stats: interrupted\n")
    monkeypatch.setitem(_commands.COMMANDS, "stats", gone)
    assert run(capsys, "stats", "--db", story.path) == (1, "", "")


def test_silencing_standard_output(tmp_path: Path) -> None:
    with open(tmp_path / "out.txt", "w") as handle:
        _app._silence(handle)  # its descriptor now points at the null device
        handle.write("lost")
    assert (tmp_path / "out.txt").read_text() == ""
    _app._silence(io.StringIO())  # no descriptor: nothing to do


def test_an_os_error_is_one_line(story: Story, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    def failing(*_: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(_commands.COMMANDS, "stats", failing)
    assert run(capsys, "stats", "--db", story.path) == (
        2, "", "memvara stats: No space left on device\n")
    assert _app._os_error(FileNotFoundError(2, "No such file", "a", None, "b")) == "b: No such file"


# --- the real console script -----------------------------------------------------------------

def console(*argv: str, module: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memvara.cli"] if module else [str(SCRIPT)]
    return subprocess.run([*command, *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "MEMVARA_DB": ""})


@pytest.mark.skipif(not SCRIPT.exists(), reason="the memvara console script is not installed")
def test_the_console_script(tmp_path: Path) -> None:
    story = write_story(str(tmp_path / "story.db"))
    done = console("history", "--db", story.path, "--user", "alice", "--json", "alice", "lives_in")
    assert done.returncode == 0, done.stderr
    assert [c["object"] for c in json.loads(done.stdout)] == ["Berlin", "Lisbon"]
    done = console("get-all", "--db", story.path, "--user", "alice", "--as-of", "2026-06-01")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("memvara get-all: --as-of: expected an ISO-8601 instant")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    done = console("stats", "--db", str(tmp_path / "missing.db"))
    assert done.returncode == 2 and "no memvara store at" in done.stderr
    assert not (tmp_path / "missing.db").exists()


def test_python_dash_m(tmp_path: Path) -> None:
    story = write_story(str(tmp_path / "story.db"))
    done = console("stats", "--db", story.path, "--user", "alice", "--json", module=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["live_claims"] == 2
    done = console("search", "--db", story.path, "--user", "alice", "--json", "-k", "2", "tea",
                   module=True)
    assert [r["claim"]["object"] for r in json.loads(done.stdout)] == ["tea"]
    done = console("why", "--db", story.path, "--user", "alice", "--json", story.tea, module=True)
    assert json.loads(done.stdout)["claim"]["id"] == story.tea
    done = console("stats", "--db", story.path, "--valid-at", "x", module=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
