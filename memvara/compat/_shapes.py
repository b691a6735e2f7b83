"""mem0's arguments in, mem0's dictionaries out: the pure half of the shim.

Scopes: mem0's flat ``user_id``/``agent_id``/``run_id`` are memvara's ``user``,
``agent`` and ``session`` levels (the tenant is the wrapped memory's own). Results: a
claim becomes mem0's memory item (``id``, ``memory``, ``hash``, ``metadata``,
``created_at``, ``updated_at``, the scope ids, and ``score`` on search), and a slot's
timeline becomes mem0's ``history()`` rows. Nothing here touches a store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from .. import Claim, InvalidArgumentError, Scope
from ._errors import NoTranslationError

__all__ = ["ID_KEYS", "history_rows", "item", "metadata_filters", "scope_for"]

ID_KEYS = ("user_id", "agent_id", "run_id")
"""mem0's scope ids, in memvara's level order (user, agent, session)."""

KNOWN_OPERATORS = frozenset(
    {"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains"})
"""The metadata filter operators mem0 documents; none has a memvara counterpart."""

LOGICAL = frozenset({"AND", "OR", "NOT"})


def _id(value: object, name: str) -> str | None:
    """One mem0 id, as mem0 takes it: ``None``, or a string (an int is written as one)
    with no whitespace inside; surrounding whitespace is dropped."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidArgumentError(name, f"expected a string id, got {type(value).__name__}")
    text = str(value).strip()
    if not text or any(c.isspace() for c in text) or "\x00" in text:
        raise InvalidArgumentError(name, f"expected a non-empty id without whitespace, got {value!r:.60}")
    return text


def scope_for(
    base: Scope,
    default: Mapping[str, str | None],
    given: Mapping[str, object],
    filters: Mapping[str, object] | None,
    call: str,
) -> tuple[Scope, dict[str, object]]:
    """The scope a shim call runs at, and the metadata filters left in ``filters``.

    Each id comes from ``filters``, else the keyword, else the ``Memory(user_id=...)``
    default; a keyword and a filter that disagree are refused. At least one id must be
    set, as mem0 requires: memvara's scopes fail closed, and a call with none would read
    or write the shared root memory.
    """
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidArgumentError("filters", f"expected a dict, got {type(filters).__name__}")
    rest = dict(filters or {})
    ids: dict[str, str | None] = {}
    for key in ID_KEYS:
        keyword = _id(given.get(key), key)
        if key in rest:
            if rest[key] == "*":  # mem0: any value, so every user's memories
                raise NoTranslationError(
                    f"filters[{key!r}]", "the '*' wildcard would read every scope at once;"
                    " memvara reads one scope and those above it: name the id")
            chosen = _id(rest.pop(key), f"filters[{key!r}]")
            if keyword is not None and chosen != keyword:
                raise InvalidArgumentError(
                    key, f"{keyword!r} disagrees with filters[{key!r}] = {chosen!r}")
        else:
            chosen = keyword
        ids[key] = chosen if chosen is not None else default.get(key)
    if not any(ids.values()) and LOGICAL & rest.keys():
        metadata_filters(rest)  # names the AND/OR/NOT that holds the ids, rather than "no id"
    if not any(ids.values()):
        raise InvalidArgumentError(
            "user_id", f"{call}() needs at least one of user_id, agent_id or run_id (or a"
            " default one: Memory(user_id=...)); memvara has no unscoped memory to use")
    return Scope(base.tenant, ids["user_id"], ids["agent_id"], ids["run_id"]), rest


