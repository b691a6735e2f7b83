"""The tamper-evident write log: one chained record for every write transaction.

The choke point is the commit, not the verbs: temporary triggers on the writer
connection note every claim ended, retired, re-filed, said again, promoted, decayed or
deleted and every turn scrubbed or deleted, by calling a Python function that appends to the writer's
pending list (a savepoint's rollback drops what it undid), and ``_seal`` (which
``Connections`` runs just before every outermost ``COMMIT``) folds what the transaction
noted into one record, chained to the last (``_domain/ledger.py``), in the same
transaction: one statement, the record's insert. (The list is cut back on a transaction's
or savepoint's rollback; a single statement that SQLite undoes on its own after its
triggers ran, an error caught inside a transaction that then commits anyway, would leave
its rows in the list, where a temporary table's rows went with it. No write path here
catches such an error and goes on.) So a write path added later is logged without knowing the log exists; what
it knows that the rows do not (that it was a correction, a revert, a review's decision)
it adds with ``log_note``. The API verb and the actor come from ``logged()``, which the
facade holds around each call on the calling thread.

Inserts of claims and of turns have no trigger: any trigger on a table's INSERT, even
one that does nothing, makes SQLite keep a statement journal for every insert (a copy of
each page it touches, ~18,000 instructions of a single ``remember()``, callgrind), so
the paths that insert claims or turns name the rows themselves (``_log_inserted``). The
record's insert checks that they named them all: it happens only if the rows of
``claims`` and of ``episodes`` above the highest this connection's log has seen of each
are exactly those named; otherwise the rows that no path and no other connection's
record named (``_ABOVE``, ``_ABOVE_TURNS``) join the record as added, so an insert that
forgot to say so is still recorded. (An insert below that highest row, as a restore's,
is seen only if its path names it; tests/test_write_log_capture.py checks that every
statement inserting claims or turns is on a path that does.)

Temporary objects belong to one connection: nothing is added to the file for them, and a
process writing with ``write_log=False`` (the benchmark's switch) writes unlogged; a
claim or turn it inserts is named by the next record of a logged connection open at the
time.
"""

from __future__ import annotations

import json
import operator
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..._domain.ledger import Anchor, canonical_body, canonical_ids, genesis, keyed_digest, record_hash
from ..._errors import InvalidArgumentError, StoreError
from .._log_context import Context, Logged
from ._connections import MEMORY
from ._core import StoreCore
from ._rows import claim_rowid
from ._translate import translate

__all__ = ["LOG_OPS", "WriteLog", "keep_actors", "note", "relabel"]

_ACTORS = "temp.mv_log_actors"
"""Claims this transaction restored with the actor they were exported with."""

_NOTE = "mv_log_note"
"""The SQL function the triggers call: ``mv_log_note(op, row, detail)`` appends to the
writer's pending list in Python. (A temporary table in its place cost a write to the
temporary database per changed row and a ``DELETE ... RETURNING`` per commit: about 6
us of a ~65 us ``remember()``, measured with ``bench/governance.py``.)"""

_RELABEL = "mv_log_relabel"
"""``mv_log_relabel(old, new, rowids)``: the pending entries ``(old, row)`` whose row is
among ``rowids`` (``group_concat``'s text) become ``new``."""


def _on(event: str, op: str, row: str, table: str, when: str = "") -> str:
    return (f"CREATE TEMP TRIGGER IF NOT EXISTS mv_log_{event} AFTER {table}{when} BEGIN"
            f" SELECT {_NOTE}({op}, {row}, NULL); END")


