"""The LangChain adapters against the real langchain-core: a retriever that keeps both
clocks, and a chat history that writes through ``add()``."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra (langchain-core) is not installed")

from langchain_core.chat_history import BaseChatMessageHistory  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.retrievers import BaseRetriever  # noqa: E402

from memvara import AsyncMemvara, InvalidArgumentError, InvalidTimeError, Memvara  # noqa: E402
from memvara.redact import BasicRedactor  # noqa: E402
from memvara.integrations.langchain import (  # noqa: E402
    MESSAGE_PREDICATE,
    MemvaraChatMessageHistory,
    MemvaraRetriever,
)

from .conftest import JAN, JUN, MAR, Clock  # noqa: E402


@pytest.fixture
def moved(mem: Memvara) -> Memvara:
    """Ana lived in Berlin from January and in Lisbon from June (recorded then)."""
    mem.remember("Ana", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("Ana", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    return mem


def objects(docs: list[Document]) -> list[str]:
    return [d.metadata["object"] for d in docs]


def test_the_retriever_is_a_langchain_retriever_returning_documents_with_json_safe_metadata(
    moved: Memvara,
) -> None:
    retriever = MemvaraRetriever(memory=moved)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("where does Ana live")
    assert [type(d) for d in docs] == [Document]
    (doc,) = docs
    claim = moved.get_all()[0]
    assert doc.page_content == claim.text == "Ana lives in Lisbon"
    assert doc.id == claim.id
    meta = doc.metadata
    assert json.loads(json.dumps(meta)) == meta  # JSON's types only
    assert meta["kind"] == "claim" and meta["id"] == claim.id and meta["state"] == "live"
    assert datetime.fromisoformat(meta["valid_from"]) == JUN
    assert datetime.fromisoformat(meta["recorded_at"]) == JUN
    assert meta["valid_to"] is None and meta["invalidated_at"] is None
    found = moved.search("where does Ana live")[0]
    assert meta["score"] == pytest.approx(found.score)
    assert meta["explain"] == found.explain.summary()
    assert (meta["subject"], meta["predicate"], meta["object"]) == ("Ana", "lives_in", "Lisbon")


def test_time_keywords_at_construction_and_per_call(moved: Memvara) -> None:
    assert objects(MemvaraRetriever(memory=moved, as_of=MAR).invoke("Ana")) == ["Berlin"]
    now = MemvaraRetriever(memory=moved)
    assert objects(now.invoke("Ana")) == ["Lisbon"]
    assert objects(now.invoke("Ana", as_of=MAR)) == ["Berlin"]
    assert objects(now.invoke("Ana", valid_at=MAR)) == ["Berlin"]
    # Known in March, valid now: in March nobody knew of the move yet.
    assert objects(now.invoke("Ana", known_at=MAR)) == ["Berlin"]
    # A call naming a time keyword replaces all three: as_of with valid_at set is fine.
    pinned = MemvaraRetriever(memory=moved, valid_at=MAR)
    assert objects(pinned.invoke("Ana")) == ["Berlin"]
    assert objects(pinned.invoke("Ana", as_of=JUN)) == ["Lisbon"]
    assert objects(pinned.invoke("Ana", verbose=True)) == ["Berlin"]  # LangChain's own option


def test_states_k_and_episodes_pass_through(moved: Memvara) -> None:
    ended = MemvaraRetriever(memory=moved, states=["ended"]).invoke("Ana")
    assert objects(ended) == ["Berlin"]
    assert ended[0].metadata["state"] == "ended"
    assert datetime.fromisoformat(ended[0].metadata["valid_to"]) == JUN
    assert len(MemvaraRetriever(memory=moved, k=1, states=["live", "ended"]).invoke("Ana")) == 1
    moved.add("Ana asked about the weather in Lisbon", ts=JUN)
    turns = MemvaraRetriever(memory=moved, include_episodes=True, k=10).invoke("weather")
    (turn,) = [d for d in turns if d.metadata["kind"] == "episode"]
    assert turn.page_content == "Ana asked about the weather in Lisbon"
    assert turn.metadata["role"] == "user"
    assert datetime.fromisoformat(turn.metadata["ts"]) == JUN
    assert json.loads(json.dumps(turn.metadata)) == turn.metadata


def test_the_retriever_searches_at_its_handles_scope(mem: Memvara) -> None:
    mem.remember("Ana", "lives_in", "Oslo", user="ana")
    mem.remember("Bo", "lives_in", "Rome", user="bo")
    docs = MemvaraRetriever(memory=mem.scope(user="ana")).invoke("lives in")
    assert objects(docs) == ["Oslo"]


def test_ainvoke_answers_like_invoke_and_an_async_handle_is_taken(moved: Memvara) -> None:
    retriever = MemvaraRetriever(memory=AsyncMemvara(moved))
    assert retriever.memory is moved
    docs = asyncio.run(retriever.ainvoke("Ana", as_of=MAR))
    assert objects(docs) == ["Berlin"]


@pytest.mark.parametrize(("kwargs", "argument", "error"), [
    ({"valid_at": "2026-01-01"}, "valid_at", InvalidTimeError),
    ({"known_at": 1767225600}, "known_at", InvalidTimeError),
    ({"as_of": "yesterday"}, "as_of", InvalidTimeError),
    ({"as_of": MAR, "valid_at": MAR}, "as_of", InvalidArgumentError),
    ({"k": 0}, "k", InvalidArgumentError),
    ({"k": True}, "k", InvalidArgumentError),
    ({"states": "live"}, "states", InvalidArgumentError),
    ({"states": []}, "states", InvalidArgumentError),
    ({"states": ["gone"]}, "states", InvalidArgumentError),
    ({"include_episodes": "yes"}, "include_episodes", InvalidArgumentError),
])
def test_bad_construction_arguments_are_named(
    moved: Memvara, kwargs: dict[str, object], argument: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        MemvaraRetriever(memory=moved, **kwargs)  # type: ignore[arg-type]
    assert isinstance(caught.value, InvalidArgumentError)
    assert caught.value.argument == argument


@pytest.mark.parametrize("kwargs", [
    {"include_episode": True},  # a typo for include_episodes
    {"search_kwargs": {"k": 1}},  # a vector store retriever's keyword
    {"filter": {"predicate": "lives_in"}},
])
def test_a_keyword_the_retriever_does_not_take_is_named_not_ignored(
    moved: Memvara, kwargs: dict[str, object]
) -> None:
    # BaseRetriever's pydantic config ignores unknown fields, so a typo or another
    # retriever's keyword used to be dropped without a word.
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraRetriever(memory=moved, **kwargs)  # type: ignore[arg-type]
    assert caught.value.argument == next(iter(kwargs))


def test_langchains_own_fields_are_still_taken(moved: Memvara) -> None:
    retriever = MemvaraRetriever(memory=moved, name="facts", tags=["mem"], metadata={"v": 1})
    assert (retriever.name, retriever.tags, retriever.metadata) == ("facts", ["mem"], {"v": 1})
    assert objects(retriever.invoke("where does Ana live")) == ["Lisbon"]


def test_a_memory_that_is_not_one_is_named() -> None:
    with pytest.raises(InvalidArgumentError, match="memory"):
        MemvaraRetriever(memory="memory.db")  # type: ignore[arg-type]


def test_bad_per_call_keywords_and_metadata_filters_are_named(moved: Memvara) -> None:
    retriever = MemvaraRetriever(memory=moved)
    with pytest.raises(InvalidTimeError) as caught:
        retriever.invoke("Ana", known_at="2026-03-01")
    assert caught.value.argument == "known_at"
    with pytest.raises(InvalidArgumentError) as refused:
        retriever.invoke("Ana", filter={"predicate": "lives_in"})
    assert refused.value.argument == "filter"
    assert "metadata filters are not supported" in str(refused.value)


# -- the chat history ------------------------------------------------------------------


def test_the_history_is_a_langchain_history_that_learns_facts_and_reads_turns_back(
    mem: Memvara,
) -> None:
    history = MemvaraChatMessageHistory(memory=mem, session_id="chat-1")
    assert isinstance(history, BaseChatMessageHistory)
    assert history.messages == []
    history.add_messages([HumanMessage("I live in Berlin"), AIMessage("Noted, Berlin.")])
    history.add_user_message("I work at Acme")
    history.add_ai_message(AIMessage("Got it."))
    messages = history.messages
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert [m.content for m in messages] == [
        "I live in Berlin", "Noted, Berlin.", "I work at Acme", "Got it."]
    # Each message is a claim of the session's transcript, and a turn for add().
    transcript = mem.scope(session="chat-1").get_all(predicate=MESSAGE_PREDICATE)
    assert [m.id for m in messages] == [c.id for c in reversed(transcript)]
    assert [(c.object, c.memory_type) for c in reversed(transcript)] == [
        ("user", "episodic"), ("assistant", "episodic")] * 2
    assert [t.content for t in mem.scope(session="chat-1").episodes()] == [
        m.content for m in messages]
    facts = {(c.predicate, c.object) for c in mem.scope(session="chat-1").get_all()
             if c.predicate != MESSAGE_PREDICATE}
    assert facts == {("lives_in", "Berlin"), ("works_at", "Acme")}
    # A search at the session's scope finds the transcript beside the facts; asking for
    # semantic claims leaves it out.
    session = mem.scope(session="chat-1")
    assert sorted(h.text for h in session.search("Berlin")) == [
        "I live in Berlin", "Noted, Berlin.", "user lives in Berlin"]
    assert [h.text for h in session.search("Berlin", memory_types=["semantic"])] == [
        "user lives in Berlin"]
    assert all(c.scope.session == "chat-1" for c in mem.scope(session="chat-1").get_all())
    assert history.last_receipt is not None
    assert [c.object for c in history.last_receipt.added] == []  # "Got it." states nothing


def test_the_history_is_its_session_only_and_clear_erases_that_session(mem: Memvara) -> None:
    mem.add("I live in Oslo")  # the broader memory: not this session's turn
    other = MemvaraChatMessageHistory(memory=mem, session_id="chat-2")
    other.add_messages([HumanMessage("I like jazz")])
    history = MemvaraChatMessageHistory(memory=mem, session_id="chat-1")
    history.add_messages([HumanMessage("I live in Berlin")])
    assert [m.content for m in history.messages] == ["I live in Berlin"]
    history.clear()
    assert history.messages == []
    session = mem.scope(session="chat-1")
    assert [c for c in session.get_all(include_invalidated=True) if c.scope.session] == []
    assert [e for e in session.episodes() if e.scope.session] == []
    assert [m.content for m in other.messages] == ["I like jazz"]
    assert [c.object for c in mem.get_all()] == ["Oslo"]  # the broader memory is untouched
    assert [e.content for e in mem.episodes()] == ["I live in Oslo"]


def test_each_role_comes_back_as_its_message_type(mem: Memvara) -> None:
    history = MemvaraChatMessageHistory(memory=mem.scope(user="ana"), session_id="s")
    history.add_messages([
        SystemMessage("Be brief."),
        HumanMessage("hello there", name="ana"),
        ToolMessage("42", tool_call_id="call-1"),
        ChatMessage(role="assistant", content="The answer is 42."),
        HumanMessage(content=[{"type": "text", "text": "I live in Rome"},
                              {"type": "image_url", "image_url": {"url": "x.png"}}, "and Paris"]),
    ])
    messages = history.messages
    assert [type(m) for m in messages] == [
        SystemMessage, HumanMessage, ToolMessage, AIMessage, HumanMessage]
    assert messages[2].content == "42"
    assert isinstance(messages[2], ToolMessage) and messages[2].tool_call_id == "call-1"
    assert isinstance(messages[3], AIMessage) and messages[3].tool_calls == []
    assert messages[1].name == "ana"
    assert messages[4].content == "I live in Rome\nand Paris"  # text parts only
    assert all(e.scope.user == "ana" and e.scope.session == "s"
               for e in mem.scope(user="ana", session="s").episodes())


def test_a_repeated_turn_is_two_messages_and_one_turn_and_the_receipt_says_so(
    mem: Memvara,
) -> None:
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    history.add_messages([HumanMessage("I live in Berlin")])
    history.add_messages([HumanMessage("I live in Berlin")])
    assert [m.content for m in history.messages] == ["I live in Berlin"] * 2
    assert [t.content for t in mem.episodes(session="s")] == ["I live in Berlin"]
    assert history.last_receipt is not None and len(history.last_receipt.skipped) == 1


def _replayable(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """``messages`` as OpenAI's chat API takes them, checked as it checks them: every
    tool message answers a call of the assistant message just before its run of tool
    messages, and every call is answered before the next other message."""
    payload = convert_to_openai_messages(messages)
    waiting: set[str] = set()
    for entry in payload:
        if entry["role"] == "tool":
            assert entry["tool_call_id"] in waiting, entry
            waiting.discard(entry["tool_call_id"])
            continue
        assert not waiting, f"calls {waiting} unanswered before {entry}"
        waiting = {call["id"] for call in entry.get("tool_calls", [])}
    assert not waiting
    return payload


def _tool_round(call_id: str) -> list[AIMessage | ToolMessage]:
    return [AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Berlin"},
                                       "id": call_id}]),
            ToolMessage("sunny", tool_call_id=call_id, name="weather")]


def test_tool_calls_and_their_answers_come_back_as_a_model_would_take_them(
    mem: Memvara,
) -> None:
    # A tool message came back with tool_call_id="" and the assistant's call was gone,
    # so a model API refused the replayed history. Two rounds of the same tool: the
    # second call's message is empty and its answer repeats the first's, which add()
    # skips as copies; the transcript keeps them.
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    history.add_messages([HumanMessage("Weather in Berlin?"), *_tool_round("call-1"),
                          AIMessage("Sunny."), HumanMessage("And now?")])
    history.add_messages([*_tool_round("call-2"), AIMessage("Still sunny.")])
    messages = history.messages
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage, AIMessage,
                                           HumanMessage, AIMessage, ToolMessage, AIMessage]
    call, answer = messages[5], messages[6]
    assert isinstance(call, AIMessage) and call.tool_calls == [
        {"name": "weather", "args": {"city": "Berlin"}, "id": "call-2", "type": "tool_call"}]
    assert isinstance(answer, ToolMessage)
    assert (answer.tool_call_id, answer.name, answer.content) == ("call-2", "weather", "sunny")
    assert _replayable(messages)[5:7] == [
        {"role": "assistant", "content": "", "tool_calls": [{
            "type": "function", "id": "call-2",
            "function": {"name": "weather", "arguments": '{"city": "Berlin"}'}}]},
        {"role": "tool", "name": "weather", "tool_call_id": "call-2", "content": "sunny"}]
    assert history.last_receipt is not None and [s.reason for s in history.last_receipt.skipped
                                                 if s.reason == "duplicate"] == ["duplicate"] * 2


def test_an_error_status_and_a_named_speaker_come_back(mem: Memvara) -> None:
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    history.add_messages([
        HumanMessage("I live in Rome", name="ana"),
        AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "c1"},
                                  {"name": "b", "args": {"n": [1, 2]}, "id": "c2"}]),
        ToolMessage("boom", tool_call_id="c1", status="error"),
        ToolMessage("ok", tool_call_id="c2"),
    ])
    human, _, failed, done = history.messages
    assert human.name == "ana" and [c.object for c in mem.get_all(session="s")
                                    if c.predicate == "lives_in"] == ["Rome"]
    assert isinstance(failed, ToolMessage) and failed.status == "error"
    assert isinstance(done, ToolMessage) and (done.status, done.name) == ("success", None)
    _replayable(history.messages)


def test_a_session_written_before_the_transcript_still_reads_and_goes_on(
    mem: Memvara, clock: Clock,
) -> None:
    # Before, the history was the session's turns alone; a store written then reads as
    # it did, and what is added now follows those turns.
    mem.scope(session="s").add([{"role": "user", "content": "I live in Oslo"},
                                {"role": "assistant", "content": "Noted."},
                                {"role": "tool", "content": "42"}])
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    old = history.messages
    assert [(type(m), m.content) for m in old] == [
        (HumanMessage, "I live in Oslo"), (AIMessage, "Noted."), (ToolMessage, "42")]
    assert [m.id for m in old] == [t.id for t in mem.episodes(session="s")]
    clock.advance(seconds=5)
    history.add_messages([HumanMessage("Weather?"), *_tool_round("call-1")])
    assert [m.content for m in history.messages] == [
        "I live in Oslo", "Noted.", "42", "Weather?", "", "sunny"]
    assert history.messages[:3] == old
    mem.scope(session="s").add("said past the history")  # not through it: not a message
    assert len(history.messages) == 6


def test_an_empty_list_writes_nothing_and_a_broader_transcript_of_one_name_is_not_this_one(
    mem: Memvara,
) -> None:
    history = MemvaraChatMessageHistory(memory=mem.scope(user="ana"), session_id="s")
    history.add_messages([])
    assert history.messages == [] and history.last_receipt is not None
    # Ana's turns from before the transcript, then twenty messages of a session "s" at
    # the root (visible from ana's scope, and the newest): her first transcript write
    # still counts her own turns before it.
    mem.scope(user="ana", session="s").add("I live in Oslo")
    MemvaraChatMessageHistory(memory=mem, session_id="s").add_messages(
        [HumanMessage(f"root {i}") for i in range(20)])
    history.add_messages([HumanMessage("Weather?")])
    assert [m.content for m in history.messages] == ["I live in Oslo", "Weather?"]


def test_forget_subject_takes_the_name_out_of_the_transcript(mem: Memvara) -> None:
    # Each message is a claim about the session, not about the subject: it stays, and
    # forget_subject() replaces the name in its text, its speaker and its tool calls.
    history = MemvaraChatMessageHistory(mem, "s")
    history.add_messages([
        HumanMessage("Zorblattine lives next door", name="Zorblattine"),
        AIMessage("ok", tool_calls=[{"id": "t1", "name": "lookup", "args": {"q": "Zorblattine"}}]),
        ToolMessage("zorblattine found", tool_call_id="t1", name="lookup")])
    mem.remember("Zorblattine", "lives_in", "Porto")
    assert mem.forget_subject("Zorblattine", reason="r", requested_by="q").claims_scrubbed == 3
    read = history.messages
    assert [(type(m).__name__, m.content, m.name) for m in read] == [
        ("HumanMessage", "[erased] lives next door", "[erased]"), ("AIMessage", "ok", None),
        ("ToolMessage", "[erased] found", "lookup")]
    assert cast(AIMessage, read[1]).tool_calls[0]["args"] == {"q": "[erased]"}
    assert "zorblattine" not in json.dumps([m.model_dump() for m in read]).lower()


def test_a_redactor_rewrites_what_the_transcript_keeps(clock: Clock) -> None:
    with Memvara(clock=clock, redactor=BasicRedactor()) as memory:
        history = MemvaraChatMessageHistory(memory=memory, session_id="s")
        history.add_messages([HumanMessage("mail me at ana@example.com", name="bo@example.com"),
                              ToolMessage("sent to ana@example.com", tool_call_id="c1")])
        texts = [m.content for m in history.messages]
        assert all("ana@example.com" not in str(text) for text in texts), texts
        assert history.messages[0].name == "[email]"  # a speaker's name is rewritten too
        assert all("bo@example.com" not in json.dumps(c.meta) + c.subject
                   for c in memory.get_all(session="s"))
        assert all("ana@example.com" not in c.text for c in memory.get_all(session="s"))


def test_a_redactor_rewrites_the_strings_in_tool_call_arguments(clock: Clock) -> None:
    # The redactor's contract is every text before it is stored: a tool call's
    # arguments are text the model wrote, often the very address a user gave.
    with Memvara(clock=clock, redactor=BasicRedactor()) as memory:
        history = MemvaraChatMessageHistory(memory=memory, session_id="s")
        args = {"to": "ana@example.com", "cc": ["bo@example.com", 3], "opts": {"note": "ok"}}
        history.add_messages([AIMessage("", tool_calls=[{"name": "send", "args": args, "id": "c1"}]),
                              ToolMessage("sent", tool_call_id="c1")])
        call = cast(AIMessage, history.messages[0]).tool_calls[0]
        assert call["name"] == "send" and call["id"] == "c1"
        assert call["args"]["cc"][1] == 3 and call["args"]["opts"] == {"note": "ok"}
        assert "example.com" not in json.dumps(call["args"]), call["args"]
        assert args["to"] == "ana@example.com"  # the caller's message is left as it was
        stored = [json.dumps(c.meta) for c in memory.get_all(session="s")]
        assert all("ana@example.com" not in text and "bo@example.com" not in text for text in stored)


def test_tool_call_arguments_that_are_not_json_are_named_and_nothing_is_written(
    mem: Memvara,
) -> None:
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    call = AIMessage("", tool_calls=[{"name": "a", "args": {"at": datetime(2026, 1, 1)},
                                      "id": "c1"}])
    with pytest.raises(InvalidArgumentError) as caught:
        history.add_messages([HumanMessage("hi"), call])
    assert caught.value.argument == "messages[1].tool_calls"
    with pytest.raises(InvalidArgumentError) as caught:
        history.add_messages([ToolMessage("42", tool_call_id="c\ud800")])
    assert caught.value.argument == "messages[0].tool_call_id"
    assert history.messages == [] and mem.episodes(session="s") == []


@pytest.mark.parametrize(("messages", "argument"), [
    ([ChatMessage(role="critic", content="meh")], "messages[0].role"),
    ([HumanMessage("ok"), "plain text"], "messages[1]"),
    (HumanMessage("one message, not a list"), "messages"),
    ({"role": "user", "content": "a dict"}, "messages"),
    ("I live in Berlin", "messages"),
])
def test_bad_messages_are_named_and_nothing_is_written(
    mem: Memvara, messages: object, argument: str
) -> None:
    history = MemvaraChatMessageHistory(memory=mem, session_id="s")
    with pytest.raises(InvalidArgumentError) as caught:
        history.add_messages(messages)  # type: ignore[arg-type]
    assert caught.value.argument == argument
    assert history.messages == [] and mem.episodes(session="s") == []


@pytest.mark.parametrize("session_id", ["", "   ", 7, None, "a\x00b"])
def test_a_bad_session_id_is_named(mem: Memvara, session_id: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraChatMessageHistory(memory=mem, session_id=session_id)  # type: ignore[arg-type]
    assert caught.value.argument == "session_id"


def test_the_historys_bad_memory_is_named_memory() -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraChatMessageHistory(memory="memory.db", session_id="s")  # type: ignore[arg-type]
    assert caught.value.argument == "memory"


def test_without_langchain_core_the_import_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "memvara.integrations.langchain")
    monkeypatch.setitem(sys.modules, "langchain_core.retrievers", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'memvara\[langchain\]'"):
        importlib.import_module("memvara.integrations.langchain")
