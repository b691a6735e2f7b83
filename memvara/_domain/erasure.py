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

__all__ = ["ERASED", "ErasureManifest", "ErasureRequest", "ErasureTarget", "Scrubber",
           "distinct_names", "scrub"]

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
    claims_scrubbed: int
    """Other claims that named the subject in their text, metadata or sources (a
    transcript message, a note, a URL), kept with each name replaced by ``[erased]``."""
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
    return Scrubber(names)(text)


class Scrubber:
    """``scrub`` for one set of names, prepared once (the patterns, the folded keys): an
    erasure runs it over every turn and claim of the scopes it reaches."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = tuple(sorted({n for n in names if n.strip()}, key=len, reverse=True))
        self._whole = [re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
                       for name in self.names]
        self._anywhere = re.compile("|".join(map(re.escape, self.names)), re.IGNORECASE)
        self._keys = [key for key in (_key_words(name) for name in self.names) if key]
        # Names the fold alone answers for in ASCII text: ASCII, with words of their own.
        self._ascii = all(name.isascii() and _key_words(name) for name in self.names)
        self._hint = re.compile("|".join(re.escape(key[0]) for key in self._keys), re.IGNORECASE)

    def __call__(self, text: str) -> str:
        if not self._may_name(text):  # most text names none of them: skip the passes
            return text
        for pattern in self._whole:
            text = pattern.sub(ERASED, text)
        if not self._keys or not _folds_to_any(text, self._keys):
            return text
        words = folded_words(text)
        spans: list[tuple[int, int]] = []
        for key in self._keys:
            for i in range(len(words) - len(key) + 1):
                if all(words[i + j][0] == part for j, part in enumerate(key)):
                    spans.append((words[i][1], words[i + len(key) - 1][2]))
        for start, end in sorted(_merged(spans), reverse=True):
            text = text[:start] + ERASED + text[end:]
        return text

    def _may_name(self, text: str) -> bool:
        """Whether a name may be in ``text``: a test at C speed that never says no where
        a pass would find one (each of a key's words is in it, ``_folds_to_any``, or,
        beside a letter outside ASCII or a name of no words, a name's own pattern with no
        word bounds: "ı" is an "i" ignoring case, which no folded word shows)."""
        if self._ascii and text.isascii():  # the usual case: one search at C speed first
            return self._hint.search(text) is not None and _folds_to_any(text, self._keys)
        return _folds_to_any(text, self._keys) or self._anywhere.search(text) is not None

    def may_change_json(self, raw: str) -> bool:
        """Whether ``value`` may change some string of the JSON ``raw``, never saying no
        where it would: without a backslash every string of ``raw`` stands in it as it
        is, so a name in one is in ``raw`` too; an escape may hide one."""
        return "\\" in raw or self._may_name(raw)

    def value(self, value: Any) -> Any:
        """``value`` (JSON: a claim's metadata or sources) scrubbed in every string, keys
        too: a name may be any of them (a message's text, a tool call's argument). Two
        keys that become one keep the later's value."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self(key): self.value(item) for key, item in value.items()}
        return value


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
