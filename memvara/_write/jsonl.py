"""The export file read back: a file's lines to checked records (``jsonl_lines.py``
writes them, and says what the format holds).

Reading checks every line before anything is written, so a bad line costs nothing but
the error naming it. An instant in the form the writer uses is parsed by
``fromisoformat`` (~0.2 us, against ~1.6 us through ``parse_instant``'s pattern), and a
file's repeated instants and scopes are parsed once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from .._domain import args as _args
from .._domain.entities import entity_key
from .._domain.model import Claim, Episode, Scope, assemble_claim
from .._domain.time import parse_instant, to_micros
from .._errors import InvalidArgumentError, InvalidExportError
from ..schema import Cardinality, PredicateSpec, Volatility
from ..store.base import AliasRecord, ClaimRecord, Closure, LogRecord, WaitingMark
from .jsonl_lines import FORMAT, KINDS, OPTIONAL, VERSION

__all__ = ["Records", "read_records"]

_CLAIM_KEYS = frozenset(f.name for f in fields(Claim))
_EPISODE_KEYS = frozenset(f.name for f in fields(Episode))
_LEVELS = frozenset(("tenant", "user", "agent", "session"))
_HEADER_KEYS = frozenset(("format", "version", "exported_at", "scope", "counts"))
_PREDICATE_KEYS = frozenset(("name", "cardinality", "volatility", "aliases"))
_ALIAS_KEYS = frozenset(("scope", "alias", "entity", "learned_at", "via"))
_INTERNAL_KEYS = frozenset(("subject_key", "ended_by", "storage", "observed_at", "closures",
                            "actor"))
_CLOSURE_KEYS = frozenset(("known_at", "valid_to", "ended_by"))
_TOMBSTONE_KEYS = frozenset(("id", "at", "reason", "requested_by", "subject_digest", "scope",
                             "erased", "targets"))
_LOG_KEYS = frozenset(("store", "seq", "at", "actor", "action", "body", "hash"))
_REVIEW_KEYS = frozenset(("id", "scope", "subject", "subject_key", "predicate", "object",
                          "object_key", "polarity", "held", "opened_at", "status", "closed_at",
                          "decided_by", "claim"))
_EVIDENCE_KEYS = frozenset(("review", "scope", "subject_key", "predicate", "object_key",
                            "polarity", "ground", "observed_at", "actor"))
_WAITING_KEYS = frozenset(("episode", "failed_at", "reason", "speaker", "meta"))
_MEMO = 1 << 16
"""Instants and scopes a reader keeps parsed at once."""


@dataclass
class Records:
    """A file's records, and for each type the line each of its records came from."""

    header: dict[str, Any] = field(default_factory=dict)
    predicates: list[PredicateSpec] = field(default_factory=list)
    aliases: list[AliasRecord] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    waiting: list[WaitingMark] = field(default_factory=list)
    claims: list[ClaimRecord] = field(default_factory=list)
    archived: list[tuple[ClaimRecord, int]] = field(default_factory=list)
    tombstones: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    log: list[tuple[str, LogRecord]] = field(default_factory=list)
    lines: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in KINDS})


class _Bad(Exception):
    """A problem with the line being read (``read_records`` adds the line number)."""


