"""Argument checks and the read query's resolution, done once at the facade.

Every public call funnels its arguments through here, so a bad value fails the same way
wherever it is passed: a memvara error naming the argument and what was wrong, raised
before anything is written.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Final

from .._errors import InvalidArgumentError
from .model import MEMORY_TYPES, ROLES, STATES, Claim, Scope, TimeQuery
from .time import to_micros

__all__ = [
    "UNSET",
    "ScopeArg",
    "Unset",
    "check_claim_id",
    "check_close",
    "check_k",
    "check_limit",
    "check_offset",
    "check_roles",
    "check_memory_types",
    "check_new_claim",
    "check_min_score",
    "check_confidence",
    "check_memory_type",
    "check_meta",
    "check_polarity",
    "check_sources",
    "check_text",
    "resolve_scope",
    "resolve_states",
    "resolve_time",
]


class Unset:
    """The type of ``UNSET``: "use the configured default", as distinct from ``None``."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset()
"""Sentinel for a scope keyword that was not passed (``None`` means "unset the level")."""

ScopeArg = str | None | Unset


def check_text(value: object, argument: str, *, allow_empty: bool = False,
               allow_nul: bool = False) -> str:
    """A string every store can hold as UTF-8 (no lone surrogates, and no NUL, which
    PostgreSQL's text refuses), non-blank by default. ``allow_nul`` for text that is
    never stored or compared with stored text as it is (a search's words)."""
    if not isinstance(value, str):
        raise InvalidArgumentError(argument, f"expected a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidArgumentError(argument, "must not be empty or only whitespace")
    if not allow_nul and "\x00" in value:
        raise InvalidArgumentError(argument, "holds a NUL character, which no store can hold as text")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgumentError(
                argument, f"holds a lone surrogate at index {exc.start}, not valid Unicode text"
            ) from None
    return value


def check_confidence(value: object) -> float:
    """A finite number from 0 to 1."""
    if type(value) is float and 0.0 <= value <= 1.0:  # the usual case, checked first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError("confidence", f"expected a number, got {type(value).__name__}")
    if isinstance(value, int) and not 0 <= value <= 1:  # also ints too big for a float
        raise InvalidArgumentError("confidence", f"must be from 0 to 1, got {value!r:.40}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidArgumentError("confidence", f"must be from 0 to 1, got {value!r}")
    return number


def check_polarity(value: object) -> int:
    """``1`` (the claim holds) or ``-1`` (it is asserted not to hold)."""
    if isinstance(value, bool) or value not in (1, -1):
        raise InvalidArgumentError("polarity", f"must be 1 or -1, got {value!r}")
    return 1 if value == 1 else -1


def check_memory_type(value: object) -> str:
    """One of ``MEMORY_TYPES``."""
    if value not in MEMORY_TYPES:
        raise InvalidArgumentError(
            "memory_type", f"must be one of {', '.join(MEMORY_TYPES)}; got {value!r}"
        )
    return str(value)


def check_new_claim(value: object, scope: Scope, sources: object) -> Claim:
    """``supersede()``'s new claim: a ``Claim`` at the root scope or the caller's, with
    ``sources`` (``None``: none) added to its own."""
    if not isinstance(value, Claim):
        raise InvalidArgumentError("new_claim", f"expected a Claim, got {type(value).__name__}")
    if value.scope != Scope() and value.scope != scope:
        raise InvalidArgumentError(
            "new_claim", f"its scope {value.scope} is not the caller's scope {scope}")
    if sources is None:
        return value
    return replace(value, sources=(*value.sources, *check_sources(sources)))


def check_sources(value: object) -> tuple[str, ...]:
    """A sequence of non-empty source ids (episode ids or any reference strings)."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidArgumentError("sources", f"expected a list of source id strings, got {value!r:.60}")
    return tuple(check_text(s, f"sources[{i}]") for i, s in enumerate(value))


def check_meta(value: object) -> dict[str, object]:
    """Metadata that survives a JSON round trip unchanged in meaning, as UTF-8 (``None``:
    none, an empty dict)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidArgumentError("meta", f"expected a mapping, got {type(value).__name__}")
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError("meta", "holds a lone surrogate, not valid Unicode text") from None
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("meta", f"must be JSON-serializable: {exc}") from None
    for key in value:
        check_text(key, "meta")
    return dict(value)


def check_claim_id(value: object) -> str:
    """A claim id: a non-empty string."""
    return check_text(value, "claim_id")


MAX_K = 1_000_000


def check_k(value: object) -> int:
    """How many results: an int from 1 to ``MAX_K``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise InvalidArgumentError("k", f"expected an int from 1 to {MAX_K:,}, got {value!r:.40}")
    return value


def check_limit(value: object) -> int | None:
    """A page size: ``None`` (no limit) or an int from 0 to ``MAX_K``."""
    return None if value is None else check_int(value, "limit", 0, MAX_K)


def check_offset(value: object) -> int:
    """How many rows a page skips: an int, 0 or more."""
    return check_int(value, "offset", 0, 2**62)


def check_roles(value: object) -> frozenset[str]:
    """A non-empty collection of turn roles, each one of ``ROLES``."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidArgumentError(
            "roles", f"expected a non-empty list drawn from {list(ROLES)}, got {value!r:.60}")
    chosen = list(value)  # read once: a generator is good for one pass
    if not chosen or [r for r in chosen if r not in ROLES]:
        raise InvalidArgumentError(
            "roles", f"expected a non-empty list drawn from {list(ROLES)}, got {chosen!r:.80}")
    return frozenset(chosen)


def check_int(value: object, argument: str, low: int, high: int) -> int:
    """An int from ``low`` to ``high`` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgumentError(
            argument, f"expected an int from {low} to {high:,}, got {value!r:.40}"
        )
    return value


def check_min_score(value: object) -> float:
    """A score floor: a finite number from 0 to 2 (the most a score can be)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        0 <= value <= 2 and math.isfinite(value)
    ):
        raise InvalidArgumentError("min_score", f"expected a number from 0 to 2, got {value!r:.40}")
    return float(value)


