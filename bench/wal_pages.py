"""Which pages ``bench/perf.py``'s writes dirty: per commit, by b-tree, and how many
distinct pages a checkpoint would copy.

Run::

    python bench/wal_pages.py [--size 100000] [--layouts root,users]
                              [--kinds fresh,revise,bulk] [--repeats 4]
                              [--windows 1000,4000,16000]

For each layout it fills a file store as ``perf.py`` does (``perf._build``), closes and
reopens it (as ``perf.py`` does before its write rows), then runs ``perf.py``'s own write
samplers (``perf._write_measures``: 500 ``remember()`` calls a repeat on fresh slots, 500
that close an old value, or one ``remember_many()`` of 5,000 fresh claims), each kind in
turn on the same store. While a kind runs, the write-ahead log is emptied first and never
checkpointed, so every page each commit wrote stays in it as a frame; the frames' headers
give each commit's pages, and SQLite's ``dbstat`` table names the b-tree each page belongs
to. Counts, not timings: they do not move with the machine's load. Per kind:

* WAL pages a commit (a write, or a ``remember_many()`` call), and the b-trees they
  belong to (``(free)``: a page no b-tree holds when the counts are taken);
* distinct pages a commit for a checkpoint every W frames (``--windows``): a checkpoint
  copies each distinct page once, however often the commits since the last one wrote it,
  so this is the copying a write pays at ``wal_autocheckpoint = W`` (the store's is
  ``CHECKPOINT_PAGES``, 4,000).

Which library it measures is the one Python imports: put another checkout first on
``PYTHONPATH`` to measure that one.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import struct
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import perf
from _report import environment

from memvara.store.sqlite._connections import CHECKPOINT_PAGES

KINDS = {"fresh": 0, "revise": 1, "bulk": 2}
"""Each kind's index among ``perf._write_measures``' samplers."""
WAL_HEADER = 32
FRAME_HEADER = 24


def wal_commits(wal: bytes, page_size: int) -> list[list[int]]:
    """Each commit's page numbers, in the order its frames were appended, read from a
    write-ahead log's frame headers (a frame whose second word is non-zero ends a
    commit). Frames after the last commit (none in a settled log) are left out."""
    commits: list[list[int]] = []
    pages: list[int] = []
    for offset in range(WAL_HEADER, len(wal) - FRAME_HEADER - page_size + 1,
                        FRAME_HEADER + page_size):
        page, size_after_commit = struct.unpack(">II", wal[offset : offset + 8])
        pages.append(page)
        if size_after_commit:
            commits.append(pages)
            pages = []
    return commits


def distinct_per_commit(commits: Sequence[Sequence[int]], window: int) -> float | None:
    """Distinct pages a commit when a checkpoint runs every ``window`` frames: the log's
    frames cut into whole windows, each window's distinct pages over the commits it
    holds; ``None`` if the log does not fill one window."""
    frames = [page for commit in commits for page in commit]
    whole = len(frames) // window
    if not whole:
        return None
    distinct = sum(len(set(frames[i * window : (i + 1) * window])) for i in range(whole))
    return distinct / (whole * window * len(commits) / len(frames))


@dataclass
class Pages:
    """What one kind of write wrote, on one layout's store."""

    layout: str
    kind: str
    n: int
    commits: int
    frames: int
    by_tree: dict[str, float]  # b-tree -> pages a commit, most first
    distinct: dict[int, float | None] = field(default_factory=dict)  # window -> a commit


def count_pages(path: str, n: int, layout: str, kinds: Sequence[str], repeats: int,
                windows: Sequence[int]) -> list[Pages]:
    """Fill a store at ``path`` with ``n`` claims as ``perf.py`` does and count the pages
    each kind of its writes dirties (see the module's docstring)."""
    built = perf._build("sqlite", path, n, layout, cap_s=1e9)
    built.mem.close()
    built.mem = perf._open("sqlite", path, built.clock)
    cfg = perf.Settings(repeats, 1e9, sample_cap_s=1e9, row_budget_s=1e9)
    measures = perf._write_measures(built, layout, f"{layout}{n}", cfg)
    writer = built.mem.store._writer  # type: ignore[attr-defined]  # SQLiteStore's own
    out: list[Pages] = []
    try:
        for kind in kinds:
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            writer.execute("PRAGMA wal_autocheckpoint = 0")
            for rep in range(repeats):
                measures[KINDS[kind]].sample(rep)
            with open(path + "-wal", "rb") as log:
                wal = log.read()
            out.append(_tally(path, wal, layout, kind, built.n, windows))
            writer.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
    finally:
        built.mem.close()
    return out


