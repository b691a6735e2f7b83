"""What calls return: write receipts, search results and their explanations, a claim's
provenance, graph paths. Frozen values, each with a JSON form (``to_dict()``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from .model import Claim, Episode, fields_dict, plain
from .review import Review

__all__ = [
    "ConflictCheck",
    "Explanation",
    "Path",
    "Provenance",
    "Retrieved",
    "Skip",
    "WriteReceipt",
    "assemble_receipt",
]

_new = object.__new__


@dataclass(frozen=True, slots=True)
class Skip:
    """A turn a write dropped on purpose, and why."""

    content: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"content": ..., "reason": ...}``."""
        return fields_dict(self)


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
    pending: tuple[str, ...] = ()
    """The ids of the stored turns waiting for extraction: the model failed on them
    (``Memvara.retry_extraction()`` reads them again)."""

    @property
    def closed(self) -> tuple[Claim, ...]:
        """Claims this write closed, ended ones first."""
        return self.ended + self.retired

    @property
    def invalidated(self) -> tuple[Claim, ...]:
        """Alias of ``closed``, kept from the published API."""
        return self.closed

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types (claims as ``Claim.to_dict()``), plus ``closed``:
        the ids of the claims this write closed."""
        return {**fields_dict(self), "closed": [c.id for c in self.closed]}

    def __repr__(self) -> str:
        return (
            f"<WriteReceipt +{len(self.added)} ~{len(self.reinforced)} -{len(self.closed)}"
            f" skip={len(self.skipped)} llm={self.llm_calls}"
            f"{f' waiting={len(self.pending)}' if self.pending else ''} {self.elapsed_ms:.1f}ms>"
        )


@dataclass(frozen=True, slots=True)
class ConflictCheck:
    """What a ``remember()`` would do, read without writing (``check_conflict()``).

    ``action`` is ``"add"`` (a new row; ``ends`` and ``retires`` name what it would
    close), ``"reinforce"`` (the value is believed already: ``reinforces``, no row) or
    ``"correct"`` (the believed value re-stated with an earlier start: ``corrects`` is
    retired and the new row holds the value from the earlier start).
    """

    action: Literal["add", "reinforce", "correct"]
    claim: Claim
    """The claim as it would be written (no id yet), its end bounded as it would be."""
    reinforces: Claim | None = None
    corrects: Claim | None = None
    ends: tuple[Claim, ...] = ()
    retires: tuple[Claim, ...] = ()

    @property
    def closes(self) -> tuple[str, ...]:
        """The ids of every claim the write would close: ended ones, then retired ones,
        then the corrected one."""
        corrected = () if self.corrects is None else (self.corrects,)
        return tuple(c.id for c in (*self.ends, *self.retires, *corrected))

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types, plus ``closes``."""
        return {**fields_dict(self), "closes": list(self.closes)}


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

    def to_dict(self) -> dict[str, Any]:
        """Every field, plus the one-line ``summary``."""
        return {**fields_dict(self), "summary": self.summary()}


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One search result: a claim, or (with ``include_episodes=True``) a raw turn."""

    kind: Literal["claim", "episode"]
    text: str
    score: float
    explain: Explanation
    claim: Claim | None = None
    episode: Episode | None = None
    review: Review | None = None
    """The open review of the claim's slot, when it is under review (its ``object`` is
    the contested value); ``None`` otherwise."""

    @property
    def id(self) -> str:
        """The claim's or the episode's id."""
        item = self.claim if self.claim is not None else self.episode
        return item.id if item is not None else ""

    def to_dict(self) -> dict[str, Any]:
        """``kind``, ``id``, ``text``, ``score``, ``explain`` and the ``claim`` or
        ``episode`` (the other ``None``), in JSON's types."""
        data = {"kind": self.kind, "id": self.id, "text": self.text, "score": self.score,
                "explain": self.explain.to_dict(), "claim": plain(self.claim),
                "episode": plain(self.episode)}
        if self.review is not None:  # only under review: the usual form is unchanged
            data["review"] = self.review.to_dict()
        return data


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a claim came from and what became of it, as believed at one instant
    (``why()``'s answer)."""

    claim: Claim
    episodes: tuple[Episode, ...]
    """The source turns still on record and visible here, in the order cited."""
    superseded: tuple[Claim, ...]
    """The claims this one closed: retired in its favour, or ended where it began
    (written before or after it)."""
    closed_by: Claim | None
    """The claim that retired or ended this one, if any: also the later value a claim
    written afterwards ends at (``None`` for a plain ``delete()``/``forget()``, an end
    given by hand, or a closer this scope cannot see)."""
    actor: str | None = None
    """Who wrote the claim: the ``actor=`` its write named, else its scope's agent, else
    its user (``""`` at a scope with neither); ``None`` for a store with no write log."""

    @property
    def extractor(self) -> str:
        """What produced the claim and its version (``"rules:v1"``, ``"llm"``, ``""``
        for a direct ``remember()``)."""
        return self.claim.extractor

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source the claim cites, episodes or not, as recorded."""
        return self.claim.sources

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types, plus ``extractor`` and ``sources``."""
        return {**fields_dict(self), "extractor": self.extractor, "sources": list(self.sources)}


@dataclass(frozen=True, slots=True)
class Path:
    """A chain of claims linking entities, every hop read at one pinned instant.

    ``nodes`` are folded entity keys (two spellings of one entity are one node);
    ``labels`` are the names as the claims store them; ``forward[i]`` says whether hop
    ``i`` was walked from the claim's subject to its object.
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

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types, plus ``hops`` and the rendered ``text``."""
        return {**fields_dict(self), "hops": self.hops, "text": self.render()}

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


(_added, _reinforced, _ended, _retired, _skipped, _unextracted, _llm_calls, _elapsed_ms,
 _pending) = (getattr(WriteReceipt, f.name).__set__ for f in fields(WriteReceipt))


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
    _pending(receipt, ())
    return receipt
