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
  so first-person facts are learned and superseded as usual) and a transcript of its
  own, so a history with tool calls replays to a model: each message is a claim holding
  its role, text, name, an assistant's tool calls (id, name, arguments) and a tool
  message's ``tool_call_id`` and status, read back in the order added, a message
  ``add()`` skipped as a copy included (``last_receipt`` says what the turns skipped).
  It loses the rest: a ``list[BaseMessage]`` cannot say which message replaced which,
  when a fact held, or which turn it came from (a redactor rewrites the text and every
  string in the tool calls' arguments); non-text content (images), ``additional_kwargs``,
  ``response_metadata`` and an assistant's ``invalid_tool_calls`` are not kept. A
  session written when the history kept turns only reads as its turns (which keep no
  call ids), and what is added later follows them.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

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
        ToolCall,
        ToolMessage,
    )
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "memvara.integrations.langchain needs langchain-core: pip install 'memvara[langchain]'"
    ) from exc

from memvara import Claim, Episode, InvalidArgumentError, Memvara, PredicateSpec, ScopedMemvara
from memvara import WriteReceipt
from memvara.schema import Cardinality, Volatility

from ._redaction import redacted
from ._retrieval import TIME_KEYWORDS, MemoryHandle, check_memory, metadata, reading

__all__ = ["MESSAGE_PREDICATE", "MemvaraChatMessageHistory", "MemvaraRetriever"]

