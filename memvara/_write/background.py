"""Background ingestion: the queue behind ``add(..., wait=False)`` and ``flush()``.

One worker thread per open memory, started on first use, applies queued calls one at a
time in the order they were queued. It runs the same code as a synchronous ``add()``,
so the embedder, redactor and model are still called with no transaction open, and the
store's write lock is taken only for the database work; reads never touch the queue.

The queue is bounded (``QUEUE_SIZE`` calls by default, ``Memvara(queue_size=)``): when
it is full, the next caller blocks until the worker takes a call off it. Backpressure,
rather than an unbounded buffer of turns in memory that a crash would lose.

What it promises, and what it does not:

* ``flush()`` returns once every call queued before it has committed (or failed).
* ``erase()``, ``purge()`` and ``forget_subject()`` wait the same way before they
  erase (``settle()``), so a turn queued before them cannot land after them.
* A synchronous write does not wait for the queue, and a read does not flush it: to
  read your own queued writes, ``flush()`` first.
* A failed call's exception is in its ``Future``, and is also kept until the next
  ``flush()`` or ``close()`` raises ``BackgroundWriteError`` for it, so a failure
  nobody looked at is never silently lost.
* ``close()`` stops taking calls, applies every queued one, then closes the store. A
  process that exits without ``close()`` still applies what is queued, at exit.
* A child forked after the worker started (``os.fork``, multiprocessing's ``fork``)
  starts a worker of its own; what the parent had queued is the parent's to apply.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime
from typing import Any, TypeVar

from .._errors import BackgroundWriteError, ClosedError
from .ingest import Turn, _turns

__all__ = ["QUEUE_SIZE", "Background", "frozen_turns"]

QUEUE_SIZE = 256
"""Calls ``add(..., wait=False)`` queues before the next caller blocks (backpressure)."""

T = TypeVar("T")
_Item = tuple[Future[Any], Callable[[], Any]]

_RUNNING: weakref.WeakSet[Background] = weakref.WeakSet()
"""Every queue whose worker is running, drained at interpreter exit."""


def frozen_turns(messages: object, role: str, ts: datetime | None, now: datetime) -> list[Turn]:
    """``add()``'s argument checked now and copied, so a bad value raises at the call
    and a list the caller changes after queueing it changes nothing; a turn with no
    ``ts`` is dated ``now``, when it was queued, not when the worker reaches it."""
    return [Turn(t.role, t.content, now if t.ts is None else t.ts, t.name, t.id)
            for t in _turns(messages, role, ts)]


def _nothing() -> None:
    return None


class Background:
    """A bounded queue of calls and the one worker thread that applies them in order."""

    def __init__(self, size: int = QUEUE_SIZE) -> None:
        self._queue: queue.Queue[_Item | None] = queue.Queue(size)
        self._lock = threading.Lock()  # orders puts against close(); the worker never takes it
        self._thread: threading.Thread | None = None
        self._closed = False
        self._failures: list[BaseException] = []
        self._failures_lock = threading.Lock()

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Queue ``call``; blocks while the queue is full. Its ``Future`` gets the result.

        Raises:
            ClosedError: ``close()`` has begun; nothing was queued.
        """
        future: Future[T] = Future()
        # Held across a blocking put, so close() cannot slip its stop marker in ahead of
        # this call (which would then never run); the worker frees room without it.
        with self._lock:
            if self._closed:
                raise ClosedError("this Memvara is closed; open a new one to keep using the store")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memvara-background", daemon=True
                )
                self._thread.start()
                _RUNNING.add(self)
            self._queue.put((future, call))
        return future

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:  # close() puts this last: nothing is queued after it
                return
            future, call = item
            if not future.set_running_or_notify_cancel():  # cancelled while it waited
                continue
            try:
                result = call()
            except BaseException as exc:  # the caller's to see, in the Future and at flush
                with self._failures_lock:
                    self._failures.append(exc)
                future.set_exception(exc)
            else:
                future.set_result(result)

    def _take_failures(self) -> list[BaseException]:
        with self._failures_lock:
            failures, self._failures = self._failures, []
        return failures

    def settle(self) -> None:
        """Block until every call queued before this one has been applied, raising none
        of their failures (they wait for ``flush()``): an erasure settles first, so that
        no turn queued before it lands after it, naming again what it erased."""
        if self._thread is not None:  # nothing was ever queued: nothing to wait for
            self.submit(_nothing).result()  # calls apply in order: all before it are done

    def flush(self) -> None:
        """Block until every call queued before this one has been applied.

        Raises:
            BackgroundWriteError: queued calls failed since the last ``flush()``.
        """
        self.settle()
        _raise_for(self._take_failures())

    def _forget_worker(self) -> None:
        """In a child this process forked: its worker did not come along, so a call
        queued here waited for it forever (``settle()``, and with it ``erase()``, hung).
        What was queued before the fork is the parent's to apply, and to report."""
        self._queue = queue.Queue(self._queue.maxsize)
        self._lock, self._failures_lock = threading.Lock(), threading.Lock()
        self._thread, self._failures = None, []

    def close(self) -> list[BaseException]:
        """Stop taking calls, apply every queued one, stop the worker. Idempotent.

        Returns:
            The failures no ``flush()`` has reported yet (the caller raises them once
            the store is closed).
        """
        with self._lock:
            if self._closed:
                return []
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._queue.put(None)
        if thread is not None:
            thread.join()
            _RUNNING.discard(self)
        return self._take_failures()


def _raise_for(failures: list[BaseException]) -> None:
    if failures:
        raise BackgroundWriteError(failures) from failures[0]


def _after_fork_in_child() -> None:
    for background in list(_RUNNING):
        background._forget_worker()
    _RUNNING.clear()


getattr(os, "register_at_fork", lambda **_: None)(after_in_child=_after_fork_in_child)


@atexit.register
def _drain_at_exit() -> None:
    """Apply what is still queued when the interpreter exits without ``close()``.

    Workers are daemon threads (one left running must not hang the exit), and atexit
    runs before daemon threads are stopped, so the queue drains here instead.
    """
    _raise_for([failure for background in list(_RUNNING) for failure in background.close()])
