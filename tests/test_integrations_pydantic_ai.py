"""The Pydantic AI tools, driven by pydantic-ai's own offline models (``TestModel`` calls
every tool; ``FunctionModel`` plays a scripted model), against the real package."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from memvara import AsyncMemvara, InvalidArgumentError, InvalidTimeError, Memvara  # noqa: E402
from memvara.integrations.pydantic_ai import MemvaraTools  # noqa: E402

from .conftest import JAN, JUN, MAR, Clock  # noqa: E402


@pytest.fixture(autouse=True)
def close_the_loop_run_sync_leaves() -> Iterator[None]:
    """``Agent.run_sync()`` sets a new event loop as the thread's current one and never
    closes it; a later ``asyncio.run()`` drops it, and the garbage collector then raises
    a ResourceWarning in whatever test happens to be running. Close it here."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: no current loop
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # 3.14 raises where 3.12 warns
            return
    loop.close()
    asyncio.set_event_loop(None)


def _script(*calls: tuple[str, dict[str, Any]]) -> FunctionModel:
    """A model that makes ``calls`` one per turn, then answers with the last tool result."""
    queue = list(calls)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if queue:
            name, args = queue.pop(0)
            return ModelResponse(parts=[ToolCallPart(name, args)])
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return ModelResponse(parts=[TextPart(repr(last.parts[0]))])

    return FunctionModel(respond)


