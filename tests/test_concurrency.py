"""Readers never wait, and the write lock covers database work only.

Reads run on per-thread connections, so one completes while another thread sits inside
a write transaction. The slow half of a write -- the embedder, the redactor, the model --
runs before the transaction opens, so while it is busy another thread can write. A
search takes no lock at all: what waits for the text index or a vector it reads in
memory. Every test waits on Events,
with a bounded wait as the guard against a hang, never a sleep.

File stores only: an in-memory database is one connection, shared under the lock.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pytest

from memvara import (
    Claim, ClosedError, Episode, HashingEmbedder, Memvara, NullLLM, PredicateSpec, SQLiteStore,
    Scope,
)
from memvara._write.writer import EMBED_BATCH
from memvara.schema import Cardinality, Volatility
from memvara.store import STATES

from .conftest import Clock, has_backlog

T = TypeVar("T")
WAIT = 10.0  # seconds: only ever reached when something hangs


class Background:
    """A thread running ``call``; ``result()`` joins it (bounded) and re-raises."""

    def __init__(self, call: Callable[[], object]) -> None:
        self._call = call
        self.value: object = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.value = self._call()
        except BaseException as exc:  # handed to the test thread by result()
            self.error = exc

    def finished(self, timeout: float = WAIT) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def result(self) -> object:
        assert self.finished(), "the thread did not finish"
        if self.error is not None:
            raise self.error
        return self.value


def in_thread(call: Callable[[], T]) -> T:
    """Run ``call`` on another thread and return its result, failing if it does not
    finish within ``WAIT`` (it waited on something it must not wait on)."""
    worker = Background(call)
    assert worker.finished(), "the call blocked"
    return worker.result()  # type: ignore[return-value]


def while_a_write_is_open(mem: Memvara, read: Callable[[], T]) -> T:
    """``read()`` on another thread while this one's transaction (which writes alice's
    move to Lisbon) stays open; it must finish without waiting for the commit."""
    inside, release = threading.Event(), threading.Event()

    def write() -> None:
        with mem.store.transaction():
            mem.remember("alice", "lives_in", "Lisbon")
            inside.set()
            assert release.wait(WAIT)

    writer = Background(write)
    try:
        assert inside.wait(WAIT)
        return in_thread(read)
    finally:
        release.set()
        writer.result()


@pytest.fixture
def shared(db_path: str, clock: Clock) -> Iterator[Memvara]:
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as mem:
        yield mem


def test_reads_complete_while_another_thread_is_inside_a_write_transaction(
    shared: Memvara, clock: Clock
) -> None:
    berlin = shared.remember("alice", "lives_in", "Berlin").added[0]
    clock.advance(days=1)
    seen = while_a_write_is_open(shared, lambda: (
        shared.get(berlin.id),
        [c.object for c in shared.get_all()],
        shared.count(states=STATES),
        [c.object for c in shared.history("alice", "lives_in")],
        shared.stats()["claims"],
        shared.why(berlin.id),
    ))
    got, objects, count, timeline, claims, why = seen
    assert got == berlin and objects == ["Berlin"] and timeline == ["Berlin"]
    assert count == claims == 1  # the write in progress is invisible until it commits
    assert why is not None and why.claim.id == berlin.id
    assert [c.object for c in shared.get_all()] == ["Lisbon"]


def test_a_search_over_rows_still_waiting_does_not_wait_for_a_writer(
    shared: Memvara, clock: Clock
) -> None:
    # Both claims wait for the text index and for their vectors; the search finds them
    # in memory, so it neither writes nor waits for the write in progress.
    shared.remember("alice", "lives_in", "Berlin")
    shared.remember("alice", "reports_to", "Dana")
    assert has_backlog(shared)
    clock.advance(days=1)
    found = while_a_write_is_open(shared, lambda: (
        [r.text for r in shared.search("where does alice live", k=1)],
        [p.render() for p in shared.neighborhood("alice")],
    ))
    assert found == (["alice lives in Berlin"],
                     ["alice -lives_in-> Berlin", "alice -reports_to-> Dana"])
    assert has_backlog(shared)  # searches left every backlog to the writes
    assert [r.text for r in shared.search("where does alice live", k=1)] == [
        "alice lives in Lisbon"]


class BlockingLLM:
    """A model that, on its first ``extract``, says so and waits to be released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self.entered.set()
        assert self.release.wait(WAIT)
        return [Claim("user", "drinks", "tea", sources=(turns[0].id,))]

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        return None