_TRIGGERS = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_ACTORS[5:]} (row INTEGER PRIMARY KEY, actor TEXT NOT NULL)",
    _on("claim_end", "'ended'", "new.rowid", "UPDATE OF valid_to ON main.claims",
        " WHEN new.valid_to IS NOT old.valid_to"),
    _on("claim_retire", "CASE WHEN new.invalidated_at IS NULL THEN 'unretired' ELSE 'retired' END",
        "new.rowid", "UPDATE OF invalidated_at ON main.claims",
        " WHEN new.invalidated_at IS NOT old.invalidated_at"),
    _on("claim_refile", "'refiled'", "new.rowid", "UPDATE OF subject_key ON main.claims",
        " WHEN new.subject_key IS NOT old.subject_key"),
    # said again (observations), promoted (memory_type), decayed (salience): each a write
    _on("claim_again", "'reinforced'", "new.rowid", "UPDATE OF observations ON main.claims",
        " WHEN new.observations IS NOT old.observations"),
    _on("claim_promote", "'promoted'", "new.rowid", "UPDATE OF memory_type ON main.claims",
        " WHEN new.memory_type IS NOT old.memory_type"),
    _on("claim_decay", "'decayed'", "new.rowid", "UPDATE OF salience ON main.claims",
        " WHEN new.salience IS NOT old.salience"),
    _on("claim_out", "'erased'", "old.rowid", "DELETE ON main.claims"),
    _on("turn_edit", "'turns_scrubbed'", "new.rowid", "UPDATE OF content ON main.episodes",
        " WHEN new.content IS NOT old.content"),
    _on("turn_out", "'turns_erased'", "old.rowid", "DELETE ON main.episodes"),
    # aliases have no rowid, and their keys are names: counted, nothing else
    _on("alias_in", "'aliases_learned'", "NULL", "INSERT ON main.entity_aliases"),
    _on("alias_out", "'aliases_removed'", "NULL", "DELETE ON main.entity_aliases"),
)

LOG_OPS = ("added", "ended", "retired", "unretired", "refiled", "reinforced", "promoted", "decayed",
           "erased", "archived", "restored", "turns_added", "turns_scrubbed", "turns_erased",
           "aliases_learned", "aliases_removed")
"""What a record's body holds: claims' and turns' rowids, listed; aliases, counted."""

_Pending = list[tuple[str, "int | None", "str | None"]]
_APPEND = "INSERT INTO write_log (seq, at, actor, action, body, hash) VALUES (?, ?, ?, ?, ?, ?)"
_APPEND_CHECKED = (
    "INSERT INTO write_log (seq, at, actor, action, body, hash) VALUES (?, ?, ?, ?, ?,"
    " CASE WHEN (SELECT count(*) FROM main.claims WHERE rowid > ?) = ?"
    " AND (SELECT count(*) FROM main.episodes WHERE rowid > ?) = ? THEN ? END)"
)
"""``_APPEND``, its hash ``NULL`` (refused: ``IntegrityError``) unless the rows of
``claims`` and of ``episodes`` above the highest of each the log has seen number exactly
the new ones the record names. (Each count costs under 1 us inside the insert; as
``INSERT ... SELECT ... WHERE``, about twice that.)"""


def _above(table: str, ops: Sequence[str]) -> str:
    named = " UNION ALL ".join(
        f"SELECT j.value FROM write_log w, json_each(w.body, '$.{op}') j"
        " WHERE w.seq > :seen AND json_valid(w.body)" for op in ops)
    return f"SELECT rowid, rowid IN ({named}) FROM {table} WHERE rowid > :top ORDER BY rowid"


_ABOVE = _above("claims", ("added", "restored"))
"""The rows of ``claims`` above ``top``, each with whether a record after ``seen`` names
it (another connection's inserts are named by its own records; a tampered body is
``verify()``'s to report, not a write's to fail on)."""
_ABOVE_TURNS = _above("episodes", ("turns_added",))
"""``_ABOVE`` for turns."""
_SEEN = ("SELECT (SELECT coalesce(max(rowid), 0) FROM claims),"
         " (SELECT coalesce(max(rowid), 0) FROM episodes),"
         " (SELECT coalesce(max(seq), 0) FROM write_log)")
_BLIND = (2**63 - 1, 2**63 - 1, 0)
"""``_log_seen`` when the table could not be read at the open: no row is above it, so
the records hold what the paths name and nothing is looked for."""


def _unlogged(op: str, rows: Sequence[int]) -> None:
    """``_log_inserted`` of a store that keeps no log."""


def _new_rows(body: dict[str, Any], top: int) -> list[int]:
    """The claims ``body`` names as added or restored above ``top`` and not deleted since."""
    new = [row for row in body.get("added", ()) if row > top]
    if "restored" in body:
        new += [row for row in body["restored"] if row > top]
    if new and ("erased" in body or "archived" in body):
        gone = {*body.get("erased", ()), *body.get("archived", ())}
        new = [row for row in new if row not in gone]
    return new


