"""LangChain adapters: a retriever over ``search()`` and a chat history over ``add()``.

Install with ``pip install 'memvara[langchain]'`` (``langchain-core``).

What each keeps of memvara, and what LangChain's interface makes it lose:

* ``MemvaraRetriever`` keeps everything a search has. A retriever turns a query into
  documents, which ``search()`` does already, so the ranking, the states, the episodes
  and both clocks (``valid_at``/``known_at``/``as_of``, at construction or per call)
  pass through untouched, and each ``Document``'s metadata carries the claim id, its
  state, its four instants as ISO strings, the score and the explanation's one-line
  summary.
* ``MemvaraChatMessageHistory`` keeps the write path (every turn goes through ``add()``,
  so first-person facts are learned and superseded as usual) and loses the rest: a
  ``list[BaseMessage]`` cannot say which message replaced which, when a fact held, or
  which turn it came from. It is not a faithful transcript either, because ``add()``
  may drop a turn: a repeat of a turn said moments ago (same role and text) is skipped
  as a copy, a redactor rewrites text before it is stored, and a message's non-text content (images,
  tool calls), its ``additional_kwargs`` and a tool message's ``tool_call_id`` are not
  kept. ``last_receipt`` says what the latest write skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "memvara.integrations.langchain needs langchain-core: pip install 'memvara[langchain]'"
    ) from exc

from memvara import InvalidArgumentError, Memvara, ScopedMemvara, WriteReceipt

from ._retrieval import TIME_KEYWORDS, MemoryHandle, check_memory, metadata, reading

__all__ = ["MemvaraChatMessageHistory", "MemvaraRetriever"]

_IGNORED = frozenset({"verbose"})  # LangChain's own invoke() option, handed on to every retriever


class MemvaraRetriever(BaseRetriever):
    """A LangChain retriever that answers with ``memory.search()``.

    ``invoke(query)`` returns up to ``k`` ``Document``s, best first: the claim's (or the
    turn's) text, its id as ``Document.id``, and JSON-safe metadata (``kind``, ``id``,
    ``score``, ``explain``, ``subject``/``predicate``/``object``, ``state``,
    ``valid_from``/``valid_to``, ``recorded_at``/``invalidated_at``...). The time keywords
    can be given per call, ``invoke(query, as_of=...)``: a call naming any of the three
    sets all three.

    Args:
        memory: a ``Memvara`` or a ``ScopedMemvara`` (whose scope every search uses), or
            an async twin of one (its ``.sync`` is used).
        k: at most this many documents (1 to 1,000,000).
        valid_at, known_at, as_of: the instants searched at, as in ``search()``.
        states: the claim states admitted (default live only).
        include_episodes: rank raw conversation turns alongside claims.

    Raises:
        InvalidTimeError: a time keyword that is not a datetime.
        InvalidArgumentError: any other bad argument, named; a keyword this retriever
            does not take (a metadata ``filter``, ``search_kwargs``, a typo), at
            construction or at ``invoke()``.
    """

    memory: Memvara | ScopedMemvara
    k: int = 4
    valid_at: datetime | None = None
    known_at: datetime | None = None
    as_of: datetime | None = None
    states: tuple[str, ...] | None = None
    include_episodes: bool = False

    def __init__(
        self,
        *,
        memory: MemoryHandle,
        k: int = 4,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Sequence[str] | None = None,
        include_episodes: bool = False,
        **kwargs: Any,
    ) -> None:
        # Checked here, before pydantic sees them: it would turn "2026-01-01" into a
        # datetime, and answer other mistakes with its own ValidationError.
        # BaseRetriever's pydantic config drops unknown fields, so a typo
        # (include_episode=) or another retriever's keyword (search_kwargs=) would be lost.
        unknown = sorted(set(kwargs) - set(BaseRetriever.model_fields))
        if unknown:
            raise InvalidArgumentError(
                unknown[0], "not a keyword MemvaraRetriever takes; it takes memory, k,"
                f" {', '.join(TIME_KEYWORDS)}, states, include_episodes and LangChain's"
                f" {', '.join(BaseRetriever.model_fields)} (metadata filters are not supported)")
        checked = reading(k, valid_at, known_at, as_of, states, include_episodes)
        fields: dict[str, Any] = {
            "memory": check_memory(memory), "k": checked.k, "valid_at": checked.valid_at,
            "known_at": checked.known_at, "as_of": checked.as_of, "states": checked.states,
            "include_episodes": checked.include_episodes,
        }
        super().__init__(**fields, **kwargs)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        unknown = sorted(set(kwargs) - set(TIME_KEYWORDS) - _IGNORED)
        if unknown:
            raise InvalidArgumentError(
                unknown[0], "not a keyword MemvaraRetriever takes per call; it takes"
                f" {', '.join(TIME_KEYWORDS)} (metadata filters are not supported)")
        settings = reading(self.k, self.valid_at, self.known_at, self.as_of, self.states,
                           self.include_episodes)
        if set(kwargs) & set(TIME_KEYWORDS):
            settings = settings.at(kwargs)
        return [
            Document(page_content=found.text, metadata=metadata(found), id=found.id)
            for found in settings.search(self.memory, query)
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs)


_ROLE_OF: tuple[tuple[type[BaseMessage], str], ...] = (
    (HumanMessage, "user"), (AIMessage, "assistant"), (SystemMessage, "system"),
    (ToolMessage, "tool"),
)


class MemvaraChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history kept as memvara turns, in its own session scope.

    ``add_messages()`` hands the messages to ``add()`` in one call at the scope
    ``memory.scope(session=session_id)``, so the facts they state are learned (at that
    scope) as with any other write. ``messages`` reads that session's stored turns back,
    oldest first, each as the message type of its role (user ``HumanMessage``, assistant
    ``AIMessage``, system ``SystemMessage``, tool ``ToolMessage``), with the turn's id as
    the message id; turns a broader scope holds are not part of it. ``clear()`` purges
    the session scope: its turns and the facts learned from them, irreversibly; the
    broader memory is untouched. The module docstring lists what the write path drops.

    Args:
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async twin); the session is
            made beneath its scope.
        session_id: the session's name, a non-blank string.

    Raises:
        InvalidArgumentError: a bad ``memory`` or ``session_id``; at ``add_messages()``,
            an item that is not a message, or a ``ChatMessage`` whose role memvara does
            not keep (``user``, ``assistant``, ``system``, ``tool``).
    """

    def __init__(self, memory: MemoryHandle, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidArgumentError("session_id", f"expected a non-blank string, got {session_id!r:.40}")
        handle = check_memory(memory)
        try:
            self.memory = handle.scope(session=session_id)
        except InvalidArgumentError as exc:  # a NUL, say: named as this class's argument
            raise InvalidArgumentError("session_id", exc.problem) from None
        self.session_id = session_id
        self.last_receipt: WriteReceipt | None = None
        """What the latest ``add_messages()`` wrote and skipped (``None`` before one)."""

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read, not an attribute
        """This session's stored turns, oldest first."""
        own = self.memory.default_scope
        return [_message(turn.role, turn.content, turn.id)
                for turn in self.memory.episodes() if turn.scope == own]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as this session's turns, in one ``add()``."""
        if isinstance(messages, (BaseMessage, str)) or not isinstance(messages, Sequence):
            raise InvalidArgumentError("messages", f"expected a list of messages, got {type(messages).__name__}")
        turns: list[dict[str, object]] = []
        for i, message in enumerate(messages):
            turn: dict[str, object] = {"role": _role(message, f"messages[{i}]"),
                                       "content": _text(message.content)}
            if message.name:
                turn["name"] = message.name
            turns.append(turn)
        self.last_receipt = self.memory.add(turns)

    def clear(self) -> None:
        """Erase this session's turns and the facts learned from them."""
        self.memory.purge()


def _role(message: object, where: str) -> str:
    if isinstance(message, ChatMessage):
        if message.role not in ("user", "assistant", "system", "tool"):
            raise InvalidArgumentError(
                f"{where}.role", f"must be one of user, assistant, system, tool; got {message.role!r:.40}")
        return message.role
    for kind, role in _ROLE_OF:
        if isinstance(message, kind):
            return role
    raise InvalidArgumentError(
        where, f"expected a HumanMessage, AIMessage, SystemMessage, ToolMessage or ChatMessage,"
        f" got {type(message).__name__}")


def _text(content: str | list[str | dict[Any, Any]]) -> str:
    """A message's text: its string, or its text parts joined (other parts are dropped)."""
    if isinstance(content, str):
        return content
    parts = [part if isinstance(part, str) else part.get("text") for part in content]
    return "\n".join(part for part in parts if isinstance(part, str))


def _message(role: str, text: str, turn_id: str) -> BaseMessage:
    if role == "user":
        return HumanMessage(content=text, id=turn_id)
    if role == "assistant":
        return AIMessage(content=text, id=turn_id)
    if role == "system":
        return SystemMessage(content=text, id=turn_id)
    return ToolMessage(content=text, id=turn_id, tool_call_id="")  # the call id is not kept
