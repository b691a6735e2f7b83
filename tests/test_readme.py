"""The README's Python examples run, in order, as one session; the first block holds the
two commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_first_code_block_is_the_two_commands() -> None:
    first = re.search(r"```\w*\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first is not None
    lines = first.group(1).strip().splitlines()
    assert len(lines) == 2
    assert "memvara demo" in lines[0]
    assert lines[1] == "bash .ci/run"


def test_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    code = blocks("python")
    assert len(code) >= 5
    for block in code:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    # The outputs the README shows in comments are the ones the code prints.
    for shown in re.findall(r"^# (\[.*\]|\{.*\})$", "\n".join(code), re.M):
        assert shown in printed, shown
    assert "Berlin 2026-06-24" in printed
