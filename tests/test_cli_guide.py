"""The guide's command-line section prints what it shows: each ``$ memvara ...`` line of
its ``console`` blocks runs (through ``main()``) on the store the section's Python block
writes, and prints the lines under it; its diagram is a real PNG."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.cli_story import run
from tests.conftest import JAN, JUN, MAR

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"
SECTION = GUIDE.read_text(encoding="utf-8").split(
    "From the shell: the `memvara` command\n")[1].split("\n## ")[0]


def sessions() -> list[tuple[str, list[str]]]:
    """Each command of the section's console blocks, with the lines it shows."""
    found: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", SECTION, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            else:
                found[-1][1].append(line)
    return found


def test_the_console_blocks_print_what_they_show(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (code,) = re.findall(r"```python\n(.*?)```", SECTION, re.S)
    exec(compile(code, str(GUIDE), "exec"), {"JAN": JAN, "MAR": MAR, "JUN": JUN})  # noqa: S102
    shown = sessions()
    assert len(shown) == 5
    for command, expected in shown:
        words = shlex.split(command)
        assert words[0] == "memvara"
        if "--png" in words:
            pytest.importorskip("matplotlib")
        piped = words.index("|") if "|" in words else len(words)
        status, out, err = run(capsys, *words[1:piped])
        if piped < len(words):  # `| jq -r '.[].object'`
            assert words[piped + 1:] == ["jq", "-r", ".[].object"]
            out = "".join(f"{item['object']}\n" for item in json.loads(out))
        printed = (out + err).splitlines()
        if printed and printed[-1].startswith("wrote "):  # its size varies with matplotlib
            assert re.fullmatch(r"wrote timeline\.png \([\d,]+ bytes\)", printed[-1])
            assert re.fullmatch(r"wrote timeline\.png \([\d,]+ bytes\)", expected[-1])
            printed, expected = printed[:-1], expected[:-1]
        assert printed == expected, command
        assert status == (2 if err else 0), command


def test_the_diagram_in_the_guide_is_a_png() -> None:
    assert "](img/timeline.png)" in SECTION
    image = GUIDE.parent / "img" / "timeline.png"
    data = image.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (800, 500)
