"""Governance costs: the write log's share of a single write, ``verify()`` and ``prune()``.

Run::

    python bench/governance.py [--claims 8000] [--samples 15] [--calls 100]
                               [--records 100000] [--prune 100000] [--repeats 3]
                               [--dir DIR] [--json PATH]

* **The write log's cost.** Two file stores (``Memvara(store=SQLiteStore(path,
  write_log=...))``, default ``HashingEmbedder()``, an injected clock), one logged and one
  not, are filled alike with ``--claims`` claims through ``remember_many``. Then
  ``--samples`` rounds each time ``--calls`` single ``remember()`` calls on fresh slots
  and on revising ONE slots against both stores, in alternating order (so drift in the
  machine's speed hits both alike). The table gives each side's median rate and the
  median of the per-round ratios (logged / unlogged), with their spreads, wall clock and
  CPU time. Target: the logged rate at least 85% of the unlogged (cost <= 15%).
* **verify().** A file store whose log holds ``--records`` records, each appended by its
  own write transaction through the log's real seal (a ``log_note``; a record of a
  single ``remember()`` is the same size), checked ``--repeats`` times. Target < 5 s.
* **prune().** A file store with ``--prune`` ended claims (``remember_many``, each with
  a ``valid_to`` in the past) is pruned whole, then restored, ``--repeats`` times.
  Target: the prune < 10 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from _report import environment, save_rows, tally

from memvara import Claim, DegradedExtractionWarning, Memvara, SQLiteStore

warnings.simplefilter("ignore", DegradedExtractionWarning)

START = datetime(2020, 1, 1, tzinfo=timezone.utc)
BATCH = 5_000


class StepClock:
    """A clock that moves 1 ms a call (no wall-clock value reaches the store)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@dataclass
class Row:
    """One measured line of the table."""

    measure: str
    n: int
    unit: str
    samples: list[float]
    target: str
    passed: bool | None  # None: informational
    note: str = ""
    median: float = 0.0
    low: float = 0.0
    high: float = 0.0

    def __post_init__(self) -> None:
        self.median = statistics.median(self.samples)
        self.low, self.high = min(self.samples), max(self.samples)


def _open(path: str, logged: bool) -> Memvara:
    return Memvara(store=SQLiteStore(path, write_log=logged), clock=StepClock())


def _fill(mem: Memvara, n: int) -> None:
    claims = [Claim(f"user_{i}", "lives_in", f"city_{i % 97}") for i in range(n)]
    for start in range(0, n, BATCH):
        mem.remember_many(claims[start:start + BATCH])


