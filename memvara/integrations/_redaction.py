"""The memory's redactor applied to what an adapter keeps beside the turns.

A redactor's promise is that no text reaches the store unrewritten. ``add()`` keeps it
for turns; an adapter that also keeps a transcript of its own (LangChain's messages, the
OpenAI Agents session's items) keeps it by passing that transcript through here.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..redact import Redactor

__all__ = ["redacted"]


def redacted(value: Any, redactor: Redactor, keep: Collection[str] = ()) -> Any:
    """``value`` (JSON: strings, numbers, lists, dicts) with every string in it rewritten
    by ``redactor``, except a dict's keys and the values under the keys in ``keep``
    (identifiers and type tags a replay must get back exactly). ``value`` is not changed."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [redacted(item, redactor, keep) for item in value]
    if isinstance(value, dict):
        return {key: item if key in keep else redacted(item, redactor, keep)
                for key, item in value.items()}
    return value
