"""The ``memvara`` command's human-readable output: plain-text tables of claims, search
results, turns and provenance (``--json`` prints the ``to_dict()`` forms instead)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone

from memvara import Claim, Episode, Provenance, Retrieved

__all__ = [
    "claim_table",
    "episode_table",
    "instant",
    "provenance_text",
    "search_table",
    "stats_text",
    "table",
    "timeline_table",
]

_WIDEST = 48
"""A free-text cell (an object, a turn) is cut to this many characters in a table;
``--json`` prints it whole."""

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
"""Control characters, line breaks included: stored text is flattened to one line and
can never move the terminal's cursor or forge a row."""


def cell(value: object, widest: int = _WIDEST) -> str:
    """``value`` as one printable line of at most ``widest`` characters."""
    text = _UNPRINTABLE.sub(" ", str(value)).strip()
    return text if len(text) <= widest else text[: widest - 3] + "..."


def instant(value: datetime | None, open_end: str = "-") -> str:
    """An instant in UTC to the second (``2026-06-24T09:30:00Z``); ``open_end`` for none."""
    if value is None:
        return open_end
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns two spaces apart under a header row; the last column is not
    padded. Cells must be one line already (``cell()``)."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    lines = []
    for row in (headers, *rows):
        padded = [text.ljust(width) for text, width in zip(row[:-1], widths)]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def claim_table(claims: Sequence[Claim], *, slot: bool = False) -> str:
    """One row per claim: its id, triple, state and both clocks' starts (with ``slot``,
    for one subject and predicate: the object with both clocks' ranges in full)."""
    if slot:
        return table(
            ["id", "object", "state", "valid_from", "valid_to", "recorded_at", "invalidated_at"],
            [[c.id, cell(c.object), c.state, instant(c.valid_from), instant(c.valid_to),
              instant(c.recorded_at), instant(c.invalidated_at)] for c in claims])
    return table(
        ["id", "subject", "predicate", "object", "state", "valid_from", "recorded_at"],
        [[c.id, cell(c.subject, 24), cell(c.predicate, 24), cell(c.object), c.state,
          instant(c.valid_from), instant(c.recorded_at)] for c in claims])


def timeline_table(claims: Sequence[Claim]) -> str:
    """One slot on both clocks: each value, its state, when it held in the world
    (``valid_from..valid_to``) and when it was believed (``recorded_at..invalidated_at``);
    an open end reads ``open``."""
    return table(
        ["object", "state", "valid (world clock)", "believed (belief clock)"],
        [[cell(c.object), c.state,
          f"{instant(c.valid_from)}..{instant(c.valid_to, 'open')}",
          f"{instant(c.recorded_at)}..{instant(c.invalidated_at, 'open')}"] for c in claims])


def search_table(results: Sequence[Retrieved]) -> str:
    """One row per result: score, kind, id, the claim's state and the text."""
    return table(
        ["score", "kind", "id", "state", "text"],
        [[f"{r.score:.4f}", r.kind, r.id, r.claim.state if r.claim is not None else "-",
          cell(r.text, 72)] for r in results])


def episode_table(episodes: Sequence[Episode]) -> str:
    """One row per turn: id, when it was said, role and content."""
    return table(["id", "said_at", "role", "content"],
                 [[e.id, instant(e.ts), e.role, cell(e.content, 72)] for e in episodes])


def stats_text(stats: dict[str, int]) -> str:
    """The population counts, one ``name  value`` line each."""
    return table(["count", "value"], [[name, f"{value:,}"] for name, value in stats.items()])


def _one(claim: Claim) -> str:
    return f"{claim.id}  {cell(claim.subject, 24)} {cell(claim.predicate, 24)}" \
           f" {cell(claim.object)}  ({claim.state})"


def provenance_text(found: Provenance) -> str:
    """``why()``'s answer: the claim, both clocks, its extractor and sources, the turns
    it came from, what it superseded and what closed it."""
    claim = found.claim
    lines = [
        f"claim       {_one(claim)}",
        f"valid       {instant(claim.valid_from)} .. {instant(claim.valid_to, 'open')}",
        f"believed    {instant(claim.recorded_at)} .. {instant(claim.invalidated_at, 'open')}",
        f"extractor   {found.extractor or '-'}",
        f"sources     {', '.join(cell(s, 24) for s in found.sources) or '-'}",
        f"closed by   {_one(found.closed_by) if found.closed_by is not None else '-'}",
        f"superseded  {len(found.superseded)}",
        *(f"  {_one(c)}" for c in found.superseded),
        f"turns       {len(found.episodes)}",
        *(f"  {e.id}  {instant(e.ts)}  {e.role}: {cell(e.content, 72)}" for e in found.episodes),
    ]
    return "\n".join(lines) + "\n"
