"""Write throughput with several writer processes on one store: SQLite and PostgreSQL.

Run::

    python bench/writers.py [--writers 1,2,4] [--writes 300] [--repeats 3]
                            [--store sqlite,postgres] [--dsn postgresql://...]

For each store and each number of writer processes, every process opens the store
(``sqlite``: one file in a temp dir, ``Memvara(path)``; ``postgres``: one fresh schema of
the server ``--dsn`` or ``$MEMVARA_TEST_PG_DSN`` names, ``PostgresStore``) and makes
``--writes`` single ``remember()`` calls, each its own transaction: its own subjects'
``likes`` (a many-valued slot, nine in ten) and a ``lives_in`` of one subject every
writer shares (a single-valued slot the writers contend for, one in ten). The clock is the
system's. Reported: acknowledged writes a second over all processes, from the moment
all have opened the store to the last one's end (median over repeats, with the spread),
and whether the shared slot ended with exactly one live value.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from typing import Any

from memvara import Memvara, NullLLM


def open_memory(store: str, where: str, dsn: str | None) -> Memvara:
    if store == "sqlite":
        return Memvara(where, llm=NullLLM())
    from memvara.store.postgres import PostgresStore

    assert dsn is not None
    return Memvara(store=PostgresStore(dsn, schema=where), llm=NullLLM())


def writer(store: str, where: str, dsn: str | None, worker: int, writes: int,
           ready: Any, go: Any, done: Any, tag: str = "") -> None:
    """One writer process: opens, waits for the others, writes, reports when it ended.

    ``tag`` makes the values new on a store an earlier race already wrote to."""
    with open_memory(store, where, dsn) as mem:
        ready.put(worker)
        go.wait()
        for i in range(writes):
            if i % 10 == 9:
                mem.remember("Shared", "lives_in", f"Town {tag}{worker} {i}")
            else:
                mem.remember(f"Writer {tag}{worker} {i % 50}", "likes", f"tea number {i}")
        done.put(time.perf_counter())


def race(store: str, where: str, dsn: str | None, writers: int, writes: int,
         tag: str = "") -> float:
    """Acknowledged writes a second of ``writers`` processes racing on the existing store
    ``where`` (a SQLite path or a PostgreSQL schema), from the moment all have opened it
    to the last one's end. Each writes ``writes`` new claims (see ``writer``)."""
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    processes = [context.Process(target=writer,
                                 args=(store, where, dsn, w, writes, ready, go, done, tag))
                 for w in range(writers)]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=300)
    started = time.perf_counter()
    go.set()
    ended = max(done.get(timeout=900) for _ in processes)
    for process in processes:
        process.join(timeout=60)
        if process.exitcode != 0:
            raise SystemExit(f"a writer failed (exit status {process.exitcode})")
    return writers * writes / (float(ended) - started)


def shared_slot_has_one_value(mem: Memvara) -> bool:
    """Whether the slot every writer contends for ends with exactly one live value."""
    return len(mem.get_all(subject="Shared", predicate="lives_in")) == 1


def run(store: str, writers: int, writes: int, dsn: str | None, folder: str, tag: str) -> tuple[float, bool]:
    """Writes a second with ``writers`` processes on a fresh store, and whether the shared
    slot holds one live value afterwards."""
    if store == "sqlite":
        where = os.path.join(folder, f"{tag}.db")
    else:
        import psycopg

        where = f"bench_writers_{tag}"
        with psycopg.connect(dsn, autocommit=True) as conn:  # type: ignore[arg-type]
            conn.execute(f"DROP SCHEMA IF EXISTS {where} CASCADE")
    open_memory(store, where, dsn).close()  # made once, before the race
    rate = race(store, where, dsn, writers, writes)
    with open_memory(store, where, dsn) as mem:
        one = shared_slot_has_one_value(mem)
        assert mem.count(states=("live", "ended", "retired")) == writers * writes
    if store == "postgres":  # the temp dir takes the SQLite files; the schema goes here
        with psycopg.connect(dsn, autocommit=True) as conn:  # type: ignore[arg-type]
            conn.execute(f"DROP SCHEMA {where} CASCADE")
    return rate, one


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writers", default="1,2,4", help="writer processes, comma-separated")
    parser.add_argument("--writes", type=int, default=300, help="remember() calls per process")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--store", default="sqlite,postgres", help="sqlite, postgres, or both")
    parser.add_argument("--dsn", default=os.environ.get("MEMVARA_TEST_PG_DSN"),
                        help="the PostgreSQL server (default $MEMVARA_TEST_PG_DSN)")
    args = parser.parse_args(argv)
    if "postgres" in args.store and not args.dsn:
        raise SystemExit("--store postgres needs --dsn or $MEMVARA_TEST_PG_DSN")
    print(f"# {' '.join([sys.executable, *sys.argv])}\n")
    print("| store | writer processes | writes/s (median) | spread | one live value in the shared slot |")
    print("|---|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for store in args.store.split(","):
            for writers in (int(w) for w in args.writers.split(",")):
                rates: list[float] = []
                ones: list[bool] = []
                for repeat in range(args.repeats):
                    rate, one = run(store, writers, args.writes, args.dsn, folder,
                                    f"{store}_{writers}_{repeat}")
                    rates.append(rate)
                    ones.append(one)
                print(f"| {store} | {writers} | {statistics.median(rates):,.0f} |"
                      f" {min(rates):,.0f} - {max(rates):,.0f} | {'yes' if all(ones) else 'NO'} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
