"""The tamper-evident write log of the PostgreSQL store: one chained record for every
write transaction, as the SQLite store keeps it (``store/sqlite/_log.py``).

The choke point is the commit, as there: statement-level triggers (transition tables)
note every claim inserted, ended, retired, re-filed or deleted, every turn inserted,
scrubbed or deleted and every alias learned or removed into ``log_pending``, and
``_seal`` (which ``Connections`` runs just before every outermost ``COMMIT``) folds what
the transaction noted into one record in the same transaction. The triggers live in the
schema, so a write made by any connection is noted; ``log_pending`` is UNLOGGED (its rows
never outlive the transaction that wrote them) and a transaction sees only its own.

Writers on many machines append to one chain: the seal takes a transaction-scoped
advisory lock, reads the head and appends, so two commits never take one ``seq``. The
lock is held from the seal to the commit only, after every slot lock the transaction
took, so it joins no cycle.

The store's identity and the secret that keys the log's digests live in ``log_keys``
(one row, made with the tables): see docs/postgres.md on who can read it.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.ledger import Anchor, canonical_body, genesis, keyed_digest, record_hash
from ..._domain.model import Scope
from ..._errors import StoreError
from .._log_context import Context, Logged
from .._transfer import ClaimRecord
from ..sqlite._rows import claim_rowid
from . import _sql
from ._transfer import Transfer

__all__ = ["WriteLog"]


def _trigger(table: str, event: str, name: str, select: str) -> tuple[str, str]:
    """A statement-level trigger on ``table`` noting ``select``'s ``(op, row)`` rows."""
    rows = {"INSERT": "REFERENCING NEW TABLE AS new_rows",
            "DELETE": "REFERENCING OLD TABLE AS old_rows",
            "UPDATE": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"}[event]
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO log_pending (op, row) {select}; RETURN NULL; END $$",
        f"CREATE OR REPLACE TRIGGER {name} AFTER {event} ON {table} {rows}"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
    )


_CHANGED = "FROM new_rows n JOIN old_rows o ON o.rowid = n.rowid"

_XACT = "xact xid8 NOT NULL DEFAULT pg_current_xact_id()"
"""``log_pending``'s column naming the top-level transaction that noted each row (a
savepoint's rows too, which ``xmin`` names by their subtransaction): the seal tells its
own rows from those a connection outside memvara committed."""

_CLAIM_CHANGE = _trigger("claims", "UPDATE", "log_claim_change", (
    "SELECT v.op, n.rowid " + _CHANGED + " CROSS JOIN LATERAL (VALUES"
    " (CASE WHEN n.valid_to IS DISTINCT FROM o.valid_to THEN 'ended' END, 1),"
    " (CASE WHEN n.invalidated_at IS NOT DISTINCT FROM o.invalidated_at THEN NULL"
    "  WHEN n.invalidated_at IS NULL THEN 'unretired' ELSE 'retired' END, 2),"
    " (CASE WHEN n.subject_key IS DISTINCT FROM o.subject_key THEN 'refiled' END, 3),"
    " (CASE WHEN n.observations IS DISTINCT FROM o.observations THEN 'reinforced' END, 4),"
    " (CASE WHEN n.memory_type IS DISTINCT FROM o.memory_type THEN 'promoted' END, 5),"
    " (CASE WHEN n.salience IS DISTINCT FROM o.salience THEN 'decayed' END, 6)"
    ") AS v(op, k) WHERE v.op IS NOT NULL ORDER BY n.rowid, v.k"))
"""What a claim's update notes: ended, retired, re-filed, said again, promoted, decayed
(a schema whose function predates the last three gets this one at a writable open)."""

