"""What a tool call through the MCP server costs beyond the library call it makes.

Run::

    python bench/mcp_roundtrip.py [--size 8000] [--calls 300] [--rounds 3] [--json PATH]

(Not ``bench/mcp.py``: run from this folder, or type-checked with it, a file of that name
would stand in for the SDK's own ``mcp`` package.)

It fills a file store with ``--size`` claims (``remember_many``, ``HashingEmbedder``), then
times two calls both ways, at one user's scope:

* ``search()`` in this process, against ``memory_search`` through ``memvara-mcp``;
* ``add()`` of one chat turn (no model: the rules read it), against ``memory_add``.

The MCP side is the real thing: ``python -m memvara.server`` in a subprocess, driven by
the official MCP SDK's stdio client (``mcp.Client``), so a round trip includes the SDK's
request building and checking, both JSON encodings, the pipes, the server's dispatch and
the wait for the scheduler to run the other process (on a busy machine, the load
average printed before and after the table matters). Library and tool calls alternate,
so a drift in the machine's speed lands on both; p50 and p99 are over all the samples.
The target: a tool call's p50 within 5 ms of the library call's.

Then, with the client and its server closed, the server's own share: the same requests
answered in this process by ``memvara.server.handle`` and encoded as JSON (no pipes, no
client), each beside a library call of the same query.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version

from _report import environment, save_rows, tally

from mcp import Client, StdioServerParameters

from memvara import Claim, Memvara, NullLLM
from memvara.server import Session, handle

USER = "alice"
TARGET_MS = 5.0
CITIES = tuple(f"City_{i}" for i in range(60))
ORGS = tuple(f"Org_{i}" for i in range(80))
PREDICATES = (("lives_in", CITIES), ("works_at", ORGS), ("likes", tuple(f"thing_{i}" for i in
                                                                          range(300))))


@dataclass
class Row:
    """One line of the table: a call's latency samples, in milliseconds."""

    call: str
    path: str
    n: int
    samples: list[float]
    target: str = ""
    passed: bool | None = None
    p50: float = 0.0
    p99: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered = sorted(self.samples)
        self.p50 = statistics.median(ordered)
        self.p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def fill(path: str, size: int) -> int:
    """``size`` claims about ``size // 10`` people, in batches of 5,000."""
    claims = [Claim(f"person_{i // 10}", predicate, values[(i * 7919) % len(values)])
              for i, (predicate, values) in ((i, PREDICATES[i % 3]) for i in range(size))]
    with Memvara(path, llm=NullLLM(), user=USER) as mem:
        for start in range(0, len(claims), 5_000):
            mem.remember_many(claims[start:start + 5_000])
        return mem.count(states=["live", "ended", "retired"])


def query(i: int) -> str:
    return f"where does person_{(i * 37) % 800} live"


def turn(tag: str, i: int) -> str:
    """A turn no earlier call said (the same text within ten minutes is skipped as a copy),
    from which the rules read one ``lives_in`` claim."""
    return f"I live in {tag.title()}town{i}"


def request(i: int, tool: str, arguments: dict[str, object]) -> bytes:
    """One ``tools/call`` line, as the client writes it."""
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode() + b"\n"


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000.0


