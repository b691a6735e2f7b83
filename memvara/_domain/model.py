"""The domain: claims, episodes, scopes, states, and what a write reports.

Everything here is a frozen value. Rows become these at the store seam and nothing
mutable crosses it, so a caller holding a ``Claim`` can never observe a later write.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from .._errors import InvalidArgumentError
from .time import iso, parse_instant

__all__ = [
    "MEMORY_TYPES",
    "ROLES",
    "STATES",
    "Claim",
    "Episode",
    "Scope",
    "State",
    "TimeQuery",
    "assemble_claim",
    "assemble_scope",
    "fields_dict",
    "plain",
    "set_new_claim_id",
]

State = Literal["live", "ended", "retired"]

STATES: tuple[State, ...] = ("live", "ended", "retired")
"""The three states a claim can be in, in the order reads accept them.

As a read's ``states=`` filter, at the read's instants: ``live``: believed and in force.
``ended``: believed, but its valid time is over (the world moved on). ``retired``: no
longer believed (a correction, a retraction, a deletion); a claim that ended and was later
retired is ``retired``. As ``Claim.state`` the word describes the record, not an instant:
a claim whose valid time has an end is ``ended`` even while that end is still ahead (a
``live`` read at an instant before it returns it as in force).
"""

MEMORY_TYPES: tuple[str, ...] = ("semantic", "episodic", "procedural")
"""What kind of memory a claim is: a durable fact, an event, or a how-to."""

ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")
"""Who said a conversation turn."""

_LEVELS = ("tenant", "user", "agent", "session")

Meta = Mapping[str, object]
"""JSON-serializable metadata carried by a claim."""


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(value: object) -> Any:
    """``value`` in JSON's types: instants as ISO-8601 with their offset, tuples as
    lists, mappings as objects, and anything with a ``to_dict()`` as its dict."""
    if type(value) in _SCALARS:  # most fields: returned before the slower checks below
        return value
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, (tuple, list)):
        return [plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def fields_dict(value: object) -> dict[str, Any]:
    """A dataclass's fields, each made ``plain``."""
    return {f.name: plain(getattr(value, f.name)) for f in fields(value)}  # type: ignore[arg-type]


def _taken(data: object, kind: str, known: Collection[str]) -> Mapping[str, object]:
    """``data`` checked to be a mapping with only ``known`` keys (``from_dict``)."""
    if not isinstance(data, Mapping):
        raise InvalidArgumentError(kind, f"expected a dict, got {type(data).__name__}")
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise InvalidArgumentError(f"{kind}.{unknown[0]}", f"not a field of {kind}")
    return data


def _string(data: Mapping[str, object], kind: str, key: str, default: str | None = None,
            *, optional: bool = False) -> Any:
    value = data.get(key, default)
    if value is None and (optional or default is not None):
        return value
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{kind}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def _instant(data: Mapping[str, object], kind: str, key: str) -> datetime | None:
    value = data.get(key)
    return None if value is None else parse_instant(value, f"{kind}.{key}")


