"""The mem0 compatibility layer's costs: importing a large history.db, and what the shim
adds on top of the library calls it wraps.

Run::

    pip install -e '.[bench]'
    python bench/mem0_compat.py [--rows 50000] [--calls 300] [--repeats 3] [--json PATH]

* ``import_mem0``: a history.db of ``--rows`` rows written by mem0's own history writer
  (``mem0.memory.storage.SQLiteManager.batch_add_history``, the call mem0's add path
  makes): 60% ADD, 30% UPDATE, 10% DELETE (every other memory updated once, one in six
  deleted). It is imported into a fresh file store, and then imported again (which must
  change nothing). Target: the first import under 30 s.
* the shim's ``add`` and ``search`` against ``Memvara.add`` and ``Memvara.search`` on
  twin memories holding the same data, called alternately with the same arguments,
  ``--calls`` calls each per repeat. Target: the shim's median within 10% of the
  library's.

Each figure is the median over ``--repeats`` with the min-max spread.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import _mem0_offline  # noqa: F401  (mem0's telemetry off before mem0 is imported)
from _report import environment

from memvara import Memvara, NullLLM
from memvara.compat import Memory, import_mem0

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
LANGUAGES = ["Polish", "Welsh", "Tamil", "Basque", "Czech", "Dutch", "Greek", "Hindi"]
LIKINGS = ["tea", "chess", "jazz", "hiking", "opera", "cycling", "sushi", "poetry"]


def history_rows(total: int) -> list[dict[str, object]]:
    """``total`` mem0 history rows, in time order, in the shape mem0's writer takes."""
    rows: list[dict[str, object]] = []
    rng = uuid.UUID(int=0)
    live: list[tuple[str, str, str]] = []  # (memory id, text, created_at)
    tick = 0

    def stamp() -> str:
        nonlocal tick
        tick += 1
        return (START + timedelta(seconds=tick)).isoformat()

    counter = 0
    while len(rows) < total:
        counter += 1
        memory_id = str(uuid.UUID(int=rng.int + counter))
        created = stamp()
        text = f"Memory {counter}: likes {LIKINGS[counter % len(LIKINGS)]}"
        rows.append({"memory_id": memory_id, "old_memory": None, "new_memory": text,
                     "event": "ADD", "created_at": created, "is_deleted": 0})
        live.append((memory_id, text, created))
        if counter % 2 == 0 and len(rows) < total:  # an update for every other memory
            mid, old, made = live[-1]
            new = f"{old} and speaks {LANGUAGES[counter % len(LANGUAGES)]}"
            rows.append({"memory_id": mid, "old_memory": old, "new_memory": new,
                         "event": "UPDATE", "created_at": made, "updated_at": stamp(),
                         "is_deleted": 0})
            live[-1] = (mid, new, made)
        if counter % 6 == 0 and len(rows) < total:  # and a delete for one in six
            mid, old, made = live.pop(len(live) // 2)
            rows.append({"memory_id": mid, "old_memory": old, "new_memory": None,
                         "event": "DELETE", "created_at": made, "updated_at": stamp(),
                         "is_deleted": 1})
    return rows


def write_history(path: Path, total: int) -> dict[str, int]:
    from mem0.memory.storage import SQLiteManager  # type: ignore[import-untyped,import-not-found,unused-ignore]

    rows = history_rows(total)
    manager = SQLiteManager(str(path))
    manager.batch_add_history(rows)
    manager.close()
    return {e: sum(1 for r in rows if r["event"] == e) for e in ("ADD", "UPDATE", "DELETE")}


@dataclass
class Row:
    measure: str
    median: str
    spread: str
    target: str
    passed: bool | None
    note: str


def timed(samples: Sequence[float]) -> tuple[float, str]:
    return statistics.median(samples), f"{min(samples):.3g}-{max(samples):.3g}"


def bench_import(folder: Path, rows: int, repeats: int) -> list[Row]:
    source = folder / "history.db"
    counts = write_history(source, rows)
    first: list[float] = []
    again: list[float] = []
    for i in range(repeats):
        with Memvara(str(folder / f"imported-{i}.db"), llm=NullLLM(), user="u") as mem:
            start = time.perf_counter()
            receipt = import_mem0(mem, history_db=str(source))
            first.append(time.perf_counter() - start)
            start = time.perf_counter()
            repeat = import_mem0(mem, history_db=str(source))
            again.append(time.perf_counter() - start)
            assert repeat.added == repeat.updated == repeat.deleted == 0, repeat
    median, spread = timed(first)
    median2, spread2 = timed(again)
    note = (f"{rows:,} rows ({counts['ADD']:,} ADD, {counts['UPDATE']:,} UPDATE,"
            f" {counts['DELETE']:,} DELETE); {receipt.added + receipt.updated:,} claims,"
            f" {receipt.deleted:,} retired")
    return [
        Row("import_mem0(), fresh file store (s)", f"{median:.2f}", spread, "< 30",
            median < 30, note),
        Row("import_mem0() of the same file again (s)", f"{median2:.2f}", spread2, "-", None,
            "changes nothing"),
    ]


def alternate(calls: int, shim: Callable[[int], object], lib: Callable[[int], object]
              ) -> tuple[float, float]:
    """Median seconds of each of the two callables, called alternately ``calls`` times."""
    a: list[float] = []
    b: list[float] = []
    for i in range(calls):
        for fn, out in ((shim, a), (lib, b)) if i % 2 else ((lib, b), (shim, a)):
            start = time.perf_counter()
            fn(i)
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def bench_shim(calls: int, repeats: int) -> list[Row]:
    ratios: dict[str, list[float]] = {"add": [], "search": []}
    per_call: dict[str, list[float]] = {"add": [], "search": []}
    for _ in range(repeats):
        lib = Memvara(llm=NullLLM(), user="u")
        shim = Memory(memory=Memvara(llm=NullLLM()), user_id="u")
        for i in range(200):  # the same background data in both
            text = f"I like {LIKINGS[i % len(LIKINGS)]} number {i}"
            lib.add(text)
            shim.memvara.add(text, user="u")

        def says(i: int) -> str:
            return f"I speak {LANGUAGES[i % len(LANGUAGES)]}, lesson {i}"

        shim_t, lib_t = alternate(calls, lambda i: shim.add(says(i)), lambda i: lib.add(says(i)))
        ratios["add"].append(shim_t / lib_t)
        per_call["add"].append(lib_t)
        queries = [f"what does u like {w}" for w in LIKINGS]
        shim_t, lib_t = alternate(calls, lambda i: shim.search(queries[i % 8], top_k=10),
                                  lambda i: lib.search(queries[i % 8], k=10))
        ratios["search"].append(shim_t / lib_t)
        per_call["search"].append(lib_t)
        lib.close()
        shim.memvara.close()
    rows = []
    for name, wrapped in (("add", "Memvara.add"), ("search", "Memvara.search")):
        median, spread = timed(ratios[name])
        rows.append(Row(
            f"Memory.{name}() / {wrapped}() per call", f"{median:.3f}", spread, "<= 1.10",
            median <= 1.10, f"{wrapped}: {statistics.median(per_call[name]) * 1000:.2f} ms a call"))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the table here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mem0-compat-") as folder:
        rows = bench_import(Path(folder), args.rows, args.repeats)
    rows += bench_shim(args.calls, args.repeats)
    env = environment()
    print(f"# mem0 compatibility costs ({args.repeats} repeats)\n")
    print("| measure | median | spread | target | passed | note |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows:
        verdict = "-" if r.passed is None else ("yes" if r.passed else "FAIL")
        print(f"| {r.measure} | {r.median} | {r.spread} | {r.target} | {verdict} | {r.note} |")
    print()
    for key, value in env.items():
        print(f"- {key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"environment": env, "rows": [asdict(r) for r in rows]}, indent=2))
    return 0  # a missed target is a FAIL row in the table, not an error


if __name__ == "__main__":
    sys.exit(main())
