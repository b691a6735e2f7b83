"""Export and import: ``export_jsonl`` and ``import_jsonl`` of a file-backed store.

Run::

    python bench/transfer.py [--claims 100000] [--repeats 3] [--dir DIR] [--json PATH]

One file store is filled through ``remember_many`` (5,000 claims a call, default
``HashingEmbedder()``, an injected clock) with ``--claims`` claims, then measured, each
as the median over ``--repeats`` samples with the min-max spread:

* ``export_jsonl(mem, path)``: the whole store (the root scope) to a file;
* ``import_jsonl(fresh, path)``: that file into a new, empty file store, which re-embeds
  every claim and turn and indexes them for text search (a new store each sample).

Each is timed on the wall clock (the target's) and in this process's CPU time, which
moves less when other work shares the machine's two cores.

The data: subjects ``user_i`` in one of 100 user scopes, ten claims each in three
rounds of valid time: ``lives_in`` (ONE, three values: two end), ``works_at`` (ONE, two
values: one ends), ``likes`` (MANY, three, one in ten retired by ``delete()``) and
``speaks`` (MANY, two, one negative), with metadata on every fifth claim and non-ASCII
text on every seventh; plus one turn a subject (``add()``, no model), and one learned
predicate and one alias a user. After the last sample, the imported store is exported
again and its record lines compared with the original's: they must be identical.
The target is each call under 10 s at 100,000 claims.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from _report import environment, save_rows, tally

from memvara import (
    Cardinality,
    Claim,
    DegradedExtractionWarning,
    Memvara,
    NullLLM,
    PredicateRegistry,
    PredicateSpec,
    SQLiteStore,
    Volatility,
    export_jsonl,
    import_jsonl,
)

warnings.simplefilter("ignore", DegradedExtractionWarning)

START = datetime(2020, 1, 1, tzinfo=timezone.utc)
BATCH = 5_000
USERS = 100
TARGET_S = 10.0


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


def registry() -> PredicateRegistry:
    """The seed schema and one learned predicate (persisted, so it is exported)."""
    reg = PredicateRegistry()
    reg.register(PredicateSpec("mentors", Cardinality.MANY, Volatility.SLOW, ("coaches",)))
    return reg


def rounds(n: int) -> list[list[tuple[int, Claim]]]:
    """The claims of the module docstring, round by round, each with its user."""
    subjects = max(1, n // 10)
    out: list[list[tuple[int, Claim]]] = [[], [], []]
    made = 0
    for r in range(3):
        for s in range(subjects):
            who, user = f"user_{s}", s % USERS
            mine: list[Claim] = [Claim(who, "lives_in", f"city_{(s + r) % 97}")]
            if r < 2:
                mine.append(Claim(who, "works_at", f"firm_{(s * 3 + r) % 89}"))
            mine += [Claim(who, "likes", f"thing_{(s + r) % 300}")]
            if r == 0:
                mine += [Claim(who, "speaks", f"lang_{s % 25}"),
                         Claim(who, "speaks", f"lang_{(s + 1) % 25}", polarity=-1)]
            if r == 2:
                mine += [Claim(who, "likes", f"thing_{(s + 7) % 300}"),
                         Claim(who, "mentors", f"user_{(s + 1) % subjects}")]
            for claim in mine:
                if made % 5 == 0:
                    claim = Claim(claim.subject, claim.predicate, claim.object,
                                  polarity=claim.polarity, meta={"n": made, "tag": "bench"})
                if made % 7 == 0:
                    claim = Claim(claim.subject, claim.predicate, claim.object + " — Zürich",
                                  polarity=claim.polarity, meta=claim.meta)
                out[r].append((user, claim))
                made += 1
                if made == n:
                    return out
    return out


def _remove(path: str) -> None:
    for suffix in SQLiteStore.FILE_SUFFIXES:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def build(path: str, n: int) -> Memvara:
    """A file store holding ``n`` claims, turns, aliases and a learned predicate."""
    _remove(path)
    clock = ManualClock()
    mem = Memvara(path, clock=clock, llm=NullLLM(), registry=registry())
    for r, claims in enumerate(rounds(n)):
        clock.now = START + timedelta(days=365 * r)
        by_user: dict[int, list[Claim]] = {}
        for user, claim in claims:
            by_user.setdefault(user, []).append(claim)
        for user, mine in by_user.items():
            scoped = mem.scope(user=f"u{user}")
            for start in range(0, len(mine), BATCH):
                receipt = scoped.remember_many(mine[start : start + BATCH])
                if r == 2:
                    for claim in receipt.added[::10]:
                        if claim.predicate == "likes":
                            scoped.delete(claim.id)
    clock.now += timedelta(days=1)
    for user in range(USERS):
        scoped = mem.scope(user=f"u{user}")
        subjects = [f"user_{s}" for s in range(user, max(1, n // 10), USERS)]
        for start in range(0, len(subjects), 500):
            scoped.add([f"Note about {who}: met at the office." for who in
                        subjects[start : start + 500]])
        scoped.alias_entity(f"friend {user}", f"user_{user}")
    return mem


def lines_of(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()[1:]  # the header carries exported_at


def measure(base: str, n: int, repeats: int) -> list[Row]:
    source = os.path.join(base, f"transfer-{n}.db")
    print(f"... filling {n:,} claims", file=sys.stderr, flush=True)
    mem = build(source, n)
    exported = os.path.join(base, f"transfer-{n}.jsonl")
    exports: list[float] = []
    imports: list[float] = []
    export_cpu: list[float] = []
    import_cpu: list[float] = []
    counts: dict[str, int] = {}
    try:
        for _ in range(repeats):
            gc.collect()
            t0, c0 = time.perf_counter(), time.process_time()
            counts = export_jsonl(mem, exported)
            exports.append(time.perf_counter() - t0)
            export_cpu.append(time.process_time() - c0)
    finally:
        mem.close()
    target = os.path.join(base, f"transfer-{n}-imported.db")
    again = os.path.join(base, f"transfer-{n}-again.jsonl")
    for rep in range(repeats):
        _remove(target)
        fresh = Memvara(target, clock=ManualClock(), llm=NullLLM())
        try:
            gc.collect()
            t0, c0 = time.perf_counter(), time.process_time()
            imported = import_jsonl(fresh, exported)
            imports.append(time.perf_counter() - t0)
            import_cpu.append(time.process_time() - c0)
            if rep == repeats - 1:
                export_jsonl(fresh, again)
        finally:
            fresh.close()
    same = lines_of(exported) == lines_of(again)
    size = os.path.getsize(exported)
    what = ", ".join(f"{v:,} {k}" for k, v in counts.items())
    return [
        Row("export_jsonl(mem, path)", n, "s", exports, f"<= {TARGET_S:g}",
            statistics.median(exports) <= TARGET_S, what),
        Row("import_jsonl(fresh, path)", n, "s", imports, f"<= {TARGET_S:g}",
            statistics.median(imports) <= TARGET_S and imported == counts,
            "a new file store each sample; re-embeds, indexes"),
        Row("export_jsonl, CPU time", n, "s", export_cpu, "info", None, "this process"),
        Row("import_jsonl, CPU time", n, "s", import_cpu, "info", None, "this process"),
        Row("file size", n, "MB", [size / 1e6], "info", None,
            f"{size / max(1, sum(counts.values())):,.0f} bytes a record"),
        Row("round trip: record lines identical", n, "bool", [float(same)], "1", same,
            "exported again after the last import"),
    ]


def _fmt(value: float, unit: str) -> str:
    if unit == "bool":
        return "yes" if value else "NO"
    return f"{value:.3f}" if value < 10 else f"{value:,.1f}"


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
    p.add_argument("--claims", type=int, default=100_000, help="claims in the store")
    p.add_argument("--repeats", type=int, default=3, help="samples per measurement")
    p.add_argument("--dir", default=None, help="where to put the files; default a temp dir")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    if args.claims < 10 or args.repeats < 1:
        p.error("--claims needs at least 10, --repeats at least 1")
    env = environment()
    print("# memvara export and import\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    print()
    owned = None if args.dir else tempfile.TemporaryDirectory(prefix="memvara-transfer-")
    base = args.dir or (owned.name if owned else ".")
    os.makedirs(base, exist_ok=True)
    try:
        rows = measure(base, args.claims, args.repeats)
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
