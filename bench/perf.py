"""Write and read throughput of a file-backed ``Memvara`` at several store sizes,
and of a PostgreSQL-backed one beside it.

Run::

    python bench/perf.py [--sizes 8000,100000] [--repeats 5] [--layouts root,users]
                         [--dir DIR] [--json PATH] [--profile] [--write-log on|off]
                         [--store sqlite,postgres] [--dsn DSN] [--keep]
                         [--writers 1,2,4] [--writer-writes 150]

For every store kind (``--store``: ``sqlite``, the default, a file store
``SQLiteStore(path)``; ``postgres``, a ``PostgresStore`` in a fresh schema
``bench_perf_<layout>_<N>`` of the server ``--dsn`` or ``$MEMVARA_TEST_PG_DSN`` names,
dropped after the run unless ``--keep``), every layout and size N it fills a fresh store
(default ``HashingEmbedder()``, a deterministic clock) with N claims through
``remember_many`` (5,000 claims a call), then measures, each as a median over
``--repeats`` samples with the min-max spread:

* ``remember()`` one call at a time, on fresh slots and on revising ONE slots (claims/s);
* one ``remember_many()`` call of 5,000 fresh claims (claims/s);
* ``add()`` with no model (``NullLLM``), one turn a call and 100 turns a call (turns/s),
  over a chat-like mix: every fifth turn is the filler "ok thanks" (dropped by the gate,
  then skipped as a duplicate), two in five are first-person facts the rules read, two in
  five are questions and remarks no rule reads (counted as unextracted);
* ``get_all()``, ``count()``, ``history()`` and ``stats()`` latency (ms);
* bytes on disk per claim (every file in ``SQLiteStore.FILE_SUFFIXES``, after ``close()``;
  on PostgreSQL ``pg_total_relation_size`` of the schema's tables, WAL not counted);
* aggregate writes/s of 1, 2 and 4 writer processes (``--writers``) racing on the filled
  store, each making ``--writer-writes`` single ``remember()`` calls at the root scope with
  the system clock (``bench/writers.py``'s race; one write in ten contends for one shared
  single-valued slot, checked to end with one live value).

The data: subjects ``user_0 .. user_{N/10-1}``, ten claims each, written in three rounds
(years 2020, 2021, 2022 of valid time): ``lives_in`` (ONE, three values: two are ended by
their successors), ``works_at`` (ONE, two values: one ended), ``likes`` (MANY, three) and
``speaks`` (MANY, two). So 70% of the claims are live and 30% ended.

Two layouts, because scopes change which rows a read sees and which rows a write must
settle against:

* ``root``: everything at the root scope: one agent's memory about N/10 people (the
  default ``Memvara()`` usage). ``count()`` is the whole store; ``get_all()`` returns every
  live claim (0.7 N), so it is a bulk dump and reported for information only.
* ``users``: subject ``user_i`` is written in its own scope ``user="user_i"`` (a multi-user
  deployment). Reads run at one user's scope, so ``get_all()``/``count()`` see that user's
  seven live claims; nothing is at the root, so no API call counts the whole store.

Every store (each kind, layout and size) is filled first; then each write measure runs
its samples round-robin across them all (sample ``i`` of every store before sample
``i + 1``, the order flipped each round). This machine's speed drifts by up to 1.7x over
minutes, and a size or layout measured minutes after another would compare the minutes,
not the code: the flatness rows (rate at the largest size over the smallest) and the
layouts need the same drift. (Until 2026-12-02 the layouts ran one after the other, and
the one-user-per-scope revising row read as a third slower than the root's for that
reason: perf-log.md.) The rows run in order on the same stores: the revising row's
writes land on pages the fresh row's writes just touched.

Guards keep one run bounded on a slow build: filling stops after ``--build-cap-s`` seconds
(the reached size is what the table reports), a ``remember()`` sample stops after
``--sample-cap-s`` seconds, and a row stops collecting samples after ``--row-budget-s``.
Write rows grow the store: each repeat adds its claims on top of the previous ones.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import _pgstore
import writers
from _report import environment, save_rows, tally

from memvara import Claim, DegradedExtractionWarning, Memvara, Scope, SQLiteStore

warnings.simplefilter("ignore", DegradedExtractionWarning)  # no model here, on purpose

BATCH = 5_000
SINGLE_CALLS = 500
LAYOUTS = ("root", "users")
STORES = ("sqlite", "postgres")
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
DATA_EPOCH = datetime(2020, 1, 1, tzinfo=timezone.utc)
REVISE_EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)

TARGET_SINGLE = 5_000.0  # claims/s, remember() one at a time
TARGET_BULK = 30_000.0  # claims/s, remember_many()
TARGET_READ_MS = 50.0  # get_all / count / history at the largest size
TARGET_BYTES = 3_000.0  # bytes on disk per claim ("3 KB", read as 3,000 bytes)
TARGET_FLAT = 0.67  # rate at the largest size / rate at the smallest ("roughly flat")
TARGET_ADD = 3_000.0  # chat turns/s through add()'s fast path, no model
ADD_TURNS = 500
ADD_BATCH = 100

CITIES = tuple(f"City_{i}" for i in range(60))
ORGS = tuple(f"Org_{i}" for i in range(80))
THINGS = tuple(f"thing_{i}" for i in range(300))
LANGUAGES = tuple(f"lang_{i}" for i in range(25))


# -- plumbing ---------------------------------------------------------------------------
class CounterClock:
    """A deterministic clock: 2026-01-01 UTC, advancing one millisecond per call."""

    def __init__(self, start: datetime = START) -> None:
        self._start = start
        self.calls = 0

    def __call__(self) -> datetime:
        self.calls += 1
        return self._start + timedelta(milliseconds=self.calls)


@dataclass
class Row:
    """One measured line of the table."""

    measure: str
    layout: str
    n: int
    unit: str
    samples: list[float]
    target: str
    passed: bool | None  # None: informational, no target applies
    note: str = ""
    store: str = "sqlite"
    median: float = 0.0
    low: float = 0.0
    high: float = 0.0

    def __post_init__(self) -> None:
        if self.samples:
            self.median = statistics.median(self.samples)
            self.low = min(self.samples)
            self.high = max(self.samples)


@dataclass
class Built:
    """A filled store and what filling it cost."""

    mem: Memvara
    path: str  # the SQLite file, or the PostgreSQL schema
    clock: CounterClock
    n: int
    requested: int
    store: str = "sqlite"
    layout: str = "root"
    subjects: int = 1  # subjects holding at least one claim
    batch_rates: list[float] = field(default_factory=list)  # full batches only
    seconds: float = 0.0


def _scope(layout: str, subject_index: int) -> Scope:
    return Scope(user=f"user_{subject_index}") if layout == "users" else Scope()


def _scope_kw(layout: str, subject_index: int) -> str | None:
    return f"user_{subject_index}" if layout == "users" else None


def _rounds(n: int, layout: str) -> Iterator[list[Claim]]:
    """The fill data, round by round, in batches of at most ``BATCH`` claims.

    A batch never holds one slot twice, so each claim settles against the stored slot.
    """
    rng = random.Random(20260101)
    subjects = max(1, n // 10)
    plan: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = (
        (("lives_in", CITIES), ("works_at", ORGS), ("likes", THINGS), ("speaks", LANGUAGES)),
        (("lives_in", CITIES), ("works_at", ORGS), ("likes", THINGS), ("speaks", LANGUAGES)),
        (("lives_in", CITIES), ("likes", THINGS)),
    )
    emitted = 0
    for year, predicates in enumerate(plan):
        batch: list[Claim] = []
        for s in range(subjects):
            valid_from = DATA_EPOCH + timedelta(days=365 * year + s % 300, seconds=s)
            for predicate, values in predicates:
                if emitted == n:
                    break
                # MANY slots: distinct values per round; ONE slots: a new value each round
                obj = values[(rng.randrange(len(values)) + year * 7) % len(values)]
                if predicate in ("likes", "speaks"):
                    obj = f"{obj}_{year}"
                batch.append(Claim(
                    f"user_{s}", predicate, obj, valid_from=valid_from,
                    scope=_scope(layout, s),
                ))
                emitted += 1
            if len(batch) >= BATCH - 4 or emitted == n:
                yield batch
                batch = []
            if emitted == n:
                return
        if batch:
            yield batch


WRITE_LOG = True
"""Whether the SQLite stores keep the write log (``--write-log off`` measures what it
costs; a PostgreSQL store always keeps it)."""
DSN: str | None = None
"""The PostgreSQL server of ``--store postgres``."""


def _open(store: str, path: str, clock: CounterClock) -> Memvara:
    if store == "postgres":
        assert DSN is not None  # _parse requires one
        return Memvara(store=_pgstore.open_store(DSN, path), clock=clock)
    return Memvara(store=SQLiteStore(path, write_log=WRITE_LOG), clock=clock)


def _build(store: str, path: str, n: int, layout: str, cap_s: float) -> Built:
    clock = CounterClock()
    mem = _open(store, path, clock)
    built = Built(mem=mem, path=path, clock=clock, n=0, requested=n, store=store, layout=layout)
    started = time.perf_counter()
    for batch in _rounds(n, layout):
        t0 = time.perf_counter()
        mem.remember_many(batch)
        dt = time.perf_counter() - t0
        if len(batch) >= BATCH // 2 or not built.batch_rates:  # a tail batch is all overhead
            built.batch_rates.append(len(batch) / dt)
        built.n += len(batch)
        if time.perf_counter() - started > cap_s and built.n < n:
            break
    built.seconds = time.perf_counter() - started
    # round 0 writes four claims per subject, in subject order
    built.subjects = max(1, min(max(1, n // 10), -(-built.n // 4)))
    return built


def _disk_bytes(path: str) -> tuple[int, int]:
    """(apparent size, allocated blocks) of the database, its WAL and the vector sidecar."""
    apparent = allocated = 0
    for name in (path + suffix for suffix in SQLiteStore.FILE_SUFFIXES):
        if os.path.exists(name):
            st = os.stat(name)
            apparent += st.st_size
            allocated += getattr(st, "st_blocks", st.st_size // 512) * 512
    return apparent, allocated


def _samples(
    one: Callable[[int], float], repeats: int, budget_s: float
) -> list[float]:
    """Run ``one(i)`` up to ``repeats`` times, stopping once ``budget_s`` is spent."""
    out: list[float] = []
    started = time.perf_counter()
    for i in range(repeats):
        gc.collect()
        out.append(one(i))
        if time.perf_counter() - started > budget_s:
            break
    return out


def _timed_ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


# -- one (layout, size) ----------------------------------------------------------------
@dataclass
class Settings:
    repeats: int
    build_cap_s: float
    sample_cap_s: float
    row_budget_s: float


def _note(built: Built) -> str:
    return "" if built.n == built.requested else f"fill capped: {built.n:,} of {built.requested:,}"


def _measure_static(built: Built, layout: str, cfg: Settings) -> list[Row]:
    """The rows that leave the store as it is: the fill, bytes on disk, and reads."""
    n = built.n
    mem = built.mem
    subjects = built.subjects
    rows: list[Row] = []
    note = _note(built)

    rows.append(Row(
        "fill: remember_many() 5,000/call, 0 -> N", layout, n, "claims/s", built.batch_rates,
        "info", None,
        f"{built.seconds:.1f} s in all; per full batch: first {built.batch_rates[0]:,.0f}/s,"
        f" last {built.batch_rates[-1]:,.0f}/s" + (f"; {note}" if note else ""),
    ))

    if built.store == "postgres":
        assert DSN is not None
        used = _pgstore.schema_bytes(DSN, built.path)
        rows.append(Row("bytes on disk / claim (pg_total_relation_size)", layout, n, "B/claim",
                        [used / n], f"<= {TARGET_BYTES:,.0f}", used / n <= TARGET_BYTES,
                        f"{used / 2**20:,.1f} MiB total: the schema's tables, TOAST and"
                        " indexes; the server's WAL not counted"))
    else:  # bytes on disk, after close() has checkpointed the WAL
        mem.close()
        apparent, allocated = _disk_bytes(built.path)
        rows.append(Row("bytes on disk / claim (apparent size)", layout, n, "B/claim",
                        [apparent / n], f"<= {TARGET_BYTES:,.0f}", apparent / n <= TARGET_BYTES,
                        f"{apparent / 2**20:,.1f} MiB total; .vecs grows by an eighth"))
        rows.append(Row("bytes on disk / claim (allocated blocks)", layout, n, "B/claim",
                        [allocated / n], f"<= {TARGET_BYTES:,.0f}",
                        allocated / n <= TARGET_BYTES, f"{allocated / 2**20:,.1f} MiB total"))
        mem = built.mem = _open(built.store, built.path, built.clock)

    # reads, before any measured write touches the store
    k = subjects // 2
    who = _scope_kw(layout, k)
    if layout == "users":
        got = len(mem.get_all(user=who))
        cnt = mem.count(user=who)
        hist = len(mem.history(f"user_{k}", "lives_in", user=who))
        rows.append(_read_row("get_all(user=...)", layout, n, cfg, note,
                              lambda: mem.get_all(user=who), f"{got} claims: one user's scope"))
        rows.append(_read_row("count(user=...)", layout, n, cfg, note,
                              lambda: mem.count(user=who), f"= {cnt}: one user's scope"))
        rows.append(_read_row("history(subject, 'lives_in')", layout, n, cfg, note,
                              lambda: mem.history(f"user_{k}", "lives_in", user=who),
                              f"{hist} claims"))
        rows.append(_read_row("stats(user=...)", layout, n, cfg, note,
                              lambda: mem.stats(user=who), "one user's scope", info=True))
    else:
        got = len(mem.get_all())
        cnt = mem.count()
        hist = len(mem.history(f"user_{k}", "lives_in"))
        rows.append(_read_row("get_all() at root", layout, n, cfg, note, mem.get_all,
                              f"{got:,} claims: the whole live store (a dump)", info=True))
        rows.append(_read_row("count() at root", layout, n, cfg, note, mem.count,
                              f"= {cnt:,}: the whole store"))
        rows.append(_read_row("history(subject, 'lives_in')", layout, n, cfg, note,
                              lambda: mem.history(f"user_{k}", "lives_in"), f"{hist} claims"))
        rows.append(_read_row("stats() at root", layout, n, cfg, note, mem.stats,
                              "the whole store", info=True))

    return rows


@dataclass
class WriteMeasure:
    """One write row of one store: ``sample(rep)`` runs a sample and returns its rate."""

    name: str
    unit: str
    target: float | None  # None: informational
    what: str
    sample: Callable[[int], float]


def _write_measures(built: Built, layout: str, tag: str, cfg: Settings) -> list[WriteMeasure]:
    """The write rows of one store, as samplers: ``_interleave`` runs them."""
    mem = built.mem
    subjects = built.subjects

    # remember(), one call at a time
    def fresh(rep: int) -> float:
        done = 0
        t0 = time.perf_counter()
        for i in range(SINGLE_CALLS):
            s = (i * 7919 + rep * 104_729) % subjects  # the user whose scope it lands in
            mem.remember(f"contact_{tag}_{rep}_{i}", "lives_in", CITIES[i % len(CITIES)],
                         user=_scope_kw(layout, s))
            done += 1
            if time.perf_counter() - t0 > cfg.sample_cap_s:
                break
        return done / (time.perf_counter() - t0)

    revisions = [0]

    def revise(rep: int) -> float:
        done = 0
        t0 = time.perf_counter()
        for i in range(SINGLE_CALLS):
            s = (i * 7919 + rep * 104_729 + 17) % subjects
            revisions[0] += 1
            mem.remember(f"user_{s}", "lives_in", f"moved_{rep}_{i}",
                         valid_from=REVISE_EPOCH + timedelta(seconds=revisions[0]),
                         user=_scope_kw(layout, s))
            done += 1
            if time.perf_counter() - t0 > cfg.sample_cap_s:
                break
        return done / (time.perf_counter() - t0)

    measures = [
        WriteMeasure("remember() 1 call/claim, fresh slot", "claims/s", TARGET_SINGLE,
                     f"new subject's lives_in at an existing scope; up to {SINGLE_CALLS}"
                     " calls/sample", fresh),
        WriteMeasure("remember() 1 call/claim, revise ONE slot", "claims/s", TARGET_SINGLE,
                     f"user_i lives_in: closes the current value; up to {SINGLE_CALLS}"
                     " calls/sample", revise),
    ]

    # remember_many(): one call of 5,000 fresh claims
    def bulk(rep: int) -> float:
        claims = []
        for i in range(BATCH):
            s = (i // 4 * 7919 + rep * 104_729) % subjects
            pred, values = (("lives_in", CITIES), ("works_at", ORGS),
                            ("likes", THINGS), ("speaks", LANGUAGES))[i % 4]
            claims.append(Claim(f"bulk_{tag}_{rep}_{i // 4}", pred, values[i % len(values)],
                                scope=_scope(layout, s)))
        t0 = time.perf_counter()
        mem.remember_many(claims)
        return BATCH / (time.perf_counter() - t0)

    measures.append(WriteMeasure("remember_many() 5,000 fresh claims/call", "claims/s",
                                 TARGET_BULK, "1,250 new subjects x 4 predicates", bulk))

    # add(), no model: one turn a call, then ADD_BATCH turns a call
    for per_call in (1, ADD_BATCH):
        def adds(rep: int, per_call: int = per_call) -> float:
            turns = [_chat_turn(f"{tag}{per_call}r{rep}", i) for i in range(ADD_TURNS)]
            user = _scope_kw(layout, rep % subjects)
            t0 = time.perf_counter()
            for start in range(0, len(turns), per_call):
                mem.add(turns[start : start + per_call], user=user)
            return len(turns) / (time.perf_counter() - t0)

        measures.append(WriteMeasure(
            f"add() {per_call} turn{'s' if per_call > 1 else ''}/call, NullLLM", "turns/s",
            TARGET_ADD, f"{ADD_TURNS} chat turns/sample: 2/5 rule facts, 2/5 prose, 1/5 filler",
            adds))
    return measures


def _interleave(
    stores: Sequence[tuple[Built, list[WriteMeasure]]], cfg: Settings
) -> list[list[Row]]:
    """Run each write measure's samples round-robin across the stores (sample ``i`` of
    every size and layout before sample ``i + 1`` of any, the order flipped each round),
    so a spell of this machine's drift lands on every store alike and the flatness ratio
    and the layouts compare the code, not the minute; each store's rows, in measure
    order."""
    out: list[list[Row]] = [[] for _ in stores]
    for m in range(len(stores[0][1])):
        samples: list[list[float]] = [[] for _ in stores]
        spent = [0.0 for _ in stores]
        for rep in range(cfg.repeats):
            order = list(range(len(stores)))
            if rep % 2:
                order.reverse()
            for i in order:
                if spent[i] > cfg.row_budget_s:
                    continue
                gc.collect()
                t0 = time.perf_counter()
                samples[i].append(stores[i][1][m].sample(rep))
                spent[i] += time.perf_counter() - t0
        for i, (built, measures) in enumerate(stores):
            measure = measures[m]
            med = statistics.median(samples[i])
            target = measure.target
            out[i].append(Row(measure.name, built.layout, built.n, measure.unit, samples[i],
                              "info" if target is None else f">= {target:,.0f}",
                              None if target is None else med >= target,
                              _join(measure.what, _note(built)), built.store))
    return out


def _writer_measures(built: Built, tag: str, counts: Sequence[int],
                     writes: int) -> list[WriteMeasure]:
    """Aggregate writes/s of ``count`` writer processes racing on the filled store, one
    row per count (``bench/writers.py``'s race). Each process opens the store itself and
    writes with the system clock, which is why these rows run after every other write."""
    def race(count: int) -> Callable[[int], float]:
        def sample(rep: int) -> float:
            rate = writers.race(built.store, built.path, DSN, count, writes,
                                tag=f"{tag}w{count}r{rep}.")
            with writers.open_memory(built.store, built.path, DSN) as mem:  # its clock
                if not writers.shared_slot_has_one_value(mem):
                    raise SystemExit(f"{built.store}: {count} writers left the shared"
                                     " single-valued slot with other than one live value")
            return rate
        return sample

    return [WriteMeasure(f"{count} writer process{'es' if count > 1 else ''}, remember()",
                         "writes/s", None,
                         f"{writes} calls each, all processes together; the shared slot ends"
                         " with one live value", race(count))
            for count in counts]


def _chat_turn(tag: str, i: int) -> str:
    """The ``i``-th turn of a chat-like mix (see the module docstring); unique per tag."""
    kind = i % 5
    if kind == 0:
        return f"I work at {ORGS[i % len(ORGS)]} branch {tag}x{i}"
    if kind == 1:
        return f"how do I fix build error {tag}x{i} in my project?"
    if kind == 2:
        return "ok thanks"
    if kind == 3:
        return f"I live in {CITIES[i % len(CITIES)]} district {tag}x{i}"
    return f"the standup moved to room {tag}x{i} this week"


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _read_row(
    measure: str, layout: str, n: int, cfg: Settings, note: str, fn: Callable[[], object],
    what: str, *, info: bool = False,
) -> Row:
    fn()  # warm the page cache and the statement cache
    s = _samples(lambda _i: _timed_ms(fn), cfg.repeats, cfg.row_budget_s)
    med = statistics.median(s)
    return Row(measure, layout, n, "ms", s, "info" if info else f"<= {TARGET_READ_MS:.0f}",
               None if info else med <= TARGET_READ_MS, _join(what, note))


# -- flatness and output ----------------------------------------------------------------
def _flatness(rows: Sequence[Row], layouts: Sequence[str]) -> list[Row]:
    out: list[Row] = []
    rates = ("remember() 1 call/claim, fresh slot", "remember() 1 call/claim, revise ONE slot",
             "remember_many() 5,000 fresh claims/call", "add() 1 turn/call, NullLLM",
             f"add() {ADD_BATCH} turns/call, NullLLM")
    for store in dict.fromkeys(r.store for r in rows):
        for layout in layouts:
            for measure in rates:
                found = sorted((r for r in rows if r.store == store and r.layout == layout
                                and r.measure == measure), key=lambda r: r.n)
                if len(found) < 2:
                    continue
                small, large = found[0], found[-1]
                ratio = large.median / small.median
                out.append(Row(f"flatness: {measure}", layout, large.n, "ratio", [ratio],
                               f">= {TARGET_FLAT:.2f}", ratio >= TARGET_FLAT,
                               f"median at N={large.n:,} / median at N={small.n:,}", store))
    return out


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.3f}" if value < 10 else f"{value:,.1f}"
    if unit == "ratio":
        return f"{value:.2f}"
    return f"{value:,.0f}"


def _table(rows: Sequence[Row]) -> str:
    head = ("| store | measure | layout | N | median | spread (min-max) | unit | samples"
            " | target | result | notes |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        spread = (f"{_fmt(r.low, r.unit)} - {_fmt(r.high, r.unit)}"
                  if len(r.samples) > 1 else "-")
        result = "info" if r.passed is None else ("PASS" if r.passed else "FAIL")
        lines.append(
            f"| {r.store} | {r.measure} | {r.layout} | {r.n:,} | {_fmt(r.median, r.unit)} | {spread}"
            f" | {r.unit} | {len(r.samples)} | {r.target} | {result} | {r.note} |"
        )
    return "\n".join(lines)


# -- profile ----------------------------------------------------------------------------
def _profile(built: Built, layout: str, top: int) -> str:
    mem = built.mem
    subjects = built.subjects
    out = io.StringIO()
    calls = 100
    prof = cProfile.Profile()
    for i in range(calls):
        s = (i * 7919 + 31) % subjects
        prof.enable()
        mem.remember(f"prof_{i}", "lives_in", CITIES[i % len(CITIES)], user=_scope_kw(layout, s))
        prof.disable()
    out.write(f"\n### profile: {calls} x remember() (fresh slot), {built.store}, layout={layout},"
              f" N={built.n:,} (divide times by {calls} for one call)\n\n")
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    claims = [Claim(f"profbulk_{i // 4}", ("lives_in", "works_at", "likes", "speaks")[i % 4],
                    f"v_{i}", scope=_scope(layout, (i // 4 * 7919) % subjects))
              for i in range(BATCH)]
    prof = cProfile.Profile()
    prof.enable()
    mem.remember_many(claims)
    prof.disable()
    out.write(f"\n### profile: 1 x remember_many({BATCH:,} fresh claims), {built.store},"
              f" layout={layout},"
              f" N={built.n:,}\n\n")
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# -- main -------------------------------------------------------------------------------
def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--sizes", default="8000,100000", help="comma-separated store sizes")
    p.add_argument("--repeats", type=int, default=5, help="samples per measurement")
    p.add_argument("--layouts", default=",".join(LAYOUTS), help="root, users, or both")
    p.add_argument("--dir", default=None, help="where to put the stores (kept); default a temp dir")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    p.add_argument("--build-cap-s", type=float, default=40.0,
                   help="stop filling a store after this many seconds (default 40)")
    p.add_argument("--sample-cap-s", type=float, default=1.0,
                   help="stop one remember() sample after this many seconds (default 1)")
    p.add_argument("--row-budget-s", type=float, default=6.0,
                   help="stop collecting a row's samples after this many seconds (default 6)")
    p.add_argument("--write-log", choices=("on", "off"), default="on",
                   help="keep the tamper-evident write log (default) or not, to measure its cost")
    p.add_argument("--profile", action="store_true",
                   help="cProfile remember() and remember_many() at the largest size")
    p.add_argument("--profile-top", type=int, default=15, help="functions per profile")
    p.add_argument("--store", default="sqlite",
                   help="sqlite (default), postgres, or both (sqlite,postgres), side by side")
    p.add_argument("--dsn", default=_pgstore.default_dsn(),
                   help=f"the PostgreSQL server of --store postgres (default ${_pgstore.DSN_VARIABLE})")
    p.add_argument("--keep", action="store_true",
                   help="keep the PostgreSQL schemas bench_perf_<layout>_<N> after the run")
    p.add_argument("--writers", default="1,2,4",
                   help="writer processes racing on each filled store, one row per count"
                        " (default 1,2,4; 0 for none)")
    p.add_argument("--writer-writes", type=int, default=150,
                   help="remember() calls each writer process makes per sample (default 150)")
    args = p.parse_args(argv)
    try:
        args.size_list = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error("--sizes takes integers, e.g. 8000,100000")
    if not args.size_list or min(args.size_list) < 10:
        p.error("--sizes needs at least one size of 10 or more")
    args.layout_list = [s.strip() for s in args.layouts.split(",") if s.strip()]
    if not args.layout_list or any(s not in LAYOUTS for s in args.layout_list):
        p.error(f"--layouts takes a subset of {','.join(LAYOUTS)}")
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    args.store_list = [s.strip() for s in args.store.split(",") if s.strip()]
    if not args.store_list or any(s not in STORES for s in args.store_list):
        p.error(f"--store takes a subset of {','.join(STORES)}")
    if "postgres" in args.store_list and not args.dsn:
        p.error(f"--store postgres needs --dsn or ${_pgstore.DSN_VARIABLE}")
    try:
        args.writer_counts = [int(w) for w in args.writers.split(",") if int(w) > 0]
    except ValueError:
        p.error("--writers takes process counts, e.g. 1,2,4 (or 0 for none)")
    if args.writer_writes < 10:  # one write in ten is the shared slot's
        p.error("--writer-writes must be at least 10, so each writer writes the shared slot")
    return args


def _location(store: str, base: str, layout: str, n: int) -> str:
    """Where the store of (layout, N) lives, made empty: a file, or a schema dropped."""
    if store == "postgres":
        assert DSN is not None
        schema = f"bench_perf_{layout}_{n}"
        _pgstore.drop_schema(DSN, schema)
        return schema
    path = os.path.join(base, f"perf-{layout}-{n}.db")
    for suffix in SQLiteStore.FILE_SUFFIXES:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    global WRITE_LOG, DSN
    WRITE_LOG = args.write_log == "on"
    DSN = args.dsn
    cfg = Settings(args.repeats, args.build_cap_s, args.sample_cap_s, args.row_budget_s)
    env = environment()
    print("# memvara perf\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    if "sqlite" in args.store_list:
        print("- sqlite: file (`SQLiteStore(path)`), HashingEmbedder(512), clock 2026-01-01 UTC"
              f" +1 ms/call, write log {args.write_log}")
    if "postgres" in args.store_list:
        assert DSN is not None
        print(f"- postgres: `PostgresStore(dsn, schema='bench_perf_<layout>_<N>')` on"
              f" {_pgstore.server_versions(DSN)}, the same embedder and clock, write log on"
              f" (always); schemas {'kept' if args.keep else 'dropped after the run'}")
    print("- data: subjects user_0..user_{N/10-1}, 10 claims each in 3 rounds (valid 2020/21/22):"
          " lives_in x3 (ONE), works_at x2 (ONE), likes x3 (MANY), speaks x2 (MANY);"
          " 70% live, 30% ended by supersession; filled by remember_many, 5,000/call")
    print("- layouts: root = every claim at the root scope; users = subject user_i in scope"
          " user=user_i (reads at one user's scope)")
    print(f"- caps: fill {cfg.build_cap_s:g} s, remember() sample {cfg.sample_cap_s:g} s,"
          f" row {cfg.row_budget_s:g} s; write rows grow the store between repeats"
          " and run interleaved across stores, layouts and sizes; writer rows: processes"
          f" {args.writers}, {args.writer_writes} remember() each, system clock, root scope,"
          " after every other write row\n",
          flush=True)

    rows: list[Row] = []
    profiles: list[str] = []
    owned = None if args.dir else tempfile.TemporaryDirectory(prefix="memvara-perf-")
    base = args.dir if args.dir else owned.name if owned else "."
    os.makedirs(base, exist_ok=True)
    started = time.perf_counter()
    try:
        builts: list[Built] = []
        try:
            static: list[list[Row]] = []
            for layout in args.layout_list:
                for store in args.store_list:
                    for n in args.size_list:
                        where = _location(store, base, layout, n)
                        print(f"... {store} {layout} N={n:,}: filling", file=sys.stderr,
                              flush=True)
                        built = _build(store, where, n, layout, cfg.build_cap_s)
                        builts.append(built)
                        print(f"... {store} {layout} N={built.n:,}: filled in"
                              f" {built.seconds:.1f} s; measuring reads", file=sys.stderr,
                              flush=True)
                        static.append(_measure_static(built, layout, cfg))
                        for row in static[-1]:
                            row.store = store
            print("... measuring writes, stores, layouts and sizes interleaved",
                  file=sys.stderr, flush=True)
            writes = _interleave(
                [(b, _write_measures(b, b.layout, f"{b.layout}{b.requested}", cfg)
                  + _writer_measures(b, f"{b.layout}{b.requested}", args.writer_counts,
                                     args.writer_writes))
                 for b in builts], cfg)
            for kept, written in zip(static, writes):
                rows.extend(kept + written)
            if args.profile:
                for layout in args.layout_list:
                    for store in args.store_list:
                        largest = [b for b in builts if b.store == store and b.layout == layout][-1]
                        profiles.append(_profile(largest, layout, args.profile_top))
        finally:
            for built in builts:
                built.mem.close()
                if built.store == "postgres" and not args.keep:
                    assert DSN is not None
                    _pgstore.drop_schema(DSN, built.path)
    finally:
        if owned is not None:
            owned.cleanup()
    rows.extend(_flatness(rows, args.layout_list))
    print(_table(rows))
    print(f"\n{tally(rows)} Total {time.perf_counter() - started:.0f} s.")
    for text in profiles:
        print(text)
    if args.json:
        save_rows(args.json, env, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
