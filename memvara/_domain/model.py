"""The domain: claims, episodes, scopes, states, and what a write reports.

Everything here is a frozen value. Rows become these at the store seam and nothing
mutable crosses it, so a caller holding a ``Claim`` can never observe a later write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from .._errors import InvalidArgumentError

__all__ = [
    "MEMORY_TYPES",
    "STATES",
    "Claim",
    "Episode",
    "Explanation",
    "Path",
    "Provenance",
    "Retrieved",
    "Scope",
    "Skip",
    "State",
    "TimeQuery",
    "WriteReceipt",
    "assemble_claim",
    "assemble_receipt",
    "assemble_scope",
    "set_new_claim_id",
]

State = Literal["live", "ended", "retired"]

STATES: tuple[State, ...] = ("live", "ended", "retired")
"""The three states a claim can be in, in the order reads accept them.

``live``: believed and in force. ``ended``: believed, but its valid time is over (the world
moved on). ``retired``: no longer believed (a correction, a retraction, a deletion). A
claim that ended and was later retired is ``retired``.
"""

MEMORY_TYPES: tuple[str, ...] = ("semantic", "episodic", "procedural")
"""What kind of memory a claim is: a durable fact, an event, or a how-to."""

_LEVELS = ("tenant", "user", "agent", "session")

Meta = Mapping[str, object]
"""JSON-serializable metadata carried by a claim."""


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

    def __str__(self) -> str:
        parts = [f"{lvl}={val}" for lvl, val in zip(_LEVELS, self.values()) if val is not None]
        return "/".join(parts) or "<root>"


@dataclass(frozen=True, slots=True)
class Claim:
    """One fact: ``(subject, predicate, object)`` with two independent clocks.

    Valid time (``valid_from``, ``valid_to``) is when the fact held in the world.
    Transaction time (``recorded_at``, ``invalidated_at``) is when the store believed it.
    ``valid_to_known_at`` is the instant (on the belief clock) the end of valid time was
    learned: to a reader asking about an earlier moment, the claim is still open-ended.
    A ``None`` end is open. Build one to pass to ``supersede()``; the store fills in
    ``id``, the times and the rendered ``text`` when it is written.
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


