"""search() latency on questions that match many claims lexically.

Run::

    python bench/search.py [--sizes 8000,30000] [--queries 30] [--k 10]
        [--store sqlite,postgres --dsn postgresql://...]

For each size N and each store (``--store``: ``sqlite``, the default, an in-memory
``SQLiteStore``; ``postgres``, a ``PostgresStore`` in a fresh schema of the server
``--dsn`` or ``$MEMVARA_TEST_PG_DSN`` names, made anew each run) it fills a store with N/4 subjects ``user_0..``, four claims
each (``lives_in``, ``works_at``, ``likes``, ``speaks``), and asks "where does user_i
live?" for spread-out i: every claim shares the word "user" and a quarter say "lives",
so a search that scored every match would score N rows. The table shows the p50 and
spread of ``search(k)`` in milliseconds, the p50 of the CPU time the searching thread
used (on a machine shared with other work, wall time also counts waiting for a core),
and how often the asked user's ``lives_in`` claim is the top result (the hashing
embedder is lexical, not semantic).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from memvara import Claim, Memvara, NullLLM

TARGETS_MS = {8_000: 2.0, 100_000: 10.0, 1_000_000: 60.0}
_PREDICATES = (("lives_in", "city_{}"), ("works_at", "org_{}"), ("likes", "thing_{}"),
               ("speaks", "lang_{}"))


def fill(mem: Memvara, n: int) -> int:
    """Write ``n`` claims about ``n // 4`` subjects; the number of subjects."""
    subjects = max(1, n // 4)
    batch: list[Claim] = []
    for s in range(subjects):
        batch.extend(Claim(f"user_{s}", p, o.format(s % 97)) for p, o in _PREDICATES)
        if len(batch) >= 5_000:
            mem.remember_many(batch)
            batch = []
    if batch:
        mem.remember_many(batch)
    return subjects


def open_memory(store: str, dsn: str | None, n: int) -> Memvara:
    """A fresh memory on ``store``: in memory, or in a new schema ``bench_search_<n>``."""
    if store == "sqlite":
        return Memvara(llm=NullLLM())
    if not dsn:
        raise SystemExit("--store postgres needs --dsn or $MEMVARA_TEST_PG_DSN")
    import psycopg

    from memvara.store.postgres import PostgresStore

    schema = f"bench_search_{n}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM())


def measure(n: int, queries: int, k: int, store: str = "sqlite",
            dsn: str | None = None) -> dict[str, float]:
    with open_memory(store, dsn, n) as mem:
        started = time.perf_counter()
        subjects = fill(mem, n)
        fill_s = time.perf_counter() - started
        mem.search("warm up")  # indexes and embeds what was written
        times: list[float] = []
        cpu: list[float] = []
        top_hits = 0
        for i in range(queries):
            who = (i * 7919) % subjects
            t0, c0 = time.perf_counter(), time.thread_time()
            found = mem.search(f"where does user_{who} live?", k=k)
            cpu.append((time.thread_time() - c0) * 1000.0)
            times.append((time.perf_counter() - t0) * 1000.0)
            top_hits += bool(found) and found[0].text == f"user_{who} lives in city_{who % 97}"
    return {"n": n, "p50": statistics.median(times), "min": min(times), "max": max(times),
            "cpu": statistics.median(cpu), "top1": top_hits / queries, "fill_s": fill_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8000,30000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=30, help="questions per size")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--store", default="sqlite", help="sqlite, postgres, or both")
    parser.add_argument("--dsn", default=os.environ.get("MEMVARA_TEST_PG_DSN"),
                        help="the PostgreSQL server (default $MEMVARA_TEST_PG_DSN)")
    args = parser.parse_args(argv)
    print(f"# {' '.join([sys.executable, *sys.argv])}\n")
    print("| store | N claims | search p50 (ms) | spread (ms) | cpu p50 (ms) | target p50 |"
          " top-1 is the asked slot | fill (s) |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        for store in args.store.split(","):
            row = measure(n, args.queries, args.k, store, args.dsn)
            target = TARGETS_MS.get(n)
            print(f"| {store} | {n:,} | {row['p50']:.1f} | {row['min']:.1f} - {row['max']:.1f} |"
                  f" {row['cpu']:.1f} | {'-' if target is None else f'{target:g}'} |"
                  f" {row['top1']:.0%} | {row['fill_s']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
