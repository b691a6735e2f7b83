"""The MCP server in-process: its methods, its eight tools and every bad input, over
file-like streams (the SDK's subprocess runs are in test_server_sdk.py)."""

from __future__ import annotations

import importlib
import io
import json
import math
import re
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvara import Memvara, NullLLM
from memvara.server import CONFIG, PROTOCOL_VERSIONS, TOOLS, Session, _tools, handle, main, serve
from memvara.server._schema import ArgumentError, check

from .conftest import JAN, JUN, Clock

SCOPE_ARGS = ("tenant", "user", "agent", "session")


@pytest.fixture
def session(clock: Clock) -> Iterator[Session]:
    memory = Memvara(clock=clock, llm=NullLLM(), user="alice")
    yield Session(memory)
    memory.close()


def line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def request(session: Session, method: str, params: object = None, id_: object = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    answer = handle(session, line(message))
    assert answer is not None
    return answer


def call(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    """A tools/call that succeeds; its result."""
    answer = request(session, "tools/call", {"name": name, "arguments": arguments})
    assert "error" not in answer, answer
    result: dict[str, Any] = answer["result"]
    assert result["isError"] is False
    assert isinstance(result["structuredContent"], dict)
    [content] = result["content"]
    assert content["type"] == "text" and content["text"]
    return result


def refused(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    """A tools/call answered with a JSON-RPC error; the error."""
    answer = request(session, "tools/call", {"name": name, "arguments": arguments})
    assert "result" not in answer, answer
    error: dict[str, Any] = answer["error"]
    assert answer["id"] == 1 and error["message"].startswith(error["data"]["field"] + ": ")
    return error


# --- the handshake and the listing --------------------------------------------------------------

def test_initialize_answers_the_clients_version_when_it_speaks_it(session: Session) -> None:
    for version in PROTOCOL_VERSIONS:
        result = request(session, "initialize", {"protocolVersion": version, "capabilities": {},
                                                 "clientInfo": {"name": "t", "version": "1"}})
        assert result["result"]["protocolVersion"] == version
    result = request(session, "initialize", {"protocolVersion": "2099-01-01"})["result"]
    assert result["protocolVersion"] == PROTOCOL_VERSIONS[0] == "2025-11-25"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "memvara" and result["serverInfo"]["version"]
    assert "memory_recall" in result["instructions"]


def test_initialize_needs_a_version(session: Session) -> None:
    error = request(session, "initialize", {"capabilities": {}})["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "params.protocolVersion")
    error = request(session, "initialize", [1])["error"]
    assert (error["code"], error["message"]) == (-32602, "params: expected an object")


def test_ping_and_notifications(session: Session) -> None:
    assert request(session, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    for method in ("notifications/initialized", "notifications/cancelled", "no/such"):
        assert handle(session, line({"jsonrpc": "2.0", "method": method})) is None
    # a client's answer to a request (the server sends none) is not answered either
    assert handle(session, line({"jsonrpc": "2.0", "id": 7, "result": {}})) is None
    assert handle(session, line({"jsonrpc": "2.0", "id": 7, "error": {"code": 1}})) is None


def test_exactly_eight_tools_and_none_that_erases(session: Session) -> None:
    tools = request(session, "tools/list", {"cursor": "x"})["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert names == ["memory_add", "memory_remember", "memory_recall", "memory_search",
                     "memory_history", "memory_why", "memory_forget", "memory_stats"]
    assert names == list(TOOLS)
    for word in ("erase", "purge", "reset", "consolidate"):
        assert not any(word in name for name in names)
    for tool in tools:
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert not set(schema["properties"]) & set(SCOPE_ARGS)  # the scope is the server's
        assert tool["description"] and tool["annotations"]["openWorldHint"] is False
    read_only = {t["name"] for t in tools if t["annotations"]["readOnlyHint"]}
    assert read_only == {"memory_recall", "memory_search", "memory_history", "memory_why",
                         "memory_stats"}
    assert request(session, "tools/list")["result"]["tools"] == tools


# --- every tool ----------------------------------------------------------------------------------

def test_add_in_each_form(session: Session, clock: Clock) -> None:
    done = call(session, "memory_add", messages="I live in Berlin")["structuredContent"]
    assert [c["object"] for c in done["added"]] == ["Berlin"]
    assert done["added"][0]["scope"]["user"] == "alice"
    clock.advance(days=1)
    result = call(session, "memory_add", messages=["I work at Acme", "ok"], role="user",
                  ts="2026-09-30T12:00:00+02:00", meta={"via": "mcp"})
    added = result["structuredContent"]["added"]
    assert [(c["object"], c["meta"]) for c in added] == [("Acme", {"via": "mcp"})]
    assert added[0]["valid_from"] == "2026-09-30T10:00:00+00:00"
    assert result["content"][0]["text"].startswith("added 1, reinforced 0, closed 0")
    clock.advance(days=1)
    turns = [{"role": "assistant", "content": "Noted."}, {"content": "I am allergic to peanuts"}]
    done = call(session, "memory_add", messages=turns)["structuredContent"]
    assert [c["object"] for c in done["added"]] == ["peanuts"]
    text = call(session, "memory_add", messages="I live in Berlin")["content"][0]["text"]
    assert text.startswith("added 0, reinforced 1") and "alice lives in Berlin" in text
    text = call(session, "memory_add", messages="I live in Berlin")["content"][0]["text"]
    assert text == "added 0, reinforced 0, closed 0, skipped 1, unextracted 0\n"  # a copy
    clock.advance(days=1)  # a shared session: a named message is about its speaker
    said = [{"role": "user", "name": "Bruno", "content": "I speak Italian"}]
    done = call(session, "memory_add", messages=said)["structuredContent"]
    assert [(c["subject"], c["object"]) for c in done["added"]] == [("Bruno", "Italian")]


def test_remember_history_and_the_two_clocks(session: Session, clock: Clock) -> None:
    first = call(session, "memory_remember", subject="alice", predicate="lives_in", obj="Berlin",
                 valid_from=JAN.isoformat(), sources=["s1"], confidence=0.9,
                 memory_type="semantic", polarity=1, meta={"k": 1})["structuredContent"]
    clock.advance(days=1)
    second = call(session, "memory_remember", subject="alice", predicate="lives_in",
                  obj="Lisbon", valid_from=JUN.isoformat(), text="Alice moved to Lisbon",
                  close="ended")["structuredContent"]
    [berlin], [lisbon] = first["added"], second["added"]
    assert second["closed"] == [berlin["id"]]
    history = call(session, "memory_history", subject="alice", predicate="lives_in")
    claims = history["structuredContent"]["claims"]
    assert [(c["object"], c["state"]) for c in claims] == [("Berlin", "ended"), ("Lisbon", "live")]
    assert "Alice moved to Lisbon" in history["content"][0]["text"]
    march = call(session, "memory_history", subject="alice", predicate="lives_in",
                 valid_at="2026-03-01T00:00:00Z")["structuredContent"]["claims"]
    assert [c["object"] for c in march] == ["Berlin"]
    before = call(session, "memory_history", subject="alice", predicate="lives_in",
                  known_at="2026-10-01T12:00:00+00:00")["structuredContent"]["claims"]
    assert [(c["object"], c["state"]) for c in before] == [("Berlin", "live")]
    both = call(session, "memory_history", subject="alice", predicate="lives_in",
                as_of="2026-10-01T12:00:00+00:00")["structuredContent"]["claims"]
    assert [c["object"] for c in both] == ["Berlin"]
    empty = call(session, "memory_history", subject="bob", predicate="lives_in")
    assert empty["structuredContent"] == {"claims": []}
    assert empty["content"][0]["text"] == "No claims.\n"
    ended = call(session, "memory_remember", subject="alice", predicate="lives_in", obj="Oslo",
                 valid_to="2026-12-31T00:00:00+00:00", close="retired")["structuredContent"]
    assert ended["added"][0]["valid_to"] == "2026-12-31T00:00:00+00:00"
    assert ended["retired"][0]["id"] == lisbon["id"]


def test_search_and_recall(session: Session, clock: Clock) -> None:
    call(session, "memory_remember", subject="alice", predicate="lives_in", obj="Berlin",
         valid_from=JAN.isoformat())
    clock.advance(days=1)
    call(session, "memory_remember", subject="alice", predicate="lives_in", obj="Lisbon",
         valid_from=JUN.isoformat())
    now = call(session, "memory_search", query="where does alice live", k=5)
    results = now["structuredContent"]["results"]
    assert [r["claim"]["object"] for r in results] == ["Lisbon"]
    assert set(results[0]) == {"kind", "id", "text", "score", "explain", "claim", "episode"}
    assert results[0]["id"] in now["content"][0]["text"]
    march = call(session, "memory_search", query="where does alice live",
                 valid_at="2026-03-01T00:00:00+00:00", min_score=0.0,
                 memory_types=["semantic"], states=["live", "ended"],
                 include_episodes=False)["structuredContent"]["results"]
    assert [r["claim"]["object"] for r in march] == ["Berlin"]
    then = call(session, "memory_search", query="where does alice live",
                as_of="2026-10-01T12:00:00+00:00")["structuredContent"]["results"]
    assert [r["claim"]["object"] for r in then] == ["Berlin"]
    known = call(session, "memory_search", query="where does alice live",
                 known_at="2026-10-01T12:00:00+00:00")["structuredContent"]["results"]
    assert [r["claim"]["object"] for r in known] == ["Berlin"]
    none = call(session, "memory_search", query="zebra")
    assert none["structuredContent"] == {"results": []}
    assert none["content"][0]["text"] == "Nothing matches.\n"
    recall = call(session, "memory_recall", query="where does alice live", k=3, min_score=0,
                  include_episodes=True, include_history=True)
    block = recall["structuredContent"]["recall"]
    assert "Lisbon" in block and "Berlin" in block and recall["content"][0]["text"] == block
    nothing = call(session, "memory_recall", query="zebra")
    assert nothing["structuredContent"] == {"recall": ""}
    assert nothing["content"][0]["text"] == "Nothing stored matches.\n"


def test_why_forget_and_stats(session: Session, clock: Clock) -> None:
    added = call(session, "memory_add", messages="I live in Berlin")["structuredContent"]
    claim_id = added["added"][0]["id"]
    why = call(session, "memory_why", claim_id=claim_id)
    provenance = why["structuredContent"]["provenance"]
    assert provenance["claim"]["id"] == claim_id and provenance["episodes"][0]["content"] == \
        "I live in Berlin"
    assert "I live in Berlin" in why["content"][0]["text"]
    early = call(session, "memory_why", claim_id=claim_id, known_at="2026-01-01T00:00:00Z")
    assert early["structuredContent"] == {"provenance": None}
    assert "No claim" in early["content"][0]["text"]
    for clock_name in ("valid_at", "as_of"):
        found = call(session, "memory_why", claim_id=claim_id,
                     **{clock_name: "2026-10-02T00:00:00Z"})["structuredContent"]
        assert found["provenance"]["claim"]["id"] == claim_id
    stats = call(session, "memory_stats")
    assert stats["structuredContent"]["live_claims"] == 1 and "live_claims" in \
        stats["content"][0]["text"]
    clock.advance(hours=1)
    forgot = call(session, "memory_forget", claim_id=claim_id)
    assert forgot["structuredContent"] == {"retired": [claim_id]}
    again = call(session, "memory_forget", claim_id=claim_id)
    assert again["structuredContent"] == {"retired": []}
    assert again["content"][0]["text"].startswith("Nothing was retired")
    # retired, not erased: history still shows it
    history = call(session, "memory_history", subject="alice", predicate="lives_in")
    assert [c["state"] for c in history["structuredContent"]["claims"]] == ["retired"]
    call(session, "memory_remember", subject="alice", predicate="likes", obj="tea")
    call(session, "memory_remember", subject="alice", predicate="likes", obj="jazz")
    slot = call(session, "memory_forget", subject="alice", predicate="likes")
    assert len(slot["structuredContent"]["retired"]) == 2
    assert slot["content"][0]["text"].startswith("retired 2: ")
    assert call(session, "memory_stats")["structuredContent"]["live_claims"] == 0


def test_forget_takes_one_form(session: Session) -> None:
    for arguments, field in (({}, "claim_id"), ({"subject": "alice"}, "predicate"),
                             ({"predicate": "likes"}, "subject"),
                             ({"claim_id": "c1", "subject": "alice"}, "subject")):
        assert refused(session, "memory_forget", **arguments)["data"]["field"] == field


# --- bad arguments: a JSON-RPC error naming the field, and nothing written -----------------------

@pytest.mark.parametrize(("tool", "arguments", "field", "words"), [
    ("memory_search", {}, "query", "missing; it is required"),
    ("memory_search", {"query": 3}, "query", "expected string, got integer"),
    ("memory_search", {"query": 1.5}, "query", "expected string, got number"),
    ("memory_search", {"query": None}, "query", "expected string, got null"),
    ("memory_search", {"query": ["a"]}, "query", "expected string, got array"),
    ("memory_search", {"query": {}}, "query", "expected string, got object"),
    ("memory_search", {"query": "x", "k": "3"}, "k", "expected integer, got string"),
    ("memory_search", {"query": "x", "k": True}, "k", "expected integer, got boolean"),
    ("memory_search", {"query": "x", "k": 2.5}, "k", "expected integer, got number"),
    ("memory_search", {"query": "x", "k": 0}, "k", "must be at least 1"),
    ("memory_search", {"query": "x", "k": 101}, "k", "must be at most 100"),
    ("memory_search", {"query": ""}, "query", "must not be empty"),
    ("memory_search", {"query": "x", "states": ["gone"]}, "states[0]", "must be one of live"),
    ("memory_search", {"query": "x", "valid_at": "2026-01-01T00:00:00"}, "valid_at",
     "with a UTC offset"),
    ("memory_search", {"query": "x", "known_at": "2026-01-01"}, "known_at", "with a UTC offset"),
    ("memory_search", {"query": "x", "as_of": "2026-02-30T00:00:00Z"}, "as_of",
     "not a valid instant"),
    ("memory_search", {"query": "x", "limit": 3}, "limit", "unknown argument; the arguments"),
    ("memory_stats", {"verbose": True}, "verbose", "unknown argument; there are none"),
    ("memory_search", {"query": "x", "user": "bob"}, "user", "MEMVARA_USER, never by a tool"),
    ("memory_stats", {"tenant": "t2"}, "tenant", "MEMVARA_TENANT"),
    ("memory_add", {"messages": 5}, "messages", "a list of strings, or a list of {role, content"),
    ("memory_add", {"messages": ["ok", 5]}, "messages[1]", "expected a string or a {role"),
    ("memory_add", {"messages": [{"content": "x", "name": 5}]}, "messages[0].name",
     "expected string, got integer"),
    ("memory_add", {"messages": [{"role": "bot", "content": "x"}]}, "messages[0].role",
     "must be one of user, assistant, system, tool"),
    ("memory_add", {"messages": [{"role": "user"}]}, "messages[0].content", "missing"),
    ("memory_add", {"messages": "x", "ts": "yesterday"}, "ts", "with a UTC offset"),
    ("memory_remember", {"subject": "a", "predicate": "p"}, "obj", "missing; it is required"),
    ("memory_remember", {"subject": "a", "predicate": "p", "obj": "o", "confidence": 2},
     "confidence", "must be at most 1"),
    ("memory_remember", {"subject": "a", "predicate": "p", "obj": "o", "polarity": 0},
     "polarity", "must be one of 1, -1"),
    ("memory_remember", {"subject": "a", "predicate": "p", "obj": "o", "valid_from": 5},
     "valid_from", "expected string, got integer"),
    ("memory_remember", {"subject": "a", "predicate": "p", "obj": "o", "meta": []},
     "meta", "expected object, got array"),
    # refused by the library itself, by name: blank text passes the schema's minLength
    ("memory_remember", {"subject": " ", "predicate": "p", "obj": "o"}, "subject",
     "must not be empty"),
    ("memory_remember", {"subject": "a", "predicate": "p", "obj": "o",
                         "valid_from": "2026-06-01T00:00:00Z", "valid_to": "2026-01-01T00:00:00Z"},
     "valid_to", ""),
])
def test_bad_arguments_are_named(session: Session, tool: str, arguments: dict[str, Any],
                                 field: str, words: str) -> None:
    error = refused(session, tool, **arguments)
    assert error["code"] == -32602 and error["data"]["field"] == field
    assert error["data"]["tool"] == tool and words in error["message"]
    assert call(session, "memory_stats")["structuredContent"]["claims"] == 0
    assert call(session, "memory_stats")["structuredContent"]["episodes"] == 0


def test_a_library_refusal_carries_its_code(session: Session) -> None:
    error = refused(session, "memory_remember", subject="a", predicate="\ud800", obj="o")
    assert error["data"] == {"field": "predicate", "tool": "memory_remember",
                             "code": "invalid_argument"}


def test_an_integral_number_is_an_integer(session: Session) -> None:
    call(session, "memory_remember", subject="alice", predicate="likes", obj="tea")
    assert len(call(session, "memory_search", query="tea", k=1.0)["structuredContent"][
        "results"]) == 1


def test_bad_tool_calls(session: Session) -> None:
    for params, field, words in (
        ({"name": "memory_erase"}, "params.name", "unknown tool 'memory_erase'; the tools are"),
        ({"arguments": {}}, "params.name", "missing"),
        ({"name": 3}, "params.name", "expected a string"),
        ({"name": "memory_stats", "arguments": [1]}, "params.arguments", "expected an object"),
    ):
        error = request(session, "tools/call", params)["error"]
        assert (error["code"], error["data"]["field"]) == (-32602, field)
        assert words in error["message"]
    error = request(session, "tools/call", "memory_stats")["error"]
    assert error["data"]["field"] == "params"
    assert call(session, "memory_stats")["structuredContent"]["claims"] == 0  # arguments optional
    assert request(session, "tools/call", {"name": "memory_stats"})["result"]["isError"] is False


def test_a_failing_store_is_a_tool_error(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    Memvara(path, llm=NullLLM()).close()
    with Memvara(path, llm=NullLLM(), read_only=True) as memory:
        result = request(Session(memory), "tools/call",
                         {"name": "memory_add", "arguments": {"messages": "I live in Oslo"}})
    assert result["result"]["isError"] is True
    assert result["result"]["structuredContent"]["error"]["code"] == "read_only"
    assert result["result"]["content"][0]["text"].startswith("read_only: ")


def test_a_bug_is_an_internal_error_and_serving_goes_on(
        session: Session, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(mem: Memvara, args: dict[str, Any]) -> _tools.Answer:
        raise RuntimeError("boom")

    def not_json(mem: Memvara, args: dict[str, Any]) -> _tools.Answer:
        return {"score": math.nan}, "nan"

    monkeypatch.setitem(TOOLS, "memory_stats", _tools.Tool("memory_stats", "", "", {"type": "object"},
                                                         broken))
    error = request(session, "tools/call", {"name": "memory_stats"})["error"]
    assert error == {"code": -32603, "message": "internal error: RuntimeError: boom", "data": {}}
    assert "RuntimeError: boom" in capsys.readouterr().err
    monkeypatch.setitem(TOOLS, "memory_stats", _tools.Tool("memory_stats", "", "", {"type": "object"},
                                                         not_json))
    out = io.BytesIO()
    assert serve(session, io.BytesIO(line({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                           "params": {"name": "memory_stats"}})), out) == 0
    answer = json.loads(out.getvalue())
    assert answer["id"] == 4 and answer["error"]["code"] == -32603
    assert "not JSON" in answer["error"]["message"]
    assert request(session, "ping")["result"] == {}


# --- the wire: malformed messages and ids --------------------------------------------------------

@pytest.mark.parametrize(("raw", "code", "field", "id_"), [
    (b"{bad json\n", -32700, "message", None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}\n', -32700,
     "message", None),
    (b"\xff\xfe\xfa\n", -32700, "message", None),
    (b"[" * 100_000 + b"\n", -32700, "message", None),
    (b"12\n", -32600, "message", None),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n', -32600, "message", None),
    (b'{"id": 1, "method": "ping"}\n', -32600, "jsonrpc", 1),
    (b'{"jsonrpc": "1.0", "id": "a", "method": "ping"}\n', -32600, "jsonrpc", "a"),
    (b'{"jsonrpc": "2.0", "id": 1}\n', -32600, "method", 1),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}\n', -32600, "method", 1),
    (b'{"jsonrpc": "2.0", "method": 5}\n', -32600, "method", None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}\n', -32601, "method", 1),
])
def test_malformed_messages(session: Session, raw: bytes, code: int, field: str,
                            id_: object) -> None:
    answer = handle(session, raw)
    assert answer is not None
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code
    assert answer["error"]["data"]["field"] == field
    assert answer["error"]["message"].startswith(field + ": ")
    assert answer["id"] == id_  # echoed when the message had a usable one, else null


@pytest.mark.parametrize(("id_", "kind"), [
    (None, "null"), (1.5, "number with a fraction"), (True, "boolean"), ({"a": 1}, "object"),
    ([1], "array"),
])
def test_ids_that_mcp_forbids(session: Session, id_: object, kind: str) -> None:
    answer = request(session, "ping", id_=id_)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert answer["error"]["message"] == f"id: must be a string or an integer, got {kind}"


@pytest.mark.parametrize("id_", ["abc", "", 0, -7, 2**53 + 1, "\u00e9\U0001f600"])
def test_string_and_integer_ids_are_echoed(session: Session, id_: str | int) -> None:
    assert request(session, "ping", id_=id_) == {"jsonrpc": "2.0", "id": id_, "result": {}}


def test_serve_answers_line_by_line_and_survives_everything(session: Session) -> None:
    add = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "memory_add", "arguments": {"messages": "I live in Oslo " + "x" * 200}}}
    huge = json.dumps(add).replace("x" * 200, "x" * 10_000_000).encode() + b"\n"
    lines = [b"\n", b"   \n", line({"jsonrpc": "2.0", "id": 1, "method": "ping"}), b"{oops\n",
             huge, line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             line({"jsonrpc": "2.0", "id": "s", "method": "nope"}),
             line({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "memory_stats"}}),
             b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}']  # the last line lacks its newline
    out = io.BytesIO()
    assert serve(session, io.BytesIO(b"".join(lines)), out) == 0
    written = out.getvalue()
    assert written.endswith(b"\n") and written.isascii()
    answers = [json.loads(text) for text in written.splitlines()]
    assert [(a["id"], "error" in a) for a in answers] == [
        (1, False), (None, True), (None, True), ("s", True), (2, False), (3, False)]
    too_long = answers[2]["error"]
    assert (too_long["code"], too_long["data"]["field"]) == (-32600, "message")
    assert too_long["message"] == "message: longer than 4,194,304 bytes; it was not read"
    assert answers[4]["result"]["structuredContent"]["episodes"] == 0  # the long add did nothing


def test_a_long_last_line_without_its_newline(session: Session) -> None:
    out = io.BytesIO()
    assert serve(session, io.BytesIO(line({"jsonrpc": "2.0", "id": 1, "method": "ping"})
                                     + b"y" * 50), out, limit=20) == 0
    assert [json.loads(a)["error"]["code"] for a in out.getvalue().splitlines()] == [
        -32600, -32600]  # the ping itself is over this tiny limit too


class _Gone(io.BytesIO):
    def write(self, data: Any) -> int:
        raise BrokenPipeError


def test_a_client_that_stops_reading_ends_the_loop(session: Session) -> None:
    stdin = io.BytesIO(line({"jsonrpc": "2.0", "id": 1, "method": "ping"}) * 2)
    assert serve(session, stdin, _Gone()) == 1


def test_a_lone_surrogate_in_an_id_is_escaped(session: Session) -> None:
    out = io.BytesIO()
    serve(session, io.BytesIO(line({"jsonrpc": "2.0", "id": "\ud800", "method": "ping"})), out)
    assert out.getvalue() == b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}\n'


def test_check_keeps_unknown_keys_where_a_schema_allows_them() -> None:
    assert check({"a": 1, "b": [1]}, {"type": "object"}, "meta") == {"a": 1, "b": [1]}
    with pytest.raises(ArgumentError) as caught:
        check({"x": "y"}, {"type": "object", "properties": {}, "additionalProperties": False}, "m")
    assert str(caught.value) == "m.x: unknown argument; there are none"


# --- main: the environment, the refusal, the streams -----------------------------------------

class _Std(io.TextIOWrapper):
    """A text stream over bytes, as sys.stdin and sys.stdout are."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")


def test_main_refuses_to_start_without_a_store(capsys: pytest.CaptureFixture[str]) -> None:
    for environ in ({}, {"MEMVARA_DB": "  ", "MEMVARA_USER": "alice"}):
        assert main([], environ) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("memvara-mcp: MEMVARA_DB is not set")
        assert CONFIG in err and json.loads(CONFIG)["mcpServers"]["memvara"]["command"] == \
            "memvara-mcp"


def test_the_readme_shows_the_same_configuration_and_every_tool() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", readme, re.S)]
    assert json.loads(CONFIG) in blocks
    for name in TOOLS:
        assert f"| `{name}` |" in readme


def test_main_help_and_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], {}) == 0
    out, err = capsys.readouterr()
    assert "MEMVARA_DB" in out and CONFIG in out and err == ""
    assert main(["--db", "x"], {"MEMVARA_DB": "x"}) == 2
    assert capsys.readouterr().err.startswith("memvara-mcp: no arguments are taken, got '--db x'")


def test_main_names_a_store_that_will_not_open(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], {"MEMVARA_DB": str(tmp_path)}) == 2
    err = capsys.readouterr().err
    assert err.startswith("memvara-mcp: ") and str(tmp_path) in err and err.count("\n") == 1


def test_main_serves_at_the_environments_scope(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    stdin = _Std(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "memory_add", "arguments": {"messages": "I live in Berlin"}}}))
    stdout = _Std()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "argv", ["memvara-mcp"])
    monkeypatch.setenv("MEMVARA_DB", str(path))
    monkeypatch.setenv("MEMVARA_USER", "alice")
    monkeypatch.setenv("MEMVARA_AGENT", "")  # empty is unset
    assert main() == 0
    assert sys.stdout is stdout  # put back after serving
    stdout.flush()
    answer = json.loads(stdout.buffer.getvalue())  # type: ignore[attr-defined]
    assert answer["result"]["structuredContent"]["added"][0]["scope"] == {
        "tenant": None, "user": "alice", "agent": None, "session": None}
    with Memvara(str(path), llm=NullLLM(), user="alice") as alice:
        assert [c.object for c in alice.get_all()] == ["Berlin"]
    with Memvara(str(path), llm=NullLLM(), user="bob") as bob:
        assert bob.get_all() == []


def test_python_dash_m(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["memvara.server", "--help"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("memvara.server", run_name="__main__")
    assert done.value.code == 0 and "MEMVARA_DB" in capsys.readouterr().out
    assert importlib.import_module("memvara.server.__main__").main is main  # imported: runs nothing


def test_the_guides_exchange_is_what_the_server_answers(session: Session) -> None:
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
    part = guide.split("Memory for an MCP client: `memvara-mcp`\n")[1].split("\n## ")[0]
    asked, shown = (json.loads(block) for block in re.findall(r"```json\n(.*?)```", part, re.S))
    assert handle(session, json.dumps(asked).encode()) == shown
    assert request(session, "tools/call", {"name": "memory_stats"})["result"][
        "structuredContent"]["episodes"] == 0


def test_the_server_imports_no_sdk_and_no_framework() -> None:
    code = ("import sys, memvara.server; print(sorted(m for m in ('mcp', 'pydantic', 'anyio',"
            " 'httpx') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"
