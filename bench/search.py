"""search() latency on questions that match many claims lexically.

Run::

    python bench/search.py [--sizes 8000,30000] [--queries 30] [--k 10]
        [--store sqlite,postgres --dsn postgresql://...] [--keep] [--schema-prefix P]

For each size N and each store (``--store``: ``sqlite``, the default, an in-memory
``SQLiteStore``; ``postgres``, a ``PostgresStore`` in a fresh schema of the server
``--dsn`` or ``$MEMVARA_TEST_PG_DSN`` names, made anew each run; with ``--keep``, a
schema ``<prefix>_<N>`` already holding N claims is searched as it is, without the
minutes a refill of 1,000,000 takes, and the fill column says ``kept``) it fills a
store with N/4 subjects ``user_0..``, four claims
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
import math
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


def open_memory(store: str, dsn: str | None, n: int, *, keep: bool = False,
                prefix: str = "bench_search") -> tuple[Memvara, bool]:
    """A memory on ``store``: in memory, or in the schema ``<prefix>_<n>``, new unless
    ``keep`` and it holds ``n`` claims already; whether it needs filling."""
    if store == "sqlite":
        return Memvara(llm=NullLLM()), True
    if not dsn:
        raise SystemExit("--store postgres needs --dsn or $MEMVARA_TEST_PG_DSN")
    import psycopg

    from memvara.store.postgres import PostgresStore

    schema = f"{prefix}_{n}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        held = conn.execute("SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename ="
                            " 'claims'", [schema]).fetchone() is not None and conn.execute(
            f"SELECT count(*) = %s FROM {schema}.claims", [n]).fetchone() == (True,)
        if not (keep and held):
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()), not (keep and held)


def measure(n: int, queries: int, k: int, store: str = "sqlite",
            dsn: str | None = None, *, keep: bool = False,
            prefix: str = "bench_search") -> dict[str, float]:
    memory, empty = open_memory(store, dsn, n, keep=keep, prefix=prefix)
    with memory as mem:
        started = time.perf_counter()
        subjects = fill(mem, n) if empty else max(1, n // 4)
        fill_s = time.perf_counter() - started if empty else math.nan
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
    parser.add_argument("--keep", action="store_true",
                        help="reuse a PostgreSQL schema already holding N claims (no refill)")
    parser.add_argument("--schema-prefix", default="bench_search",
                        help="PostgreSQL schemas are <prefix>_<N>")
    args = parser.parse_args(argv)
    print(f"# {' '.join([sys.executable, *sys.argv])}\n")
    print("| store | N claims | search p50 (ms) | spread (ms) | cpu p50 (ms) | target p50 |"
          " top-1 is the asked slot | fill (s) |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        for store in args.store.split(","):
            row = measure(n, args.queries, args.k, store, args.dsn, keep=args.keep,
                          prefix=args.schema_prefix)
            fill_s = "kept" if math.isnan(row["fill_s"]) else f"{row['fill_s']:.1f}"
            target = TARGETS_MS.get(n)
            print(f"| {store} | {n:,} | {row['p50']:.1f} | {row['min']:.1f} - {row['max']:.1f} |"
                  f" {row['cpu']:.1f} | {'-' if target is None else f'{target:g}'} |"
                  f" {row['top1']:.0%} | {fill_s} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
