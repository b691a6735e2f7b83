"""What ``forget_subject()`` takes and returns: the request handed to each outside
``ErasureTarget``, and the manifest of what was erased. No text of the subject is kept
in either after the call: the request is built for the call and dropped; the manifest
names the subject only by a digest keyed by the store's secret."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .model import fields_dict

__all__ = ["ERASED", "ErasureManifest", "ErasureRequest", "ErasureTarget", "distinct_names", "like_pattern",
           "scrub"]

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
    ``[erased]``; the longest names first, so "Maya Silva" goes before "Maya"."""
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", ERASED, text, flags=re.IGNORECASE)
    return text


def distinct_names(names: set[str]) -> tuple[str, ...]:
    """``names`` sorted, one of each spelling that differs only in case (``scrub``
    ignores case): an alias's key ``"maya"`` adds nothing beside ``"Maya"``."""
    by_case: dict[str, str] = {}
    for name in sorted(names):
        by_case.setdefault(name.lower(), name)
    return tuple(by_case.values())


def like_pattern(name: str) -> str:
    """A ``LIKE ... ESCAPE '\\'`` pattern finding every text ``scrub`` may change for
    ``name``. SQL's ``LIKE`` (and PostgreSQL's ``ILIKE`` in the C locale) folds the case
    of ASCII letters alone, so each other character matches any one character and
    ``scrub`` decides: "émile" is found for "Émile"."""
    escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + "".join(c if c.isascii() else "_" for c in escaped) + "%"