LOG_DDL = (
    """
    CREATE TABLE write_log (
        seq BIGINT PRIMARY KEY, at BIGINT NOT NULL, actor TEXT NOT NULL,
        action TEXT NOT NULL, body TEXT NOT NULL, hash TEXT NOT NULL
    )
    """,
    "CREATE TABLE claim_log (claim_rowid BIGINT PRIMARY KEY, seq BIGINT NOT NULL,"
    " actor TEXT NOT NULL)",
    """
    CREATE TABLE imported_log (
        source TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, at BIGINT NOT NULL,
        actor TEXT NOT NULL, action TEXT NOT NULL, body TEXT NOT NULL, hash TEXT NOT NULL,
        PRIMARY KEY (source, seq)
    )
    """,
    f"CREATE UNLOGGED TABLE log_pending (id BIGSERIAL PRIMARY KEY, op TEXT NOT NULL,"
    f" row BIGINT, detail TEXT, {_XACT})",
    "CREATE TABLE log_keys (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),"
    " store_id TEXT NOT NULL, secret TEXT NOT NULL)",
    *_trigger("claims", "INSERT", "log_claim_in",
              "SELECT 'added', rowid FROM new_rows ORDER BY rowid"),
    *_CLAIM_CHANGE,
    *_trigger("claims", "DELETE", "log_claim_out",
              "SELECT 'erased', rowid FROM old_rows ORDER BY rowid"),
    *_trigger("episodes", "INSERT", "log_turn_in",
              "SELECT 'turns_added', rowid FROM new_rows ORDER BY rowid"),
    *_trigger("episodes", "UPDATE", "log_turn_edit",
              "SELECT 'turns_scrubbed', n.rowid " + _CHANGED
              + " WHERE n.content IS DISTINCT FROM o.content ORDER BY n.rowid"),
    *_trigger("episodes", "DELETE", "log_turn_out",
              "SELECT 'turns_erased', rowid FROM old_rows ORDER BY rowid"),
    # aliases: counted (their keys are names); an upsert that replaced one is learned too
    *_trigger("entity_aliases", "INSERT", "log_alias_in",
              "SELECT 'aliases_learned', NULL::bigint FROM new_rows"),
    *_trigger("entity_aliases", "UPDATE", "log_alias_again",
              "SELECT 'aliases_learned', NULL::bigint FROM new_rows"),
    *_trigger("entity_aliases", "DELETE", "log_alias_out",
              "SELECT 'aliases_removed', NULL::bigint FROM old_rows"),
)
"""The write log's tables and triggers (added to a schema that lacks them on open)."""


_HEAD = "SELECT seq, hash FROM write_log ORDER BY seq DESC LIMIT 1"