def _new_turns(body: dict[str, Any], top: int) -> list[int]:
    """The turns ``body`` names as added above ``top`` and not deleted since."""
    new = [row for row in body.get("turns_added", ()) if row > top]
    if new and "turns_erased" in body:
        gone = set(body["turns_erased"])
        new = [row for row in new if row not in gone]
    return new


_LISTED_ALONE = frozenset(("added", "ended", "retired", "unretired", "refiled", "reinforced",
                           "promoted", "decayed", "restored", "turns_added", "turns_scrubbed"))
"""The ops a record lists a row under with nothing more to do: not the deletions (their
``claim_log`` rows go, and a row inserted and deleted in one transaction is not new)."""
_OP = operator.itemgetter(0)


def _rowids(rows: _Pending, top: int, top_turn: int) -> tuple[str, list[int], list[int]] | None:
    """For a pending list of rowids under ``_LISTED_ALONE`` ops (nearly every write's: a
    single write's claim, a revision's two, an ``add()``'s turns and claims): the record's
    text, built from the list (``canonical_ids`` of the list grouped by op, in order), and
    the claims and turns it adds above ``top`` and ``top_turn``. ``None`` for any other list
    (``_body`` builds those). A stable sort on the op keeps each op's rows in the order
    they came, as grouping does; no dict, no second pass."""
    if len(rows) == 1:  # one row changed: most single writes
        op, row, _ = rows[0]
        if row is None or op not in _LISTED_ALONE:
            return None
        return (f'{{"{op}":[{row}]}}', [row] if row > top and (op == "added" or op == "restored") else [],
                [row] if row > top_turn and op == "turns_added" else [])
    new: list[int] = []
    new_turns: list[int] = []
    text = "{"
    last = ""
    for op, row, _ in sorted(rows, key=_OP):
        if row is None or op not in _LISTED_ALONE:
            return None
        if op == last:
            text += f",{row}"
        else:
            text += f'],"{op}":[{row}' if last else f'"{op}":[{row}'
            last = op
        if op == "added" or op == "restored":
            if row > top:
                new.append(row)
        elif op == "turns_added" and row > top_turn:
            new_turns.append(row)
    return text + "]}", new, new_turns


def _unnamed(conn: sqlite3.Connection, query: str, top: int, seen: int, ours: list[int]) -> tuple[list[int], int]:
    """The rows ``query`` finds above ``top`` that neither this record (``ours``) nor a
    record after ``seen`` names, and the highest row above ``top`` (``top`` if none)."""
    found = conn.execute(query, {"top": top, "seen": seen}).fetchall()
    named = set(ours)
    return [row for row, elsewhere in found if not elsewhere and row not in named], (
        found[-1][0] if found else top)


_LOGGING = "SELECT 1 FROM temp.sqlite_master WHERE name = 'mv_log_actors'"
"""Whether this connection logs (its writer made the log's temporary objects)."""


def note(conn: sqlite3.Connection, kind: str, fields: dict[str, object]) -> None:
    """``WriteLog.log_note`` for another part of the store, inside its transaction."""
    if conn.execute(_LOGGING).fetchone():
        conn.execute(f"SELECT {_NOTE}('note', NULL, ?)", (canonical_body({kind: fields}),))


def relabel(conn: sqlite3.Connection, old: str, new: str, rows: str) -> None:
    """Inside a write transaction: record the claims whose rowids table ``rows`` holds
    as ``new`` rather than ``old`` (a delete that archived, an insert that restored)."""
    if conn.execute(_LOGGING).fetchone():
        conn.execute(f"SELECT {_RELABEL}(?, ?, group_concat(rowid)) FROM {rows}", (old, new))


def keep_actors(conn: sqlite3.Connection, actors: Sequence[tuple[int, str]]) -> None:
    """Inside a write transaction: the claims at these rowids were written by these
    actors (an import putting back what an export carried), whoever commits them."""
    if actors and conn.execute(_LOGGING).fetchone():
        conn.executemany(f"INSERT OR REPLACE INTO {_ACTORS} (row, actor) VALUES (?, ?)", actors)
        conn.execute(f"SELECT {_NOTE}('kept', NULL, NULL)")  # the seal reads them


