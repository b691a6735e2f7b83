"""docs/guide.md's Python examples run, in order, as one session in an empty directory,
and print what the guide shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def test_guide_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    code = blocks("python")
    assert len(code) >= 10
    for block in code:
        exec(compile(block, str(GUIDE), "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    source = "\n".join(code)
    # A comment that is a whole printed list or dict is printed as shown.
    for shown in re.findall(r"^# (\[.*\]|\{.*\})$", source, re.M):
        assert shown in printed, shown
    # "# -> text" shows a whole line the block prints.
    arrows = re.findall(r"^# -> (.*)$", source, re.M)
    assert arrows
    for shown in arrows:
        assert shown in lines, shown
    # A ```text block is output: every line of it is a line the session printed.
    for output in blocks("text"):
        for line in output.splitlines():
            assert line in lines, line
    assert "Berlin 2026-06-24" in printed


def test_the_contents_list_every_section_with_its_anchor() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+)\. (.+)$", text, re.M)
    listed = re.findall(r"^(\d+)\. \[(.+)\]\(#(.+)\)$", text, re.M)
    assert [(number, title) for number, title, _ in listed] == headings
    for number, title, anchor in listed:  # GitHub's anchor: lower case, punctuation gone
        assert anchor == re.sub(r"[^\w\- ]", "", f"{number}. {title}".lower()).replace(" ", "-")


def test_guide_links_name_files_that_exist() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (GUIDE.parent / target).exists(), target