def _number(data: Mapping[str, object], kind: str, key: str, default: float, integer: bool) -> Any:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise InvalidArgumentError(
            f"{kind}.{key}", f"expected {'an integer' if integer else 'a number'}, got {value!r:.40}")
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose memory a row belongs to: ``tenant > user > agent > session``.

    An unset level (``None``) is the broader memory. A reader sees a row when, at every
    level, the row's value is unset or equal to the reader's: it inherits broader memory
    and never sees a narrower scope's rows or a sibling's.
    """

    tenant: str | None = None
    user: str | None = None
    agent: str | None = None
    session: str | None = None

    def __post_init__(self) -> None:
        for level in _LEVELS:
            value = getattr(self, level)
            if value is None:
                continue
            if not isinstance(value, str):
                raise InvalidArgumentError(
                    level, f"a scope level must be a string or None, got {type(value).__name__}"
                )
            if not value.strip() or "\x00" in value:
                raise InvalidArgumentError(
                    level, "a scope level must be a non-empty string without NUL characters"
                )
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise InvalidArgumentError(
                        level, "a scope level holds a lone surrogate, not valid Unicode text"
                    ) from None

    def values(self) -> tuple[str | None, str | None, str | None, str | None]:
        """The four levels, broadest first."""
        return (self.tenant, self.user, self.agent, self.session)

    def holds(self, row: Scope) -> bool:
        """Whether ``row`` lies in this scope's subtree: it equals this scope at every
        level down to this scope's deepest set one (``purge()``'s rule; the root holds
        every scope)."""
        levels = self.values()
        deepest = max((i for i, v in enumerate(levels) if v is not None), default=-1)
        return row.values()[: deepest + 1] == levels[: deepest + 1]

    def __str__(self) -> str:
        parts = [f"{lvl}={val}" for lvl, val in zip(_LEVELS, self.values()) if val is not None]
        return "/".join(parts) or "<root>"

    def to_dict(self) -> dict[str, str | None]:
        """``{"tenant": ..., "user": ..., "agent": ..., "session": ...}``."""
        return dict(zip(_LEVELS, self.values()))

    @classmethod
    def from_dict(cls, data: object) -> Scope:
        """The scope a ``to_dict()`` form names (missing levels unset)."""
        taken = _taken(data, "scope", _LEVELS)
        levels: list[Any] = [taken.get(level) for level in _LEVELS]
        return cls(*levels)  # Scope checks each level


@dataclass(frozen=True, slots=True)
class Claim:
    """One fact: ``(subject, predicate, object)`` with two independent clocks.

    Valid time (``valid_from``, ``valid_to``) is when the fact held in the world.
    Transaction time (``recorded_at``, ``invalidated_at``) is when the store believed it.
    ``valid_to_known_at`` is the instant (on the belief clock) the end of valid time was
    learned: to a reader asking about an earlier moment, the claim is still open-ended.
    A ``None`` end is open; an end is excluded (the fact holds up to, not at, ``valid_to``,
    and is believed up to, not at, ``invalidated_at``). Build one to pass to
    ``supersede()``; the store fills in ``id``, the times and the rendered ``text`` when
    it is written.
    """

    subject: str
    predicate: str
    object: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    recorded_at: datetime | None = None
    invalidated_at: datetime | None = None
    invalidated_by: str | None = None
    polarity: int = 1
    confidence: float = 1.0
    memory_type: str = "semantic"
    sources: tuple[str, ...] = ()
    text: str = ""
    extractor: str = ""
    meta: Meta = field(default_factory=dict)
    scope: Scope = field(default_factory=Scope)
    id: str = ""
    valid_to_known_at: datetime | None = None
    observations: int = 1
    salience: float = 1.0
    """Retrieval strength, from the floor up to 1.0, as ``consolidate()`` last left it
    (a re-observation resets it to 1.0); search ranks by it."""

    def __hash__(self) -> int:
        return hash((self.id, self.subject, self.predicate, self.object, self.recorded_at))

    @property
    def state(self) -> State:
        """Which clock has closed on this claim, if either.

        ``retired`` once belief has ended, else ``ended`` once valid time has an end,
        else ``live``. It describes the record as read; whether the claim holds at some
        particular instant is what the ``valid_at``/``known_at`` reads answer.
        """
        if self.invalidated_at is not None:
            return "retired"
        if self.valid_to is not None:
            return "ended"
        return "live"

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types (instants as ISO-8601 with their offset), plus the
        computed ``state``; ``Claim.from_dict`` reads it back."""
        return {**fields_dict(self), "state": self.state}

    @classmethod
    def from_dict(cls, data: Any) -> Claim:
        """The claim a ``to_dict()`` form describes (``state`` is computed, so it is
        accepted and ignored). Instants must carry a UTC offset.

        Raises:
            InvalidArgumentError: a missing or mistyped field, or an unknown key; the
                message names it (``claim.valid_from``).
        """
        d = _taken(data, "claim", (*_CLAIM_FIELDS, "state"))
        sources = d.get("sources", ())
        if not isinstance(sources, (list, tuple)) or not all(isinstance(s, str) for s in sources):
            raise InvalidArgumentError("claim.sources", "expected a list of strings")
        meta = d.get("meta", {})
        if not isinstance(meta, Mapping):
            raise InvalidArgumentError("claim.meta", f"expected a dict, got {type(meta).__name__}")
        return cls(
            subject=_string(d, "claim", "subject"), predicate=_string(d, "claim", "predicate"),
            object=_string(d, "claim", "object"), valid_from=_instant(d, "claim", "valid_from"),
            valid_to=_instant(d, "claim", "valid_to"),
            recorded_at=_instant(d, "claim", "recorded_at"),
            invalidated_at=_instant(d, "claim", "invalidated_at"),
            invalidated_by=_string(d, "claim", "invalidated_by", optional=True),
            polarity=_number(d, "claim", "polarity", 1, True),
            confidence=float(_number(d, "claim", "confidence", 1.0, False)),
            memory_type=_string(d, "claim", "memory_type", "semantic"), sources=tuple(sources),
            text=_string(d, "claim", "text", ""), extractor=_string(d, "claim", "extractor", ""),
            meta=dict(meta), scope=Scope.from_dict(d.get("scope", {})),
            id=_string(d, "claim", "id", ""),
            valid_to_known_at=_instant(d, "claim", "valid_to_known_at"),
            observations=_number(d, "claim", "observations", 1, True),
            salience=float(_number(d, "claim", "salience", 1.0, False)),
        )