def metadata_filters(rest: Mapping[str, object]) -> dict[str, object]:
    """The equality filters on metadata left after the scope ids: ``{"key": value}``
    only. mem0's operators, its ``"*"`` wildcard and ``AND``/``OR``/``NOT`` are refused,
    naming them."""
    for key, value in rest.items():
        if key in LOGICAL:
            raise NoTranslationError(
                f"filters[{key!r}]", "logical filter operators have no memvara counterpart;"
                " memvara narrows reads by scope, time and state, and matches metadata by"
                " equality only")
        if key == "actor_id":
            raise NoTranslationError(
                "filters['actor_id']", "memvara does not record mem0's actor; a message's"
                " name= is its speaker, which becomes the claim's subject")
        if isinstance(value, Mapping):
            ops = ", ".join(repr(op) for op in value)
            unknown = [op for op in value if op not in KNOWN_OPERATORS]
            if unknown:
                raise InvalidArgumentError(
                    f"filters[{key!r}]", f"unknown filter operator(s) {ops}; mem0's are"
                    f" {', '.join(sorted(KNOWN_OPERATORS))}")
            raise NoTranslationError(
                f"filters[{key!r}]", f"the metadata operator(s) {ops} have no memvara"
                " counterpart; metadata matches by equality only ({key: value})")
        if value == "*":
            raise NoTranslationError(
                f"filters[{key!r}]", "the '*' wildcard has no memvara counterpart;"
                " metadata matches by equality only ({key: value})")
    return dict(rest)


def matches(claim: Claim, wanted: Mapping[str, object]) -> bool:
    """Whether the claim's metadata holds every ``wanted`` key with an equal value."""
    return all(key in claim.meta and claim.meta[key] == value for key, value in wanted.items())


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else instant.isoformat()


def item(claim: Claim, score: float | None = None, *, with_score: bool = True) -> dict[str, Any]:
    """A claim as mem0's memory item. A claim is never edited in place (a new value is a
    new claim), so ``updated_at`` is ``created_at``, as on a fresh mem0 memory."""
    created = _iso(claim.recorded_at)
    out: dict[str, Any] = {
        "id": claim.id,
        "memory": claim.text,
        "hash": hashlib.md5(claim.text.encode("utf-8")).hexdigest(),
        "metadata": dict(claim.meta) or None,
    }
    if with_score:
        out["score"] = score
    out["created_at"] = created
    out["updated_at"] = created
    for key, value in zip(ID_KEYS, (claim.scope.user, claim.scope.agent, claim.scope.session)):
        if value is not None:
            out[key] = value
    return out


def _closed_at(claim: Claim) -> datetime | None:
    """When belief in the claim's current value stopped: retired, or its end learned."""
    if claim.invalidated_at is not None:
        return claim.invalidated_at
    return claim.valid_to_known_at if claim.valid_to is not None else None


def history_rows(slot: Sequence[Claim]) -> list[dict[str, Any]]:
    """mem0 ``history()`` rows for one slot's timeline (in recorded order).

    Each claim is an ``ADD`` when it was recorded, or an ``UPDATE`` when it replaced a
    value of the slot at that same instant; a claim closed with no replacement is a
    ``DELETE`` at its closing. A row's ``memory_id`` is the claim it is about.
    """
    rows: list[tuple[datetime, int, dict[str, Any]]] = []
    replaced: dict[datetime, Claim] = {}
    for claim in slot:
        closed = _closed_at(claim)
        if closed is not None:
            replaced.setdefault(closed, claim)
    updated: set[str] = set()  # claims an UPDATE row already accounts for
    for order, claim in enumerate(slot):
        recorded = cast(datetime, claim.recorded_at)  # every stored claim has one
        old = replaced.get(recorded)
        if old is not None and old.id != claim.id:
            updated.add(old.id)
            rows.append((recorded, order, _row(claim.id, old.text, claim.text, "UPDATE",
                                               old.recorded_at, recorded)))
        else:
            rows.append((recorded, order, _row(claim.id, None, claim.text, "ADD", recorded, None)))
    for order, claim in enumerate(slot):
        closed = _closed_at(claim)
        if closed is not None and claim.id not in updated:
            rows.append((closed, len(slot) + order, _row(
                claim.id, claim.text, None, "DELETE", claim.recorded_at, closed)))
    rows.sort(key=lambda row: (row[0], row[1]))
    return [row for _, _, row in rows]


def _row(memory_id: str, old: str | None, new: str | None, event: str,
         created: datetime | None, updated: datetime | None) -> dict[str, Any]:
    return {
        "id": f"{memory_id}:{event.lower()}", "memory_id": memory_id, "old_memory": old,
        "new_memory": new, "event": event, "created_at": _iso(created),
        "updated_at": _iso(updated), "is_deleted": event == "DELETE", "actor_id": None,
        "role": None,
    }
