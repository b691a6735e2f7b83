"""Who said a waiting turn, as ``forget_subject`` sees it: both stores read the marks of
a subtree (``extraction_backlog``'s ``speaker``, a message's ``name``) and decide here.

A turn the subject said is the subject's words, whatever it names: the erasure takes it
like a turn only the subject's claims cited (one still cited by another claim stays, and
waits no more). Any other speaker loses the subject's names as a turn's text does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._domain.entities import entity_key
from .._domain.erasure import Scrubber

__all__ = ["spoken_by", "speaker_changes"]


def spoken_by(marks: Iterable[tuple[str, str]], keys: Sequence[str]) -> list[str]:
    """Of ``(turn id, speaker)`` marks, the turns a name folding to one of ``keys`` said."""
    wanted = set(keys)
    return [turn for turn, speaker in marks if entity_key(speaker) in wanted]


def speaker_changes(
    marks: Iterable[tuple[int, str]], keys: Sequence[str], scrubber: Scrubber,
) -> tuple[list[int], list[tuple[str, int]]]:
    """Of ``(turn rowid, speaker)`` marks left after the erasure: the rowids whose mark
    goes (the subject said them) and ``(new speaker, rowid)`` for the rest it scrubs."""
    wanted = set(keys)
    dropped: list[int] = []
    renamed: list[tuple[str, int]] = []
    for rowid, speaker in marks:
        if entity_key(speaker) in wanted:
            dropped.append(rowid)
        elif (new := scrubber(speaker)) != speaker:
            renamed.append((new, rowid))
    return dropped, renamed
