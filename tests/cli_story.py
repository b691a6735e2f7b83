"""A small store for the ``memvara`` command's tests, and a way to run the command and
see what it printed."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from memvara import Memvara, NullLLM
from memvara.cli import main
from tests.conftest import AUG, JAN, JUN, MAR, NOW, Clock

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("memvara")
"""The console script pip installed beside this interpreter."""


@dataclass
class Story:
    """What ``write_story`` stored: its path and the ids the tests ask about."""

    path: str
    berlin: str
    lisbon: str
    acme: str
    tea: str
    turn: str


def write_story(path: str) -> Story:
    """alice lived in Berlin (said in a turn in January), moved to Lisbon in June
    (heard in August), worked at Acme (retired in March: never true), likes tea; bob,
    in his own scope, lives in Oslo. The clock stops at ``NOW``."""
    clock = Clock(JAN)
    with Memvara(path, user="alice", llm=NullLLM(), clock=clock) as mem:
        berlin = mem.add("I live in Berlin").added[0]
        acme = mem.remember("alice", "works_at", "Acme", valid_from=JAN)
        tea = mem.remember("alice", "likes", "tea", valid_from=JAN)
        clock.now = MAR
        mem.delete(acme.added[0].id)
        clock.now = AUG
        moved = mem.remember("alice", "lives_in", "Lisbon", valid_from=JUN)
        mem.remember("bob", "lives_in", "Oslo", user="bob")
        clock.now = NOW
        turn = mem.episodes()[0].id
    return Story(path, berlin.id, moved.added[0].id, acme.added[0].id, tea.added[0].id, turn)


@pytest.fixture
def story(tmp_path: Path) -> Story:
    return write_story(str(tmp_path / "story.db"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``: its exit status, standard output and standard error."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err
