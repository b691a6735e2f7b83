"""Shared fixtures: an injected clock, in-memory and file-backed memories, closed after use."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memvara import Claim, Episode, Memvara, PredicateSpec, SQLiteStore
from memvara.schema import Cardinality, Volatility


def day(text: str) -> datetime:
    """A UTC midnight from ``YYYY-MM-DD``."""
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)


JAN = day("2026-01-06")
MAR = day("2026-03-01")
JUN = day("2026-06-24")
JUL = day("2026-07-15")
AUG = day("2026-08-10")
SEP = day("2026-09-01")
NOW = day("2026-10-01")


class Clock:
    """A clock tests move by hand: no sleeping, no patching."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def mem(clock: Clock) -> Iterator[Memvara]:
    memory = Memvara(clock=clock)
    yield memory
    memory.close()


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    return str(tmp_path / "memory.db")


@pytest.fixture
def file_mem(db_path: str, clock: Clock) -> Iterator[Memvara]:
    memory = Memvara(db_path, clock=clock)
    yield memory
    memory.close()


def embed_all(mem: Memvara) -> int:
    """Embed every claim still waiting for its vector (single writes are embedded in
    batches); how many were embedded."""
    return mem._core.writer.embed_missing()


def has_backlog(mem: Memvara) -> bool:
    """Whether rows of ``mem``'s SQLite store wait for the text index or a vector."""
    store = mem.store
    assert isinstance(store, SQLiteStore)
    return store.has_backlog()


def catch_up(mem: Memvara) -> None:
    """Pay the write side's backlogs now, as a write does once a batch waits: index the
    text waiting above the watermark and embed the claims waiting for vectors. (No read
    does this: a search finds both kinds of waiting row in memory.)"""
    store = mem.store
    assert isinstance(store, SQLiteStore)
    store.flush_text_index()
    embed_all(mem)


class FakeLLM:
    """Answers from a script and counts every call."""

    def __init__(self, facts: dict[str, list[tuple[str, str, str]]] | None = None,
                 cardinality: Cardinality = Cardinality.ONE) -> None:
        self.facts = facts or {}
        self.cardinality = cardinality
        self.extract_calls: list[list[str]] = []
        self.classify_calls: list[str] = []
        self.fail = False

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self.extract_calls.append([t.content for t in turns])
        if self.fail:
            raise TimeoutError("the model timed out")
        return [Claim(s, p, o, sources=(t.id,), extractor="fake")
                for t in turns for s, p, o in self.facts.get(t.content, [])]

    def classify_predicate(self, name: str) -> PredicateSpec:
        self.classify_calls.append(name)
        return PredicateSpec(name, self.cardinality, Volatility.SLOW)
