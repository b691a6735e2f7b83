"""``recall()``'s prompt block: retrieved memory, framed as data, one line per item.

The block says what it is (stored notes, reference data, not instructions) and renders
every fact on one line: whitespace, including newlines, is collapsed, so a memory whose
text holds a line break and a fake section header cannot start a line of its own.
The history section carries only ``ended`` values: a fact's own past, still believed
true while it held. A ``retired`` value was withdrawn as wrong, and showing it in a
prompt again would reverse that withdrawal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from .._domain.blocks import EPISODE_HEADER, HEADER, HISTORY_HEADER
from .._domain.model import Claim, Episode, Scope, TimeQuery
from .._domain.review import Review
from .._domain.time import to_micros
from .._write.render import render as statement
from ..store.base import Store

__all__ = ["EPISODE_HEADER", "HEADER", "HISTORY_HEADER", "contender", "earlier_values", "render"]

def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) made one space."""
    return " ".join(text.split())


def _date(value: datetime) -> str:
    return f"{value.day} {value.strftime('%B %Y')}"


def _header(value: str) -> str:
    return one_line(value)


def contender(claim: Claim, review: Review) -> str:
    """What ``review`` contests ``claim`` with, for its line: the value alone where both
    say a value holds ('Globex'), else the whole statement, as the value alone would lose
    its "not" ("Rui does not own a car" is contested by 'Rui owns a car', not 'a car'),
    said of the claim's subject as the line spells it."""
    if claim.polarity > 0 and review.polarity > 0:
        return review.object
    return statement(claim.subject, claim.predicate, review.object, review.polarity)


def render(
    claims: Sequence[Claim],
    episodes: Sequence[Episode],
    past: Sequence[Claim],
    *,
    header: str,
    episode_header: str,
    history_header: str,
    disputed: Mapping[str, str] | None = None,
) -> str:
    """The block: facts, then turns, then earlier values; empty when there is nothing.
    A fact whose slot is under review (``disputed``: its id, what contests it: see
    ``contender``) says so on its line."""
    lines: list[str] = []
    marks = disputed or {}
    if claims:
        lines.append(_header(header))
        lines.extend(f"- {one_line(c.text)}" + (
            f" (under review: contested by {one_line(marks[c.id])!r})" if c.id in marks else "")
            for c in claims)
    if episodes:
        lines.append(_header(episode_header))
        for e in episodes:
            when = f", {_date(e.ts)}" if e.ts is not None else ""
            lines.append(f"- [{e.role}{when}] {one_line(e.content)}")
    if past:
        lines.append(_header(history_header))
        for c in past:
            until = f" (until {_date(c.valid_to)})" if c.valid_to is not None else ""
            lines.append(f"- {one_line(c.text)}{until}")
    return "\n".join(lines)


def earlier_values(
    store: Store, keys_of: Callable[[Scope, str], list[str]], claims: Sequence[Claim], now: int,
) -> list[Claim]:
    """The ended values of the surfaced ``claims``' slots, as believed at ``now``, one
    lookup per slot; ``keys_of`` gives every key a subject is filed under."""
    shown = {c.id for c in claims}
    past: list[Claim] = []
    seen: set[tuple[tuple[str, ...], str, Scope]] = set()
    for claim in claims:
        keys = keys_of(claim.scope, claim.subject)  # two names of one entity: one slot
        slot = (tuple(sorted(keys)), claim.predicate, claim.scope)
        if slot in seen:
            continue
        seen.add(slot)
        timeline = store.slot_history(
            claim.scope, keys, claim.predicate, TimeQuery(known_at=now, valid_at=None))
        past.extend(c for c in timeline if c.id not in shown and _ended_by(c, now))
    return past


def _ended_by(claim: Claim, now: int) -> bool:
    """Whether ``claim`` is believed and its valid time is over at ``now``: a known end
    still ahead (a contract running to next spring) leaves the fact true today."""
    return (claim.invalidated_at is None and claim.valid_to is not None
            and to_micros(claim.valid_to, "valid_to") <= now)