def _parts(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return the agent sent back to the model, in order."""
    return [part for message in messages if isinstance(message, ModelRequest)
            for part in message.parts if isinstance(part, ToolReturnPart)]


def _returns(messages: list[ModelMessage]) -> list[Any]:
    """Every successful tool result the agent sent back to the model, in order."""
    return [part.content for part in _parts(messages) if part.outcome == "success"]


def _retries(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool call the agent sent back to the model to be made again."""
    return [part for part in _parts(messages) if part.outcome == "retried"]


def test_the_test_model_calls_every_tool_and_each_answers(mem: Memvara) -> None:
    agent = Agent(TestModel(), tools=MemvaraTools(mem).tools())
    result = agent.run_sync("remember something")
    remembered, recalled, found = _returns(result.all_messages())
    assert remembered["new"] is True and remembered["closed"] == []
    assert recalled.splitlines()[1:] == [f"- {remembered['text']}"]
    assert [hit["id"] for hit in found] == [remembered["id"]]
    assert {tool.name for tool in MemvaraTools(mem).tools()} == {"remember", "recall", "search"}


def test_reads_after_a_write_in_one_response_see_it(mem: Memvara) -> None:
    # One response calls all three; remember is a barrier, so the reads after it see it.
    for _ in range(20):
        mem.purge()
        result = Agent(TestModel(), tools=MemvaraTools(mem).tools()).run_sync("go")
        remembered, recalled, found = _returns(result.all_messages())
        assert recalled != "" and [hit["id"] for hit in found] == [remembered["id"]]


def test_a_new_value_closes_the_old_and_search_reads_the_past(mem: Memvara, clock: Clock) -> None:
    clock.now = JAN
    tools = MemvaraTools(mem.scope(user="alice"))
    agent = Agent(_script(("remember", {"subject": "alice", "predicate": "lives_in",
                                        "object": "Berlin",
                                        "valid_from": "2026-01-06T00:00:00Z"})),
                  tools=tools.tools())
    agent.run_sync("I live in Berlin")
    clock.now = JUN
    agent = Agent(_script(
        ("remember", {"subject": "alice", "predicate": "lives_in", "object": "Lisbon",
                      "valid_from": "2026-06-24T00:00:00+00:00"}),
        ("search", {"query": "alice lives_in", "as_of": MAR.isoformat()}),
        ("search", {"query": "alice lives_in"}),
        ("search", {"query": "alice lives_in", "valid_at": MAR.isoformat(),
                    "known_at": JUN.isoformat(), "k": 1}),
    ), tools=tools.tools())
    moved, in_march, now, march_as_known_in_june = _returns(
        agent.run_sync("I moved to Lisbon").all_messages())
    assert moved["new"] is True
    assert moved["closed"] == ["alice lives in Berlin"]
    assert [hit["object"] for hit in in_march] == ["Berlin"]
    assert [hit["object"] for hit in now] == ["Lisbon"]
    # As known in June, Berlin was the March value (its valid time ended in June).
    assert [(h["object"], h["valid_to"]) for h in march_as_known_in_june] == [
        ("Berlin", JUN.isoformat())]
    # The tools wrote in alice's scope only: the root scope sees nothing of hers.
    assert mem.search("lives_in", user=None) == []
    assert [c.object for c in mem.get_all(user="alice")] == ["Lisbon"]


def test_restating_a_value_reinforces_it(mem: Memvara) -> None:
    tools = MemvaraTools(mem)
    first = tools.remember("bob", "works_at", "Acme")
    again = tools.remember("bob", "works_at", "Acme")
    assert (first["new"], again["new"]) == (True, False)
    assert again["id"] == first["id"]


def test_recall_is_the_prompt_block_of_live_facts(mem: Memvara) -> None:
    tools = MemvaraTools(mem, k=2)
    assert tools.recall("anything") == ""
    tools.remember("alice", "speaks", "Portuguese")
    assert tools.recall("what does alice speak") == mem.recall("what does alice speak", k=2)


def test_valid_to_bounds_a_fact(mem: Memvara, clock: Clock) -> None:
    clock.now = JUN
    tools = MemvaraTools(mem)
    tools.remember("carol", "working_on", "the audit", valid_from=JAN.isoformat(),
                   valid_to=MAR.isoformat())
    assert tools.search("carol audit") == []
    assert [h["valid_to"] for h in tools.search("carol audit", valid_at="2026-02-01T00:00:00Z")] \
        == [MAR.isoformat()]


def test_an_async_memory_is_accepted(clock: Clock) -> None:
    sync = Memvara(clock=clock)
    try:
        for memory in (AsyncMemvara(sync), AsyncMemvara(sync).scope(user="dave")):
            tools = MemvaraTools(memory)
            tools.remember("dave", "likes", "chess")
        assert sorted(str(c.scope.user) for c in sync.get_all(user="dave")) == ["None", "dave"]
    finally:
        sync.close()


@pytest.mark.parametrize(("keyword", "value", "problem"), [
    ("valid_at", 20260101, "expected a datetime or an ISO-8601 string"),
    ("known_at", "yesterday", "expected an ISO-8601 instant with a UTC offset"),
    ("as_of", "2026-01-06T00:00:00", "expected an ISO-8601 instant with a UTC offset"),
])
def test_a_bad_instant_is_a_memvara_error_naming_the_keyword(
    mem: Memvara, keyword: str, value: object, problem: str
) -> None:
    with pytest.raises(InvalidTimeError, match=f"^{keyword}: {problem}") as caught:
        MemvaraTools(mem).search("x", **{keyword: value})  # type: ignore[arg-type]
    assert caught.value.argument == keyword


def test_a_datetime_is_taken_as_is_when_called_directly(mem: Memvara, clock: Clock) -> None:
    tools = MemvaraTools(mem)
    tools.remember("erin", "lives_in", "Oslo")
    when = datetime(2026, 10, 1, tzinfo=timezone.utc)
    assert [h["object"] for h in tools.search("erin", as_of=when)] == ["Oslo"]  # type: ignore[arg-type]


def test_both_time_forms_together_are_refused(mem: Memvara) -> None:
    with pytest.raises(InvalidArgumentError, match="^as_of: pass as_of alone"):
        MemvaraTools(mem).search("x", as_of="2026-01-06T00:00:00Z", valid_at="2026-01-06T00:00:00Z")


def test_inside_a_run_a_bad_instant_goes_back_to_the_model_as_a_retry(mem: Memvara) -> None:
    tools = MemvaraTools(mem)
    tools.remember("frank", "lives_in", "Rome")
    agent = Agent(_script(("search", {"query": "frank", "valid_at": "last tuesday"}),
                          ("search", {"query": "frank", "valid_at": "2026-10-01T00:00:00Z"})),
                  tools=tools.tools())
    messages = agent.run_sync("where does frank live").all_messages()
    retries = _retries(messages)
    assert len(retries) == 1
    assert isinstance(retries[0].content, str)
    assert retries[0].content.startswith("valid_at: expected an ISO-8601 instant")
    assert [[hit["object"] for hit in found] for found in _returns(messages)] == [["Rome"]]


def test_the_retry_keeps_the_memvara_error_as_its_cause(mem: Memvara) -> None:
    search: Any = MemvaraTools(mem).tools()[2].function
    with pytest.raises(ModelRetry) as caught:
        search(query="x", known_at=5)
    assert isinstance(caught.value.__cause__, InvalidTimeError)
    assert caught.value.message.startswith("known_at: ")


def test_unknown_tool_arguments_never_reach_the_memory(mem: Memvara) -> None:
    agent = Agent(_script(("remember", {"subject": "g", "predicate": "likes", "object": "tea",
                                        "user": "mallory"}),
                          ("remember", {"subject": "g", "predicate": "likes", "object": "tea"})),
                  tools=MemvaraTools(mem).tools())
    messages = agent.run_sync("hi").all_messages()
    retries = _retries(messages)
    assert len(retries) == 1
    errors: Any = retries[0].content
    assert [(error["loc"], error["type"]) for error in errors] == [
        (["user"], "extra_forbidden")]
    assert [c.scope.user for c in mem.get_all()] == [None]


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"memory": "not a memory"}, "memory"),
    ({"k": 0}, "k"),
    ({"k": True}, "k"),
    ({"k": "5"}, "k"),
])
def test_bad_construction_names_the_argument(
    mem: Memvara, kwargs: dict[str, Any], argument: str
) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraTools(**{"memory": mem, **kwargs})
    assert caught.value.argument == argument
