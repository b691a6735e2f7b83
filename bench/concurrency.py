"""Reads beside a consolidation sweep, and the sweep's own cost, on a file-backed store.

Run::

    python bench/concurrency.py [--claims 20000] [--steady-claims 8000] [--repeats 3]
                                [--dir DIR] [--json PATH]

Two stores are filled through ``remember_many`` (default ``HashingEmbedder()``, an
injected clock), then the clock moves 30 days so every claim has decayed:

* ``--claims`` (20,000): one reader thread does point reads (``get(claim_id)`` on random
  known ids, one ``history()`` in ten) while the main thread runs ``consolidate()``.
  Reported: reads completed during the sweep, their p50/p95/p99 latency, the sweep's
  duration, and the same reader alone (idle) for comparison. Each repeat moves the
  clock one more day first, so every sweep rewrites every claim's retrieval strength;
  the first also merges and promotes.
* ``--steady-claims`` (8,000): the first sweep (cold), then ``--repeats`` more at the
  same instant (steady state: nothing left to change), timed alone.

The data: subjects ``user_0 ..``, each with ``lives_in`` (ONE), ``likes`` (MANY, three
values) and ``speaks`` (MANY); one subject in 50 also ``likes`` a near-duplicate pair
(``NYC`` and ``New York City``, one text: the merge step's work) and one in 25 has an
episodic claim seen five times (the promotion step's). A table row is the median over
repeats with the min-max spread.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np
from _report import environment, save_rows, tally

from memvara import Claim, DegradedExtractionWarning, Memvara, NullLLM, SQLiteStore

warnings.simplefilter("ignore", DegradedExtractionWarning)

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
BATCH = 5_000
TARGET_P99_MS = 2.0
TARGET_STEADY_MS = 300.0
IDLE_READ_S = 1.0
HISTORY_EVERY = 10


class ManualClock:
    """A clock the benchmark moves by hand (no wall-clock value reaches the store)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
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


def claims_for(n: int) -> list[Claim]:
    """``n`` claims of the mix in the module docstring, subject by subject."""
    rng = random.Random(20260101)
    out: list[Claim] = []
    s = 0
    while len(out) < n:
        who = f"user_{s}"
        out.append(Claim(who, "lives_in", f"city_{rng.randrange(60)}"))
        out.extend(Claim(who, "likes", f"thing_{rng.randrange(300)}_{k}") for k in range(3))
        out.append(Claim(who, "speaks", f"lang_{rng.randrange(25)}"))
        if s % 50 == 0:
            text = f"{who} likes New York"
            out += [Claim(who, "likes", "NYC", text=text),
                    Claim(who, "likes", "New York City", text=text)]
        if s % 25 == 0:
            out += [Claim(who, "attended", f"standup_{s}", memory_type="episodic")] * 5
        s += 1
    return out[:n]


def build(path: str, n: int) -> tuple[Memvara, ManualClock, list[str]]:
    """A file store holding ``n`` claims (fewer rows: repeats reinforce), 30 days old."""
    for suffix in SQLiteStore.FILE_SUFFIXES:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    clock = ManualClock()
    mem = Memvara(path, clock=clock, llm=NullLLM())
    claims = claims_for(n)
    ids: list[str] = []
    for start in range(0, len(claims), BATCH):
        ids += [c.id for c in mem.remember_many(claims[start : start + BATCH]).added]
    clock.now += timedelta(days=30)
    return mem, clock, ids


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


class Reader(threading.Thread):
    """Point reads in a loop until stopped, each timed as ``(start, seconds)``."""

    def __init__(self, mem: Memvara, ids: Sequence[str]) -> None:
        super().__init__(daemon=True)
        self.mem, self.ids = mem, list(ids)
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.timings: list[tuple[float, float]] = []

    def run(self) -> None:
        rng = random.Random(7)
        mem, ids, timings = self.mem, self.ids, self.timings
        clock = time.perf_counter
        i = 0
        while not self.stop.is_set():
            claim_id = ids[rng.randrange(len(ids))]
            t0 = clock()
            if i % HISTORY_EVERY == HISTORY_EVERY - 1:
                mem.history(f"user_{rng.randrange(max(1, len(ids) // 6))}", "likes")
            else:
                mem.get(claim_id)
            timings.append((t0, clock() - t0))
            i += 1
            if i == 50:
                self.ready.set()
        self.ready.set()

    def between(self, start: float, end: float) -> list[float]:
        """Latencies (ms) of the reads that started in ``[start, end)``."""
        return [dt * 1000.0 for t0, dt in self.timings if start <= t0 < end]


@dataclass
class Sweep:
    """One consolidation with a reader beside it."""

    seconds: float
    reads: list[float]
    counts: dict[str, int]


def sweep_with_reader(mem: Memvara, ids: Sequence[str]) -> Sweep:
    reader = Reader(mem, ids)
    reader.start()
    reader.ready.wait()
    gc.collect()
    t0 = time.perf_counter()
    counts = mem.consolidate()
    t1 = time.perf_counter()
    reader.stop.set()
    reader.join()
    return Sweep(t1 - t0, reader.between(t0, t1), counts)