async def timed_async(fn: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await fn()
    return (time.perf_counter() - started) * 1000.0


async def measure(path: str, calls: int, rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {
        f"{call} {side}": [] for call in ("search", "add")
        for side in ("lib", "mcp", "lib, beside dispatch", "dispatch")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memvara.server"],
                                   env={"MEMVARA_DB": path, "MEMVARA_USER": USER})
    with Memvara(path, llm=NullLLM(), user=USER) as mem:
        async with Client(params, mode="legacy") as client:
            for _ in range(5):  # warm both sides: imports, caches, the first search's mirror
                mem.search(query(0), k=10)
                await client.call_tool("memory_search", {"query": query(0), "k": 10})
            for r in range(rounds):
                for i in range(r * calls, (r + 1) * calls):  # in turn, so drift hits both
                    samples["search lib"].append(timed(lambda: mem.search(query(i), k=10)))
                    samples["search mcp"].append(await timed_async(lambda: client.call_tool(
                        "memory_search", {"query": query(i), "k": 10})))
                for i in range(r * calls, (r + 1) * calls):
                    samples["add lib"].append(timed(lambda: mem.add(turn("lib", i))))
                    samples["add mcp"].append(await timed_async(lambda: client.call_tool(
                        "memory_add", {"messages": turn("mcp", i)})))
        # The server's own share, with the client and its server gone: each dispatch
        # beside a library call of the same query, after the same writes.
        session = Session(mem)
        for i in range(rounds * calls):
            line = request(i, "memory_search", {"query": query(i), "k": 10})
            samples["search lib, beside dispatch"].append(timed(lambda: mem.search(query(i), k=10)))
            samples["search dispatch"].append(timed(lambda: json.dumps(handle(session, line))))
        for i in range(rounds * calls):
            line = request(i, "memory_add", {"messages": turn("srv", i)})
            samples["add lib, beside dispatch"].append(timed(lambda: mem.add(turn("own", i))))
            samples["add dispatch"].append(timed(lambda: json.dumps(handle(session, line))))
    return samples


def rows_of(samples: dict[str, list[float]], n: int) -> list[Row]:
    rows: list[Row] = []
    for call, tool in (("search", "memory_search"), ("add", "memory_add")):
        lib = Row(f"{call}()", "library, in process", n, samples[f"{call} lib"])
        dispatch = Row(tool, "server's dispatch, in process", n, samples[f"{call} dispatch"])
        beside = Row(f"{call}()", "library", n, samples[f"{call} lib, beside dispatch"])
        dispatch.extra = {"p50 over library": dispatch.p50 - beside.p50}
        mcp = Row(tool, "MCP: SDK stdio client -> memvara-mcp", n, samples[f"{call} mcp"])
        gap = mcp.p50 - lib.p50
        mcp.target = f"p50 <= library p50 + {TARGET_MS:g} ms"
        mcp.passed = gap <= TARGET_MS
        mcp.extra = {"p50 over library": gap, "p99 over library": mcp.p99 - lib.p99}
        rows += [lib, mcp, dispatch]
    return rows


def table(rows: Sequence[Row]) -> str:
    lines = ["| call | path | N | p50 ms | p99 ms | p50 over library | samples | target | result |",
             "|" + "---|" * 9]
    for r in rows:
        over = f"+{r.extra['p50 over library']:.2f} ms" if r.extra else "-"
        result = "info" if r.passed is None else ("PASS" if r.passed else "FAIL")
        lines.append(f"| {r.call} | {r.path} | {r.n:,} | {r.p50:.2f} | {r.p99:.2f} | {over}"
                     f" | {len(r.samples)} | {r.target or '-'} | {result} |")
    return "\n".join(lines)


def _load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--size", type=int, default=8_000, help="claims in the store (default 8000)")
    p.add_argument("--calls", type=int, default=300, help="calls per side per round (default 300)")
    p.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    if args.size < 10 or args.calls < 1 or args.rounds < 1:
        p.error("--size needs at least 10, --calls and --rounds at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    env = {**environment(), "mcp": version("mcp"), "load average before": _load()}
    print("# memvara MCP round trip\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    with tempfile.TemporaryDirectory(prefix="memvara-mcp-bench-") as folder:
        path = os.path.join(folder, "memory.db")
        n = fill(path, args.size)
        print(f"- store: file, {n:,} claims at user={USER!r} (lives_in, works_at, likes about"
              f" {args.size // 10:,} people), HashingEmbedder, no model")
        print(f"- {args.rounds} rounds x {args.calls} calls a side; search k=10; add: one new"
              " turn a call ('I live in Libtown3'), whose lives_in claim the rules read and"
              " which closes the previous one\n", flush=True)
        rows = rows_of(asyncio.run(measure(path, args.calls, args.rounds)), n)
    print(table(rows))
    print(f"\n{tally(rows)} Load average after: {_load()}.")
    if args.json:
        save_rows(args.json, env, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
