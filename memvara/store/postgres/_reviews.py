"""The review queue on PostgreSQL: evidence against what a slot holds, and the reviews it
opens, as the SQLite store keeps them (``store/sqlite/_reviews.py``).

Evidence is one row a distinct ground for one value of one slot at one scope; the
table's unique key makes a ground given twice an echo (``ON CONFLICT DO NOTHING`` counts
it out). Rows not yet counted toward a review are the ones that can open one; once a
review is open on the value, new grounds join it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._domain.model import Scope
from ..._domain.review import Review, review_id, review_rowid
from ..._domain.time import from_micros
from ..._errors import StoreError
from . import _sql
from ._forget import Forgetting
from .._review_rows import EVIDENCE_COLUMNS, REVIEW_COLUMNS, evidence_record, review_record

__all__ = ["Reviews"]

REVIEW_DDL = (
    """
    CREATE TABLE evidence (
        rowid BIGSERIAL PRIMARY KEY,
        s_tenant TEXT COLLATE "C" NOT NULL, s_user TEXT COLLATE "C" NOT NULL,
        s_agent TEXT COLLATE "C" NOT NULL, s_session TEXT COLLATE "C" NOT NULL,
        subject_key TEXT COLLATE "C" NOT NULL, predicate TEXT COLLATE "C" NOT NULL,
        object_key TEXT COLLATE "C" NOT NULL, polarity INTEGER NOT NULL,
        ground TEXT COLLATE "C" NOT NULL, observed_at BIGINT NOT NULL, actor TEXT NOT NULL,
        review BIGINT,
        UNIQUE (s_user, s_tenant, s_agent, s_session, subject_key, predicate, object_key,
                polarity, ground)
    )
    """,
    "CREATE INDEX evidence_review ON evidence (review)",
    """
    CREATE TABLE reviews (
        rowid BIGSERIAL PRIMARY KEY,
        s_tenant TEXT COLLATE "C" NOT NULL, s_user TEXT COLLATE "C" NOT NULL,
        s_agent TEXT COLLATE "C" NOT NULL, s_session TEXT COLLATE "C" NOT NULL,
        subject TEXT COLLATE "C" NOT NULL, subject_key TEXT COLLATE "C" NOT NULL,
        predicate TEXT COLLATE "C" NOT NULL, object TEXT COLLATE "C" NOT NULL,
        object_key TEXT COLLATE "C" NOT NULL, polarity INTEGER NOT NULL,
        held TEXT NOT NULL, opened_at BIGINT NOT NULL, status TEXT COLLATE "C" NOT NULL,
        closed_at BIGINT, decided_by TEXT, claim TEXT COLLATE "C"
    )
    """,
    "CREATE INDEX reviews_status ON reviews (status, s_user, s_tenant)",
)

_SLOT = ("s_tenant = %s AND s_user = %s AND s_agent = %s AND s_session = %s"
         " AND subject_key = %s AND predicate = %s AND object_key = %s AND polarity = %s")
_COLUMNS = ("rowid, subject, predicate, object, polarity, held, opened_at, status, closed_at,"
            " decided_by, claim, (SELECT count(*) FROM evidence WHERE review = reviews.rowid),"
            " s_tenant, s_user, s_agent, s_session")


def _review(row: Sequence[Any]) -> Review:
    return Review(
        review_id(row[0]), Scope(*(level or None for level in row[12:16])), row[1], row[2],
        row[3], int(row[4]), tuple(json.loads(row[5])), int(row[11]), from_micros(row[6]),
        row[7], None if row[8] is None else from_micros(row[8]), row[9], row[10])


class Reviews(Forgetting):
    """``file_evidence``, ``open_review``, ``reviews``, ``review`` and ``close_review``."""

    def _on_open(self, writer: Any) -> None:
        super()._on_open(writer)
        if not self._read_only:
            self._ensure_tables(writer, "reviews", REVIEW_DDL)

    def file_evidence(
        self, scope: Scope, slot: tuple[str, str, str, int], grounds: Sequence[str],
        at: int, actor: str,
    ) -> tuple[int, int, Review | None]:
        """File ``grounds`` for the value ``slot`` names; see ``ReviewStore``."""
        key = [*(v or "" for v in scope.values()), *slot]
        with self._writing() as conn:
            # one filer of a value at a time, so two never open a review of it each
            self._exec(conn, "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                       [f"memvara-review:{self._schema}:{json.dumps(key)}"])
            open_one = self._exec(conn, f"SELECT rowid FROM reviews WHERE status = 'open'"
                                  f" AND {_SLOT}", key).fetchone()
            review = None if open_one is None else open_one[0]
            unique = list(dict.fromkeys(grounds))
            filed = 0
            for ground in unique:
                filed += self._exec(conn, (
                    "INSERT INTO evidence (s_tenant, s_user, s_agent, s_session, subject_key,"
                    " predicate, object_key, polarity, ground, observed_at, actor, review)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT DO NOTHING"), [*key, ground, at, actor, review]).rowcount
            echoes = len(grounds) - filed
            self.log_note("evidence", grounds=filed, echoes=echoes)
            if review is not None:
                (count,) = self._exec(conn, "SELECT count(*) FROM evidence WHERE review = %s",
                                      [review]).fetchone()
                return int(count), echoes, self.review(review_id(review), Scope())
            (count,) = self._exec(conn, f"SELECT count(*) FROM evidence WHERE review IS NULL"
                                  f" AND {_SLOT}", key).fetchone()
        return int(count), echoes, None

    def open_review(
        self, scope: Scope, subject: str, slot: tuple[str, str, str, int], obj: str,
        held: Sequence[str], at: int,
    ) -> Review:
        """Open a review of the value ``slot`` names; see ``ReviewStore``."""
        key = [*(v or "" for v in scope.values()), *slot]
        with self._writing() as conn:
            (rowid,) = self._exec(conn, (
                "INSERT INTO reviews (s_tenant, s_user, s_agent, s_session, subject_key,"
                " predicate, object_key, polarity, subject, object, held, opened_at, status)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'open') RETURNING rowid"),
                [*key, subject, obj, json.dumps(list(held)), at]).fetchone()
            self._exec(conn, f"UPDATE evidence SET review = %s WHERE review IS NULL AND {_SLOT}",
                       [rowid, *key])
            self.log_note("review", id=review_id(rowid), opened=True)
            found = self.review(review_id(rowid), Scope())
        assert found is not None  # just written, in this transaction
        return found

    def reviews(self, scope: Scope, *, open_only: bool = True, visible: bool = False) -> list[Review]:
        """Reviews of ``scope``'s subtree (``visible``: of the scopes it sees), oldest first."""
        where, params = (_sql.scope_visible if visible else _sql.scope_subtree)(scope)
        status = " AND status = 'open'" if open_only else ""
        return [_review(r) for r in self._query(
            f"SELECT {_COLUMNS} FROM reviews WHERE {where}{status} ORDER BY rowid", params)]

    def review(self, review: str, scope: Scope) -> Review | None:
        """Review ``review`` if it lies in ``scope``'s subtree."""
        where, params = _sql.scope_subtree(scope)
        rows = self._query(f"SELECT {_COLUMNS} FROM reviews WHERE rowid = %s AND {where}",
                           [review_rowid(review), *params])
        return _review(rows[0]) if rows else None

    def close_review(self, review: str, status: str, at: int, decided_by: str,
                     claim: str | None) -> bool:
        """Close an open review; see ``ReviewStore``."""
        with self._writing() as conn:
            if not self._exec(conn, "UPDATE reviews SET status = %s, closed_at = %s,"
                              " decided_by = %s, claim = %s WHERE rowid = %s AND status = 'open'",
                              [status, at, decided_by, claim, review_rowid(review)]).rowcount:
                return False
            self.log_note("review", id=review, decision=status)
        return True

    # -- export and import --------------------------------------------------------------
    def dump_reviews(self, scope: Scope) -> list[dict[str, Any]]:
        """Every review of ``scope``'s subtree with its evidence, and the evidence no
        review holds yet (``review`` ``None``), as plain values; see
        ``GovernanceTransferStore``."""
        where, params = _sql.scope_subtree(scope)
        reviews = self._query(f"SELECT {REVIEW_COLUMNS} FROM reviews WHERE {where}"
                              " ORDER BY rowid", params)
        evidence = self._query(f"SELECT {EVIDENCE_COLUMNS} FROM evidence WHERE {where}"
                               " ORDER BY rowid", params)
        return [*map(review_record, reviews), *map(evidence_record, evidence)]

    def restore_reviews(self, records: Sequence[Mapping[str, Any]]) -> int:
        """Inside an import's transaction: put reviews (``id``) and evidence (``ground``)
        back as exported; a review id or a ground held already is a ``StoreError``."""
        with self._writing() as conn:
            for r in records:
                levels = [r["scope"][k] or "" for k in ("tenant", "user", "agent", "session")]
                if "ground" in r:
                    cursor = self._exec(conn, (
                        "INSERT INTO evidence (s_tenant, s_user, s_agent, s_session,"
                        " subject_key, predicate, object_key, polarity, ground, observed_at,"
                        " actor, review) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT DO NOTHING"),
                        [*levels, r["subject_key"], r["predicate"], r["object_key"],
                         r["polarity"], r["ground"], r["observed_at"], r["actor"],
                         None if r["review"] is None else review_rowid(r["review"])])
                else:
                    cursor = self._exec(conn, (
                        "INSERT INTO reviews (rowid, s_tenant, s_user, s_agent, s_session,"
                        " subject, subject_key, predicate, object, object_key, polarity, held,"
                        " opened_at, status, closed_at, decided_by, claim) VALUES"
                        " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT DO NOTHING"),
                        [review_rowid(r["id"]), *levels, r["subject"], r["subject_key"],
                         r["predicate"], r["object"], r["object_key"], r["polarity"],
                         json.dumps(r["held"]), r["opened_at"], r["status"], r["closed_at"],
                         r["decided_by"], r["claim"]])
                if not cursor.rowcount:
                    raise StoreError("a review or a ground of it is in this store already")
            # reviews put back at their own rowids: new ones are numbered after them
            self._exec(conn, "SELECT setval(pg_get_serial_sequence('reviews', 'rowid'), max(rowid))"
                       " FROM reviews HAVING max(rowid) IS NOT NULL")
        return len(records)
