"""What ``forget_subject()`` takes and returns: the request handed to each outside
``ErasureTarget``, and the manifest of what was erased. No text of the subject is kept
in either after the call: the request is built for the call and dropped; the manifest
names the subject only by a digest keyed by the store's secret."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .entities import folded_words
from .model import fields_dict

__all__ = ["ERASED", "ErasureManifest", "ErasureRequest", "ErasureTarget", "distinct_names", "scrub"]

ERASED = "[erased]"
"""What a subject's name becomes in a turn that survives its erasure."""


@dataclass(frozen=True, slots=True)
class ErasureRequest:
    """What an outside store is asked to erase: every record about ``subject`` (by any
    of ``names``) and every record keyed by one of these claim or turn ids."""

    subject: str
    names: tuple[str, ...]
    claim_ids: tuple[str, ...]
    episode_ids: tuple[str, ...]
    tombstone: str
    """The tombstone's id, to quote in the outside store's own records."""


@runtime_checkable
class ErasureTarget(Protocol):
    """An outside store ``forget_subject()`` reaches (a vector database, a cache, a
    search index): register it with ``Memvara.add_erasure_target()``."""

    name: str
    """How the manifest and the tombstone name it."""

    def erase(self, request: ErasureRequest) -> bool:
        """Erase what ``request`` names; ``True`` once it is gone. Anything else, or an
        exception, leaves the erasure incomplete (the manifest says which)."""
        ...


@dataclass(frozen=True, slots=True)
class ErasureManifest:
    """What ``forget_subject()`` erased. ``complete`` is true only when the store's own
    erasure committed and every outside target confirmed."""

    tombstone: str
    subject_digest: str
    claims: int
    """Claims erased: about the subject, naming it as the object, derived from those."""
    archived: int
    """Archived claims erased (``prune()``'s archive)."""
    episodes_erased: int
    """Turns only those claims cited, erased."""
    episodes_scrubbed: int
    """Other turns that named the subject, kept with each name replaced by ``[erased]``."""
    aliases: int
    targets: dict[str, bool] = field(default_factory=dict)
    """Each outside target's name and whether it confirmed."""

    @property
    def complete(self) -> bool:
        return all(self.targets.values())

    def to_dict(self) -> dict[str, Any]:
        """Every field in JSON's types, plus ``complete``."""
        return {**fields_dict(self), "complete": self.complete}


def scrub(text: str, names: tuple[str, ...]) -> str:
    """``text`` with every whole-word occurrence of each name (any case) replaced by
    ``[erased]``; the longest names first, so "Maya Silva" goes before "Maya". Then every
    run of words that folds to a name's words (``folded_words``: another accent or case,
    other punctuation between them) goes too: an alias is known by its folded key alone,
    and "Zoë" and "O'Brien" must go for the keys "zoe" and "o brien"."""
    names = tuple(sorted({n for n in names if n.strip()}, key=len, reverse=True))
    for name in names:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", ERASED, text, flags=re.IGNORECASE)
    keys = [key for key in (_key_words(name) for name in names) if key]
    if not keys or not _folds_to_any(text, keys):
        return text
    words = folded_words(text)
    spans: list[tuple[int, int]] = []
    for key in keys:
        for i in range(len(words) - len(key) + 1):
            if all(words[i + j][0] == part for j, part in enumerate(key)):
                spans.append((words[i][1], words[i + len(key) - 1][2]))
    for start, end in sorted(_merged(spans), reverse=True):
        text = text[:start] + ERASED + text[end:]
    return text


def _key_words(name: str) -> tuple[str, ...]:
    return tuple(word for word, _, _ in folded_words(name))


_MARKS = re.compile("[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
"""Combining marks: the accents the fold drops from Latin, Greek and Cyrillic letters
(and a few it keeps elsewhere, dropped here from both sides of a comparison)."""


def _folds_to_any(text: str, keys: list[tuple[str, ...]]) -> bool:
    """Whether some run of ``text``'s folded words may be one of ``keys``: a test at C
    speed that never says no where ``folded_words`` would find one (each of a key's
    words is in the text, both with the marks above dropped), so a turn that names none
    of them skips the walk."""
    if text.isascii():
        lowered = text.lower()
        return any(all(part in lowered for part in key) for key in keys)
    folded = _MARKS.sub("", unicodedata.normalize("NFKD", text).casefold())
    return any(all(_MARKS.sub("", part) in folded for part in key) for key in keys)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans as one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def distinct_names(names: set[str]) -> tuple[str, ...]:
    """``names`` sorted, one of each spelling that differs only in case (``scrub``
    ignores case): an alias's key ``"maya"`` adds nothing beside ``"Maya"``."""
    by_case: dict[str, str] = {}
    for name in sorted(names):
        by_case.setdefault(name.lower(), name)
    return tuple(by_case.values())
