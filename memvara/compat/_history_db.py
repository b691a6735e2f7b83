"""Reading mem0's ``history.db``: its mutation log, checked whole before anything is
written.

mem0 2.x keeps one ``history`` table (``id, memory_id, old_memory, new_memory, event,
created_at, updated_at, is_deleted, actor_id, role``): an ``ADD`` row dated by
``created_at`` when a memory is made, an ``UPDATE`` row dated by ``updated_at`` when its
text changes, a ``DELETE`` row dated by ``updated_at`` when it goes. This module reads
that file (the only place outside memvara's store that opens SQLite: the file is
mem0's, not a memvara store) and turns it into a plan of dated events. A file that is
not such a database, is cut short, has other columns (mem0 1.x's group-chat table), or
holds a row that contradicts the ones before it is refused, naming the file.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import InvalidArgumentError

__all__ = ["COLUMNS", "Mem0Event", "read_history"]

COLUMNS = frozenset({"id", "memory_id", "old_memory", "new_memory", "event", "created_at",
                     "updated_at", "is_deleted", "actor_id", "role"})
"""The columns of mem0 2.x's ``history`` table, exactly."""


@dataclass(frozen=True, slots=True)
class Mem0Event:
    """One row of the log: what happened to which memory, and when."""

    row_id: str
    memory_id: str
    event: str  # "ADD", "UPDATE" or "DELETE"
    text: str  # the new text ("" for DELETE)
    at: datetime
    line: int  # the row's rowid, for messages


def _refuse(path: Path, problem: str) -> InvalidArgumentError:
    return InvalidArgumentError("history_db", f"{path}: not a mem0 history database: {problem}")


def _instant(path: Path, line: int, column: str, value: object) -> datetime:
    """A mem0 timestamp (ISO 8601; a naive one is UTC, as memvara reads every instant)."""
    if not isinstance(value, str):
        raise _refuse(path, f"row {line}: {column} is {value!r:.40}, not an ISO timestamp")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _refuse(path, f"row {line}: {column} {value!r:.40} is not an ISO timestamp") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _fetch(path: Path) -> list[tuple[Any, ...]]:
    """Every row of the ``history`` table, in the order mem0 wrote them."""
    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(history)")}
            if not columns:
                raise _refuse(path, "it has no history table")
            if columns != COLUMNS:
                other = ", ".join(sorted(columns - COLUMNS)) or "none"
                missing = ", ".join(sorted(COLUMNS - columns)) or "none"
                raise _refuse(path, f"its history table has other columns than mem0 2.x's"
                                    f" (extra: {other}; missing: {missing}); mem0 1.x?")
            return conn.execute(
                "SELECT rowid, id, memory_id, new_memory, event, created_at, updated_at"
                " FROM history ORDER BY rowid").fetchall()
    except sqlite3.Error as exc:  # unreadable, not a database, or cut short
        raise _refuse(path, f"it cannot be read ({exc})") from exc


def read_history(history_db: object) -> tuple[Path, list[Mem0Event]]:
    """The file's events in the order they happened (by time, then as written), each
    checked against the ones before it.

    Raises:
        InvalidArgumentError: not a path, no such file, or not a mem0 history database
            (the message names the file and the row).
    """
    if not isinstance(history_db, (str, os.PathLike)):
        raise InvalidArgumentError("history_db", f"expected a file path, got {type(history_db).__name__}")
    if not os.fspath(history_db):  # Path("") is ".", the current folder
        raise InvalidArgumentError("history_db", "must not be empty: pass the path of mem0's"
                                   " history.db (by default ~/.mem0/history.db)")
    path = Path(os.path.expanduser(os.fspath(history_db)))
    if path.is_dir():
        raise InvalidArgumentError("history_db", f"{path}: a folder, not a file; pass the path"
                                   f" of mem0's history.db inside it ({path / 'history.db'})")
    if not path.is_file():
        raise InvalidArgumentError("history_db", f"{path}: no such file")
    events = []
    for line, row_id, memory_id, new, event, created, updated in _fetch(path):
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise _refuse(path, f"row {line}: memory_id is {memory_id!r:.40}")
        if event not in ("ADD", "UPDATE", "DELETE"):
            raise _refuse(path, f"row {line}: unknown event {event!r:.40}")
        if event != "DELETE" and (not isinstance(new, str) or not new.strip()):
            raise _refuse(path, f"row {line}: {event} without a new_memory text")
        at = _instant(path, line, "created_at", created) if event == "ADD" \
            else _instant(path, line, "updated_at", updated)
        text = new if event != "DELETE" else ""
        events.append(Mem0Event(str(row_id), memory_id, event, text, at, int(line)))
    events.sort(key=lambda e: (e.at, e.line))
    live: dict[str, bool] = {}
    for e in events:
        state = live.get(e.memory_id)
        if e.event == "ADD" and state is not None:
            raise _refuse(path, f"row {e.line}: a second ADD of memory {e.memory_id!r}")
        if e.event != "ADD" and state is not True:
            raise _refuse(path, f"row {e.line}: {e.event} of memory {e.memory_id!r}, which is"
                                f" {'deleted' if state is False else 'never added'} before it")
        live[e.memory_id] = e.event != "DELETE"
    return path, events