def _setter(name: str) -> Callable[[Claim, Any], None]:
    """The slot descriptor's ``__set__`` for one of ``Claim``'s fields."""
    setter: Callable[[Claim, Any], None] = getattr(Claim, name).__set__
    return setter


_CLAIM_FIELDS = tuple(f.name for f in fields(Claim))

(_subject, _predicate, _object, _valid_from, _valid_to, _recorded_at, _invalidated_at,
 _invalidated_by, _polarity, _confidence, _memory_type, _sources, _text, _extractor, _meta,
 _scope, _id, _valid_to_known_at, _observations, _salience) = (
    _setter(f.name) for f in fields(Claim))
_new = object.__new__


def assemble_claim(
    subject: str, predicate: str, obj: str, valid_from: datetime | None,
    valid_to: datetime | None, recorded_at: datetime | None, invalidated_at: datetime | None,
    invalidated_by: str | None, polarity: int, confidence: float, memory_type: str,
    sources: tuple[str, ...], text: str, extractor: str, meta: Meta, scope: Scope,
    claim_id: str, valid_to_known_at: datetime | None, observations: int, salience: float,
) -> Claim:
    """``Claim(...)`` with every field given, in field order, at half the cost: the
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``,
    this sets the slots directly. For the store's decoders and the writer, which build
    a claim per row; everything else calls ``Claim``.
    """
    claim = _new(Claim)
    _subject(claim, subject)
    _predicate(claim, predicate)
    _object(claim, obj)
    _valid_from(claim, valid_from)
    _valid_to(claim, valid_to)
    _recorded_at(claim, recorded_at)
    _invalidated_at(claim, invalidated_at)
    _invalidated_by(claim, invalidated_by)
    _polarity(claim, polarity)
    _confidence(claim, confidence)
    _memory_type(claim, memory_type)
    _sources(claim, sources)
    _text(claim, text)
    _extractor(claim, extractor)
    _meta(claim, meta)
    _scope(claim, scope)
    _id(claim, claim_id)
    _valid_to_known_at(claim, valid_to_known_at)
    _observations(claim, observations)
    _salience(claim, salience)
    return claim


_scope_tenant, _scope_user, _scope_agent, _scope_session = (
    getattr(Scope, level).__set__ for level in _LEVELS)


def assemble_scope(
    tenant: str | None, user: str | None, agent: str | None, session: str | None
) -> Scope:
    """``Scope(...)`` for levels already validated (read back from a store), without
    checking them again: a store serving ten thousand users builds a scope for each
    row it decodes, and ``Scope()`` checks every level (~1 us) through the frozen
    dataclass's ``__init__``."""
    scope = _new(Scope)
    _scope_tenant(scope, tenant)
    _scope_user(scope, user)
    _scope_agent(scope, agent)
    _scope_session(scope, session)
    return scope


def set_new_claim_id(claim: Claim, claim_id: str) -> Claim:
    """Give a claim the id the store assigned it, in place, and return it.

    Only for a claim the writer built for the write under way, which no caller has
    seen yet (``Writer.build`` makes a new object for every claim it is given): to
    everyone else a ``Claim`` is immutable, and the store's ``with_id`` copies."""
    _id(claim, claim_id)
    return claim


@dataclass(frozen=True, slots=True)
class Episode:
    """One raw conversational turn, kept verbatim as the source of claims."""

    content: str
    role: str = "user"
    ts: datetime | None = None
    recorded_at: datetime | None = None
    scope: Scope = field(default_factory=Scope)
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types; ``Episode.from_dict`` reads it back."""
        return fields_dict(self)

    @classmethod
    def from_dict(cls, data: object) -> Episode:
        """The turn a ``to_dict()`` form describes; instants must carry a UTC offset.

        Raises:
            InvalidArgumentError: a missing or mistyped field, or an unknown key.
        """
        d = _taken(data, "episode", ("content", "role", "ts", "recorded_at", "scope", "id"))
        return cls(
            content=_string(d, "episode", "content"), role=_string(d, "episode", "role", "user"),
            ts=_instant(d, "episode", "ts"), recorded_at=_instant(d, "episode", "recorded_at"),
            scope=Scope.from_dict(d.get("scope", {})), id=_string(d, "episode", "id", ""),
        )


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """One read's pinned instants, in storage microseconds.

    ``known_at`` is the belief clock and is always set. ``valid_at`` is the world clock;
    ``None`` leaves valid time unconstrained (used by ``history()`` and audit reads).
    """

    known_at: int
    valid_at: int | None
