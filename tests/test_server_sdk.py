"""The MCP server end to end: started as a subprocess and driven by the official MCP
Python SDK's stdio client, as Claude Desktop or Cursor would drive it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (the dev extra) is the client under test")

from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "memvara-mcp"


def server(db: Path, **scope: str) -> StdioServerParameters:
    """``python -m memvara.server`` on ``db``: the SDK passes on no environment of ours."""
    env = {"MEMVARA_DB": str(db), **{f"MEMVARA_{k.upper()}": v for k, v in scope.items()}}
    return StdioServerParameters(command=sys.executable, args=["-m", "memvara.server"], env=env,
                                 cwd=str(ROOT))


def structured(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result
    assert result.content[0].type == "text" and result.content[0].text
    content: dict[str, Any] = result.structured_content
    assert isinstance(content, dict)
    return content


async def every_tool(db: Path) -> None:
    async with Client(server(db, user="alice", agent="helper")) as client:  # mode auto: probes, falls back
        assert client.server_info is not None and client.server_info.name == "memvara"
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tools is not None
        tools = (await client.list_tools()).tools
        names = [tool.name for tool in tools]
        assert names == ["memory_add", "memory_remember", "memory_recall", "memory_search",
                         "memory_history", "memory_why", "memory_forget", "memory_stats"]
        assert not [n for n in names for word in ("erase", "purge", "reset", "consolidate")
                    if word in n]

        added = structured(await client.call_tool("memory_add", {"messages": "I live in Berlin"}))
        berlin = added["added"][0]
        assert berlin["object"] == "Berlin"
        assert berlin["scope"] == {"tenant": None, "user": "alice", "agent": "helper",
                                   "session": None}
        lisbon = structured(await client.call_tool("memory_remember", {
            "subject": "alice", "predicate": "lives_in", "obj": "Lisbon",
            "valid_from": "2099-01-01T00:00:00+00:00"}))["added"][0]
        recall = structured(await client.call_tool("memory_recall", {"query": "where live"}))
        assert "Berlin" in recall["recall"]
        now = structured(await client.call_tool("memory_search", {"query": "alice live", "k": 5}))
        assert [r["claim"]["object"] for r in now["results"]] == ["Berlin"]
        later = structured(await client.call_tool("memory_search", {
            "query": "alice live", "valid_at": "2099-06-01T00:00:00+00:00"}))
        assert [r["claim"]["object"] for r in later["results"]] == ["Lisbon"]
        history = structured(await client.call_tool("memory_history", {
            "subject": "alice", "predicate": "lives_in", "known_at": "2000-01-01T00:00:00Z"}))
        assert history == {"claims": []}
        history = structured(await client.call_tool("memory_history", {
            "subject": "alice", "predicate": "lives_in", "as_of": "2099-06-01T00:00:00Z"}))
        assert [c["object"] for c in history["claims"]] == ["Lisbon"]  # in force then
        why = structured(await client.call_tool("memory_why", {"claim_id": berlin["id"]}))
        assert why["provenance"]["episodes"][0]["content"] == "I live in Berlin"
        forgot = structured(await client.call_tool("memory_forget", {"claim_id": lisbon["id"]}))
        assert forgot == {"retired": [lisbon["id"]]}
        stats = structured(await client.call_tool("memory_stats", {}))
        assert (stats["claims"], stats["invalidated"], stats["episodes"]) == (2, 1, 1)

        for arguments, field in (({"query": "x", "valid_at": "2099-06-01T00:00:00"}, "valid_at"),
                                 ({"query": "x", "user": "bob"}, "user"),
                                 ({"k": 3}, "query"), ({"query": "x", "k": "3"}, "k")):
            with pytest.raises(MCPError) as refused:
                await client.call_tool("memory_search", arguments)
            assert refused.value.error.code == -32602
            assert refused.value.error.message.startswith(f"{field}: ")
        with pytest.raises(MCPError) as refused:
            await client.call_tool("memory_erase", {})
        assert refused.value.error.code == -32602
        assert structured(await client.call_tool("memory_stats", {}))["claims"] == 2  # serving
        said = [{"role": "user", "name": "Bruno", "content": "I speak Italian"}]  # a shared session
        named = structured(await client.call_tool("memory_add", {"messages": said}))
        assert [(c["subject"], c["object"]) for c in named["added"]] == [("Bruno", "Italian")]


def test_every_tool_through_the_sdk(tmp_path: Path) -> None:
    asyncio.run(every_tool(tmp_path / "memory.db"))


async def two_servers(db: Path) -> None:
    one, two = server(db, user="alice"), server(db, user="alice")
    async with stdio_client(one) as (r1, w1), stdio_client(two) as (r2, w2):
        async with ClientSession(r1, w1) as first, ClientSession(r2, w2) as second:
            for session in (first, second):
                assert (await session.initialize()).server_info.name == "memvara"
                await session.send_ping()
            await first.call_tool("memory_add", {"messages": "I live in Berlin"})
            found = (await second.call_tool("memory_search", {"query": "live"})).structured_content
            assert [r["claim"]["object"] for r in found["results"]] == ["Berlin"]
            await second.call_tool("memory_remember", {"subject": "alice", "predicate": "works_at",
                                                       "obj": "Acme"})
            history = (await first.call_tool("memory_history", {
                "subject": "alice", "predicate": "works_at"})).structured_content
            assert [c["object"] for c in history["claims"]] == ["Acme"]
            counts = (await first.call_tool("memory_stats", {})).structured_content
            assert counts["live_claims"] == 2


def test_two_servers_on_one_store_see_each_others_writes(tmp_path: Path) -> None:
    asyncio.run(two_servers(tmp_path / "shared.db"))


async def scoped(db: Path) -> None:
    async with Client(server(db, user="alice"), mode="legacy") as alice:
        await alice.call_tool("memory_add", {"messages": "I live in Berlin"})
    async with Client(server(db, user="bob"), mode="legacy") as bob:
        found = structured(await bob.call_tool("memory_search", {"query": "live"}))
        assert found == {"results": []}
        assert structured(await bob.call_tool("memory_stats", {}))["claims"] == 0


def test_the_scope_is_the_servers_environment(tmp_path: Path) -> None:
    asyncio.run(scoped(tmp_path / "memory.db"))


def raw(db: Path | None, lines: list[bytes]) -> subprocess.CompletedProcess[bytes]:
    env = {"MEMVARA_DB": str(db)} if db is not None else {}
    return subprocess.run([sys.executable, "-m", "memvara.server"], input=b"".join(lines),
                          capture_output=True, timeout=120, cwd=ROOT, env=env)


def test_the_raw_wire_survives_every_bad_line(tmp_path: Path) -> None:
    ping = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n'
    lines = [ping % 1, b"{not json\n", b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
             b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n', b"x" * 10_000_000 + b"\n",
             b'{"jsonrpc":"2.0","id":"a","method":"nope"}\n',
             b'{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"memory_add",'
             b'"arguments":{"messages":"I live in Oslo","ts":"2026-01-01T00:00:00"}}}\n',
             ping % 2]
    done = raw(tmp_path / "m.db", lines)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(text) for text in done.stdout.splitlines()]
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (1, None), (None, -32700), (None, -32600), (None, -32600), (None, -32600),
        ("a", -32601), ("b", -32602), (2, None)]
    assert answers[6]["error"]["data"]["field"] == "ts"


def test_it_will_not_start_without_a_store() -> None:
    done = raw(None, [])
    assert done.returncode == 2 and done.stdout == b""
    assert b'"mcpServers"' in done.stderr and b"MEMVARA_DB is not set" in done.stderr


@pytest.mark.skipif(not SCRIPT.exists(), reason="the memvara-mcp console script is not installed")
def test_the_console_script() -> None:
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and '"mcpServers"' in done.stdout
