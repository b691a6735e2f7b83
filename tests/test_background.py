"""Background ingestion: ``add(..., wait=False)``, ``flush()`` and a draining ``close()``.

The model below blocks on an Event, so a test knows the worker is mid-call: that is how
"returns at once", "reads and synchronous writes do not wait" and "a full queue blocks
the next caller" are shown without a single sleep.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path

import pytest

import memvara._write.background as background_module
from memvara import (
    AsyncMemvara,
    BackgroundWriteError,
    Claim,
    ClosedError,
    Episode,
    InvalidArgumentError,
    LLMError,
    Memvara,
    NullLLM,
    PredicateSpec,
    SQLiteStore,
    WriteReceipt,
)
from memvara._write.background import QUEUE_SIZE, Background
from memvara.store import STATES

from .conftest import NOW, Clock

WAIT = 10.0  # seconds: only ever reached when something hangs


class GatedLLM:
    """Extracts ``user drinks <last word>`` from each turn. While ``gate`` is clear,
    every call announces itself on ``entered`` and waits; a turn containing "fail"
    raises."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.seen: list[str] = []

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self.entered.set()
        assert self.gate.wait(WAIT)
        self.seen.extend(t.content for t in turns)
        if any("fail" in t.content for t in turns):
            raise TimeoutError("the model timed out")
        return [Claim("user", "drinks", t.content.split()[-1], sources=(t.id,)) for t in turns]

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        return None


