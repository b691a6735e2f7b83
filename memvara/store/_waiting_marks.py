"""The marks of waiting turns, as ``forget_subject`` sees them: both stores read the
marks of a subtree (``extraction_backlog``'s ``speaker``, a message's ``name``, and
``meta``, the call's) and decide here.

A turn the subject said is the subject's words, whatever it names: the erasure takes it
like a turn only the subject's claims cited (one still cited by another claim stays, and
waits no more). Any other mark loses the subject's names from its speaker and its meta,
as a turn's text and a claim's metadata do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from .._domain.entities import entity_key
from .._domain.erasure import Scrubber

__all__ = ["MARKS", "mark_changes", "spoken_by"]

MARKS = "(b.speaker IS NOT NULL OR b.meta IS NOT NULL)"
"""The marks that hold any text (``b``: ``extraction_backlog``)."""

Mark = tuple[int, "str | None", "str | None"]
"""``(turn rowid or id, speaker, meta)``."""


def spoken_by(marks: Iterable[tuple[str, str | None, str | None]], keys: Sequence[str]) -> list[str]:
    """Of ``(turn id, speaker, meta)`` marks, the turns a name folding to one of ``keys`` said."""
    wanted = set(keys)
    return [turn for turn, speaker, _ in marks if speaker is not None and entity_key(speaker) in wanted]


def mark_changes(
    marks: Iterable[Mark], keys: Sequence[str], scrubber: Scrubber,
) -> tuple[list[int], list[tuple[str | None, str | None, int]]]:
    """Of ``(turn rowid, speaker, meta)`` marks left after the erasure: the rowids whose
    mark goes (the subject said them) and ``(speaker, meta, rowid)`` for those scrubbed."""
    wanted = set(keys)
    dropped: list[int] = []
    changed: list[tuple[str | None, str | None, int]] = []
    for rowid, speaker, meta in marks:
        if speaker is not None and entity_key(speaker) in wanted:
            dropped.append(rowid)
            continue
        new_speaker = None if speaker is None else scrubber(speaker)
        new_meta = meta
        if meta is not None and scrubber.may_change_json(meta):
            held = json.loads(meta)
            if (clean := scrubber.value(held)) != held:
                new_meta = json.dumps(clean, sort_keys=True, ensure_ascii=False)
        if (new_speaker, new_meta) != (speaker, meta):
            changed.append((new_speaker, new_meta, rowid))
    return dropped, changed
