"""The OpenAI Agents SDK session, against the real package: the protocol's four methods,
and a ``Runner`` using the session with an offline model that scripts its answers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents extra is not installed")

from agents import (  # noqa: E402
    Agent,
    ModelResponse,
    ModelSettings,
    RunConfig,
    Runner,
    Usage,
    function_tool,
)
from agents.items import TResponseInputItem, TResponseStreamEvent  # noqa: E402
from agents.memory import Session, SessionSettings  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from memvara import AsyncMemvara, InvalidArgumentError, Memvara, PredicateSpec  # noqa: E402
from memvara.redact import BasicRedactor  # noqa: E402
from memvara.schema import Cardinality, Volatility  # noqa: E402
from memvara.integrations._locks import item_lock  # noqa: E402
from memvara.integrations.openai_agents import ITEM_PREDICATE, MemvaraSession  # noqa: E402

from .claim_reads import claims_read  # noqa: E402
from .conftest import Clock, FakeLLM  # noqa: E402


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _user(text: str) -> TResponseInputItem:
    return {"role": "user", "content": text}


class ScriptedModel(Model):
    """An offline model: answers from a script, and keeps the input of every call."""

    def __init__(self, *outputs: list[Any]) -> None:
        self.outputs = list(outputs)
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: str | None,
                           input: str | list[TResponseInputItem], *args: Any,
                           **kwargs: Any) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else list(input))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError  # the tests run Runner.run, which never streams


def _say(text: str) -> list[Any]:
    return [ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])]


def _call(name: str, arguments: str) -> list[Any]:
    return [ResponseFunctionToolCall(type="function_call", call_id="call_1", name=name,
                                     arguments=arguments)]


def test_it_is_a_session_by_the_sdk_s_own_protocol(mem: Memvara) -> None:
    assert isinstance(MemvaraSession("s1", mem), Session)


def test_the_transcript_predicate_is_declared_and_a_clash_is_refused(mem: Memvara) -> None:
    MemvaraSession("s1", mem.scope(user="ann"))
    spec = mem.registry.spec(ITEM_PREDICATE)
    assert (spec.cardinality, spec.volatility) == (Cardinality.ONE, Volatility.FAST)
    other = Memvara(clock=Clock())
    try:
        other.registry.register(PredicateSpec(ITEM_PREDICATE, Cardinality.MANY))
        with pytest.raises(InvalidArgumentError, match="agents_item"):
            MemvaraSession("s1", other)
    finally:
        other.close()


def test_items_come_back_verbatim_and_in_order(mem: Memvara) -> None:
    session = MemvaraSession("s1", mem)
    items: list[Any] = [
        _user("hello"),
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
        _user("hello"),  # said again: the transcript keeps both
        {"type": "reasoning", "id": "r1", "summary": []},
        {"id": "x1"},  # an item of a kind the adapter does not know still round-trips
    ]
    run(session.add_items(items[:2]))
    run(session.add_items(items[2:]))
    run(session.add_items([]))
    assert run(session.get_items()) == items
    mem.consolidate()  # each item is a slot of its own: the two "hello"s never merge
    assert run(session.get_items()) == items
    assert run(session.get_items(limit=2)) == items[-2:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.get_items(limit=99)) == items
    texts = [c.text for c in mem.get_all(session="s1", predicate=ITEM_PREDICATE)]
    assert sorted(texts) == sorted(["hello", "lookup({\"q\": 1})", "42", "hi", "hello",
                                    "reasoning", "item"])
    assert run(session.get_items(limit=2)) == items[-2:]


def test_session_settings_give_the_default_limit(mem: Memvara) -> None:
    session = MemvaraSession("s1", mem, session_settings=SessionSettings(limit=1))
    run(session.add_items([_user("one"), _user("two")]))
    assert run(session.get_items()) == [_user("two")]
    assert run(session.get_items(limit=2)) == [_user("one"), _user("two")]


def test_pop_retires_the_latest_item_and_history_keeps_it(mem: Memvara, clock: Clock) -> None:
    session = MemvaraSession("s1", mem)
    assert run(session.pop_item()) is None
    run(session.add_items([_user("one"), _user("two")]))
    before = clock.now
    clock.advance(seconds=1)
    assert run(session.pop_item()) == _user("two")
    assert run(session.get_items()) == [_user("one")]
    run(session.add_items([_user("three")]))
    assert run(session.get_items()) == [_user("one"), _user("three")]
    # Belief in the popped item ended; read as known before the pop, it is still there.
    assert [c.text for c in mem.get_all(session="s1", known_at=before)] == ["two", "one"]
    states = {c.text: c.state for c in mem.get_all(session="s1", include_invalidated=True)}
    assert states == {"one": "live", "two": "retired", "three": "live"}


def test_two_session_objects_for_one_session_lose_no_item_side_by_side(mem: Memvara) -> None:
    # A server makes a session object per request, as the SDK's docs do with
    # SQLiteSession(session_id): two of them appending at once used to read the same
    # next position and write the same slot, so one item reinforced the other (40 in,
    # 35 or 36 kept in three runs before the fix).
    first, second = MemvaraSession("s1", mem, learn=False), MemvaraSession("s1", mem, learn=False)

    async def append_all() -> None:
        await asyncio.gather(*[(first, second)[i % 2].add_items([_user(f"m{i}")])
                               for i in range(40)])

    run(append_all())
    assert sorted(item["content"] for item in run(first.get_items())) == sorted(
        f"m{i}" for i in range(40))

    async def pop_all() -> list[Any]:
        return await asyncio.gather(*[(first, second)[i % 2].pop_item() for i in range(40)])

    popped = run(pop_all())
    assert sorted(item["content"] for item in popped) == sorted(f"m{i}" for i in range(40))
    assert run(second.get_items()) == []


def test_an_append_reads_a_few_claims_however_long_the_session(
    db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It read every item the session ever had to find the next position, so each turn
    # of a long conversation cost more than the one before. Now the next position is
    # kept per open memory and checked with a lookup of that one slot; a memory opened
    # afresh finds it from the latest items written.
    with Memvara(db_path, clock=clock) as memory:
        run(MemvaraSession("s1", memory, learn=False).add_items(
            [_user(f"m{i}") for i in range(300)]))
        read = claims_read(memory, monkeypatch)
        run(MemvaraSession("s1", memory, learn=False).add_items([_user("a new object")]))
        assert sum(read) <= 4, read
    with Memvara(db_path, clock=clock) as reopened:
        read = claims_read(reopened, monkeypatch)
        session = MemvaraSession("s1", reopened, learn=False)
        run(session.add_items([_user("after a reopen")]))
        run(session.add_items([_user("and again")]))
        assert sum(read) <= 24, read
        items = run(session.get_items())
    assert [item["content"] for item in items[-3:]] == ["a new object", "after a reopen",
                                                         "and again"]
    assert len(items) == 303


def test_two_open_memories_on_one_file_append_in_turn_and_lose_nothing(
    db_path: str, clock: Clock,
) -> None:
    # Each open memory keeps its own next position; the slot it names is looked up
    # first, so what the other one appended since is stepped over, not overwritten.
    with Memvara(db_path, clock=clock) as one, Memvara(db_path, clock=clock) as two:
        first, second = (MemvaraSession("s1", one, learn=False),
                         MemvaraSession("s1", two, learn=False))
        run(first.add_items([_user("1a")]))
        run(second.add_items([_user("2a"), _user("2b")]))
        run(first.add_items([_user("1b")]))
        for i in range(9):
            run(second.add_items([_user(f"2-{i}")]))
        run(first.add_items([_user("1c")]))
        expected = ["1a", "2a", "2b", "1b", *(f"2-{i}" for i in range(9)), "1c"]
        assert [item["content"] for item in run(first.get_items())] == expected
        assert [item["content"] for item in run(second.get_items())] == expected


def test_a_broader_session_of_one_name_does_not_move_the_next_position(
    db_path: str, clock: Clock,
) -> None:
    # A session of the same name at the root scope is visible from alice's: its items,
    # written later (the newest recorded), are not alice's and do not count, also when
    # they crowd alice's out of the newest a memory opened afresh reads.
    with Memvara(db_path, clock=clock) as memory:
        alice = MemvaraSession("s1", memory.scope(user="alice"), learn=False)
        run(alice.add_items([_user("one"), _user("two")]))
        run(MemvaraSession("s1", memory, learn=False).add_items(
            [_user(f"r{i}") for i in range(20)]))
    with Memvara(db_path, clock=clock) as memory:
        alice = MemvaraSession("s1", memory.scope(user="alice"), learn=False)
        run(alice.add_items([_user("three")]))
        assert [item["content"] for item in run(alice.get_items())] == ["one", "two", "three"]
        assert [c.meta["position"] for c in memory.get_all(user="alice", session="s1")
                if c.scope.user == "alice"] == [2, 1, 0]
        assert len(run(MemvaraSession("s1", memory).get_items())) == 20


def test_a_session_held_mid_append_does_not_hold_up_another_session(mem: Memvara) -> None:
    # Every object of one session takes one lock; another session (of another stripe)
    # appends while that lock is held, where one lock for every session made it wait.
    held = item_lock("agents-session:s1")
    other = next(f"s{i}" for i in range(2, 200) if item_lock(f"agents-session:s{i}") is not held)
    done = threading.Event()

    def append() -> None:
        run(MemvaraSession(other, mem, learn=False).add_items([_user("still written")]))
        done.set()

    worker = threading.Thread(target=append)
    with held:
        worker.start()
        finished = done.wait(timeout=30)  # at once; with one lock for all, not until released
    worker.join()
    assert finished
    assert [item["content"] for item in run(MemvaraSession(other, mem).get_items())] == ["still written"]


def test_one_session_object_serves_calls_side_by_side_in_one_event_loop_then_another(
    mem: Memvara,
) -> None:
    # It held an asyncio.Lock, bound to the first loop that waited on it: a burst of
    # calls under a second asyncio.run was a RuntimeError ('bound to a different event loop').
    session = MemvaraSession("s1", mem, learn=False)

    async def burst(tag: str) -> None:
        await asyncio.gather(*[session.add_items([_user(f"{tag}{i}")]) for i in range(3)])
        await asyncio.gather(session.pop_item(), session.clear_session())

    run(burst("a"))
    run(burst("b"))
    assert run(session.get_items()) == []
    assert mem.count(session="s1", include_invalidated=True) == 6


def test_clear_retires_the_transcript_and_keeps_what_was_learned(mem: Memvara) -> None:
    session = MemvaraSession("s1", mem.scope(user="alice"))
    run(session.add_items([_user("I live in Berlin"), *_as_items(_say("Noted."))]))
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert [(c.predicate, c.object) for c in mem.get_all(user="alice")] == [
        ("lives_in", "Berlin")]
    assert mem.count(session="s1", user="alice", include_invalidated=True) == 3
    run(session.add_items([_user("again")]))
    assert run(session.get_items()) == [_user("again")]


def test_forget_subject_takes_the_name_out_of_the_items_and_what_they_learned(
        mem: Memvara) -> None:
    # A transcript item is a claim of its own, about the session: forget_subject()
    # leaves it in place and replaces the name in its text and in the item kept.
    session = MemvaraSession("s1", mem.scope(user="alice"))
    run(session.add_items([
        _user("I am friends with Zorblattine"),
        {"type": "function_call", "call_id": "c1", "name": "lookup",
         "arguments": '{"q": "Zorblattine"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "ZORBLATTINE found"}]))
    mem.remember("Zorblattine", "lives_in", "Porto", user="alice")
    manifest = mem.forget_subject("Zorblattine", reason="r", requested_by="q", user="alice")
    assert manifest.claims_scrubbed == 3
    assert run(session.get_items()) == [
        _user("I am friends with [erased]"),
        {"type": "function_call", "call_id": "c1", "name": "lookup",
         "arguments": '{"q": "[erased]"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "[erased] found"}]
    texts = [c.text for c in mem.get_all(user="alice", session="s1", predicate=ITEM_PREDICATE)]
    assert texts and not any("zorblattine" in text.lower() for text in texts)


def _as_items(output: list[Any]) -> list[Any]:
    return ModelResponse(output=output, usage=Usage(), response_id=None).to_input_items()


def test_user_turns_are_learned_at_the_memory_s_scope(mem: Memvara) -> None:
    first = MemvaraSession("monday", mem.scope(user="alice"))
    run(first.add_items([_user("I live in Berlin"), *_as_items(_say("I work at Acme"))]))
    receipt = first.last_receipt
    assert receipt is not None and [c.object for c in receipt.added] == ["Berlin"]
    # The assistant's turn was not learned from; the user's turn is a turn of alice's.
    assert [e.content for e in mem.episodes(user="alice")] == ["I live in Berlin"]
    # At the session's scope a search finds the transcript beside the fact; the
    # transcript is episodic, so asking for semantic claims leaves it out.
    here = mem.scope(user="alice", session="monday")
    assert sorted(h.text for h in here.search("Berlin")) == [
        "I live in Berlin", "alice lives in Berlin"]
    assert [h.text for h in here.search("Berlin", memory_types=["semantic"])] == [
        "alice lives in Berlin"]
    # Another session of alice's sees the fact; bob does not.
    second = MemvaraSession("tuesday", mem.scope(user="alice"))
    run(second.add_items([_user("I live in Lisbon")]))
    assert [c.object for c in mem.get_all(user="alice")] == ["Lisbon"]
    assert [c.object for c in mem.history("alice", "lives_in", user="alice")] == [
        "Berlin", "Lisbon"]
    assert mem.get_all(user="bob") == []
    # Each session has its own transcript.
    assert run(second.get_items()) == [_user("I live in Lisbon")]


def test_learn_false_keeps_the_transcript_only(mem: Memvara) -> None:
    session = MemvaraSession("s1", mem, learn=False)
    run(session.add_items([_user("I live in Berlin")]))
    assert run(session.get_items()) == [_user("I live in Berlin")]
    assert mem.episodes() == [] and session.last_receipt is None
    assert mem.get_all(predicate="lives_in", session="s1") == []


def test_a_text_part_list_is_learned_too(mem: Memvara) -> None:
    session = MemvaraSession("s1", mem)
    item: Any = {"role": "user", "content": [
        {"type": "input_text", "text": "I live in Porto"},
        {"type": "input_image", "image_url": "https://example.invalid/x.png", "detail": "auto"}]}
    run(session.add_items([item]))
    assert run(session.get_items()) == [item]
    assert [c.object for c in mem.get_all(predicate="lives_in")] == ["Porto"]


def test_a_failing_model_loses_nothing(clock: Clock) -> None:
    llm = FakeLLM()
    llm.fail = True
    memory = Memvara(clock=clock, llm=llm)
    try:
        session = MemvaraSession("s1", memory)
        run(session.add_items([_user("my sister Ana is visiting next week")]))
        assert run(session.get_items()) == [_user("my sister Ana is visiting next week")]
        receipt = session.last_receipt
        assert receipt is not None and len(receipt.pending) == 1
    finally:
        memory.close()


def test_an_async_memory_is_accepted(mem: Memvara) -> None:
    session = MemvaraSession("s1", AsyncMemvara(mem).scope(user="carol"))
    run(session.add_items([_user("I live in Oslo")]))
    assert [c.object for c in mem.get_all(user="carol")] == ["Oslo"]


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_a_runner_replays_the_session_to_the_model(mem: Memvara) -> None:
    model = ScriptedModel(_call("weather", '{"city": "Berlin"}'), _say("It is sunny."),
                          _say("You live in Berlin."))
    agent = Agent(name="helper", instructions="Be brief.", model=model, tools=[weather],
                  model_settings=ModelSettings())
    session = MemvaraSession("chat", mem.scope(user="alice"))
    config = RunConfig(tracing_disabled=True)
    first = run(Runner.run(agent, "I live in Berlin. Weather?", session=session,
                           run_config=config))
    assert first.final_output == "It is sunny."
    second = run(Runner.run(agent, "Where do I live?", session=session, run_config=config))
    assert second.final_output == "You live in Berlin."
    # The third model call saw the whole first run, tool call and output included.
    replayed = model.inputs[2]
    kinds = [item.get("type", "message") for item in replayed]
    assert kinds == ["message", "function_call", "function_call_output", "message", "message"]
    assert replayed[2]["output"] == "sunny in Berlin"
    assert replayed[-1] == _user("Where do I live?")
    assert run(session.get_items()) == replayed + _as_items(_say("You live in Berlin."))
    assert [c.object for c in mem.get_all(user="alice", predicate="lives_in")] == ["Berlin"]


@pytest.mark.parametrize(("items", "argument"), [
    ("hello", "items"),
    ([_user("ok"), "hello"], "items[1]"),
    ([{"role": "user", "content": object()}], "items[0]"),
    # Each of these was named by memvara's own internals (claims[0].text, claims[0].meta,
    # messages[0].content), and the NUL one was refused by add() after the transcript
    # had been written.
    ([_user("ok"), _user("bad \ud800 text")], "items[1]"),
    ([_user("ok"), {"role": "tool", "content": "ok", "score": float("nan")}], "items[1]"),
    ([_user("ok"), _user("a\x00b")], "items[1]"),
    ([_user("ok"), {"role": "user", "content": [{"type": "input_text", "text": "a\x00b"}]}],
     "items[1]"),
])
def test_bad_items_name_the_item_and_write_nothing(
    mem: Memvara, items: Any, argument: str
) -> None:
    session = MemvaraSession("s1", mem)
    with pytest.raises(InvalidArgumentError) as caught:
        run(session.add_items(items))
    assert caught.value.argument == argument
    assert run(session.get_items()) == [] and mem.episodes() == []


def test_a_redactor_rewrites_the_items_strings_but_not_their_ids(clock: Clock) -> None:
    # The redactor promises that no text reaches the store unrewritten; the transcript
    # keeps whole items, so their strings go through it too, while the ids that pair a
    # tool call with its output come back exactly.
    items: list[Any] = [
        _user("mail ana@example.com please"),
        {"type": "function_call", "call_id": "call_1", "name": "send",
         "arguments": '{"to": "ana@example.com"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "sent to ana@example.com"},
        {"role": "assistant", "type": "message", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Done, ana@example.com has it.",
                      "annotations": []}]},
    ]
    with Memvara(clock=clock, redactor=BasicRedactor()) as memory:
        session = MemvaraSession("s1", memory)
        run(session.add_items(items))
        got = run(session.get_items())
        assert "example.com" not in json.dumps(got), got
        assert [(i.get("type"), i.get("call_id"), i.get("name"), i.get("id")) for i in got] == [
            (i.get("type"), i.get("call_id"), i.get("name"), i.get("id")) for i in items]
        assert got[3]["content"][0]["type"] == "output_text"
        assert items[0]["content"] == "mail ana@example.com please"  # the caller's item as it was
        stored = memory.get_all(session="s1", states=("live", "ended", "retired"))
        assert stored and all("ana@example.com" not in c.text + json.dumps(c.meta) for c in stored)


@pytest.mark.parametrize("limit", [-1, "2", True])
def test_a_bad_limit_is_named(mem: Memvara, limit: Any) -> None:
    with pytest.raises(InvalidArgumentError, match="^limit: "):
        run(MemvaraSession("s1", mem).get_items(limit=limit))


@pytest.mark.parametrize(("args", "kwargs", "argument"), [
    (("", None), {}, "session_id"),
    ((5, None), {}, "session_id"),
    (("a\ud800", None), {}, "session_id"),
    (("s1", "memory"), {}, "memory"),
    (("s1", None), {"learn": "yes"}, "learn"),
])
def test_bad_construction_names_the_argument(
    mem: Memvara, args: tuple[Any, Any], kwargs: dict[str, Any], argument: str
) -> None:
    session_id, memory = args
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraSession(session_id, mem if memory is None else memory, **kwargs)
    assert caught.value.argument == argument