class WriteLog(StoreCore):
    """The write log part of ``SQLiteStore`` (see ``WriteLogStore`` in ``store.base``)."""

    def __init__(
        self,
        path: str | os.PathLike[str] = MEMORY,
        *,
        busy_timeout: float = 30.0,
        tracer: Callable[[str, Sequence[object]], None] | None = None,
        read_only: bool = False,
        write_log: bool = True,
    ) -> None:
        super().__init__(path, busy_timeout=busy_timeout, tracer=tracer, read_only=read_only)
        if not isinstance(write_log, bool):
            self.close()
            raise InvalidArgumentError("write_log", f"expected True or False, got {write_log!r:.40}")
        self._log_context = threading.local()
        self._log_on = write_log and self._read_only is None
        if self._log_on:
            # the pending table lives in memory, not in a temporary file with a journal
            # of its own (and setting this later would drop the tables made here)
            self._writer.execute("PRAGMA temp_store = MEMORY")
            self._writer.create_function(_NOTE, 3, self._note_row)
            self._writer.create_function(_RELABEL, 3, self._relabel_rows)
            for statement in _TRIGGERS:
                self._writer.execute(statement)
        self._log_inserted = self._note_inserted if self._log_on else _unlogged
        self._log_seen: tuple[int, int, int] = (0, 0, 0)
        """The highest rowid of ``claims`` and of ``episodes`` and the last record's
        ``seq`` when this log last looked (its open, its last commit): rows above are new."""
        self._log_next = (0, "", 0, 0)
        """The record this transaction appended: ``seq``, hash, and the highest row of
        ``claims`` and of ``episodes`` it accounted for (``_sealed`` takes them in at the
        commit)."""
        self._log_committed = self._sealed  # one bound method, not one a write
        self._log_cursor = self._writer.cursor()
        if self._log_on:
            try:
                top, turns, seq = self._writer.execute(_SEEN).fetchone()
                self._log_seen = (int(top), int(turns), int(seq))
            except sqlite3.DatabaseError:  # a damaged file, opened for its integrity check
                self._log_seen = _BLIND
        self._log_ids = (self._meta("log_store_id") or "", self._meta("log_secret") or "")
        self._log_pending: _Pending = []
        """What this writer's open transaction changed, in order: ``(op, rowid, note)``."""
        self._log_marks: list[int] = [0]
        """``len(_log_pending)`` when each open savepoint began (index: its depth), so a
        rollback drops what it undid, as the temporary table's rows were."""
        self._log_last: tuple[int, str] | None = None
        """The last record this store appended and saw commit (``seq``, hash): the next
        one chains from it without reading the table; one another connection appended
        meanwhile takes the ``seq`` and sends the append back to the table."""

    # -- writing --------------------------------------------------------------------------
    def logged(self, action: str, actor: str, at: int, *, named: bool = False) -> Logged:
        """Name what this thread commits inside: the API verb, who asked, and when (the
        memory's clock, UTC microseconds); ``named``: the caller gave the actor, so each
        claim added records it (otherwise a claim's actor is its scope's default, which
        ``why()`` derives). Nested calls keep the outermost name."""
        return Logged(self._log_context, (action, actor, at, named))

    def log_note(self, kind: str, **fields: object) -> None:
        """Add ``{kind: fields}`` to the record of this thread's open write transaction
        (a correction, a revert, a review's decision, a tombstone): ids, counts and
        ``log_digest`` values only, never text. Rolled back with the transaction."""
        if not self._log_on:
            return
        with self._writing():
            self._log_pending.append(("note", None, canonical_body({kind: fields})))

    def log_digest(self, text: str) -> str:
        """``text``'s digest keyed by this store's secret (what the log may hold of text)."""
        return keyed_digest(self._log_ids[1], text)

    # -- capture: the triggers and the writers call these on the writer, under its lock --
    def _note_row(self, op: str, row: int | None, detail: str | None) -> None:
        self._log_pending.append((op, row, detail))

    def _note_inserted(self, op: str, rows: Sequence[int]) -> None:
        if len(rows) == 1:  # a single write's claim
            self._log_pending.append((op, rows[0], None))
        else:
            self._log_pending.extend([(op, row, None) for row in rows])

    def _relabel_rows(self, old: str, new: str, rows: str | None) -> None:
        """``rows``: rowids joined by commas (``group_concat``), or ``None`` for none."""
        if rows is not None:
            picked = set(map(int, rows.split(",")))
            self._log_pending = [(new, row, None) if op == old and row in picked else (op, row, detail)
                                 for op, row, detail in self._log_pending]

    def _begin(self) -> tuple[int, int]:
        opened = super()._begin()
        if opened[0] and self._log_on:  # a transaction starts with nothing pending: mark 0
            self._log_marks[opened[0]:] = [len(self._log_pending)]
        return opened

    def _rollback(self, depth: int, mark: int) -> None:
        super()._rollback(depth, mark)
        if self._log_on:
            del self._log_pending[self._log_marks[depth]:]

    def _seal(self) -> None:
        pending = self._log_pending
        if pending:  # empty when the log is off: nothing calls _note_row
            self._log_pending = []
            try:
                self._append(self._writer, pending)
            except sqlite3.Error as exc:  # pragma: no cover - the transaction's own writes failed first
                raise translate(exc) from exc

    def _append(self, conn: sqlite3.Connection, rows: _Pending) -> None:
        top, top_turn, seen = self._log_seen
        body: dict[str, Any] | None = None
        kept: dict[int, str] = {}
        swept: list[int] = []  # claims another connection inserted unlogged: not this actor's
        if (listed := _rowids(rows, top, top_turn)) is not None:
            text, new, new_turns = listed
        else:
            body, text, kept = self._body(conn, rows)
            new = _new_rows(body, top)
            new_turns = _new_turns(body, top_turn)
        stack: list[Context] | None = getattr(self._log_context, "stack", None)
        action, actor, at, named = stack[0] if stack else ("write", "", time.time_ns() // 1000, False)
        seq, prev = self._log_last or self._read_head(conn)
        seq += 1
        digest = record_hash(prev, seq, at, actor, action, text)
        try:
            self._log_cursor.execute(_APPEND_CHECKED, (seq, at, actor, action, text, top, len(new),
                                                       top_turn, len(new_turns), digest))
            if new:  # each above top
                top = max(new)
            if new_turns:
                top_turn = max(new_turns)
        except sqlite3.IntegrityError:  # a row nothing named, or another connection wrote
            body = self._body(conn, rows)[0]  # (again: the rowids' path built no dict)
            unnamed, top = _unnamed(conn, _ABOVE, top, seen, new)
            unnamed_turns, top_turn = _unnamed(conn, _ABOVE_TURNS, top_turn, seen, new_turns)
            if unnamed:
                body["added"] = [*body.get("added", ()), *unnamed]
                swept = unnamed
            if unnamed_turns:
                body["turns_added"] = [*body.get("turns_added", ()), *unnamed_turns]
            if unnamed or unnamed_turns:
                text = canonical_body(body)
            seq, prev = self._read_head(conn)
            seq += 1
            digest = record_hash(prev, seq, at, actor, action, text)
            conn.execute(_APPEND, (seq, at, actor, action, text, digest))
        # the head is this record once (and only if) the transaction commits
        self._log_next = (seq, digest, top, top_turn)
        self._after_commit.append(self._log_committed)
        if body is None:  # rowids alone: nothing erased, no import's actors
            if named:
                added_ids = cast("list[int]", [row for op, row, _ in rows if op == "added"])  # none is None
                self._keep_actors(conn, seq, actor, added_ids, kept)
            return
        if "erased" in body:
            conn.executemany("DELETE FROM claim_log WHERE claim_rowid = ?",
                             [(row,) for row in body["erased"]])
        added = body.get("added")
        if added and (named or kept):
            self._keep_actors(conn, seq, actor if named else None,
                              [row for row in added if row not in swept], kept)

    @staticmethod
    def _keep_actors(conn: sqlite3.Connection, seq: int, actor: str | None, added: list[int],
                     kept: dict[int, str]) -> None:
        """``claim_log`` rows for the claims ``added``: the actor an import ``kept``, else
        ``actor`` (the one the call named; ``None``: only the kept ones get a row)."""
        conn.executemany(
            "INSERT OR REPLACE INTO claim_log (claim_rowid, seq, actor) VALUES (?, ?, ?)",
            [(row, seq, kept.get(row, actor)) for row in added if actor is not None or row in kept])

    def _body(self, conn: sqlite3.Connection, rows: _Pending) -> tuple[dict[str, Any], str, dict[int, str]]:
        """A record's body, its canonical text, and the actors an import kept."""
        body: dict[str, Any] = {}
        notes: list[Any] = []
        kept: dict[int, str] = {}
        counted = False
        for op, row, detail in rows:
            if row is not None:  # a claim's or a turn's rowid, listed by what happened
                ids = body.get(op)
                if ids is None:
                    body[op] = [row]
                else:
                    ids.append(row)
            elif op == "note":
                notes.append(detail)
            elif op == "kept":
                kept = dict(conn.execute(f"DELETE FROM {_ACTORS} RETURNING row, actor").fetchall())
            else:
                body[op] = body.get(op, 0) + 1
                counted = True
        if notes:
            body["notes"] = [json.loads(note) for note in notes]
        # rowids alone (nearly every write's body) are joined without canonical_body's check
        return body, canonical_body(body) if notes or counted else canonical_ids(body), kept

    def _sealed(self) -> None:
        """After the commit: the record just appended is the head, and the rows of
        ``claims`` and ``episodes`` above the highest it accounted for are new."""
        seq, digest, top, top_turn = self._log_next
        self._log_last = (seq, digest)
        self._log_seen = (top, top_turn, seq)

    def _read_head(self, conn: sqlite3.Connection) -> tuple[int, str]:
        head = conn.execute("SELECT seq, hash FROM write_log ORDER BY seq DESC LIMIT 1").fetchone()
        return (0, genesis(self._log_ids[0])) if head is None else (int(head[0]), str(head[1]))

    # -- reading --------------------------------------------------------------------------
    def log_identity(self) -> str:
        """This store's identity, as anchors name it."""
        return self._log_ids[0]

    def log_head(self) -> Anchor:
        """The last record's anchor (``seq`` 0 and the genesis hash for an empty log)."""
        rows = self._query("SELECT seq, hash FROM write_log ORDER BY seq DESC LIMIT 1")
        if not rows:
            return Anchor(self._log_ids[0], 0, genesis(self._log_ids[0]))
        return Anchor(self._log_ids[0], int(rows[0][0]), str(rows[0][1]))

    def log_records(self, after: int, limit: int) -> list[tuple[int, int, str, str, str, str]]:
        """Up to ``limit`` records with ``seq > after``, in order: ``(seq, at, actor,
        action, body, hash)`` as stored (a tampered row is returned as it is)."""
        return [tuple(r) for r in self._query(
            "SELECT seq, at, actor, action, body, hash FROM write_log"
            " WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit))]

    def foreign_logs(self) -> list[tuple[str, tuple[int, int, str, str, str, str]]]:
        """The write logs of other stores an import brought in, by store and ``seq``."""
        return [(str(r[0]), tuple(r[1:])) for r in self._query(
            "SELECT source, seq, at, actor, action, body, hash FROM imported_log"
            " ORDER BY source, seq")]

    def restore_logs(self, records: Sequence[tuple[str, tuple[int, int, str, str, str, str]]]) -> int:
        """Keep other stores' log records (checked chains); a record this store holds for
        that store and ``seq`` already is refused (``StoreError``)."""
        with self._writing() as conn:
            try:
                conn.executemany(
                    "INSERT INTO imported_log (source, seq, at, actor, action, body, hash)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", [(source, *record) for source, record in records])
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"a log record of that store and number is here already ({exc})") from None
        return len(records)

    def claim_actor(self, claim_id: str) -> str | None:
        """The actor the write of claim ``claim_id`` named (``actor=``, or an import's
        line); ``None`` when it named none. The id is taken as found: the caller has
        checked it names a visible claim."""
        rows = self._query("SELECT actor FROM claim_log WHERE claim_rowid = ?",
                           (claim_rowid(claim_id),))
        return str(rows[0][0]) if rows else None
