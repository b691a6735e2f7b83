"""``sqlite3`` errors as memvara's, and the one retry SQLite's busy handler leaves to us.

Every ``sqlite3`` exception a store method meets is raised as the ``StoreError``
subclass ``translate`` picks, chained (``raise translate(exc) from exc``), so no public
call leaks a raw ``sqlite3`` error.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from ..._errors import (
    NotAStoreError,
    ReadOnlyStoreError,
    StorageFullError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
)

__all__ = ["is_busy", "retry_busy", "translate"]


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock (SQLITE_BUSY)."""
    message = str(exc).lower()
    return "locked" in message or "busy" in message


_sleep = time.sleep  # the retry's pause (a test steps it instead of waiting)


def retry_busy(step: Callable[[], object], timeout: float) -> None:
    """Run ``step``; while SQLite answers "database is locked", try again, backing off
    from 1 ms to 50 ms, until ``timeout`` seconds have passed, then raise.

    SQLite's busy handler (the connection's ``timeout``) already waits out another
    connection's lock for ordinary statements and ``BEGIN IMMEDIATE``, so those need no
    retry. Switching a new file to WAL is the exception: when two processes open one
    new file at once, the loser gets SQLITE_BUSY at once, without waiting.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        _sleep(pause)
        pause = min(pause * 2, 0.05)


def translate(exc: sqlite3.Error) -> StoreError:
    """Map a backend exception to the memvara error a caller can act on."""
    message = str(exc).lower()
    if is_busy(exc):
        return StoreLockedError(f"the store stayed locked by another writer: {exc}")
    if "readonly" in message or "read-only" in message:
        return ReadOnlyStoreError(f"the store cannot be written: {exc}")
    if "full" in message:
        return StorageFullError(f"no space left for the store: {exc}")
    if "not a database" in message:
        return NotAStoreError(f"not a memvara store: {exc}")
    if "malformed" in message or "corrupt" in message:
        return StoreCorruptError(f"the store's file is damaged: {exc}")
    if message.startswith(("no such table", "no such column")):
        return StoreCorruptError(
            f"the store's file lacks part of its schema ({exc}): it was changed outside"
            " memvara; restore it from a backup")
    return StoreError(f"{type(exc).__name__}: {exc}")