class Watched(queue.Queue[object]):
    """A queue that says when a ``put`` finds it full (and is about to block)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.blocked = threading.Event()

    def put(self, item: object, block: bool = True, timeout: float | None = None) -> None:
        if self.full():
            self.blocked.set()
        super().put(item, block, timeout)


class Thread:
    """A thread running ``call``; ``join()`` waits (bounded) and re-raises."""

    def __init__(self, call: object) -> None:
        assert callable(call)
        self.value: object = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.value = call()
            except BaseException as exc:  # handed to the test thread by join()
                self.error = exc

        self._thread = threading.Thread(target=run)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> object:
        self._thread.join(WAIT)
        assert not self._thread.is_alive(), "the thread did not finish"
        if self.error is not None:
            raise self.error
        return self.value


@pytest.fixture
def model() -> Iterator[GatedLLM]:
    llm = GatedLLM()
    yield llm
    llm.gate.set()  # never leave a worker waiting on the model


@pytest.fixture
def gated(db_path: str, clock: Clock, model: GatedLLM) -> Iterator[Memvara]:
    with Memvara(db_path, clock=clock, llm=model, user="u") as mem:
        yield mem


def test_a_queued_add_returns_before_the_work_runs(gated: Memvara, model: GatedLLM) -> None:
    future = gated.add("Oolong, always oolong", wait=False)
    assert isinstance(future, Future)
    assert model.entered.wait(WAIT)  # the worker is inside the model call
    assert not future.done()
    assert gated.count() == 0  # a read neither waits for the queue nor flushes it
    model.gate.set()
    receipt = future.result(WAIT)
    assert isinstance(receipt, WriteReceipt) and [c.object for c in receipt.added] == ["oolong"]
    gated.flush()
    assert [c.object for c in gated.get_all()] == ["oolong"]


def test_a_synchronous_write_does_not_wait_for_the_queue(gated: Memvara, model: GatedLLM) -> None:
    queued = gated.add("Mostly rooibos", wait=False)
    assert model.entered.wait(WAIT)
    receipt = Thread(lambda: gated.remember("user", "likes", "jazz")).join()
    assert isinstance(receipt, WriteReceipt) and len(receipt.added) == 1
    assert not queued.done()
    model.gate.set()
    gated.flush()
    assert sorted(c.object for c in gated.get_all()) == ["jazz", "rooibos"]


def test_a_full_queue_blocks_the_next_caller_until_the_worker_takes_one(
    db_path: str, clock: Clock, model: GatedLLM
) -> None:
    with Memvara(db_path, clock=clock, llm=model, user="u", queue_size=2) as mem:
        watched = Watched(2)
        mem._core.background._queue = watched  # type: ignore[assignment]
        first = mem.add("Cup one: green", wait=False)
        assert model.entered.wait(WAIT)  # taken off the queue; the worker holds it
        queued = [mem.add("Cup two: black", wait=False), mem.add("Cup three: white", wait=False)]
        assert watched.full() and not watched.blocked.is_set()
        third = Thread(lambda: mem.add("Cup four: yellow", wait=False))
        assert watched.blocked.wait(WAIT)
        assert third.alive  # and it stays blocked: only the worker can make room
        model.gate.set()
        last = third.join()
        assert isinstance(last, Future)
        mem.flush()
        assert all(f.done() for f in [first, *queued, last])
        assert sorted(c.object for c in mem.get_all()) == ["black", "green", "white", "yellow"]


def test_queued_adds_apply_in_order_and_flush_makes_them_durable(
    db_path: str, clock: Clock
) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as mem:
        futures = [mem.add(f"I live in {city}", wait=False) for city in ("Rome", "Oslo", "Kyiv")]
        mem.flush()
        assert all(f.done() for f in futures)
        timeline = mem.history("user", "lives_in")
        assert [c.object for c in timeline] == ["Rome", "Oslo", "Kyiv"]
        assert [c.object for c in mem.get_all()] == ["Kyiv"]
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as again:
        assert again.count(states=STATES) == 3


def test_close_applies_everything_still_queued(db_path: str, clock: Clock) -> None:
    mem = Memvara(db_path, clock=clock, llm=NullLLM(), user="u")
    futures = [mem.add(f"I like {i} things", wait=False) for i in range(20)]
    mem.close()
    assert all(f.done() and f.exception() is None for f in futures)
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="u") as again:
        assert again.stats()["episodes"] == 20


def test_a_failed_queued_add_is_in_its_future_and_raised_once_at_flush(
    gated: Memvara, model: GatedLLM
) -> None:
    model.gate.set()
    ok = gated.add("Earl grey", wait=False)
    bad = gated.add("This one will fail", wait=False)
    after = gated.add("Then chai", wait=False)
    with pytest.raises(BackgroundWriteError) as raised:
        gated.flush()
    error = bad.exception(WAIT)
    assert isinstance(error, LLMError)
    assert raised.value.errors == (error,) and raised.value.__cause__ is error
    assert raised.value.code == "background_write_failed"
    assert "1 queued write(s) failed" in str(raised.value) and "more" not in str(raised.value)
    assert ok.exception() is None and after.exception() is None  # the others committed
    assert sorted(c.object for c in gated.get_all()) == ["chai", "grey"]
    gated.flush()  # reported once: the next flush has nothing to say


def test_close_raises_the_failures_no_flush_reported_and_still_closes(
    db_path: str, clock: Clock, model: GatedLLM
) -> None:
    model.gate.set()
    mem = Memvara(db_path, clock=clock, llm=model, user="u")
    failed = [mem.add(f"Attempt {i} will fail", wait=False) for i in range(3)]
    with pytest.raises(BackgroundWriteError, match=r"3 queued write\(s\) failed.*and 2 more"):
        mem.close()
    assert all(isinstance(f.exception(), LLMError) for f in failed)
    store = mem.store
    assert isinstance(store, SQLiteStore) and store.closed
    mem.close()  # idempotent, and silent now


def test_leaving_a_with_block_by_an_exception_does_not_hide_it_behind_queued_failures(
    db_path: str, clock: Clock, model: GatedLLM
) -> None:
    model.gate.set()
    with pytest.raises(KeyError):
        with Memvara(db_path, clock=clock, llm=model, user="u") as mem:
            failed = mem.add("This will fail", wait=False)
            raise KeyError("the block's own error")
    assert isinstance(failed.exception(), LLMError)

    queued: list[asyncio.Future[WriteReceipt]] = []

    async def leave(error: bool) -> None:
        async with AsyncMemvara(Memvara(db_path, clock=clock, llm=model)) as amem:
            queued.append(await amem.add(f"This will fail, {error}", wait=False))
            if error:
                raise KeyError("the block's own error")

    with pytest.raises(KeyError):
        asyncio.run(leave(True))
    with pytest.raises(BackgroundWriteError):  # no error of its own: the queue's is raised
        asyncio.run(leave(False))
    # Retrieved, as an application would: an asyncio future whose error nobody looked at
    # is logged when collected.
    assert all(isinstance(f.exception(), LLMError) for f in queued)


def test_after_close_queueing_and_flushing_raise_closed(db_path: str) -> None:
    mem = Memvara(db_path, llm=NullLLM())
    mem.close()
    with pytest.raises(ClosedError):
        mem.add("too late", wait=False)
    with pytest.raises(ClosedError):
        mem.flush()


def test_bad_arguments_raise_at_the_call_not_in_the_worker(gated: Memvara) -> None:
    for messages, kwargs, argument in [
        (42, {}, "messages"),
        ("hi", {"role": "robot"}, "role"),
        ("hi", {"ts": "yesterday"}, "ts"),
        (["ok", {"content": 3}], {}, "messages[1].content"),
        ("hi", {"wait": "no"}, "wait"),
    ]:
        with pytest.raises(InvalidArgumentError) as raised:
            gated.add(messages, **{"wait": False, **kwargs})  # type: ignore[call-overload]
        assert raised.value.argument == argument
    assert gated._core.background._thread is None  # nothing was ever queued


def test_a_queued_turn_is_copied_and_dated_when_it_was_queued(
    gated: Memvara, model: GatedLLM, clock: Clock
) -> None:
    gated.add("Ahead in the queue: kukicha", wait=False)
    assert model.entered.wait(WAIT)  # the worker is busy: the next call waits its turn
    turns = ["Milk, no sugar: assam"]
    future = gated.add(turns, wait=False)
    turns.clear()  # the caller reuses its list; the queued call kept its own copy
    clock.advance(hours=1)
    model.gate.set()
    receipt = future.result(WAIT)
    (claim,) = receipt.added
    assert claim.object == "assam"
    assert claim.valid_from == NOW  # said when queued...
    assert claim.recorded_at == clock.now  # ...and learned when the worker wrote it


def test_a_cancelled_queued_add_never_runs(gated: Memvara, model: GatedLLM) -> None:
    first = gated.add("First: sencha", wait=False)
    assert model.entered.wait(WAIT)
    second = gated.add("Second: matcha", wait=False)
    assert second.cancel()
    model.gate.set()
    gated.flush()
    assert first.result().added and model.seen == ["First: sencha"]
    assert [c.object for c in gated.get_all()] == ["sencha"]


class Announcing(queue.Queue[object]):
    """A queue that says when a call is put on it."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.put_one = threading.Event()

    def put(self, item: object, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        self.put_one.set()


ERASURES: dict[str, tuple[Callable[[Memvara], object], list[str], list[str]]] = {
    # the erasing call; the turns and the claims' objects it leaves
    "forget_subject": (lambda mem: mem.forget_subject("Zorblatt", reason="r", requested_by="q"),
                       ["[erased] pours oolong"], ["oolong"]),
    "purge": (lambda mem: mem.purge(), [], []),
    "erase": (lambda mem: mem.erase(mem.get_all(predicate="drinks")[0].id, sources=True),
              [], ["tea"]),
}


@pytest.mark.parametrize("erasure", sorted(ERASURES))
def test_an_erasure_waits_for_the_adds_queued_before_it(
    gated: Memvara, model: GatedLLM, erasure: str
) -> None:
    """A turn queued before an erasure is applied first and erased with the rest: it
    does not land afterwards, naming again what the erasure removed."""
    call, turns_left, objects_left = ERASURES[erasure]
    gated.remember("Zorblatt", "likes", "tea")
    gated.remember("user", "drinks", "oolong")
    announcing = Announcing(QUEUE_SIZE)
    gated._core.background._queue = announcing  # type: ignore[assignment]
    queued = gated.add("Zorblatt pours oolong", wait=False)
    assert model.entered.wait(WAIT)  # the worker is inside the model: nothing written yet
    announcing.put_one.clear()
    erasing = Thread(lambda: call(gated))
    assert announcing.put_one.wait(WAIT)  # the erasure queued its wait behind the add
    assert erasing.alive and not queued.done()
    model.gate.set()
    erasing.join()
    assert queued.done() and [e.content for e in gated.episodes()] == turns_left
    assert sorted(c.object for c in gated.get_all()) == objects_left


def test_an_erasure_leaves_the_failures_of_the_queue_to_flush(gated: Memvara, model: GatedLLM) -> None:
    model.gate.set()
    failed = gated.add("This one will fail", wait=False)
    gated.purge()  # waits for the queue, and raises nothing of it
    assert isinstance(failed.exception(0), LLMError)
    with pytest.raises(BackgroundWriteError):
        gated.flush()


def test_a_scoped_handle_queues_into_its_own_scope(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM(), tenant="t") as mem:
        bob = mem.scope(user="bob")
        bob.add("I live in Oslo", wait=False)
        bob.flush()
        assert [(c.object, c.scope.user) for c in bob.get_all()] == [("Oslo", "bob")]
        assert mem.scope(user="alice").count() == 0


def test_flush_with_nothing_queued_starts_no_thread(mem: Memvara) -> None:
    mem.flush()
    assert mem._core.background._thread is None


def test_queue_size_is_checked(clock: Clock) -> None:
    assert QUEUE_SIZE == 256
    for bad in (0, -1, True, 2.5):
        with pytest.raises(InvalidArgumentError, match="queue_size"):
            Memvara(clock=clock, llm=NullLLM(), queue_size=bad)  # type: ignore[arg-type]


def test_what_is_queued_at_interpreter_exit_is_applied(
    db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is a daemon thread, so the atexit hook drains it; a failure then is
    raised there, where Python prints it."""
    running: weakref.WeakSet[Background] = weakref.WeakSet()
    monkeypatch.setattr(background_module, "_RUNNING", running)
    model = GatedLLM()
    model.gate.set()
    with Memvara(db_path, clock=clock, llm=model, user="u") as mem:
        mem.add("Exit tea: pu-erh", wait=False)
        assert len(running) == 1
        background_module._drain_at_exit()
        assert [c.object for c in mem.get_all()] == ["pu-erh"] and len(running) == 0
        with pytest.raises(ClosedError):  # its queue is closed, though the store is open
            mem.add("more", wait=False)
    with Memvara(db_path, clock=clock, llm=model, user="u") as mem:
        mem.add("This will fail at exit", wait=False)
        with pytest.raises(BackgroundWriteError):
            background_module._drain_at_exit()
    background_module._drain_at_exit()  # nothing running: nothing to do


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork to fork a process")
def test_a_forked_child_queues_into_a_worker_of_its_own(db_path: str, clock: Clock) -> None:
    """The worker thread stays in the parent: in a child forked after it started, a
    queued add never ran, and ``flush()`` and ``erase()`` (which waits for the queue)
    hung. The child starts its own; what the parent queued is the parent's."""
    with Memvara(db_path, clock=clock, llm=NullLLM(), user="sam") as mem:
        porto = mem.remember("sam", "lives_in", "Porto").added[0]
        mem.add("I speak Danish", wait=False)
        mem.flush()  # the worker runs, in this process
        with warnings.catch_warnings():  # Python 3.12+ warns about forking with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            child = os.fork()
        if child == 0:  # the child: it ends by os._exit, never returning to pytest
            code = 1
            try:
                signal.alarm(int(WAIT))  # a hang ends the child by SIGALRM
                mem.flush()
                mem.add("I work at Acme", wait=False).result(WAIT)
                code = 0 if mem.erase(porto.id) else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the child ended {status}"
        assert sorted(e.content for e in mem.episodes()) == ["I speak Danish", "I work at Acme"]
        assert mem.get(porto.id) is None


def test_what_a_forked_child_runs_leaves_the_parents_worker_and_queue_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook ``os.register_at_fork`` runs in the child, run here (on one queue) where
    coverage sees it: the queue is new and empty, and the next call starts a worker."""
    background = Background(4)
    assert background.submit(lambda: 1).result(WAIT) == 1
    parents_worker, parents_queue = background._thread, background._queue
    assert parents_worker is not None
    monkeypatch.setattr(background_module, "_RUNNING", weakref.WeakSet([background]))
    background_module._after_fork_in_child()
    assert not background_module._RUNNING
    assert background._thread is None and background._queue.empty()
    assert background.submit(lambda: 7).result(WAIT) == 7
    assert background._thread is not parents_worker
    parents_queue.put(None)  # here the parent's worker is in this process too: stop it
    parents_worker.join(WAIT)
    assert not parents_worker.is_alive() and background.close() == []
