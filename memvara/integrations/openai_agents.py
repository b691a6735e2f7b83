"""A session for the OpenAI Agents SDK that keeps its conversation in memvara.

>>> session = MemvaraSession("chat-42", mem.scope(user="alice"))   # doctest: +SKIP
>>> await Runner.run(agent, "I live in Lisbon", session=session)    # doctest: +SKIP

``MemvaraSession`` implements the SDK's ``Session`` protocol (``get_items``,
``add_items``, ``pop_item``, ``clear_session``). It writes two things:

- **The items, verbatim**, as the session's transcript: one claim per item, at the
  memory's scope narrowed to ``session=session_id``, in a slot of its own (subject
  ``"<session_id> item <n>"``, predicate ``agents_item``, object the item's role or type,
  so no write and no ``consolidate()`` ever merges two items that say the same); the
  item itself rides in the claim's ``meta`` and its text is the claim's text, so the
  transcript is searchable. ``get_items()`` returns them exactly as added, in order:
  tool calls and their outputs included, as the Runner needs to replay them. A memory
  opened with a redactor rewrites every string of an item first (its ids, names, role
  and type tags aside), as it rewrites turns. An append reads no transcript: each open
  memory keeps the session's next position (a memory opened afresh reads it off the
  newest items) and looks up only the slot it is about to write, stepping over what
  another process appended there meanwhile, so a turn costs the same at the
  ten-thousandth item as at the tenth.
- **What the user says**, through ``add()`` at the memory's own scope (not the
  session's): the user's message items become turns and the facts they state become
  claims, so what is learned outlives the session and other sessions of the same user
  see it. The latest write's ``WriteReceipt`` is ``session.last_receipt``.

What it keeps: the write path (the rules, or the model given to the memory, on the user's
turns) and contradiction resolution on what that path extracts; both clocks, because
removal retires instead of erasing (``pop_item()`` and ``clear_session()`` end belief in
items, and ``history()``/``known_at`` still show them); scope (the session is one level of
the caller's scope, never a level the items choose). What it loses: the SDK asks only for
the items, so nothing reads the memory's facts back into the prompt on its own (give the
agent a tool, or ``recall()``, for that); assistant and tool items are kept, not learned
from; the transcript's items are claims of their own, so a search at the session's scope
finds them beside the facts (``memory_types=["semantic"]`` leaves them out, as they are
``episodic``); and ``add()`` skips a turn that repeats a recent one, so a repeated user
message is in the transcript but is one turn in the memory. To erase a session for good,
``memory.purge(session=session_id)`` removes its transcript (the learned facts live at
the memory's scope and stay).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from .. import Claim, ExtractionPendingError, InvalidArgumentError, PredicateSpec, WriteReceipt
from .._domain.model import Scope
from .._facade.core import Core
from ..schema import Cardinality, Volatility
from ._handles import MemoryHandle, sync_handle
from ._locks import item_lock
from ._redaction import redacted

__all__ = ["ITEM_PREDICATE", "MemvaraSession"]

ITEM_PREDICATE = "agents_item"
"""The predicate of the transcript's claims: one item per slot, and a conversation goes
stale in a week (``FAST``), as the memory's registry is told."""
_ITEM_SPEC = PredicateSpec(ITEM_PREDICATE, Cardinality.ONE, Volatility.FAST)
_VERBATIM = frozenset(("type", "role", "id", "call_id", "name", "status", "encrypted_content"))
"""An item's keys whose values a redactor leaves alone: the ids, names and tags that pair
a tool call with its output and that a replay must send back exactly (and reasoning's
opaque ``encrypted_content``)."""
_EVERY = ("live", "ended", "retired")
_LATEST = 16
"""How many of the newest transcript claims a memory opened afresh reads to find where a
session goes on (more only when a broader scope's items of the same name crowd them out)."""
_NEXT: weakref.WeakKeyDictionary[Core, dict[Scope, int]] = weakref.WeakKeyDictionary()
"""Each open memory's next position per transcript scope, shared by every session object
on it (one per request, say), read and moved under the session's lock."""


