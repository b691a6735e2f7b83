"""Claims to rows and back, for the SQLite backend.

One column list, one encoder, one decoder: a field added to ``Claim`` is added here and
nowhere else in the backend. Decoding takes the reader's ``known_at`` and returns the
claim as it was believed then (see the materialization rule in ``base.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
from collections.abc import Sequence
from typing import Any

from ..._domain.entities import entity_key
from ..._domain.model import Claim, Scope, assemble_claim, assemble_scope
from ..._domain.time import from_micros, to_micros
from .._transfer import ClaimRecord, Closure

__all__ = [
    "CLAIM_COLUMNS",
    "INSERT_COLUMNS",
    "INSERT_SQL",
    "claim_row",
    "claim_rowid",
    "decode_claim",
    "ended",
    "insert_statement",
    "new_claim_id",
    "new_id",
    "retired",
    "scope_levels",
    "scope_of",
    "single_insert",
    "with_id",
]

CLAIM_COLUMNS = (
    "rowid, id, s_tenant, s_user, s_agent, s_session, subject, predicate, object, polarity,"
    " valid_from, valid_to, valid_to_known_at, recorded_at, invalidated_at, invalidated_by,"
    " confidence, memory_type, text, extractor, meta, sources, observations, vec_slot,"
    " salience"
)

Row = Sequence[Any]


@functools.lru_cache(maxsize=4096)
def scope_of(tenant: str, user: str, agent: str, session: str) -> Scope:
    """The ``Scope`` for stored level values (``''`` is unset). They were checked when
    written and are not checked again: a level edited into the file by hand is read as
    it stands."""
    return assemble_scope(tenant or None, user or None, agent or None, session or None)


def scope_levels(scope: Scope) -> tuple[str, str, str, str]:
    """The four levels as stored (``''`` is unset): ``scope_of`` the other way."""
    return (scope.tenant or "", scope.user or "", scope.agent or "", scope.session or "")


def _json_or_none(value: object) -> str | None:
    return json.dumps(value, sort_keys=True, ensure_ascii=False) if value else None


def new_id(prefix: str, rowid: int, *parts: object) -> str:
    """A deterministic public id: the rowid and the content, hashed (no uuid, no clock)."""
    material = "\x1f".join([str(rowid), *map(str, parts)])
    return prefix + hashlib.blake2b(
        material.encode("utf-8", "surrogatepass"), digest_size=8
    ).hexdigest()


def new_claim_id(
    rowid: int, scope: tuple[str, str, str, str], subject: str, subject_key: str,
    predicate: str, obj: str, polarity: int, valid_from: int, recorded: int,
) -> str:
    """``c<rowid>-<8 hex digits>``: a claim id that is also its row's address.

    The rowid makes the id unique and its lookup a primary-key probe, so claims need no
    index on ``id`` (one fewer random page written per insert). The content digest keeps
    an old id from resolving to a later row that took an erased row's rowid. (One
    f-string, not a join over ``str()`` of each part: the same text, ~1 us less a claim.)
    """
    tenant, user, agent, session = scope
    material = (f"{tenant}\x1f{user}\x1f{agent}\x1f{session}\x1f{subject}\x1f{subject_key}"
                f"\x1f{predicate}\x1f{obj}\x1f{polarity}\x1f{valid_from}\x1f{recorded}")
    digest = hashlib.blake2b(material.encode("utf-8", "surrogatepass"), digest_size=4)
    return f"c{rowid}-{digest.hexdigest()}"


@functools.lru_cache(maxsize=1 << 16)
def claim_rowid(claim_id: str) -> int:
    """The rowid a claim id addresses; ``0`` (no row) for a string that is not one.

    Cached: a search turns ~100 candidate ids back into rowids, mostly the same ones
    from one search to the next (~1.2 us a parse here, ~0.1 us a cache hit)."""
    head, _, digest = claim_id.partition("-")
    if len(digest) != 8 or not head.startswith("c") or not head[1:].isdigit():
        return 0
    if not head[1:].isascii() or len(head) > 20:  # no 64-bit rowid has more digits
        return 0
    rowid = int(head[1:])
    return rowid if rowid < 2**63 else 0


_last_scope: tuple[object, tuple[str, str, str, str]] = (object(), ("", "", "", ""))
"""The last scope ``claim_row`` stored and its column values (replaced whole, as
``_time``'s memos are)."""


def claim_row(
    claim: Claim, rowid: int, slot: int | None, subject_key: str | None = None
) -> tuple[str, tuple[object, ...]]:
    """The claim's new id and its ``INSERT_SQL`` parameters (rowid, id, ..., vec_slot);
    the subject is keyed by its fold unless the writer resolved it to a learned alias."""
    global _last_scope
    scope = claim.scope
    if scope is _last_scope[0]:  # a batch's claims often share one Scope object
        scope_values = _last_scope[1]
    else:
        scope_values = scope_levels(scope)
        _last_scope = (scope, scope_values)
    if subject_key is None:
        subject_key = entity_key(claim.subject)
    valid_from = to_micros(claim.valid_from, "valid_from")
    recorded = to_micros(claim.recorded_at, "recorded_at")
    valid_to = None if claim.valid_to is None else to_micros(claim.valid_to, "valid_to")
    known = (None if claim.valid_to_known_at is None
             else to_micros(claim.valid_to_known_at, "valid_to_known_at"))
    invalidated = (None if claim.invalidated_at is None
                   else to_micros(claim.invalidated_at, "invalidated_at"))
    claim_id = new_claim_id(
        rowid, scope_values, claim.subject, subject_key, claim.predicate, claim.object,
        claim.polarity, valid_from, recorded,
    )
    return claim_id, (
        rowid,
        claim_id,
        *scope_values,
        claim.subject,
        subject_key,
        claim.predicate,
        claim.object,
        claim.polarity,
        valid_from,
        valid_to,
        (recorded if known is None else known) if valid_to is not None else None,
        recorded,
        invalidated,
        claim.invalidated_by,
        claim.confidence,
        claim.memory_type,
        claim.text,
        claim.extractor,
        _json_or_none(dict(claim.meta)) if claim.meta else None,
        _json_or_none(list(claim.sources)) if claim.sources else None,
        claim.observations,
        slot,
        entity_key(claim.object),
    )


_INSERT_HEAD = (
    "INSERT INTO claims (rowid, id, s_tenant, s_user, s_agent, s_session, subject,"
    " subject_key, predicate, object, polarity, valid_from, valid_to, valid_to_known_at,"
    " recorded_at, invalidated_at, invalidated_by, confidence, memory_type, text, extractor,"
    " meta, sources, observations, vec_slot, object_key) VALUES "
)
INSERT_COLUMNS = tuple(_INSERT_HEAD[_INSERT_HEAD.index("(") + 1 : _INSERT_HEAD.index(")")].split(", "))
"""The columns of ``claim_row``'s tuple, in its order."""
INSERT_SQL = _INSERT_HEAD + "(" + ", ".join(["?"] * len(INSERT_COLUMNS)) + ")"

_USUALLY_NULL = tuple(INSERT_COLUMNS.index(name) for name in (
    "valid_to", "valid_to_known_at", "invalidated_at", "invalidated_by", "meta", "sources",
    "vec_slot"))
"""A single write's usual NULLs: no end of valid time (nor when it was learned), not
retired (nor by what), no meta, no sources, no vector yet (the backlog embeds it)."""
_usual_nulls = operator.itemgetter(*_USUALLY_NULL)
_ALL_NULL = (None,) * len(_USUALLY_NULL)
_bound_of_usual = operator.itemgetter(
    *(j for j in range(len(INSERT_COLUMNS)) if j not in _USUALLY_NULL))
_INSERT_USUAL_SQL = _INSERT_HEAD + "(" + ", ".join(
    "NULL" if j in _USUALLY_NULL else "?" for j in range(len(INSERT_COLUMNS))) + ")"
"""``INSERT_SQL`` with ``_USUALLY_NULL`` written in: a bound ``None`` is the dearest
parameter CPython's ``sqlite3`` binds (~3,000 instructions; it is looked up as an
adapter, then for ``__adapt__`` and ``__conform__``), and a single write binds seven."""

SHARED_MIN_ROWS = 64
"""From this many rows, ``insert_statement`` writes the values every row shares into
the statement itself."""
_LITERAL_MAX = 256
"""The longest string ``insert_statement`` writes as a literal."""


def single_insert(row: tuple[object, ...]) -> tuple[str, tuple[object, ...]]:
    """``INSERT_SQL`` and one row's parameters, or for a plain single write (its
    ``_USUALLY_NULL`` columns all ``NULL``) ``_INSERT_USUAL_SQL`` and the rest."""
    if _usual_nulls(row) == _ALL_NULL:
        return _INSERT_USUAL_SQL, _bound_of_usual(row)
    return INSERT_SQL, row


def insert_statement(
    rows: list[tuple[object, ...]],
) -> tuple[str, list[tuple[object, ...]]]:
    """``INSERT_SQL`` and ``rows``, or, for a batch of at least ``SHARED_MIN_ROWS``, a
    statement with each value all rows share written in as a literal, and the rows
    less those columns.

    Binding costs ~0.5 us a parameter a row here (a throwaway timing of 5,000 rows, 25
    bound against 9 bound and 16 literal), and a batch's rows share most of their 26:
    the scope, the write's instant, the type, the extractor, the NULLs. Only values
    whose literal reads back identical are written in: ``None``, ints, integral floats,
    and short ASCII strings without NUL (quotes doubled); anything else stays bound.
    """
    if len(rows) < SHARED_MIN_ROWS:
        if len(rows) == 1:
            sql, row = single_insert(rows[0])
            return sql, [row]
        return INSERT_SQL, rows
    columns = list(zip(*rows))
    parts: list[str] = []
    varying: list[int] = []
    for j, column in enumerate(columns):
        first = column[0]
        literal = _literal(first)
        if (literal is None or column.count(first) != len(column)
                or len(set(map(type, column))) != 1):
            parts.append("?")
            varying.append(j)
        else:
            parts.append(literal)
    if len(varying) == len(columns):
        return INSERT_SQL, rows
    kept = [columns[j] for j in varying]
    return _INSERT_HEAD + "(" + ", ".join(parts) + ")", list(zip(*kept))


def _literal(value: object) -> str | None:
    """``value`` as a SQL literal that reads back as the same value and type, or
    ``None`` where it must be bound."""
    if value is None:
        return "NULL"
    if type(value) is int:
        return str(value) if -(2**63) <= value < 2**63 else None
    if type(value) is float:  # integral, so the decimal is exact; not -0.0
        text = repr(value)
        return text if value.is_integer() and 0 <= value < 2**53 and text[0] != "-" else None
    if type(value) is str and len(value) <= _LITERAL_MAX and value.isascii():
        if "\x00" in value:
            return None
        return "'" + value.replace("'", "''") + "'"
    return None


def decode_claim(row: Row, known_at: int | None) -> Claim:
    """A ``Claim`` from a ``CLAIM_COLUMNS`` row, as believed at ``known_at``.

    ``known_at=None`` returns the record as it stands now, with every closure (columns
    after the 25 are ignored, so a query may carry more). With a
    ``known_at`` the row must carry two more columns, ``_sql.effective_end`` and
    ``_sql.effective_end_known`` at that instant, and a retirement later than
    ``known_at`` is undone.
    """
    (_, cid, tenant, user, agent, session, subject, predicate, obj, polarity, valid_from,
     valid_to, valid_known, recorded, invalidated, invalidated_by, confidence, memory_type,
     text, extractor, meta, sources, observations, _, salience) = row[:25]
    if known_at is not None:
        valid_to, valid_known = row[-2], row[-1]
        if invalidated is not None and invalidated > known_at:
            invalidated, invalidated_by = None, None
    return assemble_claim(
        subject,
        predicate,
        obj,
        from_micros(valid_from),
        None if valid_to is None else from_micros(valid_to),
        from_micros(recorded),
        None if invalidated is None else from_micros(invalidated),
        invalidated_by,
        polarity,
        float(confidence),
        memory_type,
        tuple(json.loads(sources)) if sources else (),
        text,
        extractor,
        json.loads(meta) if meta else {},
        scope_of(tenant, user, agent, session),
        cid,
        None if valid_known is None else from_micros(valid_known),
        observations,
        salience,
    )


def with_id(claim: Claim, claim_id: str) -> Claim:
    """``claim`` with its store-assigned id (``dataclasses.replace`` costs 10x this)."""
    return assemble_claim(
        claim.subject, claim.predicate, claim.object, claim.valid_from, claim.valid_to,
        claim.recorded_at, claim.invalidated_at, claim.invalidated_by, claim.polarity,
        claim.confidence, claim.memory_type, claim.sources, claim.text, claim.extractor,
        claim.meta, claim.scope, claim_id, claim.valid_to_known_at, claim.observations,
        claim.salience,
    )


def ended(claim: Claim, valid_to: int, known_at: int) -> Claim:
    """``claim`` with its valid time ended at ``valid_to``, learned at ``known_at``."""
    return assemble_claim(
        claim.subject, claim.predicate, claim.object, claim.valid_from, from_micros(valid_to),
        claim.recorded_at, claim.invalidated_at, claim.invalidated_by, claim.polarity,
        claim.confidence, claim.memory_type, claim.sources, claim.text, claim.extractor,
        claim.meta, claim.scope, claim.id, from_micros(known_at), claim.observations,
        claim.salience,
    )


def retired(claim: Claim, at: int, by: str | None) -> Claim:
    """``claim`` with belief in it withdrawn at ``at``, in favour of claim ``by``."""
    return assemble_claim(
        claim.subject, claim.predicate, claim.object, claim.valid_from, claim.valid_to,
        claim.recorded_at, from_micros(at), by, claim.polarity,
        claim.confidence, claim.memory_type, claim.sources, claim.text, claim.extractor,
        claim.meta, claim.scope, claim.id, claim.valid_to_known_at, claim.observations,
        claim.salience,
    )


ARCHIVED_COLUMNS = (
    "subject_key, ended_by, salience_base, observed_at, closures,"
    " (SELECT actor FROM claim_log WHERE claim_rowid = claims_archive.rowid), archived_at"
)
"""What ``archived_record`` reads from a ``claims_archive`` row after the claim's own
columns (``CLAIM_COLUMNS``, 25 of them), in order."""


def archived_record(row: Sequence[Any]) -> tuple[ClaimRecord, int]:
    """One archived row as an export record, with when it was archived: the same on
    every backend (the PostgreSQL store reads its archive with it too)."""
    subject_key, ended_by, storage, observed_at, closures, actor, at = row[25:]
    return ClaimRecord(
        decode_claim(row, None), subject_key, ended_by, float(storage), observed_at,
        tuple(Closure(*c) for c in sorted(json.loads(closures))) if closures else (),
        actor,
    ), int(at)