def _setter(name: str) -> Callable[[Claim, Any], None]:
    """The slot descriptor's ``__set__`` for one of ``Claim``'s fields."""
    setter: Callable[[Claim, Any], None] = getattr(Claim, name).__set__
    return setter


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
    everyone else a ``Claim`` is immutable, and ``store._rows.with_id`` copies."""
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


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """One read's pinned instants, in storage microseconds.

    ``known_at`` is the belief clock and is always set. ``valid_at`` is the world clock;
    ``None`` leaves valid time unconstrained (used by ``history()`` and audit reads).
    """

    known_at: int
    valid_at: int | None


@dataclass(frozen=True, slots=True)
class Skip:
    """A turn a write dropped on purpose, and why."""

    content: str
    reason: str


@dataclass(frozen=True, slots=True)
class WriteReceipt:
    """What one write did, and what it dropped.

    ``closed`` is every claim the write closed on either clock: ``ended`` (the world
    moved on) plus ``retired`` (the record was wrong). ``invalidated`` is the older name
    of ``closed``.
    """

    added: tuple[Claim, ...] = ()
    reinforced: tuple[Claim, ...] = ()
    ended: tuple[Claim, ...] = ()
    retired: tuple[Claim, ...] = ()
    skipped: tuple[Skip, ...] = ()
    unextracted: int = 0
    llm_calls: int = 0
    elapsed_ms: float = 0.0

    @property
    def closed(self) -> tuple[Claim, ...]:
        """Claims this write closed, ended ones first."""
        return self.ended + self.retired

    @property
    def invalidated(self) -> tuple[Claim, ...]:
        """Alias of ``closed``, kept from the published API."""
        return self.closed

    def __repr__(self) -> str:
        return (
            f"<WriteReceipt +{len(self.added)} ~{len(self.reinforced)} -{len(self.closed)}"
            f" skip={len(self.skipped)} llm={self.llm_calls} {self.elapsed_ms:.1f}ms>"
        )


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a result ranked where it did: each retriever's rank and raw score, the fused
    rank score, and the factors that rescaled it.

    ``score = fused * recency * confidence * salience``; ``fused`` is the Reciprocal Rank
    Fusion of the two ranks, scaled so a result first in both lists scores 1.
    """

    vector_rank: int | None
    vector_score: float | None
    bm25_rank: int | None
    bm25_score: float | None
    fused: float
    recency: float
    confidence: float
    salience: float
    score: float
    rerank: float | None = None
    """The reranker's score, when one reordered the top results."""

    def summary(self) -> str:
        """One line: ``vector#1(0.812) bm25#2(6.44) recency=0.98 conf=0.90 sal=1.25 -> 0.7431``."""
        parts = []
        if self.vector_rank is not None:
            parts.append(f"vector#{self.vector_rank}({self.vector_score:.3f})")
        if self.bm25_rank is not None:
            parts.append(f"bm25#{self.bm25_rank}({self.bm25_score:.2f})")
        parts.append(
            f"recency={self.recency:.2f} conf={self.confidence:.2f} sal={self.salience:.2f}"
            f" -> {self.score:.4f}"
        )
        if self.rerank is not None:
            parts.append(f"rerank={self.rerank:.3f}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One search result: a claim, or (with ``include_episodes=True``) a raw turn."""

    kind: Literal["claim", "episode"]
    text: str
    score: float
    explain: Explanation
    claim: Claim | None = None
    episode: Episode | None = None

    @property
    def id(self) -> str:
        """The claim's or the episode's id."""
        item = self.claim if self.claim is not None else self.episode
        return item.id if item is not None else ""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a claim came from and what became of it, as believed at one instant
    (``why()``'s answer)."""

    claim: Claim
    episodes: tuple[Episode, ...]
    """The source turns still on record and visible here, in the order cited."""
    superseded: tuple[Claim, ...]
    """The claims this one closed: retired in its favour, or ended where it began."""
    closed_by: Claim | None
    """The claim that retired or ended this one, if any (``None`` for a plain
    ``delete()``/``forget()``, or a closer this scope cannot see)."""

    @property
    def extractor(self) -> str:
        """What produced the claim and its version (``"rules:v1"``, ``"llm"``, ``""``
        for a direct ``remember()``)."""
        return self.claim.extractor

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source the claim cites, episodes or not, as recorded."""
        return self.claim.sources


@dataclass(frozen=True, slots=True)
class Path:
    """A chain of claims linking entities, every hop read at one pinned instant.

    ``nodes`` are folded entity keys (two spellings of one entity are one node);
    ``labels`` are the names as the claims store them; ``forward[i]`` says whether hop
    ``i`` was walked from the claim's subject to its object. A path with no claims
    joins two names of one entity.
    """

    claims: tuple[Claim, ...]
    nodes: tuple[str, ...]
    labels: tuple[str, ...]
    forward: tuple[bool, ...]
    score: float

    @property
    def hops(self) -> int:
        """How many claims the path walks."""
        return len(self.claims)

    def render(self) -> str:
        """``alice -reports_to-> Dana -works_at-> Kovac Labs``; a hop walked against the
        claim's direction reads ``Kovac Labs <-works_at- dana``."""
        parts = [_one_line(self.labels[0])]
        for claim, label, forward in zip(self.claims, self.labels[1:], self.forward):
            arrow = f"-{claim.predicate}->" if forward else f"<-{claim.predicate}-"
            parts += [arrow, _one_line(label)]
        return " ".join(parts)


def _one_line(text: str) -> str:
    """A label on one line: a stored name cannot break a rendered path in two."""
    return " ".join(text.split())


(_added, _reinforced, _ended, _retired, _skipped, _unextracted, _llm_calls, _elapsed_ms) = (
    getattr(WriteReceipt, f.name).__set__ for f in fields(WriteReceipt))


def assemble_receipt(
    added: tuple[Claim, ...], reinforced: tuple[Claim, ...], ended: tuple[Claim, ...],
    retired: tuple[Claim, ...], elapsed_ms: float,
) -> WriteReceipt:
    """``WriteReceipt(...)`` for a structured write (nothing skipped, no model), set
    slot by slot as ``assemble_claim`` does: every ``remember()`` returns one."""
    receipt = _new(WriteReceipt)
    _added(receipt, added)
    _reinforced(receipt, reinforced)
    _ended(receipt, ended)
    _retired(receipt, retired)
    _skipped(receipt, ())
    _unextracted(receipt, 0)
    _llm_calls(receipt, 0)
    _elapsed_ms(receipt, elapsed_ms)
    return receipt
