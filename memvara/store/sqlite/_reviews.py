"""The review queue: evidence against what a slot holds, and the reviews it opens.

Evidence is one row a distinct ground for one value of one slot at one scope; the
table's unique key makes a ground given twice an echo (``INSERT OR IGNORE`` counts it
out). Rows not yet counted toward a review are the ones that can open one; once a review
is open on the value, new grounds join it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from ..._domain.model import Scope
from ..._domain.review import Review, review_id, review_rowid
from ..._domain.time import from_micros
from ..._errors import StoreError
from . import _sql
from ._core import StoreCore
from .._review_rows import EVIDENCE_COLUMNS, REVIEW_COLUMNS, evidence_record, review_record
from ._log import note

__all__ = ["Reviews"]

_SLOT = ("s_tenant = ? AND s_user = ? AND s_agent = ? AND s_session = ? AND subject_key = ?"
         " AND predicate = ? AND object_key = ? AND polarity = ?")
_COLUMNS = ("rowid, subject, predicate, object, polarity, held, opened_at, status, closed_at,"
            " decided_by, claim, (SELECT count(*) FROM evidence WHERE review = reviews.rowid),"
            " s_tenant, s_user, s_agent, s_session")


def _review(row: Sequence[Any]) -> Review:
    return Review(
        review_id(row[0]), Scope(*(level or None for level in row[12:16])), row[1], row[2],
        row[3], int(row[4]), tuple(json.loads(row[5])), int(row[11]), from_micros(row[6]),
        row[7], None if row[8] is None else from_micros(row[8]), row[9], row[10])


class Reviews(StoreCore):
    """``file_evidence``, ``open_review``, ``reviews``, ``review`` and ``close_review``."""

    def file_evidence(
        self, scope: Scope, slot: tuple[str, str, str, int], grounds: Sequence[str],
        at: int, actor: str,
    ) -> tuple[int, int, Review | None]:
        """File ``grounds`` for the value ``slot`` names; see ``ReviewStore``."""
        key = [*(v or "" for v in scope.values()), *slot]
        with self._writing() as conn:
            open_one = conn.execute(
                f"SELECT rowid FROM reviews WHERE status = 'open' AND {_SLOT}", key).fetchone()
            echoes = 0
            for ground in dict.fromkeys(grounds):
                echoes += 1 - conn.execute(
                    "INSERT OR IGNORE INTO evidence (s_tenant, s_user, s_agent, s_session,"
                    " subject_key, predicate, object_key, polarity, ground, observed_at, actor,"
                    " review) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [*key, ground, at, actor, None if open_one is None else open_one[0]]).rowcount
            echoes += len(grounds) - len(dict.fromkeys(grounds))
            note(conn, "evidence", {"grounds": len(grounds) - echoes, "echoes": echoes})
            if open_one is not None:
                (count,) = conn.execute("SELECT count(*) FROM evidence WHERE review = ?",
                                        open_one).fetchone()
                return int(count), echoes, self.review(review_id(open_one[0]), Scope())
            (count,) = conn.execute(
                f"SELECT count(*) FROM evidence WHERE review IS NULL AND {_SLOT}", key).fetchone()
        return int(count), echoes, None

    def open_review(
        self, scope: Scope, subject: str, slot: tuple[str, str, str, int], obj: str,
        held: Sequence[str], at: int,
    ) -> Review:
        """Open a review of the value ``slot`` names; see ``ReviewStore``."""
        key = [*(v or "" for v in scope.values()), *slot]
        with self._writing() as conn:
            rowid = conn.execute(
                "INSERT INTO reviews (s_tenant, s_user, s_agent, s_session, subject_key,"
                " predicate, object_key, polarity, subject, object, held, opened_at, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open') RETURNING rowid",
                [*key, subject, obj, json.dumps(list(held)), at]).fetchone()[0]
            conn.execute(f"UPDATE evidence SET review = ? WHERE review IS NULL AND {_SLOT}",
                         [rowid, *key])
            note(conn, "review", {"id": review_id(rowid), "opened": True})
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
        rows = self._query(f"SELECT {_COLUMNS} FROM reviews WHERE rowid = ? AND {where}",
                           [review_rowid(review), *params])
        return _review(rows[0]) if rows else None

    def close_review(self, review: str, status: str, at: int, decided_by: str,
                     claim: str | None) -> bool:
        """Close an open review; see ``ReviewStore``."""
        with self._writing() as conn:
            if not conn.execute("UPDATE reviews SET status = ?, closed_at = ?, decided_by = ?,"
                                " claim = ? WHERE rowid = ? AND status = 'open'",
                                (status, at, decided_by, claim, review_rowid(review))).rowcount:
                return False
            note(conn, "review", {"id": review, "decision": status})
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
            try:
                for r in records:
                    levels = [r["scope"][k] or "" for k in ("tenant", "user", "agent", "session")]
                    if "ground" in r:
                        conn.execute(
                            "INSERT INTO evidence (s_tenant, s_user, s_agent, s_session,"
                            " subject_key, predicate, object_key, polarity, ground, observed_at,"
                            " actor, review) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [*levels, r["subject_key"], r["predicate"], r["object_key"],
                             r["polarity"], r["ground"], r["observed_at"], r["actor"],
                             None if r["review"] is None else review_rowid(r["review"])])
                    else:
                        conn.execute(
                            "INSERT INTO reviews (rowid, s_tenant, s_user, s_agent, s_session,"
                            " subject, subject_key, predicate, object, object_key, polarity, held,"
                            " opened_at, status, closed_at, decided_by, claim) VALUES"
                            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [review_rowid(r["id"]), *levels, r["subject"], r["subject_key"],
                             r["predicate"], r["object"], r["object_key"], r["polarity"],
                             json.dumps(r["held"]), r["opened_at"], r["status"], r["closed_at"],
                             r["decided_by"], r["claim"]])
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"a review or a ground of it is in this store already ({exc})") from None
        return len(records)