def check_memory_types(value: object) -> frozenset[str]:
    """A non-empty collection of memory types."""
    expected = f"expected a non-empty list drawn from {list(MEMORY_TYPES)}, got"
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidArgumentError("memory_types", f"{expected} {value!r:.60}")
    items = list(value)
    if not items or [item for item in items if item not in MEMORY_TYPES]:
        raise InvalidArgumentError("memory_types", f"{expected} {items!r:.80}")
    return frozenset(str(item) for item in items)


def check_close(value: object) -> str:
    """How a conflicting value is closed: ``"ended"`` or ``"retired"``."""
    if value not in ("ended", "retired"):
        raise InvalidArgumentError("close", f"must be 'ended' or 'retired', got {value!r}")
    return str(value)


def resolve_scope(
    base: Scope, tenant: ScopeArg, user: ScopeArg, agent: ScopeArg, session: ScopeArg
) -> Scope:
    """Apply per-call scope keywords to a default scope.

    A keyword that is passed replaces its level (``None`` unsets it). Levels narrower
    than the broadest one passed are cleared unless they are passed too, so
    ``user="bob"`` on a handle bound to alice's session reads bob's memory, not a session
    of bob's that happens to share alice's session id.
    """
    if tenant is UNSET and user is UNSET and agent is UNSET and session is UNSET:
        return base
    given = (tenant, user, agent, session)
    first = next(i for i, v in enumerate(given) if not isinstance(v, Unset))
    values: list[object] = []
    for i, (old, new) in enumerate(zip(base.values(), given)):
        if not isinstance(new, Unset):
            values.append(new)
        else:
            values.append(old if i < first else None)
    try:
        return _scope(*values)
    except TypeError:  # an unhashable value: let Scope name the level it is wrong for
        return Scope(*values)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=4096)
def _scope(*values: object) -> Scope:
    """``Scope(*values)``, built and validated once per distinct value (a server sends
    the same few scopes over and over)."""
    return Scope(*values)  # type: ignore[arg-type]


def resolve_time(
    valid_at: datetime | None,
    known_at: datetime | None,
    as_of: datetime | None,
    now: int,
    *,
    valid_default_now: bool = True,
) -> TimeQuery:
    """Pin one read's instants.

    ``as_of`` is exact sugar for ``valid_at=known_at=as_of`` and may not be combined with
    either. An omitted ``known_at`` is now; an omitted ``valid_at`` is now, or
    unconstrained when ``valid_default_now`` is false (timelines).
    """
    if as_of is not None:
        if valid_at is not None or known_at is not None:
            raise InvalidArgumentError(
                "as_of", "pass as_of alone, or valid_at/known_at, not both"
            )
        instant = to_micros(as_of, "as_of")
        return TimeQuery(known_at=instant, valid_at=instant)
    known = now if known_at is None else to_micros(known_at, "known_at")
    if valid_at is not None:
        return TimeQuery(known_at=known, valid_at=to_micros(valid_at, "valid_at"))
    return TimeQuery(known_at=known, valid_at=now if valid_default_now else None)


def resolve_states(states: object, include_invalidated: object) -> frozenset[str]:
    """The states a read admits; ``["live"]`` unless asked otherwise.

    ``include_invalidated`` is the two-valued alias: ``False`` is ``["live"]``, ``True``
    is all three. Passing both is refused rather than silently picking one.
    """
    if states is not None and include_invalidated is not None:
        raise InvalidArgumentError(
            "states", "pass states or include_invalidated, not both"
        )
    if include_invalidated is not None:
        if not isinstance(include_invalidated, bool):
            raise InvalidArgumentError("include_invalidated", "must be True or False")
        return frozenset(STATES if include_invalidated else ("live",))
    if states is None:
        return frozenset(("live",))
    if isinstance(states, str) or not isinstance(states, Iterable):
        raise InvalidArgumentError(
            "states", f"expected a non-empty list drawn from {list(STATES)}, got {states!r:.60}"
        )
    chosen = list(states)
    unknown = [s for s in chosen if s not in STATES]
    if unknown or not chosen:
        raise InvalidArgumentError(
            "states",
            f"expected a non-empty list drawn from {list(STATES)}, got {chosen!r:.80}",
        )
    return frozenset(chosen)