def test_while_add_waits_on_the_model_others_read_write_and_search(
    db_path: str, clock: Clock
) -> None:
    model = BlockingLLM()
    with Memvara(db_path, clock=clock, llm=model, user="u") as mem:
        mem.remember("bob", "likes", "coffee")
        adding = Background(lambda: mem.add("Tea every morning, never coffee"))
        try:
            assert model.entered.wait(WAIT)
            receipt = in_thread(lambda: mem.remember("bob", "likes", "tea"))
            assert len(receipt.added) == 1  # the write lock was free: no transaction open
            hits = in_thread(lambda: mem.search("bob likes tea", k=1))
            assert hits[0].text == "bob likes tea"
            assert in_thread(mem.count) == 2
        finally:
            model.release.set()
            adding.result()
        assert [c.object for c in mem.get_all() if c.predicate == "drinks"] == ["tea"]


class BlockingEmbedder:
    """Hashes like the default, but the first batch of ``block_at`` or more texts waits."""

    def __init__(self, block_at: int) -> None:
        self._inner = HashingEmbedder()
        self.dim = self._inner.dim
        self.block_at = block_at
        self.entered = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if len(texts) >= self.block_at and not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(WAIT)
        return self._inner.encode(texts)


def test_while_a_bulk_write_embeds_others_read_and_write(db_path: str, clock: Clock) -> None:
    embedder = BlockingEmbedder(EMBED_BATCH)
    with Memvara(db_path, clock=clock, llm=NullLLM(), embedder=embedder, user="u") as mem:
        bulk = [Claim(f"s{i}", "likes", f"thing {i}") for i in range(EMBED_BATCH)]
        writing = Background(lambda: mem.remember_many(bulk))
        try:
            assert embedder.entered.wait(WAIT)
            in_thread(lambda: mem.remember("carol", "likes", "jazz"))
            assert in_thread(lambda: [c.object for c in mem.get_all()]) == ["jazz"]
        finally:
            embedder.release.set()
            writing.result()
        assert mem.count() == EMBED_BATCH + 1


class Probe:
    """Every call of the embedder, redactor and model, and whether a write transaction
    was open on the store at that moment."""

    def __init__(self) -> None:
        self.store: SQLiteStore | None = None
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, what: str) -> None:
        store = self.store
        assert store is not None
        self.calls.append((what, store._depth > 0 or store._writer.in_transaction))


class ProbeEmbedder:
    def __init__(self, probe: Probe) -> None:
        self._inner = HashingEmbedder()
        self.dim = self._inner.dim
        self._probe = probe

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self._probe("encode")
        return self._inner.encode(texts)


class ProbeRedactor:
    def __init__(self, probe: Probe) -> None:
        self._probe = probe

    def redact(self, text: str) -> str:
        self._probe("redact")
        return text.replace("555-0100", "[phone]")


class ProbeLLM:
    def __init__(self, probe: Probe) -> None:
        self._probe = probe

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self._probe("extract")
        return [Claim(f"friend {t.content[-1]}", "plays", "chess", sources=(t.id,))
                for t in turns]

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        self._probe("classify_predicate")
        return PredicateSpec(name, Cardinality.MANY, Volatility.SLOW)

    def resolve_entity(self, surface: str, candidates: Sequence[str]) -> str | None:
        self._probe("resolve_entity")
        return None


def test_the_embedder_redactor_and_model_run_with_no_transaction_open(
    db_path: str, clock: Clock
) -> None:
    probe = Probe()
    store = SQLiteStore(db_path)
    probe.store = store
    with Memvara(store=store, clock=clock, embedder=ProbeEmbedder(probe),
                 redactor=ProbeRedactor(probe), llm=ProbeLLM(probe),
                 resolve_entities=True, user="u") as mem:
        probe.calls.clear()  # construction encodes once to check the embedder
        old = mem.remember("user", "works_at", "Acme").added[0]
        mem.add(["I live in Oslo", "call me at 555-0100", "a friend of mine, 1"])
        mem.add("another friend, 2", wait=False)
        mem.flush()
        mem.remember_many([Claim(f"s{i}", "likes", f"thing {i}") for i in range(EMBED_BATCH)])
        for i in range(3):
            mem.remember("t", "likes", f"tea {i}")
        clock.advance(days=1)
        mem.supersede(old.id, Claim("user", "works_at", "Initech"))
        mem.consolidate()
        mem.search("chess")
    kinds = {what for what, _ in probe.calls}
    assert kinds == {"encode", "redact", "extract", "classify_predicate", "resolve_entity"}
    inside = [what for what, open_ in probe.calls if open_]
    assert inside == [], f"called inside a write transaction: {inside}"


