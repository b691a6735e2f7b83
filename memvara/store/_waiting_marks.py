"""The marks of waiting turns, as ``forget_subject`` sees them: both stores read the
marks of a subtree (``extraction_backlog``'s ``speaker``, a message's ``name``, and
``meta``, the call's) and decide here.

A turn the subject said is the subject's words, whatever it names: the erasure takes it
like a turn only the subject's claims cited (one still cited by another claim stays, and
waits no more). Any other mark loses the subject's names from its speaker and its meta,
as a turn's text and a claim's metadata do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._domain.entities import entity_key
from .._domain.erasure import Scrubber
from ._scrubbed_claims import scrubbed_json

__all__ = ["MARKS", "mark_changes", "spoken_by"]

MARKS = "(b.speaker IS NOT NULL OR b.meta IS NOT NULL)"
"""The marks that hold any text (``b``: ``extraction_backlog``)."""

Mark = tuple[str, int, "str | None", "str | None"]
"""``(turn id, turn rowid, speaker, meta)``, as both stores read a subtree's marks."""


def spoken_by(marks: Iterable[Mark], keys: Sequence[str]) -> list[str]:
    """The ids of the turns a name folding to one of ``keys`` said."""
    wanted = set(keys)
    return [turn for turn, _, speaker, _ in marks if speaker is not None and entity_key(speaker) in wanted]


def mark_changes(
    marks: Iterable[Mark], keys: Sequence[str], scrubber: Scrubber,
) -> tuple[list[int], list[tuple[str | None, str | None, int]]]:
    """Of the marks of turns the erasure left: the rowids whose mark goes (the subject
    said them) and ``(speaker, meta, rowid)`` for those scrubbed."""
    wanted = set(keys)
    dropped: list[int] = []
    changed: list[tuple[str | None, str | None, int]] = []
    for _, rowid, speaker, meta in marks:
        if speaker is not None and entity_key(speaker) in wanted:
            dropped.append(rowid)
            continue
        new_speaker = None if speaker is None else scrubber(speaker)
        new_meta = scrubbed_json(meta, scrubber)
        if (new_speaker, new_meta) != (speaker, meta):
            changed.append((new_speaker, new_meta, rowid))
    return dropped, changed
