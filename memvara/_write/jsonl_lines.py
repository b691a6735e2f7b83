"""The export file's lines: each record to its JSON line (``jsonl.py`` reads them back).

A file is JSON Lines: a header, ``{"format": "memvara", "version": 3, "exported_at":
..., "scope": {...}, "counts": {...}}``, then one record a line. Versions 1 and 2 have four
record types, in this order: ``predicate`` (learned schema), ``alias`` (learned entity
names), ``episode`` (turns, oldest first) and ``claim`` (every state, oldest first). A
claim line is ``Claim.to_dict()`` with ``"type": "claim"`` in front and, where the store
keeps something ``Claim`` does not show, an ``internal`` object after it:
``subject_key`` (when it is not the subject's own key), ``ended_by``, ``storage``,
``observed_at`` and ``closures`` (earlier ends). Version 2 adds ``actor`` there (who
wrote the claim, as the write log names them), and record types after the claims:
``archived`` (a claim line of ``prune()``'s archive, with ``archived_at``), ``tombstone``
(``forget_subject()``'s), ``review`` and ``evidence`` (the review queue's, instants in
microseconds) and ``log`` (the write log's records, exported from the root
scope only, each with the ``store`` whose chain it is). Version 3 adds ``waiting`` after
the episodes: a turn the model failed on, still waiting for ``retry_extraction()``, with
when and why it failed, who said it and its call's ``meta``. Older versions are still read.

Both directions run once a record in an export of 100,000 claims, so each has its own
path rather than ``to_dict()``/``from_dict()`` (which they match, and a test holds them
to).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .._domain.entities import entity_key
from .._domain.model import Episode, Scope
from .._domain.time import from_micros, iso
from ..schema import PredicateSpec
from ..store.base import AliasRecord, ClaimRecord, LogRecord, WaitingMark

__all__ = [
    "FORMAT", "KINDS", "OPTIONAL", "VERSION", "alias_line", "archived_line", "claim_line",
    "episode_line", "header_line", "log_line", "predicate_line", "reported", "review_line",
    "tombstone_line", "waiting_line",
]

FORMAT = "memvara"
"""The header's ``format``: what says a file is a memvara export."""
VERSION = 3
"""The export format this memvara writes, and the newest it reads (2: claims carry
their ``actor``, and governance's records travel; 3: turns waiting for extraction)."""
KINDS = {"predicate": "predicates", "alias": "aliases", "episode": "episodes",
         "waiting": "waiting", "claim": "claims",
         "archived": "archived", "tombstone": "tombstones", "review": "reviews",
         "evidence": "evidence", "log": "log"}
"""Each record type, in file order, and its key in the header's ``counts`` (version 1
files count only the first four)."""
OPTIONAL = frozenset(("waiting", "archived", "tombstones", "reviews", "evidence", "log"))
"""The counts versions 2 and 3 added: absent from an older header, read as 0, and
reported only when not zero."""

_MEMO = 1 << 16
"""Instants the writer keeps formatted at once."""

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""One encoder for every line (``json.dumps`` with options builds one a call)."""


def _encode(data: Mapping[str, Any]) -> str:
    """``data`` as JSON text: UTF-8 as itself, except the three characters that JSON
    leaves raw but ``str.splitlines()`` breaks a line at (NEL, U+2028, U+2029), escaped,
    so a reader splitting the file naively still gets one record a line."""
    text = _json(data)
    if not text.isascii():
        text = text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace(
            "\u2029", "\\u2029")
    return text


# -- writing ------------------------------------------------------------------------------
_isos: dict[datetime, str] = {}


def _iso(value: datetime) -> str:
    """``iso(value)``, remembered: a batch's claims share their instants."""
    text = _isos.get(value)
    if text is None:
        if len(_isos) >= _MEMO:
            _isos.clear()
        text = _isos[value] = iso(value)
    return text


def _sorted(value: Any) -> Any:
    """JSON with every object's keys in order: the store keeps meta sorted, except
    where a backfill's ``json_set`` appended a key, and a line must not depend on that."""
    if isinstance(value, Mapping):
        return {str(key): _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted(item) for item in value]
    return value


def reported(counts: Mapping[str, int]) -> dict[str, int]:
    """A call's counts as export and import return them: the four kinds of version 1
    always, the ``OPTIONAL`` ones only when not zero (so a memory without any answers as
    before)."""
    return {kind: counts[kind] for kind in KINDS.values()
            if kind not in OPTIONAL or counts[kind]}


def header_line(scope: Scope, exported_at: datetime, counts: Mapping[str, int]) -> str:
    """The first line of a file exporting ``scope``'s subtree."""
    return _encode({"format": FORMAT, "version": VERSION, "exported_at": iso(exported_at),
                    "scope": scope.to_dict(),
                    "counts": reported(counts)}) + "\n"


