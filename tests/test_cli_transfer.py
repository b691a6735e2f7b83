"""``memvara export`` and ``memvara import``: a store out to JSON Lines and back, and the
one-line errors of a bad file or a bad path."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvara import Memvara, NullLLM
from tests.cli_story import ROOT, Story, run
from tests.cli_story import story  # noqa: F401 - the fixture the tests below take


def listing(path: str, user: str = "alice") -> list[dict[str, object]]:
    with Memvara(path, user=user, read_only=True, llm=NullLLM()) as mem:
        return [c.to_dict() for c in mem.get_all(states=["live", "ended", "retired"])]


def test_export_to_standard_output_and_back(story: Story, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "export", "--db", story.path)
    assert status == 0
    assert err == (f"memvara export: 0 predicates, 0 aliases, 1 episode, 5 claims from"
                   f" {story.path}\n")
    header, *records = (json.loads(line) for line in out.splitlines())
    assert header["format"] == "memvara" and len(records) == 6
    copy = str(tmp_path / "copy.db")
    monkeypatch.setattr(sys, "stdin", io.StringIO(out))
    status, out, _ = run(capsys, "import", "--db", copy, "-")
    assert (status, out) == (0, f"imported 0 predicates, 0 aliases, 1 episode, 5 claims into {copy}\n")
    assert listing(copy) == listing(story.path)
    assert listing(copy, "bob") == listing(story.path, "bob")


def test_export_to_a_file_in_a_scope(story: Story, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "bob.jsonl"
    status, out, err = run(capsys, "export", "--db", story.path, "--user", "bob", "-o", str(target))
    assert (status, out) == (0, "")
    assert err.endswith(f"0 episodes, 1 claim from {story.path} to {target}\n")  # not "1 claims"
    lines = target.read_text().splitlines()
    assert json.loads(lines[0])["scope"]["user"] == "bob" and len(lines) == 2
    copy = str(tmp_path / "bob.db")
    status, out, _ = run(capsys, "import", "--db", copy, "--json", str(target))
    assert status == 0
    assert json.loads(out) == {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 1}
    assert [c["object"] for c in listing(copy, "bob")] == ["Oslo"]
    status, _, err = run(capsys, "export", "--db", story.path, "-o", str(tmp_path))
    assert status == 2 and err.startswith(f"memvara export: {tmp_path} is a folder")


def test_an_import_that_conflicts_changes_nothing(story: Story, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "all.jsonl"
    assert run(capsys, "export", "--db", story.path, "-o", str(target))[0] == 0
    before = listing(story.path)
    status, out, err = run(capsys, "import", "--db", story.path, str(target))
    assert (status, out) == (2, "")
    assert err.startswith(f"memvara import: {target}: line 2: ")
    assert err.endswith("; nothing was imported\n") and err.count("\n") == 1
    assert listing(story.path) == before


@pytest.mark.parametrize(("content", "problem"), [
    ("this is not json\n", "line 1: not JSON"),
    (b"\xff\xfe binary\n", "line 1: not UTF-8 text"),
    ('{"format": "memvara", "version": 99, "exported_at": "2026-01-01T00:00:00+00:00",'
     ' "scope": {}, "counts": {}}\n', "line 1: "),
    ("", "line 1: "),
])
def test_a_bad_file_imports_nothing_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes,
        problem: str) -> None:
    source = tmp_path / "bad.jsonl"
    if isinstance(content, bytes):
        source.write_bytes(content)
    else:
        source.write_text(content)
    target = tmp_path / "new.db"
    status, _, err = run(capsys, "import", "--db", str(target), str(source))
    assert status == 2
    assert err.startswith(f"memvara import: {source}: {problem}"), err
    assert err.endswith("; nothing was imported\n") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]  # no store was left


def test_a_cut_short_file_names_its_line(story: Story, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    whole = tmp_path / "whole.jsonl"
    run(capsys, "export", "--db", story.path, "-o", str(whole))
    cut = tmp_path / "cut.jsonl"
    cut.write_text(whole.read_text()[:-40])
    status, _, err = run(capsys, "import", "--db", str(tmp_path / "new.db"), str(cut))
    assert status == 2 and err.startswith(f"memvara import: {cut}: line 7: not JSON")
    assert not (tmp_path / "new.db").exists()


def test_import_paths_that_will_not_do(story: Story, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    status, _, err = run(capsys, "import", "--db", str(tmp_path / "new.db"), str(missing))
    assert (status, err) == (2, f"memvara import: {missing}: No such file or directory\n")
    status, _, err = run(capsys, "import", "--db", str(tmp_path / "new.db"), str(tmp_path))
    assert status == 2 and err.startswith(f"memvara import: {tmp_path} is a folder, not a file;"
                                          " pass a file path to FILE")
    source = tmp_path / "s.jsonl"
    run(capsys, "export", "--db", story.path, "-o", str(source))
    status, _, err = run(capsys, "import", "--db", str(tmp_path), str(source))
    assert status == 2 and err.startswith(f"memvara import: {tmp_path} is a folder")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes " * 20)
    status, _, err = run(capsys, "import", "--db", str(notes), str(source))
    assert status == 2 and f"{notes}: not a memvara store" in err
    assert notes.read_text() == "my notes " * 20  # not ours: left as it was
    status, _, err = run(capsys, "import", "--db", str(tmp_path / "no" / "x.db"), str(source))
    assert status == 2 and "does not exist; create it first" in err
    assert not (tmp_path / "new.db").exists() and not (tmp_path / "no").exists()


def test_export_into_a_missing_folder_names_the_file_asked_for(
        story: Story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "out.jsonl"
    status, _, err = run(capsys, "export", "--db", story.path, "-o", str(target))
    assert (status, err) == (2, f"memvara export: -o: {target}: the folder {tmp_path / 'no'} does"
                                " not exist; create it first, or pass a path in a folder that"
                                " exists\n")


def test_through_the_console_script(story: Story, tmp_path: Path) -> None:
    env = {**os.environ, "MEMVARA_DB": story.path}
    exported = subprocess.run([sys.executable, "-m", "memvara.cli", "export"], capture_output=True,
                              text=True, timeout=120, cwd=ROOT, env=env, check=True)
    copy = str(tmp_path / "copy.db")
    done = subprocess.run([sys.executable, "-m", "memvara.cli", "import", "--db", copy, "--json",
                           "-"], input=exported.stdout, capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["claims"] == 5
    assert listing(copy) == listing(story.path)


def test_a_reader_that_goes_away(story: Story) -> None:
    reader = subprocess.Popen([sys.executable, "-m", "memvara.cli", "export", "--db", story.path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # as `memvara export | head -c 0` would
    err = reader.stderr.read().decode()
    reader.stderr.close()
    assert reader.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err