class MemvaraSession:
    """The conversation of one Agents SDK session, kept in a memvara memory.

    Args:
        session_id: the session's id; its transcript lives at ``session=session_id``
            beneath the memory's scope.
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async one): where the user's
            turns and the facts learned from them go.
        learn: ``False`` keeps the transcript only, with no ``add()`` of the user's turns.
        session_settings: the SDK's settings (its ``limit`` is ``get_items()``'s default).

    Raises:
        InvalidArgumentError: a blank or unusable ``session_id``, a ``memory`` that is
            not a memvara handle, ``learn`` not a bool, or a registry in which
            ``agents_item`` already means something else.
    """

    def __init__(
        self,
        session_id: str,
        memory: MemoryHandle,
        *,
        learn: bool = True,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self._memory = sync_handle(memory)
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidArgumentError("session_id", f"expected a non-blank string, got"
                                                     f" {session_id!r:.40}")
        if not isinstance(learn, bool):
            raise InvalidArgumentError("learn", f"must be True or False, got {learn!r:.40}")
        try:
            self._transcript = self._memory.scope(session=session_id)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError("session_id", exc.problem) from None
        self._memory.registry.register(_ITEM_SPEC)
        self.session_id = session_id
        self.session_settings = session_settings
        self._learn = learn
        self._editing = item_lock(f"agents-session:{session_id}")
        """Held while this session reads its next position and writes there, or picks and
        retires an item: the same lock for every object of the session (``_locks``)."""
        self.last_receipt: WriteReceipt | None = None
        """What the latest ``add_items()`` learned (``None`` before one learned anything);
        after a failed model call, the ``ExtractionPendingError``'s receipt, whose turns
        wait for ``retry_extraction()``."""

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items in the order added; with ``limit``, the latest that many."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None and (isinstance(wanted, bool) or not isinstance(wanted, int)
                                   or wanted < 0):
            raise InvalidArgumentError("limit", f"expected None or an integer >= 0, got"
                                                f" {wanted!r:.40}")
        items = [item for _, item in await asyncio.to_thread(self._live)]
        return items if wanted is None else items[len(items) - wanted:] if wanted else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` to the transcript, then learn from the user's messages.

        Raises:
            InvalidArgumentError: ``items`` is not a list of JSON-serializable dicts, or
                one holds a lone surrogate or a user message with a NUL (named by index);
                nothing is written.
        """
        checked = _checked(items)
        if not checked:
            return
        await asyncio.to_thread(self._append, checked)

    async def pop_item(self) -> TResponseInputItem | None:
        """Retire the latest item and return it (``None`` when the session is empty)."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        """Retire every item of the session (the learned facts stay)."""
        await asyncio.to_thread(self._clear)

    # -- on a worker thread ---------------------------------------------------------------
    def _claims(self, states: Sequence[str] = ("live",)) -> list[Claim]:
        """The transcript's claims in ``states``, in the order added (the session's own
        scope only: a read there also sees the broader scopes above it)."""
        own = self._transcript.default_scope
        claims = [claim for claim in self._transcript.get_all(states=states,
                                                              predicate=ITEM_PREDICATE)
                  if claim.scope == own]
        claims.sort(key=lambda claim: cast(int, claim.meta["position"]))
        return claims

    def _live(self) -> list[tuple[Claim, Any]]:
        return [(claim, claim.meta["item"]) for claim in self._claims()]

    def _append(self, items: list[dict[str, Any]]) -> None:
        redactor = self._transcript._core.redactor
        if redactor is not None:
            items = [redacted(item, redactor, _VERBATIM) for item in items]
        with self._editing:
            kept = _NEXT.setdefault(self._transcript._core, {})
            own = self._transcript.default_scope
            start = self._free_from(kept[own] if own in kept else self._after_latest())
            self._transcript.remember_many([
                Claim(f"{self.session_id} item {start + i}", ITEM_PREDICATE, _kind(item),
                      text=_text(item), memory_type="episodic",
                      meta={"position": start + i, "item": item})
                for i, item in enumerate(items)
            ])
            kept[own] = start + len(items)
        said = [{"role": "user", "content": text} for text in map(_user_text, items) if text]
        if self._learn and said:
            try:
                self.last_receipt = self._memory.add(said)
            except ExtractionPendingError as exc:  # stored; its turns wait for a retry
                self.last_receipt = exc.receipt

    def _after_latest(self) -> int:
        """The position after the newest recorded of this session's items (0 for none):
        where a memory opened afresh goes on. Positions only have to grow, so where the
        clock or another writer put a later position above it, ``_free_from`` steps on."""
        own = self._transcript.default_scope
        latest = self._transcript.get_all(states=_EVERY, predicate=ITEM_PREDICATE,
                                          limit=_LATEST)
        mine = [claim for claim in latest if claim.scope == own]
        if not mine and len(latest) == _LATEST:  # a broader scope's items crowd them out
            mine = self._claims(_EVERY)
        return max((1 + cast(int, claim.meta["position"]) for claim in mine), default=0)

    def _taken(self, position: int) -> bool:
        """Whether this session has an item at ``position``, in any state."""
        own = self._transcript.default_scope
        return any(claim.scope == own for claim in self._transcript.get_all(
            states=_EVERY, subject=f"{self.session_id} item {position}",
            predicate=ITEM_PREDICATE))

    def _free_from(self, start: int) -> int:
        """The first free position at or above ``start``: ``start`` itself unless another
        open memory (or process) appended since this one last did; then its items, which
        follow each other, are stepped over in doubling strides and a halving search."""
        if not self._taken(start):
            return start
        taken, stride = start, 1
        while self._taken(taken + stride):
            taken, stride = taken + stride, stride * 2
        free = taken + stride
        while free - taken > 1:
            middle = (taken + free) // 2
            taken, free = (middle, free) if self._taken(middle) else (taken, middle)
        return free

    def _clear(self) -> None:
        with self._editing:
            for claim in self._claims():
                self._transcript.delete(claim.id)

    def _pop(self) -> Any:
        with self._editing:
            live = self._live()
            if not live:
                return None
            claim, item = live[-1]
            self._transcript.delete(claim.id)
            return item


def _checked(items: object) -> list[dict[str, Any]]:
    """``items`` as plain JSON-safe dicts, or an error naming the first bad one."""
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise InvalidArgumentError("items", f"expected a list of items, got {type(items).__name__}")
    checked = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidArgumentError(f"items[{i}]", f"expected a dict, got {type(item).__name__}")
        try:
            text = json.dumps(dict(item), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"items[{i}]", f"not JSON-serializable: {exc}") from None
        # What the store or add() would refuse only after the transcript was written, or
        # name by their own internals (claims[0].text, messages[0].content):
        if not text.isascii() and any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise InvalidArgumentError(f"items[{i}]", "holds a lone surrogate, not valid Unicode text")
        checked.append(json.loads(text))
        if "\x00" in _user_text(checked[-1]):
            raise InvalidArgumentError(f"items[{i}]", "a user message's text holds a NUL character")
    return checked


def _texts(content: object) -> list[str]:
    """The text of a message's ``content``: a string, or the text parts of a list."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part["text"] for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return []


def _text(item: dict[str, Any]) -> str:
    """What an item says, for the transcript claim's text (never empty)."""
    parts = _texts(item.get("content")) + _texts(item.get("output"))
    if item.get("type") == "function_call":
        parts.append(f"{item.get('name')}({item.get('arguments')})")
    text = " ".join(part for part in parts if part.strip())
    return text or str(item.get("type") or item.get("role") or "item")


def _kind(item: dict[str, Any]) -> str:
    """An item's role (a message) or type (anything else): its claim's object."""
    return str(item.get("role") or item.get("type") or "item")


def _user_text(item: dict[str, Any]) -> str:
    """What a user's message item says (empty for any other item)."""
    if item.get("role") != "user" or item.get("type", "message") != "message":
        return ""
    return " ".join(text for text in _texts(item.get("content")) if text.strip())
