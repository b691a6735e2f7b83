"""What the framework adapters add to the search() they wrap.

Run::

    python bench/adapters.py [--claims 8000] [--queries 200] [--k 4]

Fills an in-memory store with ``--claims`` claims (a quarter of them about where each
of ``claims / 4`` users lives), then asks "where does user_i live?" for spread-out i
through each way in, taking turns on every question so the machine's drift falls on all
of them alike: ``search(k)`` itself, LangChain's ``MemvaraRetriever.invoke()``,
LlamaIndex's ``MemvaraRetriever.retrieve()`` and LangGraph's ``MemvaraStore.search()``.
A last row times the store where its own items are the memory (``claims / 5`` items of
four fields each), the use it is built for. The table gives each one's p50 and p90 in milliseconds and the p50 of its per-question
overhead (its time minus the same question's ``search()`` time). The target, from the
adapters' issue: each retriever within 1 ms of ``search()`` at 8,000 claims (p50). The
LangGraph row has no target: its search groups hits into items and reads each item it
returns, which is more than a retriever does. An adapter whose package is not installed
is left out, and says so.

``--writes`` times the other way in instead: an adapter's write into a store that
already holds ``--sizes`` items (default 100 and 10,000), one item or record per call,
``--repeats`` calls each (median, and the 10th to 90th percentile as the spread): the
OpenAI Agents session's ``add_items()`` (from one session object, and from a new object
per call as a server makes one per request) and the CrewAI storage's ``save()`` (run it
with ``.venv-crewai``'s Python, where CrewAI is installed). A write that reads the whole
transcript or every record shows as a p50 that grows with the store.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from memvara import Claim, Memvara, NullLLM

TARGET_MS = 1.0
_PREDICATES = (("lives_in", "city_{}"), ("works_at", "org_{}"), ("likes", "thing_{}"),
               ("speaks", "lang_{}"))


def fill(mem: Memvara, n: int) -> int:
    """Write ``n`` claims about ``n // 4`` subjects; the number of subjects."""
    subjects = max(1, n // 4)
    batch = [Claim(f"user_{s}", p, o.format(s % 97))
             for s in range(subjects) for p, o in _PREDICATES]
    for start in range(0, len(batch), 5_000):
        mem.remember_many(batch[start:start + 5_000])
    return subjects


def ways_in(mem: Memvara, k: int) -> dict[str, Callable[[str], object]]:
    """Each installed way to ask the memory a question, by its row label."""
    ways: dict[str, Callable[[str], object]] = {f"search(k={k})": lambda q: mem.search(q, k=k)}
    if importlib.util.find_spec("langchain_core") is not None:
        from memvara.integrations.langchain import MemvaraRetriever as LangChainRetriever

        langchain = LangChainRetriever(memory=mem, k=k)
        ways["LangChain MemvaraRetriever.invoke()"] = langchain.invoke
    else:
        print("LangChain: langchain-core is not installed, left out")
    if importlib.util.find_spec("llama_index") is not None:
        from memvara.integrations.llamaindex import MemvaraRetriever as LlamaIndexRetriever

        ways["LlamaIndex MemvaraRetriever.retrieve()"] = LlamaIndexRetriever(memory=mem, k=k).retrieve
    else:
        print("LlamaIndex: llama-index-core is not installed, left out")
    if importlib.util.find_spec("langgraph") is not None:
        from memvara.integrations.langgraph import MemvaraStore

        store = MemvaraStore(mem)
        store.put(("bench",), "item", {"text": "one item, so the store has a record"})
        ways["LangGraph MemvaraStore.search() (no target)"] = (
            lambda q: store.search(("bench",), query=q, limit=k))
    else:
        print("LangGraph: langgraph-checkpoint is not installed, left out")
    return ways


def take_turns(ways: list[tuple[str, Callable[[str], object]]], queries: int,
               subjects: int) -> dict[str, list[float]]:
    """Milliseconds per question for each way in; on every question all of them answer,
    each in every position equally often across the run."""
    times: dict[str, list[float]] = {label: [] for label, _ in ways}
    for i in range(queries):
        question = f"where does user_{(i * 7919) % subjects} live?"
        shift = i % len(ways)
        for label, ask in ways[shift:] + ways[:shift]:
            t0 = time.perf_counter()
            ask(question)
            times[label].append((time.perf_counter() - t0) * 1000.0)
    return times


def measure(n: int, queries: int, k: int) -> list[tuple[str, list[float], list[float]]]:
    """``(label, its times, the same questions' search() times)`` for each adapter.

    The retrievers take turns with ``search()``. The store's search makes far more
    garbage, so it is timed in a pass of its own, against a ``search()`` of that pass:
    its collections do not fall on the retrievers' times.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangChain's and LlamaIndex's import-time notices
        with Memvara(llm=NullLLM()) as mem:
            subjects = fill(mem, n)
            ways = ways_in(mem, k)
            for ask in ways.values():
                ask("warm up")  # indexes and embeds what was written; first-call imports
            base, *adapters = ways.items()
            rows: list[tuple[str, list[float], list[float]]] = []
            retrievers = [way for way in adapters if "LangGraph" not in way[0]]
            times = take_turns([base, *retrievers], queries, subjects)
            rows.append((base[0], times[base[0]], times[base[0]]))
            rows += [(label, times[label], times[base[0]]) for label, _ in retrievers]
            for way in adapters:
                if way not in retrievers:
                    alone = take_turns([base, way], queries, subjects)
                    rows.append((way[0], alone[way[0]], alone[base[0]]))
        if any("LangGraph" in label for label, _, _ in rows):
            rows.append(store_of_its_own(n, queries, k))
    return rows


def store_of_its_own(n: int, queries: int, k: int) -> tuple[str, list[float], list[float]]:
    """The LangGraph store where its items are the memory: ``n / 5`` users, each an item
    of four fields (four claims and the item's record), searched with the same
    questions; timed against ``search()`` on that memory."""
    from memvara.integrations.langgraph import MemvaraStore

    with Memvara(llm=NullLLM()) as mem:
        store = MemvaraStore(mem)
        users = max(1, n // 5)
        for u in range(users):
            store.put(("users",), f"user_{u}", {
                "name": f"user_{u}", "lives": f"lives in city_{u % 97}",
                "works": f"works at org_{u % 97}", "likes": f"likes thing_{u % 97}"})
        label = f"LangGraph MemvaraStore.search(), {users:,} items its own (no target)"
        ways: list[tuple[str, Callable[[str], object]]] = [
            ("search", lambda q: mem.search(q, k=k)),
            (label, lambda q: store.search(("users",), query=q, limit=k)),
        ]
        for _, ask in ways:
            ask("warm up")
        times = take_turns(ways, queries, users)
    return label, times[label], times["search"]


def time_writes(sizes: list[int], repeats: int) -> list[tuple[str, int, list[float]]]:
    """``(label, items already stored, milliseconds per call)`` for each installed
    adapter's write, at each size."""
    rows: list[tuple[str, int, list[float]]] = []
    if importlib.util.find_spec("agents") is not None:
        for n in sizes:
            rows += agents_appends(n, repeats)
    else:
        print("OpenAI Agents: openai-agents is not installed, left out")
    if importlib.util.find_spec("crewai") is not None:
        rows += [crewai_saves(n, repeats) for n in sizes]
    else:
        print("CrewAI: crewai is not installed (it lives in .venv-crewai), left out")
    return rows


def agents_appends(n: int, repeats: int) -> list[tuple[str, int, list[float]]]:
    """One user item per ``add_items()`` (``learn=False``: the transcript alone) into a
    session of ``n`` items, from one session object and then from a new one per call."""
    import asyncio

    from memvara.integrations.openai_agents import MemvaraSession

    def item(text: str) -> Any:  # the SDK's TResponseInputItem, a union of TypedDicts
        return {"role": "user", "content": text}

    async def run(mem: Memvara) -> list[tuple[str, int, list[float]]]:
        session = MemvaraSession("bench", mem, learn=False)
        for start in range(0, n, 500):
            await session.add_items([item(f"filler {i}") for i in range(start, min(n, start + 500))])
        same, fresh = [], []
        for r in range(repeats):
            t0 = time.perf_counter()
            await session.add_items([item(f"same object {r}")])
            same.append((time.perf_counter() - t0) * 1000.0)
            t0 = time.perf_counter()
            await MemvaraSession("bench", mem, learn=False).add_items([item(f"new object {r}")])
            fresh.append((time.perf_counter() - t0) * 1000.0)
        return [("OpenAI Agents MemvaraSession.add_items(), one item", n, same),
                ("OpenAI Agents add_items(), one item, a new session object each", n, fresh)]

    with Memvara(llm=NullLLM()) as mem:
        return asyncio.run(run(mem))


def crewai_saves(n: int, repeats: int) -> tuple[str, int, list[float]]:
    """One ``save()`` of one record (a 384-wide embedding) beside ``n`` stored ones."""
    import os

    import numpy as np

    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    from crewai.memory.types import MemoryRecord

    from memvara.integrations.crewai import MemvaraStorage

    vectors = np.random.default_rng(0).standard_normal((n + repeats, 384)).tolist()
    with Memvara(llm=NullLLM()) as mem:
        storage = MemvaraStorage(mem)
        for start in range(0, n, 500):
            storage.save([MemoryRecord(content=f"note {i}", embedding=vectors[i])
                          for i in range(start, min(n, start + 500))])
        times = []
        for r in range(repeats):
            one = MemoryRecord(content=f"new note {r}", embedding=vectors[n + r])
            t0 = time.perf_counter()
            storage.save([one])
            times.append((time.perf_counter() - t0) * 1000.0)
    return "CrewAI MemvaraStorage.save(), one record", n, times


def print_writes(sizes: list[int], repeats: int) -> None:
    rows = time_writes(sizes, repeats)
    print(f"\none write per call, {repeats} calls at each size\n")
    print("| adapter write | already stored | p50 (ms) | p10-p90 (ms) |")
    print("|---|---:|---:|---:|")
    for label, n, samples in rows:
        print(f"| `{label}` | {n:,} | {statistics.median(samples):.2f} |"
              f" {percentile(samples, 10):.2f}-{percentile(samples, 90):.2f} |")


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--claims", type=int, default=8_000, help="claims in the store")
    parser.add_argument("--queries", type=int, default=200, help="questions per way in")
    parser.add_argument("--k", type=int, default=4, help="results per question (the adapters' default)")
    parser.add_argument("--writes", action="store_true",
                        help="time the adapters' writes at --sizes instead of their searches")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000],
                        help="items already stored, for --writes")
    parser.add_argument("--repeats", type=int, default=30, help="writes timed per size, for --writes")
    args = parser.parse_args(argv)
    print(f"# {' '.join([sys.executable, *sys.argv])}\n")
    if args.writes:
        print_writes(args.sizes, args.repeats)
        return 0
    rows = measure(args.claims, args.queries, args.k)
    print(f"{args.claims:,} claims, {args.queries} questions each, k={args.k}\n")
    print("| way in | p50 (ms) | p90 (ms) | overhead p50 (ms) | target | met |")
    print("|---|---:|---:|---:|---:|---|")
    for label, samples, base in rows:
        p50, p90 = statistics.median(samples), percentile(samples, 90)
        if samples is base:
            print(f"| `{label}` | {p50:.2f} | {p90:.2f} | - | - | - |")
            continue
        overhead = statistics.median(t - b for t, b in zip(samples, base))
        ruled = "no target" not in label
        print(f"| `{label}` | {p50:.2f} | {p90:.2f} | {overhead:+.2f} |"
              f" {f'<= {TARGET_MS:g}' if ruled else '-'} |"
              f" {('yes' if overhead <= TARGET_MS else 'NO') if ruled else '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
