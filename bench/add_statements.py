"""What one ``add()`` of a chat turn asks SQLite, and what a write's slot read costs as
the slot's history grows.

Run::

    python bench/add_statements.py [--claims 8000] [--warm 20] [--history 0,10,100,500]
                                   [--reads 2000] [--repeats 3]

Two tables, on file stores (``SQLiteStore(path)``, write log on) filled like
``bench/perf.py``'s root layout:

* statements: one ``add()`` of each kind of turn in ``perf.py``'s chat mix (after
  ``--warm`` turns of the mix), traced with the store's ``tracer``. SQLite's trace
  reports a statement again each time it enters a trigger, so a run of identical lines
  is one statement, and the repeats are counted apart as trigger entries. ``BEGIN``
  and ``COMMIT`` count as statements. The mix's mean weighs the kinds as the mix does.
* slot read: ``store.slot_claims(scope, [slot], ending_after=t)`` (the query a single
  write reads its slot with, less the row placement) on a slot that was revised
  ``--history`` times, so it holds one live claim and that many ended ones; microseconds
  a read, the median of ``--repeats`` rounds of ``--reads`` reads.

Which library it measures is the one Python imports: put another checkout first on
``PYTHONPATH`` to measure that one with this script.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import perf
from _report import environment

from memvara import Claim, Memvara, Scope, SQLiteStore

KINDS = ("fact (works_at)", "question", "filler", "fact (lives_in)", "remark")
"""``perf._chat_turn``'s five kinds, by ``i % 5``."""


def _statements(lines: Sequence[str]) -> tuple[int, int]:
    """(statements, trigger entries) in a trace: a run of one line is one statement."""
    statements = sum(1 for i, line in enumerate(lines) if i == 0 or line != lines[i - 1])
    return statements, len(lines) - statements


def count_statements(path: str, claims: int, warm: int) -> list[tuple[str, int, int]]:
    """Per kind of turn: (kind, statements, trigger entries) of one ``add()``."""
    built = perf._build("sqlite", path, claims, "root", 60.0)
    built.mem.close()
    traced: list[str] = []
    store = SQLiteStore(path, tracer=lambda sql, params: traced.append(sql))
    out: list[tuple[str, int, int]] = []
    with Memvara(store=store, clock=built.clock) as mem:
        for i in range(warm):
            mem.add(perf._chat_turn("warm", i))
        # the same kinds once more, after the warm turns: "ok thanks" is a copy by now
        for i, kind in enumerate(KINDS):
            traced.clear()
            mem.add(perf._chat_turn("traced", i))
            out.append((kind, *_statements(traced)))
    return out


def time_slot_reads(path: str, history: int, reads: int, repeats: int) -> float:
    """Microseconds per ``slot_claims`` read of a slot revised ``history`` times."""
    start = datetime(2020, 1, 1, tzinfo=timezone.utc)
    store = SQLiteStore(path)
    with Memvara(store=store, clock=perf.CounterClock()) as mem:
        mem.remember_many([Claim(f"user_{i}", "lives_in", f"City_{i % 60}")
                           for i in range(200)])
        for i in range(history + 1):
            mem.remember("maya", "lives_in", f"City_{i % 60}_{i}",
                         valid_from=start + timedelta(days=i))
        slot = ("maya", "lives_in")
        after = int((start + timedelta(days=history)).timestamp() * 1_000_000)
        found = store.slot_claims(Scope(), [slot], ending_after=after)[slot]
        assert len(found) == 1, found  # noqa: S101 - the live claim alone
        rounds = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(reads):
                store.slot_claims(Scope(), [slot], ending_after=after)
            rounds.append((time.perf_counter() - t0) / reads * 1e6)
    return statistics.median(rounds)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--claims", type=int, default=8000, help="claims in the traced store")
    p.add_argument("--warm", type=int, default=20, help="turns of the mix added first")
    p.add_argument("--history", default="0,10,100,500", help="ended claims in the read slot")
    p.add_argument("--reads", type=int, default=2000, help="slot reads per round")
    p.add_argument("--repeats", type=int, default=3, help="rounds per history")
    args = p.parse_args(argv)
    histories = [int(h) for h in args.history.split(",") if h.strip()]
    print("# add() statements and slot reads\n")
    for key, value in environment().items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    with tempfile.TemporaryDirectory(prefix="memvara-addstmt-") as base:
        rows = count_statements(os.path.join(base, "traced.db"), args.claims, args.warm)
        print(f"\n## one add() of each kind, {args.claims:,} claims, after {args.warm} turns\n")
        print("| turn | statements | trigger entries |\n|---|---:|---:|")
        for kind, statements, triggers in rows:
            print(f"| {kind} | {statements} | {triggers} |")
        mean = statistics.mean(s for _, s, _ in rows)
        print(f"| the mix's mean | {mean:.1f} | {statistics.mean(t for _, _, t in rows):.1f} |")
        print(f"\n## slot read, median of {args.repeats} rounds of {args.reads:,} reads\n")
        print("| ended claims in the slot | us per read |\n|---:|---:|")
        for i, history in enumerate(histories):
            us = time_slot_reads(os.path.join(base, f"slot{i}.db"), history, args.reads,
                                 args.repeats)
            print(f"| {history:,} | {us:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
