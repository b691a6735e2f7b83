"""What the retriever adapters share: their keywords, checked once at construction (and
per call where the framework allows it), and a search result's JSON-safe metadata.

A framework serialises document metadata (into a trace, a vector store, a prompt), so
every value here is a string, a number, ``None`` or a list of strings: instants are
ISO-8601 strings with their offset, never ``datetime`` objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from memvara import (
    STATES,
    Episode,
    InvalidArgumentError,
    InvalidTimeError,
    Memvara,
    Retrieved,
    ScopedMemvara,
)

from ._handles import MemoryHandle, sync_handle

__all__ = ["MemoryHandle", "Reading", "TIME_KEYWORDS", "check_memory", "metadata", "reading"]

check_memory = sync_handle
"""The synchronous handle a memory argument is or wraps (``_handles.sync_handle``)."""

TIME_KEYWORDS = ("valid_at", "known_at", "as_of")
"""The per-call keywords: a call naming any of them sets all three."""

_MAX_K = 1_000_000


@dataclass(frozen=True, slots=True)
class Reading:
    """One search's arguments, checked: how many, at which instants, in which states."""

    k: int
    valid_at: datetime | None
    known_at: datetime | None
    as_of: datetime | None
    states: tuple[str, ...] | None
    include_episodes: bool

    def search(self, memory: Memvara | ScopedMemvara, query: str) -> list[Retrieved]:
        """``memory.search(query, ...)`` with these arguments."""
        return memory.search(
            query, k=self.k, valid_at=self.valid_at, known_at=self.known_at,
            as_of=self.as_of, states=self.states, include_episodes=self.include_episodes,
        )

    def at(self, times: Mapping[str, object]) -> Reading:
        """This reading with a call's own time keywords in place of all three (a call
        passing ``as_of`` alone is not refused for the ``valid_at`` set at construction)."""
        return reading(self.k, times.get("valid_at"), times.get("known_at"),
                       times.get("as_of"), self.states, self.include_episodes)


def reading(
    k: object, valid_at: object, known_at: object, as_of: object, states: object,
    include_episodes: object,
) -> Reading:
    """The checked ``Reading``; each problem is an error naming its argument.

    Raises:
        InvalidTimeError: a time keyword that is not a ``datetime`` (or ``None``).
        InvalidArgumentError: ``as_of`` with ``valid_at``/``known_at``; ``k`` not an int
            from 1 to 1,000,000; ``states`` not a non-empty list of states;
            ``include_episodes`` not a bool.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= _MAX_K:
        raise InvalidArgumentError("k", f"expected an int from 1 to {_MAX_K:,}, got {k!r:.40}")
    instants: dict[str, datetime | None] = {}
    for name, value in zip(TIME_KEYWORDS, (valid_at, known_at, as_of)):
        if value is not None and not isinstance(value, datetime):
            raise InvalidTimeError(
                name, f"expected a datetime or None, got {type(value).__name__} {value!r:.40}")
        instants[name] = value
    if as_of is not None and (valid_at is not None or known_at is not None):
        raise InvalidArgumentError("as_of", "pass as_of alone, or valid_at/known_at, not both")
    if not isinstance(include_episodes, bool):
        raise InvalidArgumentError("include_episodes", f"expected True or False, got {include_episodes!r:.40}")
    return Reading(k, instants["valid_at"], instants["known_at"], instants["as_of"],
                   _states(states), include_episodes)


def _states(states: object) -> tuple[str, ...] | None:
    if states is None:
        return None
    chosen = [] if isinstance(states, str) or not isinstance(states, Iterable) else list(states)
    if not chosen or any(s not in STATES for s in chosen):
        raise InvalidArgumentError(
            "states", f"expected a non-empty list drawn from {list(STATES)}, got {states!r:.60}")
    return tuple(chosen)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def metadata(result: Retrieved) -> dict[str, Any]:
    """A result's metadata in JSON's types: what it is (``kind``, ``id``), its ``score``
    and the one-line ``explain`` summary, then for a claim its triple, ``state`` and both
    clocks (``valid_from``/``valid_to``, ``recorded_at``/``invalidated_at``), and for a
    turn its ``role``, when it was said (``ts``) and ``recorded_at``."""
    found: dict[str, Any] = {
        "kind": result.kind, "id": result.id, "score": result.score,
        "explain": result.explain.summary(),
    }
    claim = result.claim
    if claim is not None:
        found.update(
            subject=claim.subject, predicate=claim.predicate, object=claim.object,
            state=claim.state, valid_from=_iso(claim.valid_from), valid_to=_iso(claim.valid_to),
            recorded_at=_iso(claim.recorded_at), invalidated_at=_iso(claim.invalidated_at),
            memory_type=claim.memory_type, sources=list(claim.sources),
        )
    else:  # a result is a claim or a turn, never neither
        episode = cast(Episode, result.episode)
        found.update(role=episode.role, ts=_iso(episode.ts), recorded_at=_iso(episode.recorded_at))
    return found
