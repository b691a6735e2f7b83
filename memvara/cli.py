"""The ``memvara`` command: ``memvara demo`` walks the two clocks on a SQLite file."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TextIO

from . import __version__
from ._facade.memvara import Memvara
from .llm import NullLLM
from ._domain.model import Claim
from .store.sqlite.store import SQLiteStore

__all__ = ["main", "run_demo"]


def _day(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)


def run_demo(path: str, out: TextIO) -> dict[str, int]:
    """Write a short bitemporal story to ``path`` and print what each clock answers.

    The clock is pinned, so the output is the same on every run.

    Returns:
        The store's ``stats()`` at the end.
    """
    for suffix in SQLiteStore.FILE_SUFFIXES:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    jan, mar, jun, aug, now = (_day(d) for d in
                               ("2026-01-06", "2026-03-01", "2026-06-24", "2026-08-10", "2026-09-01"))

    def show(label: str, claims: list[Claim]) -> None:
        out.write(f"  {label:<46} {[c.object for c in claims]}\n")

    with Memvara(path, user="alice", clock=lambda: now, llm=NullLLM()) as mem:
        out.write(f"memvara {__version__} demo: a memory in {path}\n\n")
        out.write("Writes (valid_from = when it became true, recorded_at = when we learned it):\n")
        steps = [
            ("lives_in Berlin, true since Jan, learned Jan", "lives_in", "Berlin", jan, jan),
            ("works_at Acme Corp., since Jan, learned Jan", "works_at", "Acme Corp.", jan, jan),
            ("lives_in Lisbon, true since Jun, learned Aug", "lives_in", "Lisbon", jun, aug),
            ("works_at ACME, Inc. again, learned Aug", "works_at", "ACME, Inc.", aug, aug),
        ]
        for label, predicate, obj, valid_from, recorded_at in steps:
            receipt = mem.remember("alice", predicate, obj,
                                   valid_from=valid_from, recorded_at=recorded_at)
            out.write(f"  {label:<46} added {len(receipt.added)}, reinforced"
                      f" {len(receipt.reinforced)}, closed {len(receipt.closed)}\n")
        out.write("\nReads:\n")
        show("now: where does alice live?", mem.get_all())
        show("valid_at=Mar (what we now know of March)", mem.get_all(valid_at=mar))
        show("valid_at=Jul (the late news is visible)", mem.get_all(valid_at=_day("2026-07-01")))
        show("as_of=Jul (what we believed in July)", mem.get_all(as_of=_day("2026-07-01")))
        show("states=['ended'] (true once)", mem.get_all(states=["ended"]))
        out.write("\nTimeline of alice/lives_in:\n")
        for c in mem.history("alice", "lives_in"):
            until = c.valid_to.date().isoformat() if c.valid_to else "open"
            out.write(f"  {c.object:<8} {c.state:<8} valid {c.valid_from.date()} .. {until},"  # type: ignore[union-attr]
                      f" recorded {c.recorded_at.date()}\n")  # type: ignore[union-attr]
        stats = mem.stats()
        out.write(f"\nstats(): {stats}\n")
        store = mem.store
        assert isinstance(store, SQLiteStore)  # noqa: S101 - built from a path just above
        files = store.files
    sizes = {name: os.path.getsize(name) for name in files if os.path.exists(name)}
    out.write(f"files: {', '.join(f'{name} ({n:,} bytes)' for name, n in sizes.items())}\n")
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``memvara`` console script."""
    parser = argparse.ArgumentParser(prog="memvara", description=__doc__)
    parser.add_argument("--version", action="version", version=f"memvara {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run a short bitemporal demo on a SQLite file")
    demo.add_argument("--path", default="memvara-demo.db",
                      help="the SQLite file to (re)create (default: memvara-demo.db)")
    args = parser.parse_args(argv)
    run_demo(args.path, sys.stdout)
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    raise SystemExit(main())
