"""A surviving claim's columns with an erased subject's names taken out: what
``erase_subject`` writes back over a claim that only mentions the subject, on both
backends (the text, and the metadata and sources as the row holds them: JSON); and the
scope its tombstone names."""

from __future__ import annotations

import json
from collections.abc import Mapping

from .._domain.erasure import ERASED, Scrubber
from .._domain.model import Scope

__all__ = ["mended_scope", "scrubbed_columns", "scrubbed_json", "scrubbed_scope", "without_sources"]

_LEVELS = ("agent", "session", "tenant", "user")


def scrubbed_scope(scope: Scope, scrub: Scrubber) -> str:
    """``scope.to_dict()`` as the tombstone's JSON, each level's value scrubbed (an
    erased user's id is a name), never a level's key: the subject's names may include
    ``user`` (a user's own word for themselves) or any other word the JSON holds."""
    return json.dumps({level: None if value is None else scrub(value)
                       for level, value in scope.to_dict().items()}, sort_keys=True)


def mended_scope(held: Mapping[str, object]) -> dict[str, object]:
    """A tombstone's scope as read back, with its four levels. An erasure before
    ``scrubbed_scope`` scrubbed the scope's JSON as text, so a name that is also a
    level's key (an erased user is ``user`` in their own turns) took the key with it:
    the level it took is put back, with the value it held when one key went, and
    ``[erased]`` for each level gone when more did and any held a value."""
    if held.keys() == set(_LEVELS):
        return dict(held)
    kept = {level: held[level] for level in _LEVELS if level in held}
    stray = [value for key, value in held.items() if key not in _LEVELS]
    gone = [level for level in _LEVELS if level not in kept]
    fill = stray[0] if len(stray) == 1 and len(gone) == 1 else (
        ERASED if any(value is not None for value in stray) else None)
    return {**kept, **dict.fromkeys(gone, fill)}


def scrubbed_json(held: str | None, scrub: Scrubber) -> str | None:
    """A JSON value as a row holds it (``meta``) with every name replaced; decoded only
    where a name may be (``Scrubber.may_change_json``), and returned as it was, byte for
    byte, when it held none."""
    if held is not None and scrub.may_change_json(held):
        value = json.loads(held)
        if (clean := scrub.value(value)) != value:
            return json.dumps(clean, sort_keys=True, ensure_ascii=False)
    return held


def scrubbed_columns(
    text: str, meta: str | None, sources: str | None, scrub: Scrubber,
) -> tuple[str, str | None, str | None] | None:
    """``text``, ``meta`` and ``sources`` with every name replaced, or ``None`` when none
    of them held one. Sources that become one are kept once, in their first place. JSON
    is decoded only where a name may be (``Scrubber.may_change_json``: most rows name
    none), and one that held none is returned as it was, byte for byte."""
    new_text, new_meta, new_sources = scrub(text), scrubbed_json(meta, scrub), sources
    if sources is not None and scrub.may_change_json(sources):
        cited = json.loads(sources)
        if (kept := list(dict.fromkeys(scrub(source) for source in cited))) != cited:
            new_sources = json.dumps(kept, ensure_ascii=False)
    if (new_text, new_meta, new_sources) == (text, meta, sources):
        return None
    return new_text, new_meta, new_sources


def without_sources(sources: str | None, gone: set[str]) -> str | None:
    """A claim's ``sources`` (JSON, as the row holds it) without the ids in ``gone``
    (erased claims: an id carries a digest of its claim's content); ``None`` when none is
    left."""
    kept = [source for source in json.loads(sources or "[]") if source not in gone]
    return json.dumps(kept, sort_keys=True, ensure_ascii=False) if kept else None