def _object(
    data: object, what: str, known: frozenset[str], optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``data`` checked to be an object with every key of ``known``, and no key that is
    in neither ``known`` nor ``optional``."""
    if not isinstance(data, dict):
        raise _Bad(f"{what}: expected a JSON object, got {type(data).__name__}")
    if data.keys() == known:
        return data
    unknown = sorted(str(key) for key in data if key not in known and key not in optional)
    if unknown:
        raise _Bad(f"{what}: unknown field {unknown[0]!r}")
    missing = sorted(key for key in known if key not in data)
    if missing:
        raise _Bad(f"{what}: missing field {missing[0]!r}")
    return data


def _number(value: object, argument: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"{argument}: expected a number, got {value!r:.40}")
    if not (math.isfinite(value) and low <= value <= high):
        raise _Bad(f"{argument}: must be from {low:g} to {high:g}, got {value!r:.40}")
    return float(value)


def _text(value: object, argument: str) -> str:
    return _args.check_text(value, argument, allow_empty=True)


def _optional_text(value: object, argument: str) -> str | None:
    return None if value is None else _args.check_text(value, argument)


def _meta(value: dict[str, Any], argument: str) -> dict[str, Any]:
    """``check_meta``'s verdict, naming the record's field (``claim.meta``)."""
    try:
        return _args.check_meta(value)
    except InvalidArgumentError as exc:
        raise _Bad(f"{argument}{exc.argument.removeprefix('meta')}: {exc.problem}") from None


def _actor(value: object) -> str | None:
    """``claim.internal.actor``: a name, ``""`` (a write that named none), or absent."""
    if value is None or isinstance(value, str):
        return value
    raise _Bad(f"claim.internal.actor: expected a string, got {type(value).__name__}")


class _Reader:
    """Reads one file's records, keeping the instants and scopes it has parsed (a file
    repeats them: a batch's claims share their ``recorded_at``, a user's their scope)."""

    def __init__(self) -> None:
        self._instants: dict[str, tuple[datetime, int]] = {}
        self._scopes: dict[tuple[object, ...], Scope] = {}

    def instant(self, value: object, argument: str) -> tuple[datetime, int]:
        """The instant a string names, and its microseconds; refused without an offset."""
        found = self._instants.get(value) if type(value) is str else None
        if found is not None:
            return found
        when = None
        if (type(value) is str and len(value) in (25, 32) and value.isascii()
                and value[10] == "T" and value[-6] in "+-" and value[-3] == ":"
                and (len(value) == 25 or value[19] == ".")):
            try:  # the form ``iso`` writes: fromisoformat reads it as parse_instant would
                when = datetime.fromisoformat(value)
            except ValueError:
                when = None
        if when is None:
            when = parse_instant(value, argument)
        found = (when, to_micros(when, argument))
        if len(self._instants) >= _MEMO:
            self._instants.clear()
        self._instants[str(value)] = found  # a str, or parse_instant would have refused it
        return found

    def moment(self, value: object, argument: str) -> datetime | None:
        """``instant``'s datetime, or ``None`` for a JSON ``null`` (an open end)."""
        return None if value is None else self.instant(value, argument)[0]

    def scope(self, value: object, argument: str) -> Scope:
        """The scope a ``Scope.to_dict()`` form names."""
        if type(value) is dict and value.keys() == _LEVELS:
            key = (value["tenant"], value["user"], value["agent"], value["session"])
            try:
                found = self._scopes.get(key)
            except TypeError:  # a level that is a list or an object: refused below
                found = None
            if found is not None:
                return found
        try:
            scope = Scope.from_dict(value)
        except InvalidArgumentError as exc:  # "scope", "scope.<unknown key>" or a level
            name = exc.argument.removeprefix("scope").lstrip(".")
            raise _Bad(f"{argument}{'.' if name else ''}{name}: {exc.problem}") from None
        if len(self._scopes) >= _MEMO:
            self._scopes.clear()
        self._scopes[scope.values()] = scope
        return scope

    def header(self, data: object) -> dict[str, Any]:
        if not isinstance(data, dict) or "format" not in data:
            raise _Bad("not a memvara export: line 1 must be its header,"
                       ' {"format": "memvara", ...}')
        if data["format"] != FORMAT:
            raise _Bad(f"not a memvara export: its format is {data['format']!r:.60}")
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise _Bad(f"header.version: expected a positive integer, got {version!r:.40}")
        if version > VERSION:
            raise _Bad(f"written by a newer memvara (export version {version}); this one"
                       f" reads version {VERSION}: upgrade memvara to import it")
        header = _object(data, "header", _HEADER_KEYS)
        self.instant(header["exported_at"], "header.exported_at")
        self.scope(header["scope"], "header.scope")
        counts = _object(header["counts"], "header.counts",
                         frozenset(KINDS.values()) - OPTIONAL, OPTIONAL)
        header["counts"] = counts = {**dict.fromkeys(OPTIONAL, 0), **counts}
        for kind, n in counts.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise _Bad(f"header.counts.{kind}: expected a count, got {n!r:.40}")
        return header

    def predicate(self, data: dict[str, Any]) -> PredicateSpec:
        _object(data, "predicate", _PREDICATE_KEYS)
        aliases = data["aliases"]
        if not isinstance(aliases, list):
            raise _Bad("predicate.aliases: expected a list of names")
        try:
            cardinality = Cardinality(data["cardinality"])
            volatility = Volatility(data["volatility"])
        except ValueError as exc:
            raise _Bad(f"predicate: {exc}") from None
        return PredicateSpec(data["name"], cardinality, volatility, tuple(aliases))

    def alias(self, data: dict[str, Any]) -> AliasRecord:
        _object(data, "alias", _ALIAS_KEYS)
        owner = self.scope(data["scope"], "alias.scope")
        if owner.agent is not None or owner.session is not None:
            raise _Bad("alias.scope: an alias belongs to a tenant and user; its agent and"
                       " session must be null")
        return AliasRecord(
            owner, _args.check_text(data["alias"], "alias.alias"),
            _args.check_text(data["entity"], "alias.entity"),
            self.instant(data["learned_at"], "alias.learned_at")[1],
            _text(data["via"], "alias.via"),
        )

    def episode(self, data: dict[str, Any]) -> Episode:
        _object(data, "episode", _EPISODE_KEYS)
        return Episode(
            content=_text(data["content"], "episode.content"),
            role=_args.check_text(data["role"], "episode.role"),
            ts=self.instant(data["ts"], "episode.ts")[0],
            recorded_at=self.instant(data["recorded_at"], "episode.recorded_at")[0],
            scope=self.scope(data["scope"], "episode.scope"),
            id=_args.check_text(data["id"], "episode.id"),
        )

    def waiting(self, data: dict[str, Any]) -> WaitingMark:
        _object(data, "waiting", _WAITING_KEYS)
        meta = data["meta"]
        if meta is not None and not isinstance(meta, dict):
            raise _Bad(f"waiting.meta: expected an object or null, got {type(meta).__name__}")
        return WaitingMark(
            _args.check_text(data["episode"], "waiting.episode"),
            self.instant(data["failed_at"], "waiting.failed_at")[1],
            _text(data["reason"], "waiting.reason"),
            _optional_text(data["speaker"], "waiting.speaker"),
            None if meta is None else json.dumps(_meta(meta, "waiting.meta"), sort_keys=True,
                                                 ensure_ascii=False))

    def claim(self, data: dict[str, Any]) -> ClaimRecord:
        internal = data.pop("internal", {})
        state = data.pop("state", None)
        _object(data, "claim", _CLAIM_KEYS)
        sources = data["sources"]
        if type(sources) is not list:
            raise _Bad("claim.sources: expected a list of strings")
        meta = data["meta"]
        if not isinstance(meta, dict):
            raise _Bad(f"claim.meta: expected an object, got {type(meta).__name__}")
        observations = data["observations"]
        if (isinstance(observations, bool) or not isinstance(observations, int)
                or not 1 <= observations < 2**63):
            raise _Bad(f"claim.observations: expected a count from 1, got {observations!r:.40}")
        claim = assemble_claim(
            _args.check_text(data["subject"], "claim.subject"),
            _args.check_text(data["predicate"], "claim.predicate"),
            _args.check_text(data["object"], "claim.object"),
            self.instant(data["valid_from"], "claim.valid_from")[0],
            self.moment(data["valid_to"], "claim.valid_to"),
            self.instant(data["recorded_at"], "claim.recorded_at")[0],
            self.moment(data["invalidated_at"], "claim.invalidated_at"),
            _optional_text(data["invalidated_by"], "claim.invalidated_by"),
            _args.check_polarity(data["polarity"]),
            _args.check_confidence(data["confidence"]),
            _args.check_memory_type(data["memory_type"]),
            tuple(_args.check_text(s, "claim.sources") for s in sources) if sources else (),
            _text(data["text"], "claim.text"), _text(data["extractor"], "claim.extractor"),
            _meta(meta, "claim.meta") if meta else {},
            self.scope(data["scope"], "claim.scope"), _args.check_text(data["id"], "claim.id"),
            self.moment(data["valid_to_known_at"], "claim.valid_to_known_at"),
            observations, _number(data["salience"], "claim.salience", 0.0, 1.0),
        )
        if (claim.valid_to is None) != (claim.valid_to_known_at is None):
            raise _Bad("claim.valid_to_known_at: set exactly when valid_to is")
        if claim.invalidated_by is not None and claim.invalidated_at is None:
            raise _Bad("claim.invalidated_by: set without invalidated_at")
        if state is not None and state != claim.state:
            raise _Bad(f"claim.state: {state!r:.20} disagrees with its clocks, which say"
                       f" {claim.state!r}")
        return self.internal(claim, internal)

    def internal(self, claim: Claim, data: object) -> ClaimRecord:
        data = _object(data, "claim.internal", frozenset(), _INTERNAL_KEYS)
        if not data:
            return ClaimRecord(claim, entity_key(claim.subject))
        closures = data.get("closures", [])
        if not isinstance(closures, list):
            raise _Bad("claim.internal.closures: expected a list")
        earlier: list[Closure] = []
        for item in closures:
            c = _object(item, "claim.internal.closures[]", _CLOSURE_KEYS)
            earlier.append(Closure(
                self.instant(c["known_at"], "claim.internal.closures[].known_at")[1],
                self.instant(c["valid_to"], "claim.internal.closures[].valid_to")[1],
                _optional_text(c["ended_by"], "claim.internal.closures[].ended_by")))
        if len({c.known_at for c in earlier}) != len(earlier):
            raise _Bad("claim.internal.closures: two ends learned at one instant")
        observed = data.get("observed_at")
        return ClaimRecord(
            claim,
            _args.check_text(data.get("subject_key", entity_key(claim.subject)),
                             "claim.internal.subject_key"),
            _optional_text(data.get("ended_by"), "claim.internal.ended_by"),
            _number(data.get("storage", 1.0), "claim.internal.storage", 0.0, 1e300),
            None if observed is None else self.instant(observed, "claim.internal.observed_at")[1],
            tuple(sorted(earlier, key=lambda c: c.known_at)),
            _actor(data.get("actor")),
        )


    def archived(self, data: dict[str, Any]) -> tuple[ClaimRecord, int]:
        at = self.instant(data.pop("archived_at", None), "archived.archived_at")[1]
        return self.claim(data), at

    def tombstone(self, data: dict[str, Any]) -> dict[str, Any]:
        _object(data, "tombstone", _TOMBSTONE_KEYS)
        self.scope(data["scope"], "tombstone.scope")
        for name in ("erased", "targets"):
            if not isinstance(data[name], dict):
                raise _Bad(f"tombstone.{name}: expected an object")
        return {**{k: _text(data[k], f"tombstone.{k}") for k in
                   ("id", "reason", "requested_by", "subject_digest")},
                "at": self.instant(data["at"], "tombstone.at")[1], "scope": data["scope"],
                "erased": data["erased"], "targets": data["targets"]}

    def review(self, data: dict[str, Any]) -> dict[str, Any]:
        """A review (``"ground"`` absent) or a piece of evidence, checked; as read."""
        kind = "evidence" if "ground" in data else "review"
        _object(data, kind, _EVIDENCE_KEYS if kind == "evidence" else _REVIEW_KEYS)
        self.scope(data["scope"], f"{kind}.scope")
        texts = ("subject_key", "predicate", "object_key") + (
            ("ground",) if kind == "evidence" else ("id", "subject", "object"))
        for name in texts:
            _args.check_text(data[name], f"{kind}.{name}")
        at = data["observed_at" if kind == "evidence" else "opened_at"]
        if data["polarity"] not in (1, -1) or type(data["polarity"]) is not int or type(at) is not int:
            raise _Bad(f"{kind}: polarity must be 1 or -1 and instants microseconds")
        if kind == "review" and (data["status"] not in ("open", "kept", "accepted") or type(
                data["held"]) is not list or not all(type(i) is str for i in data["held"])):
            raise _Bad("review: status must be open, kept or accepted, held a list of ids")
        return data

    def log(self, data: dict[str, Any]) -> tuple[str, LogRecord]:
        _object(data, "log", _LOG_KEYS)
        seq, at = data["seq"], data["at"]
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1 \
                or isinstance(at, bool) or not isinstance(at, int):
            raise _Bad("log.seq, log.at: expected a record number and microseconds")
        texts = [_text(data[k], f"log.{k}") for k in ("store", "actor", "action", "body", "hash")]
        return texts[0], (seq, at, texts[1], texts[2], texts[3], texts[4])