MESSAGE_PREDICATE = "langchain_message"
"""The predicate of the chat history's transcript claims: one message per slot, and a
conversation goes stale in a week (``FAST``), as the memory's registry is told."""
_MESSAGE_SPEC = PredicateSpec(MESSAGE_PREDICATE, Cardinality.ONE, Volatility.FAST)
_MESSAGE, _EARLIER = "message", "turns_before"
_LATEST = 16
"""How many of the newest transcript claims a write reads to learn whether the session
has a transcript yet."""

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
    """A LangChain chat history kept in memvara, in its own session scope.

    ``add_messages()`` hands the messages to ``add()`` in one call at the scope
    ``memory.scope(session=session_id)``, so the facts they state are learned (at that
    scope) as with any other write, and keeps each message in the session's transcript:
    one claim per message (predicate ``langchain_message``, ``episodic``) holding its
    role, its text (rewritten by the memory's redactor, as the turn is), its name, an
    assistant message's tool calls (id, name, arguments) and a tool message's
    ``tool_call_id`` and status. ``messages`` reads the transcript back in the order
    added, each message as the type of its role (user ``HumanMessage``, assistant
    ``AIMessage``, system ``SystemMessage``, tool ``ToolMessage``) with its claim id as
    the message id, so a tool call is followed by its answer as a model API requires,
    however often ``add()`` skipped a repeated turn. A search at the session's scope
    finds the transcript's claims beside the facts (``memory_types=["semantic"]`` leaves
    them out). A session written before the transcript existed reads as its turns were
    read, and what is added later follows them. ``clear()`` purges the session scope: its transcript, its turns and the facts
    learned from them, irreversibly; the broader memory is untouched. The module
    docstring lists what is not kept.

    Args:
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async twin); the session is
            made beneath its scope.
        session_id: the session's name, a non-blank string.

    Raises:
        InvalidArgumentError: a bad ``memory`` or ``session_id``, or a registry in which
            ``langchain_message`` already means something else; at ``add_messages()``, an
            item that is not a message, a ``ChatMessage`` whose role memvara does not keep
            (``user``, ``assistant``, ``system``, ``tool``), or tool call arguments that
            are not JSON (nothing is written).
    """

    def __init__(self, memory: MemoryHandle, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidArgumentError("session_id", f"expected a non-blank string, got {session_id!r:.40}")
        handle = check_memory(memory)
        try:
            self.memory = handle.scope(session=session_id)
        except InvalidArgumentError as exc:  # a NUL, say: named as this class's argument
            raise InvalidArgumentError("session_id", exc.problem) from None
        self.memory.registry.register(_MESSAGE_SPEC)
        self.session_id = session_id
        self.last_receipt: WriteReceipt | None = None
        """What the latest ``add_messages()`` wrote and skipped (``None`` before one)."""

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read, not an attribute
        """This session's messages, oldest first."""
        kept = self._transcript()
        earlier = cast(int, kept[0].meta.get(_EARLIER, 0)) if kept else None
        turns = self._turns() if earlier is None or earlier else []
        return [*(_message({"role": turn.role, "content": turn.content}, turn.id)
                  for turn in turns[:earlier]),
                *(_message(cast(dict[str, Any], claim.meta[_MESSAGE]), claim.id)
                  for claim in kept)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as this session's turns, in one ``add()``, then in its
        transcript."""
        if isinstance(messages, (BaseMessage, str)) or not isinstance(messages, Sequence):
            raise InvalidArgumentError("messages", f"expected a list of messages, got {type(messages).__name__}")
        records = [_record(message, f"messages[{i}]") for i, message in enumerate(messages)]
        turns: list[dict[str, object]] = [
            {key: record[key] for key in ("role", "content", "name") if key in record}
            for record in records]
        # A session's first transcript claims say how many turns it held before them
        # (written by this class before the transcript existed), so those still read.
        earlier = None if self._begun() else len(self._turns())
        self.last_receipt = self.memory.add(turns)
        if not records:
            return
        redactor = self.memory._core.redactor  # add() has checked what it returns
        if redactor is not None:
            for record in records:
                record["content"] = redactor.redact(cast(str, record["content"]))
                if "name" in record:  # a speaker's name, as add() rewrites the turn's
                    record["name"] = redactor.redact(cast(str, record["name"]))
                if "tool_calls" in record:
                    record["tool_calls"] = [{**call, "args": redacted(call["args"], redactor)}
                                            for call in cast(list[dict[str, Any]], record["tool_calls"])]
        self.memory.remember_many([
            Claim(f"{self.session_id} message {uuid.uuid4().hex}", MESSAGE_PREDICATE,
                  cast(str, record["role"]), memory_type="episodic",
                  text=cast(str, record["content"]).strip() or cast(str, record["role"]),
                  meta={_MESSAGE: record} if earlier is None else {_MESSAGE: record,
                                                                   _EARLIER: earlier})
            for record in records])

    def clear(self) -> None:
        """Erase this session's transcript, its turns and the facts learned from them."""
        self.memory.purge()

    def _transcript(self) -> list[Claim]:
        """The session's transcript claims, in the order written (the session's own scope
        only: a read there also sees the broader scopes above it)."""
        own = self.memory.default_scope
        return [claim for claim in reversed(self.memory.get_all(predicate=MESSAGE_PREDICATE))
                if claim.scope == own]

    def _begun(self) -> bool:
        """Whether the session has a transcript, from its newest few claims (all of them
        only where a broader scope's transcript of the same name crowds them out)."""
        own = self.memory.default_scope
        latest = self.memory.get_all(predicate=MESSAGE_PREDICATE, limit=_LATEST)
        if any(claim.scope == own for claim in latest):
            return True
        return len(latest) == _LATEST and bool(self._transcript())

    def _turns(self) -> list[Episode]:
        own = self.memory.default_scope
        return [turn for turn in self.memory.episodes() if turn.scope == own]


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


def _record(message: BaseMessage, where: str) -> dict[str, object]:
    """What the transcript keeps of a message: JSON, checked before anything is written."""
    record: dict[str, object] = {"role": _role(message, where), "content": _text(message.content)}
    if message.name:
        record["name"] = message.name
    if isinstance(message, AIMessage) and message.tool_calls:
        record["tool_calls"] = _json([{"id": call["id"], "name": call["name"], "args": call["args"]}
                                      for call in message.tool_calls], f"{where}.tool_calls")
    if isinstance(message, ToolMessage):
        record["tool_call_id"] = _json(message.tool_call_id, f"{where}.tool_call_id")
        if message.status != "success":
            record["status"] = message.status
    return record


def _json(value: object, where: str) -> object:
    """``value`` if the store can keep it in a claim's metadata (JSON, valid Unicode);
    else an error naming ``where``, raised before ``add()`` writes anything."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidArgumentError(where, f"not JSON-serializable text: {exc}") from None
    return value


def _message(record: dict[str, Any], message_id: str) -> BaseMessage:
    """The message a transcript record (or a turn, as ``{"role", "content"}``) is."""
    role, text, name = record["role"], record["content"], record.get("name")
    if role == "user":
        return HumanMessage(content=text, id=message_id, name=name)
    if role == "assistant":
        calls = [ToolCall(name=call["name"], args=call["args"], id=call["id"], type="tool_call")
                 for call in record.get("tool_calls", [])]
        return AIMessage(content=text, id=message_id, name=name, tool_calls=calls)
    if role == "system":
        return SystemMessage(content=text, id=message_id, name=name)
    # A turn written before the transcript existed kept no call id.
    return ToolMessage(content=text, id=message_id, name=name,
                       tool_call_id=record.get("tool_call_id", ""),
                       status=record.get("status", "success"))