def _tally(path: str, wal: bytes, layout: str, kind: str, n: int,
           windows: Sequence[int]) -> Pages:
    reader = sqlite3.connect(path)
    try:
        page_size = int(reader.execute("PRAGMA page_size").fetchone()[0])
        trees = dict(reader.execute("SELECT pageno, name FROM dbstat").fetchall())
    finally:
        reader.close()
    commits = wal_commits(wal, page_size)
    frames = sum(len(c) for c in commits)
    named = Counter(trees.get(page, "(free)") for commit in commits for page in commit)
    return Pages(layout, kind, n, len(commits), frames,
                 {tree: count / len(commits) for tree, count in named.most_common()},
                 {w: distinct_per_commit(commits, w) for w in windows})


def _table(rows: Sequence[Pages], windows: Sequence[int], top: int) -> str:
    head = ("| layout | N | writes | commits | WAL pages a commit | of which, by b-tree | "
            + " | ".join(f"distinct a commit, checkpoint every {w:,}" for w in windows) + " |")
    lines = [head, "|" + "---|" * (6 + len(windows))]
    for r in rows:
        trees = ", ".join(f"{t} {v:.2f}" for t, v in list(r.by_tree.items())[:top])
        cells = " | ".join("-" if r.distinct[w] is None else f"{r.distinct[w]:.2f}"
                           for w in windows)
        lines.append(f"| {r.layout} | {r.n:,} | {r.kind} | {r.commits:,} |"
                     f" {r.frames / r.commits:.2f} | {trees} | {cells} |")
    return "\n".join(lines)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--size", type=int, default=100_000, help="claims in each store")
    p.add_argument("--layouts", default="root,users", help="root, users, or both")
    p.add_argument("--kinds", default="fresh,revise,bulk",
                   help="perf.py's write rows to count: fresh, revise, bulk")
    p.add_argument("--repeats", type=int, default=4,
                   help="perf.py samples of each kind (500 writes, or one bulk call)")
    p.add_argument("--windows", default="1000,4000,16000",
                   help="checkpoint intervals, in frames, to count distinct pages for")
    p.add_argument("--top", type=int, default=6, help="b-trees shown a row")
    args = p.parse_args(argv)
    args.layout_list = [s.strip() for s in args.layouts.split(",") if s.strip()]
    if not args.layout_list or any(s not in perf.LAYOUTS for s in args.layout_list):
        p.error(f"--layouts takes a subset of {','.join(perf.LAYOUTS)}")
    args.kind_list = [s.strip() for s in args.kinds.split(",") if s.strip()]
    if not args.kind_list or any(s not in KINDS for s in args.kind_list):
        p.error(f"--kinds takes a subset of {','.join(KINDS)}")
    try:
        args.window_list = [int(w) for w in args.windows.split(",") if w.strip()]
    except ValueError:
        p.error("--windows takes frame counts, e.g. 1000,4000")
    if any(w < 1 for w in args.window_list):
        p.error("--windows must be positive frame counts")
    if args.size < 10 or args.repeats < 1:
        p.error("--size needs at least 10 claims and --repeats at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    print("# memvara: WAL pages of bench/perf.py's writes\n")
    for key, value in environment().items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    print(f"- store: perf.py's fill of {args.size:,} claims, reopened; kinds in turn on one"
          f" store, {args.repeats} perf.py samples each; no checkpoint while counting\n")
    rows: list[Pages] = []
    with tempfile.TemporaryDirectory(prefix="memvara-walpages-") as base:
        for layout in args.layout_list:
            print(f"... {layout}: filling {args.size:,}", file=sys.stderr, flush=True)
            rows.extend(count_pages(os.path.join(base, f"{layout}.db"), args.size, layout,
                                    args.kind_list, args.repeats, args.window_list))
    print(_table(rows, args.window_list, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
