"""Where one ``remember()`` on a ``PostgresStore`` spends its time: statements, round
trips, the commit.

Run::

    python bench/pg_writes.py [--size 100000] [--calls 300] [--dsn postgresql://...]

Fills a fresh schema ``bench_pg_writes_<size>`` of the server ``--dsn`` or
``$MEMVARA_TEST_PG_DSN`` names with ``bench/perf.py``'s data (root layout), then makes
``--calls`` single ``remember()`` calls on fresh slots and as many revising a single-valued
slot, timing every statement the store sends (psycopg's ``Cursor.execute`` and
``executemany`` are wrapped for the measured calls only; each is one round trip to the
server, except the commit's, which the store sends in one pipeline: they return at once,
and the wait for them shows in "the rest"). Printed per kind of write: statements per
call, the median call's wall time and the part of it spent waiting on statements, and a
table of the statements by time; then the round trips of 20 more calls, untimed, counted
from libpq's trace of the writer connection (each time the client, having sent, reads
the server's answer: a pipeline's statements share one). Two
floors come first, on a plain connection: a ``SELECT 1`` round trip, and a one-row
``INSERT`` in its own transaction (a durable commit: ``synchronous_commit`` as the
server is set). The schema is dropped afterwards.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import _pgstore
import perf

from memvara import DegradedExtractionWarning, Memvara

warnings.simplefilter("ignore", DegradedExtractionWarning)  # no model here, on purpose


class StatementTimer:
    """Times every statement psycopg sends while it is installed (a class-level wrap:
    the store opens its connections itself)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, float]] = []

    def __enter__(self) -> StatementTimer:
        import psycopg

        self._cursor = psycopg.Cursor
        self._execute, self._many = psycopg.Cursor.execute, psycopg.Cursor.executemany
        execute, many, log = self._execute, self._many, self.log

        def timed_execute(cur: Any, query: Any, params: Any = None, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return execute(cur, query, params, **kw)
            finally:
                log.append((str(query)[:80], time.perf_counter() - t0))

        def timed_many(cur: Any, query: Any, params_seq: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return many(cur, query, params_seq, **kw)
            finally:
                log.append(("(executemany) " + str(query)[:66], time.perf_counter() - t0))

        setattr(psycopg.Cursor, "execute", timed_execute)
        setattr(psycopg.Cursor, "executemany", timed_many)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self._cursor, "execute", self._execute)
        setattr(self._cursor, "executemany", self._many)


def floors(dsn: str, rounds: int = 300) -> str:
    """The server's settings that shape a commit, and the two floors (ms, p50). The
    commit's table is an ordinary one (a temporary table writes no WAL, so its commit
    waits for no flush), in a schema of its own, dropped after."""
    import psycopg

    schema = "bench_pg_writes_floor"
    _pgstore.drop_schema(dsn, schema)
    with psycopg.connect(dsn, autocommit=True) as conn:
        shown = {k: str(conn.execute(f"SHOW {k}").fetchone()[0])  # type: ignore[index]
                 for k in ("synchronous_commit", "fsync", "wal_sync_method", "commit_delay")}
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.floor (x int)")
        trip, commit = [], []
        for i in range(rounds):
            t0 = time.perf_counter()
            conn.execute("SELECT 1")
            trip.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with conn.transaction():
                conn.execute(f"INSERT INTO {schema}.floor VALUES (%s)", [i])
            commit.append(time.perf_counter() - t0)
    _pgstore.drop_schema(dsn, schema)
    settings = ", ".join(f"{k}={v}" for k, v in shown.items())
    return (f"- server: {settings}\n- floor: `SELECT 1` round trip p50"
            f" {statistics.median(trip) * 1000:.3f} ms; `BEGIN`, one-row `INSERT`, `COMMIT`"
            f" p50 {statistics.median(commit) * 1000:.3f} ms")


def round_trips(conn: Any, call: Callable[[int], object], first: int, calls: int = 20) -> float:
    """The median round trips of ``calls`` calls on ``conn``: the turns from messages
    sent (``F``) to messages read (``B``) in libpq's trace of it."""
    import tempfile

    from psycopg import pq

    counts = []
    with tempfile.TemporaryFile("w+") as trace:
        for i in range(first, first + calls):
            trace.seek(0)
            trace.truncate()
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
            try:
                call(i)
            finally:
                conn.pgconn.untrace()
            trace.seek(0)
            sides = [line[:1] for line in trace.read().splitlines() if line[:1] in ("F", "B")]
            counts.append(sum(1 for a, b in zip(sides, sides[1:]) if (a, b) == ("F", "B")))
    return statistics.median(counts)


def profile(label: str, call: Callable[[int], object], calls: int, conn: Any = None) -> str:
    """Statements per call, wall time and time in statements, and the statements by time."""
    per_call: list[tuple[int, float, float]] = []
    spent: dict[str, float] = collections.defaultdict(float)
    seen: collections.Counter[str] = collections.Counter()
    with StatementTimer() as timer:
        for i in range(calls):
            timer.log.clear()
            t0 = time.perf_counter()
            call(i)
            wall = time.perf_counter() - t0
            per_call.append((len(timer.log), sum(d for _, d in timer.log), wall))
            for query, took in timer.log:
                spent[query] += took
                seen[query] += 1
    wall_ms = statistics.median(w for _, _, w in per_call) * 1000
    sql_ms = statistics.median(s for _, s, _ in per_call) * 1000
    trips = "" if conn is None else f", {round_trips(conn, call, calls):g} round trips"
    lines = [f"\n### {label}: median of {calls} calls\n",
             f"{statistics.median(c for c, _, _ in per_call):g} statements{trips} a call; wall"
             f" {wall_ms:.2f} ms, of which waiting on statements {sql_ms:.2f} ms"
             f" ({sql_ms / wall_ms:.0%}), the rest Python {wall_ms - sql_ms:.2f} ms\n",
             "| statement (first 80 characters) | per call | ms per call | share |",
             "|---|---:|---:|---:|"]
    total = sum(spent.values())
    for query, took in sorted(spent.items(), key=lambda kv: -kv[1]):
        lines.append(f"| `{query}` | {seen[query] / calls:.2f} | {took / calls * 1000:.3f} |"
                     f" {took / total:.0%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000, help="claims in the store")
    parser.add_argument("--calls", type=int, default=300, help="remember() calls per kind")
    parser.add_argument("--dsn", default=_pgstore.default_dsn(),
                        help=f"the PostgreSQL server (default ${_pgstore.DSN_VARIABLE})")
    args = parser.parse_args(argv)
    if not args.dsn:
        parser.error(f"needs --dsn or ${_pgstore.DSN_VARIABLE}")
    if args.size < 10 or args.calls < 1:
        parser.error("--size must be at least 10 and --calls at least 1")
    print(f"# {' '.join([sys.executable, *sys.argv])}\n")
    print(f"- {_pgstore.server_versions(args.dsn)}")
    print(floors(args.dsn), flush=True)
    schema = f"bench_pg_writes_{args.size}"
    _pgstore.drop_schema(args.dsn, schema)
    try:
        with Memvara(store=_pgstore.open_store(args.dsn, schema),
                     clock=perf.CounterClock()) as mem:
            t0 = time.perf_counter()
            for batch in perf._rounds(args.size, "root"):
                mem.remember_many(batch)
            print(f"- filled {args.size:,} claims in {time.perf_counter() - t0:.1f} s")
            subjects = max(1, args.size // 10)
            for i in range(20):  # warm the connections and the server's plan cache
                mem.remember(f"warm_{i}", "lives_in", perf.CITIES[i % len(perf.CITIES)])
            writer = mem.store._writer  # type: ignore[attr-defined]  # its one write connection
            print(profile(
                "`remember()` on a fresh slot",
                lambda i: mem.remember(f"contact_{i}", "lives_in",
                                       perf.CITIES[i % len(perf.CITIES)]), args.calls, writer))
            print(profile(
                "`remember()` revising a single-valued slot (closes the current value)",
                lambda i: mem.remember(f"user_{(i * 7919 + 17) % subjects}", "lives_in",
                                       f"moved_{i}",
                                       valid_from=perf.REVISE_EPOCH + timedelta(seconds=i)),
                args.calls, writer))
    finally:
        _pgstore.drop_schema(args.dsn, schema)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