class _NotingWait(threading.Condition):
    """A condition that says when a thread starts waiting on it."""

    def __init__(self, lock: threading.RLock, waiting: threading.Event) -> None:
        super().__init__(lock)
        self._waiting = waiting

    def wait(self, timeout: float | None = None) -> bool:
        self._waiting.set()
        return super().wait(timeout)


@pytest.mark.parametrize("read", ["get_all", "search"])
def test_close_waits_for_a_read_running_on_another_thread(
    db_path: str, clock: Clock, read: str
) -> None:
    """``close()`` on one thread while another runs a read: the statement running
    finishes, and the read returns its whole answer or raises ``ClosedError``. Closing
    the reader's connection under it raised ``StoreError`` ('Cannot operate on a closed
    database') or crashed the interpreter (a search, in FTS5)."""
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as mem:
        mem.remember_many([Claim("u", "likes", f"tea {i}") for i in range(40)])
    reading, release, waiting = threading.Event(), threading.Event(), threading.Event()
    test_thread = threading.get_ident()

    def tracer(sql: str, params: Sequence[object]) -> None:
        if threading.get_ident() != test_thread and not reading.is_set():
            reading.set()  # the reader's first statement, now running
            assert release.wait(WAIT)

    store = SQLiteStore(db_path, tracer=tracer)
    store._reads_done = _NotingWait(store._readers_lock, waiting)
    mem = Memvara(store=store, clock=clock, llm=NullLLM(), user="u")

    def run() -> object:
        try:
            return len(mem.get_all()) if read == "get_all" else len(mem.search("tea", k=5))
        except ClosedError as exc:
            return exc

    reader = Background(run)
    assert reading.wait(WAIT)
    closer = Background(mem.close)
    assert waiting.wait(WAIT)  # close() is waiting for the read
    release.set()
    closer.result()
    answer = reader.result()
    assert answer == (40 if read == "get_all" else 5) or isinstance(answer, ClosedError)
    with pytest.raises(ClosedError):
        store.stats(Scope(), 0)


def test_close_inside_a_snapshot_of_its_own_thread_does_not_wait_for_itself(
    db_path: str, clock: Clock
) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        mem.remember("u", "likes", "tea")
    store = SQLiteStore(db_path)
    with store.snapshot():
        assert store.stats(Scope(), 0)["claims"] == 1
        store.close()
    with pytest.raises(ClosedError):
        store.stats(Scope(), 0)


@pytest.mark.parametrize("where", ["memory", "file"])
def test_a_read_of_a_closed_store_is_a_closed_error(db_path: str, where: str) -> None:
    store = SQLiteStore(":memory:" if where == "memory" else db_path)
    store.close()
    with pytest.raises(ClosedError):
        store.stats(Scope(), 0)
    with pytest.raises(ClosedError):  # was a raw sqlite3.ProgrammingError
        assert store.embedder_label is None


def test_close_does_not_wait_for_another_connection_reading_an_older_snapshot(
    db_path: str, clock: Clock
) -> None:
    """``close()`` truncates the write-ahead log only if no one needs it: it waited out
    the whole busy timeout (30 s by default) while another process held a read."""
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as mem:
        mem.remember("u", "likes", "tea")
    other = sqlite3.connect(db_path, isolation_level=None)  # as another process reads
    try:
        other.execute("BEGIN")
        assert other.execute("SELECT count(*) FROM claims").fetchone() == (1,)
        mem = Memvara(store=SQLiteStore(db_path, busy_timeout=600), clock=clock,
                      llm=NullLLM(), user="u")
        mem.remember("u", "likes", "coffee")  # a commit the other snapshot predates
        closing = Background(mem.close)
        assert closing.finished(), "close() waited for another connection's read"
        closing.result()
    finally:
        other.execute("COMMIT")
        other.close()
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as mem:
        assert sorted(c.object for c in mem.get_all()) == ["coffee", "tea"]
