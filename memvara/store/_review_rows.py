"""The export form of the review queue's rows, shared by every backend: the columns a
dump reads and the plain record each row becomes (``GovernanceTransferStore``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._domain.review import review_id

__all__ = ["EVIDENCE_COLUMNS", "REVIEW_COLUMNS", "evidence_record", "ground_echo", "review_record"]

_LEVELS = "s_tenant, s_user, s_agent, s_session"

REVIEW_COLUMNS = (f"rowid, {_LEVELS}, subject, subject_key, predicate, object, object_key,"
                  " polarity, held, opened_at, status, closed_at, decided_by, claim")
"""What ``review_record`` reads from a ``reviews`` row, in order."""
EVIDENCE_COLUMNS = (f"review, {_LEVELS}, subject_key, predicate, object_key, polarity, ground,"
                    " observed_at, actor")
"""What ``evidence_record`` reads from an ``evidence`` row, in order."""


_TWIN = " AND ".join(f"o.{c} = evidence.{c}" for c in (
    "s_tenant", "s_user", "s_agent", "s_session", "subject_key", "predicate", "object_key", "polarity"))


def ground_echo(mark: str) -> str:
    """``DELETE`` the evidence row ``mark`` names (its rowid, then a ground) when another
    row of its value already has that ground: an erasure scrubbing a name from a ground
    (``[erased]`` for it) may make two of a value's grounds one, which counts once, as an
    echo does. ``mark`` is the backend's placeholder (``?`` or ``%s``)."""
    return (f"DELETE FROM evidence WHERE rowid = {mark} AND EXISTS (SELECT 1 FROM evidence o"
            f" WHERE o.rowid <> evidence.rowid AND {_TWIN} AND o.ground = {mark})")


def _scope(levels: Sequence[Any]) -> dict[str, str | None]:
    return dict(zip(("tenant", "user", "agent", "session"), (v or None for v in levels)))


def review_record(row: Sequence[Any]) -> dict[str, Any]:
    """One review, as its export line holds it."""
    return {"id": review_id(row[0]), "scope": _scope(row[1:5]), "subject": row[5],
            "subject_key": row[6], "predicate": row[7], "object": row[8],
            "object_key": row[9], "polarity": row[10], "held": json.loads(row[11]),
            "opened_at": row[12], "status": row[13], "closed_at": row[14],
            "decided_by": row[15], "claim": row[16]}


def evidence_record(row: Sequence[Any]) -> dict[str, Any]:
    """One piece of evidence (``review`` ``None`` while no review holds it)."""
    return {"review": None if row[0] is None else review_id(row[0]),
            "scope": _scope(row[1:5]), "subject_key": row[5], "predicate": row[6],
            "object_key": row[7], "polarity": row[8], "ground": row[9],
            "observed_at": row[10], "actor": row[11]}
