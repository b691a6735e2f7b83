"""The ``memvara`` command and its demo."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from memvara.cli import main, run_demo


def test_demo_tells_the_two_clock_story(tmp_path: Path) -> None:
    out = io.StringIO()
    path = str(tmp_path / "demo.db")
    stats = run_demo(path, out)
    text = out.getvalue()
    lines = {line.split("  ")[1].strip(): line.rsplit("  ", 1)[1].strip()
             for line in text.splitlines() if line.startswith("  ") and "['" in line}
    assert lines["as_of=Jul (what we believed in July)"] == "['Acme Corp.', 'Berlin']"
    assert lines["valid_at=Jul (the late news is visible)"] == "['Lisbon', 'Acme Corp.']"
    assert "Berlin   ended    valid 2026-01-06 .. 2026-06-24" in text
    assert stats == {"episodes": 0, "claims": 3, "live_claims": 2, "ended_claims": 1,
                     "invalidated": 0, "embeddings": 0}  # three claims: too few to embed yet
    assert Path(path).exists()
    again = io.StringIO()
    run_demo(path, again)  # reruns from scratch, same output
    assert again.getvalue() == text


def test_main_runs_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--path", str(tmp_path / "d.db")]) == 0
    assert "stats():" in capsys.readouterr().out


def test_version_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and "memvara" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2


def test_module_entry_point(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "memvara.cli", "demo", "--path", str(tmp_path / "m.db")],
        capture_output=True, text=True, check=True, timeout=120,
    )
    assert "Timeline of alice/lives_in" in result.stdout