def _timed(call: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def write_cost(base: str, n: int, samples: int, calls: int) -> list[Row]:
    """Single writes against a logged and an unlogged store, interleaved."""
    mems = {flag: _open(os.path.join(base, f"log-{flag}.db"), flag) for flag in (True, False)}
    try:
        for mem in mems.values():
            _fill(mem, n)
        rows: list[Row] = []
        for kind in ("fresh slot", "revise ONE slot"):
            rates: dict[bool, list[float]] = {True: [], False: []}
            cpu_rates: dict[bool, list[float]] = {True: [], False: []}
            for i in range(samples):
                for flag in ((True, False) if i % 2 == 0 else (False, True)):
                    mem = mems[flag]

                    def burst(mem: Memvara = mem, i: int = i) -> None:
                        for j in range(calls):
                            if kind == "fresh slot":
                                mem.remember(f"new_{i}_{j}", "lives_in", "Porto")
                            else:
                                mem.remember(f"user_{j}", "lives_in", f"town_{i}")

                    wall, cpu = _timed(burst)
                    rates[flag].append(calls / wall)
                    cpu_rates[flag].append(calls / max(cpu, 1e-9))
            ratios = [a / b for a, b in zip(rates[True], rates[False])]
            cpu_ratios = [a / b for a, b in zip(cpu_rates[True], cpu_rates[False])]
            ok = statistics.median(ratios) >= 0.85
            rows += [
                Row(f"remember(), {kind}, log on", n, "claims/s", rates[True], "info", None,
                    f"{calls} calls a sample"),
                Row(f"remember(), {kind}, log off", n, "claims/s", rates[False], "info", None,
                    f"{calls} calls a sample"),
                Row(f"remember(), {kind}: on / off (wall)", n, "ratio", ratios, ">= 0.85", ok,
                    "per round, both stores back to back"),
                Row(f"remember(), {kind}: on / off (CPU)", n, "ratio", cpu_ratios, "info", None,
                    "this process's CPU time"),
            ]
        return rows
    finally:
        for mem in mems.values():
            mem.close()


def verify_speed(base: str, records: int, repeats: int) -> list[Row]:
    """``verify()`` over a log of ``records`` records."""
    path = os.path.join(base, "verify.db")
    store = SQLiteStore(path)
    for i in range(records):
        store.log_note("bench", record=i, claims=[i, i + 1])
    store.close()
    with _open(path, True) as mem:
        times, cpus = [], []
        for _ in range(repeats):
            wall, cpu = _timed(mem.verify)
            times.append(wall)
            cpus.append(cpu)
        report = mem.verify()
    return [
        Row("verify()", records, "s", times, "< 5", statistics.median(times) < 5,
            f"ok={report.ok}, {report.records:,} records"),
        Row("verify(), CPU time", records, "s", cpus, "info", None, "this process"),
    ]


def prune_speed(base: str, n: int, repeats: int) -> list[Row]:
    """``prune()`` of ``n`` ended claims, and the restore that undoes it."""
    path = os.path.join(base, "prune.db")
    with _open(path, True) as mem:
        ended = START - timedelta(days=365)  # a year before the clock starts
        claims = [Claim(f"user_{i}", "lives_in", f"city_{i % 97}", valid_from=ended,
                        valid_to=ended + timedelta(days=1)) for i in range(n)]
        for start in range(0, n, BATCH):
            mem.remember_many(claims[start:start + BATCH])
        prunes, restores, moved = [], [], 0
        for _ in range(repeats):
            found: dict[str, int] = {}
            wall, _ = _timed(lambda: found.update(mem.prune(timedelta(days=30))))
            moved = found["ended"]
            prunes.append(wall)
            wall, _ = _timed(mem.restore_archived)
            restores.append(wall)
    return [
        Row("prune(timedelta(days=30))", n, "s", prunes, "< 10", statistics.median(prunes) < 10,
            f"{moved:,} ended claims moved"),
        Row("restore_archived()", n, "s", restores, "info", None, "all of them back"),
    ]


def _fmt(value: float, unit: str) -> str:
    if unit == "ratio":
        return f"{value:.3f}"
    return f"{value:.3f}" if value < 10 else f"{value:,.0f}"


def table(rows: Sequence[Row]) -> str:
    lines = ["| measure | N | median | spread (min-max) | unit | samples | target | result"
             " | notes |", "|" + "---|" * 9]
    for r in rows:
        spread = f"{_fmt(r.low, r.unit)} - {_fmt(r.high, r.unit)}" if len(r.samples) > 1 else "-"
        result = "info" if r.passed is None else ("PASS" if r.passed else "FAIL")
        lines.append(f"| {r.measure} | {r.n:,} | {_fmt(r.median, r.unit)} | {spread} | {r.unit}"
                     f" | {len(r.samples)} | {r.target} | {result} | {r.note} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--claims", type=int, default=8_000, help="claims in the write-cost stores")
    p.add_argument("--samples", type=int, default=15, help="rounds of the write-cost comparison")
    p.add_argument("--calls", type=int, default=100, help="remember() calls a round")
    p.add_argument("--records", type=int, default=100_000, help="log records verify() checks")
    p.add_argument("--prune", type=int, default=100_000, help="ended claims prune() moves")
    p.add_argument("--repeats", type=int, default=3, help="samples of verify() and prune()")
    p.add_argument("--dir", default=None, help="where to put the files; default a temp dir")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    if min(args.claims, args.samples, args.calls, args.records, args.prune, args.repeats) < 1:
        p.error("every count must be at least 1")
    env = environment()
    print("# memvara governance\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    print()
    owned = None if args.dir else tempfile.TemporaryDirectory(prefix="memvara-governance-")
    base = args.dir or (owned.name if owned else ".")
    os.makedirs(base, exist_ok=True)
    try:
        rows = write_cost(base, args.claims, args.samples, args.calls)
        print("... write cost done", file=sys.stderr, flush=True)
        rows += verify_speed(base, args.records, args.repeats)
        print("... verify done", file=sys.stderr, flush=True)
        rows += prune_speed(base, args.prune, args.repeats)
    finally:
        if owned is not None:
            owned.cleanup()
    print(table(rows))
    print(f"\n{tally(rows)}")
    if args.json:
        save_rows(args.json, env, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