class WriteLog(Transfer):
    """The write log part of ``PostgresStore`` (see ``WriteLogStore`` in ``store.base``)."""

    def _on_open(self, writer: Any) -> None:
        super()._on_open(writer)
        self._log_context = threading.local()
        if not self._read_only:
            self._ensure_tables(writer, "write_log", LOG_DDL)
            self._ensure_claim_trigger(writer)
            with self._translated():
                writer.execute(
                    "INSERT INTO log_keys (store_id, secret) VALUES (%s, %s)"
                    " ON CONFLICT DO NOTHING", [secrets.token_hex(16), secrets.token_hex(32)])
        # a read-only store of a schema made before the log: refused, named (StoreError)
        ((store_id, secret),) = self._query("SELECT store_id, secret FROM log_keys")
        self._log_ids = (str(store_id), str(secret))

    def _ensure_claim_trigger(self, writer: Any) -> None:
        """Bring a schema whose log was made before claims' updates noted reinforcements,
        or before ``log_pending`` named each row's transaction, up to date (one read at
        each open; the change, once, under the schema's advisory lock)."""
        with self._translated():
            source, has_xact = writer.execute(
                "SELECT (SELECT prosrc FROM pg_proc WHERE oid = to_regproc(%s)), EXISTS (SELECT 1"
                " FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'xact')",
                [f"{self._schema}.log_claim_change", f"{self._schema}.log_pending"]).fetchone()
            if "'reinforced'" in source and has_xact:
                return
            with writer.transaction():
                writer.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                               [f"memvara-schema:{self._schema}"])
                writer.execute(_CLAIM_CHANGE[0])
                writer.execute(f"ALTER TABLE log_pending ADD COLUMN IF NOT EXISTS {_XACT}")

    # -- writing --------------------------------------------------------------------------
    def logged(self, action: str, actor: str, at: int, *, named: bool = False) -> Logged:
        """Name what this thread commits inside; see ``WriteLogStore.logged``."""
        return Logged(self._log_context, (action, actor, at, named))

    def log_note(self, kind: str, **fields: object) -> None:
        """Add ``{kind: fields}`` to the record of this thread's open write transaction
        (ids, counts and ``log_digest`` values only). Rolled back with it."""
        with self._writing() as conn:
            self._exec(conn, "INSERT INTO log_pending (op, detail) VALUES ('note', %s)",
                       [canonical_body({kind: fields})])

    def log_digest(self, text: str) -> str:
        """``text``'s digest keyed by this store's secret (what the log may hold of text)."""
        return keyed_digest(self._log_ids[1], text)

    def _seal(self) -> None:
        # Inside the commit's pipeline (``Connections._end``): the pending rows, the
        # chain's lock and its head go in one round trip. The head is read after the lock
        # is granted (each statement reads what was committed when it starts), so no two
        # commits take one ``seq``; the record's insert then rides with the ``COMMIT``.
        conn = self._writer
        pending = self._exec(conn, "DELETE FROM log_pending RETURNING id, op, row, detail,"
                             " xact = pg_current_xact_id()")  # noted by this transaction
        self._exec(conn, "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                   [f"memvara-log:{self._schema}"])
        head = self._exec(conn, _HEAD)
        with self._translated():
            rows = pending.fetchall()
            found = head.fetchone()
        if rows:
            rows.sort()
            self._append(conn, rows, self._head_of(found))

    def _append(self, conn: Any, rows: list[Any], head: tuple[int, str]) -> None:
        body: dict[str, Any] = {}
        notes: list[Any] = []
        kept: dict[int, str] = {}
        swept: set[int] = set()  # claims a connection outside memvara inserted: not this actor's
        for _, op, row, detail, ours in rows:
            if op == "added" and not ours:
                swept.add(int(row))
            if op == "kept":
                kept[int(row)] = str(detail)
            elif op == "note":
                notes.append(json.loads(detail))
            elif row is None:
                body[op] = body.get(op, 0) + 1
            else:
                body.setdefault(op, []).append(int(row))
        if notes:
            body["notes"] = notes
        stack: list[Context] | None = getattr(self._log_context, "stack", None)
        action, actor, at, named = stack[0] if stack else ("write", "", time.time_ns() // 1000, False)
        text = canonical_body(body)
        seq, prev = head
        seq += 1
        self._exec(conn, "INSERT INTO write_log (seq, at, actor, action, body, hash)"
                   " VALUES (%s, %s, %s, %s, %s, %s)",
                   [seq, at, actor, action, text, record_hash(prev, seq, at, actor, action, text)])
        if "erased" in body:
            self._exec(conn, "DELETE FROM claim_log WHERE claim_rowid = ANY(%s)", [body["erased"]])
        added = body.get("added")
        if added and (named or kept):
            self._many(conn, (
                "INSERT INTO claim_log (claim_rowid, seq, actor) VALUES (%s, %s, %s)"
                " ON CONFLICT (claim_rowid) DO UPDATE SET seq = excluded.seq,"
                " actor = excluded.actor"),
                [(row, seq, kept.get(row, actor)) for row in added
                 if (named and row not in swept) or row in kept])

    def _relabel(self, conn: Any, old: str, new: str, rowids: Sequence[int]) -> None:
        """Record these claims as ``new`` rather than ``old`` in this transaction's
        record (a delete that archived, an insert that restored)."""
        self._exec(conn, "UPDATE log_pending SET op = %s WHERE op = %s AND row = ANY(%s)",
                   [new, old, list(rowids)])

    def _read_head(self) -> tuple[int, str]:
        head = self._query(_HEAD)
        return self._head_of(head[0] if head else None)

    def _head_of(self, row: Any) -> tuple[int, str]:
        """The chain's head from ``_HEAD``'s row: ``seq`` 0 and the genesis hash for none."""
        return (0, genesis(self._log_ids[0])) if row is None else (int(row[0]), str(row[1]))

    def _restore_claims(self, conn: Any, claims: Sequence[ClaimRecord],
                        vectors: npt.NDArray[np.float32]) -> None:
        """Restore as ``Transfer`` does, keeping the actors the records carry for the
        seal to name in ``claim_log`` (an import keeps who wrote each claim)."""
        super()._restore_claims(conn, claims, vectors)
        self._many(conn, "INSERT INTO log_pending (op, row, detail) VALUES ('kept', %s, %s)",
                   [(claim_rowid(r.claim.id), r.actor) for r in claims if r.actor is not None])

    def dump_claims(self, scope: Scope) -> Iterator[ClaimRecord]:
        """As ``Transfer.dump_claims``, each record with the actor ``claim_log`` names."""
        where, params = _sql.scope_subtree(scope)
        actors = dict(self._query(
            "SELECT l.claim_rowid, l.actor FROM claim_log l JOIN claims ON claims.rowid ="
            f" l.claim_rowid WHERE {where}", params))
        for record in super().dump_claims(scope):
            actor = actors.get(claim_rowid(record.claim.id))
            yield record if actor is None else replace(record, actor=actor)

    # -- reading --------------------------------------------------------------------------
    def log_identity(self) -> str:
        """This store's identity, as anchors name it."""
        return self._log_ids[0]

    def log_head(self) -> Anchor:
        """The last record's anchor (``seq`` 0 and the genesis hash for an empty log)."""
        seq, digest = self._read_head()
        return Anchor(self._log_ids[0], seq, digest)

    def log_records(self, after: int, limit: int) -> list[tuple[int, int, str, str, str, str]]:
        """Up to ``limit`` records with ``seq > after``, in order, as stored."""
        return [(int(r[0]), int(r[1]), r[2], r[3], r[4], r[5]) for r in self._query(
            "SELECT seq, at, actor, action, body, hash FROM write_log"
            " WHERE seq > %s ORDER BY seq LIMIT %s", [after, limit])]

    def foreign_logs(self) -> list[tuple[str, tuple[int, int, str, str, str, str]]]:
        """The write logs of other stores an import brought in, by store and ``seq``."""
        return [(str(r[0]), (int(r[1]), int(r[2]), r[3], r[4], r[5], r[6])) for r in self._query(
            "SELECT source, seq, at, actor, action, body, hash FROM imported_log"
            " ORDER BY source, seq")]

    def restore_logs(self, records: Sequence[tuple[str, tuple[int, int, str, str, str, str]]]) -> int:
        """Keep other stores' log records (checked chains); a record this store holds for
        that store and ``seq`` already is refused (``StoreError``)."""
        with self._writing() as conn:
            for source, record in records:
                if not self._exec(conn, (
                        "INSERT INTO imported_log (source, seq, at, actor, action, body, hash)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"),
                        [source, *record]).rowcount:
                    raise StoreError(f"log record {record[0]} of store {source!r:.40} is here already")
        return len(records)

    def claim_actor(self, claim_id: str) -> str | None:
        """The actor the write of claim ``claim_id`` named (``actor=``, or an import's
        line); ``None`` when it named none."""
        rows = self._query("SELECT actor FROM claim_log WHERE claim_rowid = %s",
                           [claim_rowid(claim_id)])
        return str(rows[0][0]) if rows else None
