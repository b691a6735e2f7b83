"""The README's Python examples run, in order, as one session; the first block holds the
two commands; its links name files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


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
    assert code
    for block in code:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    # The outputs the README shows as whole-line comments are printed lines, in that order.
    shown = re.findall(r"^# (\[.*\]|\{.*\})$", "\n".join(code), re.M)
    assert shown
    remaining = iter(printed.splitlines())
    for line in shown:
        assert any(line == out for out in remaining), line
    assert "Berlin 2026-06-24" in printed


def test_links_name_files_that_exist() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    for name in ("docs/guide.md", "docs/benchmarks.md", "docs/ROADMAP.md",
                 "docs/INTERNALS.md", "docs/perf-log.md", "SECURITY.md"):
        assert name in targets, name
    for target in targets:
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_install_is_from_a_clone() -> None:
    # The name memvara on PyPI belongs to another project: never send users there.
    assert not re.search(r"pip install\s+['\"]?memvara\b", README.read_text(encoding="utf-8"))