def predicate_line(spec: PredicateSpec) -> str:
    """A learned predicate's line."""
    return _encode({"type": "predicate", "name": spec.name,
                    "cardinality": spec.cardinality.value, "volatility": spec.volatility.value,
                    "aliases": list(spec.aliases)}) + "\n"


def alias_line(alias: AliasRecord) -> str:
    """A learned alias's line (its scope is its owner)."""
    return _encode({"type": "alias", "scope": alias.owner.to_dict(), "alias": alias.alias_key,
                    "entity": alias.entity_key, "learned_at": iso(from_micros(alias.learned_at)),
                    "via": alias.via}) + "\n"


def archived_line(record: ClaimRecord, archived_at: int) -> str:
    """An archived claim's line: its claim line, typed ``archived``, with ``archived_at``."""
    data = json.loads(claim_line(record))
    return _encode({**data, "type": "archived", "archived_at": _iso(from_micros(archived_at))}) + "\n"


def tombstone_line(tombstone: Mapping[str, Any]) -> str:
    """A tombstone's line (``ForgetStore.tombstones()``'s dict, ``at`` as an instant)."""
    return _encode({"type": "tombstone", **_sorted({**tombstone, "at": _iso(from_micros(
        int(tombstone["at"])))})}) + "\n"


def review_line(record: Mapping[str, Any]) -> str:
    """A review's line, or (with a ``ground``) a piece of evidence's."""
    kind = "evidence" if "ground" in record else "review"
    return _encode({"type": kind, **_sorted(record)}) + "\n"


def log_line(store: str, record: LogRecord) -> str:
    """One write-log record of ``store``'s chain, as stored."""
    seq, at, actor, action, body, digest = record
    return _encode({"type": "log", "store": store, "seq": seq, "at": at, "actor": actor,
                    "action": action, "body": body, "hash": digest}) + "\n"


def episode_line(episode: Episode) -> str:
    """A turn's line: ``Episode.to_dict()`` with its type."""
    return _encode({"type": "episode", **episode.to_dict()}) + "\n"


def waiting_line(mark: WaitingMark) -> str:
    """A waiting turn's mark: its episode id, when and why the model failed on it, who
    said it (``null``: the scope's user) and its call's ``meta`` (``null``: none)."""
    return _encode({"type": "waiting", "episode": mark.episode_id,
                    "failed_at": _iso(from_micros(mark.failed_at)), "reason": mark.reason,
                    "speaker": mark.speaker,
                    "meta": None if mark.meta is None else _sorted(json.loads(mark.meta))}) + "\n"


def claim_line(record: ClaimRecord) -> str:
    """A claim's line: ``Claim.to_dict()`` with its type (meta's keys in order), and
    ``internal`` when the store keeps anything there that is not its default."""
    c = record.claim
    data: dict[str, Any] = {
        "type": "claim", "subject": c.subject, "predicate": c.predicate, "object": c.object,
        "valid_from": None if c.valid_from is None else _iso(c.valid_from),
        "valid_to": None if c.valid_to is None else _iso(c.valid_to),
        "recorded_at": None if c.recorded_at is None else _iso(c.recorded_at),
        "invalidated_at": None if c.invalidated_at is None else _iso(c.invalidated_at),
        "invalidated_by": c.invalidated_by, "polarity": c.polarity,
        "confidence": c.confidence, "memory_type": c.memory_type, "sources": list(c.sources),
        "text": c.text, "extractor": c.extractor, "meta": _sorted(c.meta) if c.meta else {},
        "scope": c.scope.to_dict(), "id": c.id,
        "valid_to_known_at": None if c.valid_to_known_at is None else _iso(c.valid_to_known_at),
        "observations": c.observations, "salience": c.salience, "state": c.state,
    }
    internal: dict[str, Any] = {}
    if record.subject_key != entity_key(c.subject):
        internal["subject_key"] = record.subject_key
    if record.ended_by is not None:
        internal["ended_by"] = record.ended_by
    if record.storage != 1.0:
        internal["storage"] = record.storage
    if record.observed_at is not None:
        internal["observed_at"] = _iso(from_micros(record.observed_at))
    if record.closures:
        internal["closures"] = [
            {"known_at": _iso(from_micros(e.known_at)), "valid_to": _iso(from_micros(e.valid_to)),
             "ended_by": e.ended_by} for e in record.closures]
    if record.actor is not None:
        internal["actor"] = record.actor
    if internal:
        data["internal"] = internal
    return _encode(data) + "\n"