def idle_reads(mem: Memvara, ids: Sequence[str], seconds: float) -> list[float]:
    reader = Reader(mem, ids)
    reader.start()
    reader.ready.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    t1 = time.perf_counter()
    reader.stop.set()
    reader.join()
    return reader.between(t0, t1)


def concurrent_rows(mem: Memvara, clock: ManualClock, ids: Sequence[str], repeats: int) -> list[Row]:
    n = mem.stats()["claims"]
    idle = [idle_reads(mem, ids, IDLE_READ_S) for _ in range(repeats)]
    sweeps: list[Sweep] = []
    for rep in range(repeats):
        if rep:
            clock.now += timedelta(days=1)  # every claim decays again: a full rewrite
        sweeps.append(sweep_with_reader(mem, ids))
    first = sweeps[0].counts
    what = (f"first sweep: decayed {first['decayed']:,}, merged {first['merged']:,},"
            f" promoted {first['promoted']:,}; later ones decay every claim again")
    p99s = [percentile(s.reads, 99) for s in sweeps]
    return [
        Row("reads completed during the sweep", n, "reads", [len(s.reads) for s in sweeps],
            "info", None, "one reader thread: get(id), history() one read in ten"),
        Row("read p50 during the sweep", n, "ms", [percentile(s.reads, 50) for s in sweeps],
            "info", None),
        Row("read p95 during the sweep", n, "ms", [percentile(s.reads, 95) for s in sweeps],
            "info", None),
        Row("read p99 during the sweep", n, "ms", p99s, f"<= {TARGET_P99_MS:g}",
            statistics.median(p99s) <= TARGET_P99_MS),
        Row("read max during the sweep", n, "ms", [max(s.reads, default=0.0) for s in sweeps],
            "info", None),
        Row("consolidate() with the reader beside it", n, "ms",
            [s.seconds * 1000.0 for s in sweeps], "info", None, what),
        Row("idle read p50 (reader alone)", n, "ms", [percentile(r, 50) for r in idle],
            "info", None, f"{IDLE_READ_S:g} s of reads per sample"),
        Row("idle read p99 (reader alone)", n, "ms", [percentile(r, 99) for r in idle],
            "info", None),
    ]


def steady_rows(mem: Memvara, repeats: int) -> list[Row]:
    n = mem.stats()["claims"]
    t0 = time.perf_counter()
    cold = mem.consolidate()
    cold_ms = (time.perf_counter() - t0) * 1000.0
    samples: list[float] = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        counts = mem.consolidate()
        samples.append((time.perf_counter() - t0) * 1000.0)
        assert counts == {"decayed": 0, "merged": 0, "promoted": 0}, counts  # idempotent
    med = statistics.median(samples)
    return [
        Row("consolidate(), cold sweep", n, "ms", [cold_ms], "info", None,
            f"decayed {cold['decayed']:,}, merged {cold['merged']:,},"
            f" promoted {cold['promoted']:,}"),
        Row("consolidate(), steady state", n, "ms", samples, f"<= {TARGET_STEADY_MS:g}",
            med <= TARGET_STEADY_MS, "same instant again: reads every window, writes nothing"),
    ]


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.3f}" if value < 10 else f"{value:,.1f}"
    return f"{value:,.0f}"


def table(rows: Sequence[Row]) -> str:
    lines = ["| measure | claims | median | spread (min-max) | unit | samples | target | result"
             " | notes |", "|" + "---|" * 9]
    for r in rows:
        spread = f"{_fmt(r.low, r.unit)} - {_fmt(r.high, r.unit)}" if len(r.samples) > 1 else "-"
        result = "info" if r.passed is None else ("PASS" if r.passed else "FAIL")
        lines.append(f"| {r.measure} | {r.n:,} | {_fmt(r.median, r.unit)} | {spread} | {r.unit}"
                     f" | {len(r.samples)} | {r.target} | {result} | {r.note} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--claims", type=int, default=20_000, help="claims beside the reader")
    p.add_argument("--steady-claims", type=int, default=8_000, help="claims, steady state")
    p.add_argument("--repeats", type=int, default=3, help="samples per measurement")
    p.add_argument("--dir", default=None, help="where to put the stores; default a temp dir")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    if args.claims < 10 or args.steady_claims < 10 or args.repeats < 1:
        p.error("--claims and --steady-claims need at least 10, --repeats at least 1")
    env = environment()
    print("# memvara concurrency\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    print()
    owned = None if args.dir else tempfile.TemporaryDirectory(prefix="memvara-conc-")
    base = args.dir or (owned.name if owned else ".")
    os.makedirs(base, exist_ok=True)
    rows: list[Row] = []
    try:
        for n, measure in ((args.claims, "reader"), (args.steady_claims, "steady")):
            print(f"... filling {n:,} claims", file=sys.stderr, flush=True)
            mem, clock, ids = build(os.path.join(base, f"conc-{measure}-{n}.db"), n)
            try:
                print(f"... measuring ({measure})", file=sys.stderr, flush=True)
                if measure == "reader":
                    rows += concurrent_rows(mem, clock, ids, args.repeats)
                else:
                    rows += steady_rows(mem, args.repeats)
            finally:
                mem.close()
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