def _key(kind: str, item: Any) -> object:
    """What two records of ``kind`` in one file must not share."""
    if kind == "archived":
        return item[0].claim.id
    if kind == "review":
        return item["id"]
    if kind == "evidence":
        return (str(item["scope"]), item["subject_key"], item["predicate"], item["object_key"],
                item["polarity"], item["ground"])
    if kind in ("tombstone", "log"):
        return item["id"] if kind == "tombstone" else (item[0], item[1][0])
    if kind == "predicate":
        return item.name
    if kind == "alias":
        return (item.owner, item.alias_key)
    if kind == "episode":
        return item.id
    if kind == "waiting":
        return item.episode_id
    return item.claim.id


def _name(kind: str, item: Any) -> str:
    """How an error names a record."""
    if kind == "alias":
        return f"alias {item.alias_key!r:.60} of {item.owner}"
    return f"{kind} {_key(kind, item)!r:.60}"


def read_records(lines: Iterable[object]) -> Records:
    """Every record of an export file, checked.

    Raises:
        InvalidExportError: the first problem, with its line: not UTF-8, not JSON, not an
            object, no header or another format's, a newer version, an unknown type, a
            missing, unknown or mistyped field, an instant without its offset, a record
            repeated, or fewer or more records than the header counts (cut short).
        InvalidArgumentError: the lines are bytes, not text.
    """
    reader = _Reader()
    readers = {"predicate": reader.predicate, "alias": reader.alias,
               "episode": reader.episode, "waiting": reader.waiting, "claim": reader.claim,
               "archived": reader.archived, "tombstone": reader.tombstone,
               "review": reader.review, "evidence": reader.review, "log": reader.log}
    records = Records()
    seen: dict[tuple[str, object], int] = {}
    number = 0
    iterator = iter(lines)
    while True:
        try:
            line = next(iterator, None)
        except UnicodeDecodeError as exc:
            raise InvalidExportError(number + 1, f"not UTF-8 text ({exc.reason})") from None
        if line is None:
            break
        number += 1
        if not isinstance(line, str):
            raise InvalidArgumentError("source", f"expected text, got {type(line).__name__}:"
                                       " open the file in text mode, encoding='utf-8'")
        if not line.strip():
            raise InvalidExportError(number, "an empty line, where a record should be")
        try:
            data = json.loads(line[1:] if number == 1 and line[:1] == "\ufeff" else line)  # a BOM
        except json.JSONDecodeError as exc:
            raise InvalidExportError(number, f"not JSON ({exc.msg} at column {exc.colno});"
                                     " a file cut short ends this way") from None
        try:
            if number == 1:
                records.header = reader.header(data)
                continue
            if not isinstance(data, dict):
                raise _Bad(f"expected a JSON object, got {type(data).__name__}")
            kind = data.pop("type", None)
            read = readers.get(kind) if isinstance(kind, str) else None
            if read is None:
                raise _Bad(f"unknown record type {kind!r:.40}; this memvara reads"
                           f" {', '.join(KINDS)}")
            item = read(data)
        except (_Bad, InvalidArgumentError) as exc:
            raise InvalidExportError(number, str(exc)) from None
        first = seen.setdefault((kind, _key(kind, item)), number)
        if first != number:
            raise InvalidExportError(number, f"{_name(kind, item)} appears twice (first on"
                                     f" line {first})")
        getattr(records, KINDS[kind]).append(item)
        records.lines[kind].append(number)
    if number == 0:
        raise InvalidExportError(1, "the file is empty: line 1 must be a memvara header")
    counted = records.header["counts"]
    for kind, name in KINDS.items():
        if counted[name] != len(records.lines[kind]):
            raise InvalidExportError(
                number, f"the file ends after line {number} with {len(records.lines[kind])}"
                f" {name}, but its header counts {counted[name]}: it was cut short or edited")
    turns = {e.id for e in records.episodes}
    for mark, line in zip(records.waiting, records.lines["waiting"]):
        if mark.episode_id not in turns:
            raise InvalidExportError(line, f"waiting turn {mark.episode_id!r:.60}: the file"
                                     " has no episode with that id")
    return records
