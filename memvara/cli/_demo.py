"""``memvara demo``: a short bitemporal story written to a SQLite file, and what each
clock answers about it.

The demo never deletes or overwrites a file it did not make. It writes its story where
nothing is; where something is, it re-creates it only if that is a memvara store
holding exactly the demo's story (as an export compares it: every record, every id and
instant, with the clock the demo pins). Anything else at the path (another store, the
demo's store with one more fact, any other file, a stray ``-wal`` with no database) is
left alone, and the demo refuses, naming the path.

Why compare the content rather than keep a marker beside the file: a marker can outlive
the store it marked (delete the store, put your own there, and a stale marker would
vouch for it), and it says nothing of writes made since. Replacing a file whose content
is exactly what the demo writes loses nothing, whoever made it.
"""

from __future__ import annotations

import io
import json
import os
from datetime import datetime, timezone
from typing import TextIO

from memvara import Claim, Memvara, MemvaraError, NullLLM, SQLiteStore, __version__, export_jsonl

__all__ = ["DemoPathError", "run_demo"]

_USER = "alice"


class DemoPathError(Exception):
    """``memvara demo`` will not write at this path; the message names it and says why."""


def _day(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)


_NOW = _day("2026-09-01")
"""The demo's pinned clock: its output, and its store, are the same on every run."""


def _open(path: str) -> Memvara:
    return Memvara(path, user=_USER, clock=lambda: _NOW, llm=NullLLM())


def _story(mem: Memvara, path: str, out: TextIO) -> dict[str, int]:
    """Write the demo's facts to ``mem``, print what each clock answers, and return
    ``stats()``."""
    jan, mar, jun, aug = (_day(d) for d in ("2026-01-06", "2026-03-01", "2026-06-24", "2026-08-10"))

    def show(label: str, claims: list[Claim]) -> None:
        out.write(f"  {label:<46} {[c.object for c in claims]}\n")

    out.write(f"memvara {__version__} demo: a memory in {path}\n\n")
    out.write("Writes (valid_from = when it became true, recorded_at = when we learned it):\n")
    steps = [
        ("lives_in Berlin, true since Jan, learned Jan", "lives_in", "Berlin", jan, jan),
        ("works_at Acme Corp., since Jan, learned Jan", "works_at", "Acme Corp.", jan, jan),
        ("lives_in Lisbon, true since Jun, learned Aug", "lives_in", "Lisbon", jun, aug),
        ("works_at ACME, Inc. again, learned Aug", "works_at", "ACME, Inc.", aug, aug),
    ]
    for label, predicate, obj, valid_from, recorded_at in steps:
        receipt = mem.remember(_USER, predicate, obj, valid_from=valid_from, recorded_at=recorded_at)
        out.write(f"  {label:<46} added {len(receipt.added)}, reinforced"
                  f" {len(receipt.reinforced)}, closed {len(receipt.closed)}\n")
    out.write("\nReads:\n")
    show("now (everything true today)", mem.get_all())
    show("valid_at=Mar (what we now know of March)", mem.get_all(valid_at=mar))
    show("valid_at=Jul (the late news is visible)", mem.get_all(valid_at=_day("2026-07-01")))
    show("as_of=Jul (what we believed in July)", mem.get_all(as_of=_day("2026-07-01")))
    show("states=['ended'] (true once)", mem.get_all(states=["ended"]))
    out.write("\nTimeline of alice/lives_in:\n")
    for c in mem.history(_USER, "lives_in"):
        until = c.valid_to.date().isoformat() if c.valid_to else "open"
        out.write(f"  {c.object:<8} {c.state:<8} valid {c.valid_from.date()} .. {until},"  # type: ignore[union-attr]
                  f" recorded {c.recorded_at.date()}\n")  # type: ignore[union-attr]
    stats = mem.stats()
    out.write(f"\nstats(): {stats}\n")
    return stats


def _content(mem: Memvara) -> list[object]:
    """Everything the store holds, in every scope, as its export's records (without the
    header's ``exported_at``, the one field that changes from one export to the next)."""
    buffer = io.StringIO()
    export_jsonl(mem.scope(tenant=None), buffer)
    header, *records = (json.loads(line) for line in buffer.getvalue().splitlines())
    header.pop("exported_at", None)
    return [header, *records]


def is_demo_store(path: str) -> bool:
    """Whether ``path`` is a memvara store holding exactly the demo's story (opened
    read-only: nothing at ``path`` is written)."""
    try:
        with Memvara(path, read_only=True, llm=NullLLM()) as found:
            content = _content(found)
    except MemvaraError:  # not a store, one too new to read, ...: not the demo's
        return False
    with _open(":memory:") as fresh:
        _story(fresh, path, io.StringIO())
        return content == _content(fresh)


def _files(path: str) -> list[str]:
    return [path + suffix for suffix in SQLiteStore.FILE_SUFFIXES if os.path.lexists(path + suffix)]


def _clear(path: str) -> None:
    """Remove the demo store at ``path`` (its files), or refuse if what is there is not
    one the demo made."""
    if os.path.isdir(path):
        raise DemoPathError(f"{path} is a folder; pass the path of a file to write the demo"
                            f" store to, such as --path {os.path.join(path, 'memvara-demo.db')}")
    present = _files(path)
    if not present:
        return
    if not os.path.lexists(path):
        raise DemoPathError(
            f"{path} does not exist, but {', '.join(present)} does: files the demo did not make;"
            " remove them yourself, or pass another --path")
    if os.path.islink(path) or not os.path.isfile(path) or not is_demo_store(path):
        raise DemoPathError(
            f"{path} exists and is not a demo store (it holds something other than the"
            " demo's story); it is left as it is: pass another --path, or remove it yourself")
    for name in present:
        os.remove(name)


def run_demo(path: str, out: TextIO) -> dict[str, int]:
    """Write a short bitemporal story to a new store at ``path`` and print what each
    clock answers.

    The clock is pinned, so the output is the same on every run. A store this demo wrote
    earlier at ``path`` is re-created; anything else there is left alone.

    Returns:
        The store's ``stats()`` at the end.

    Raises:
        DemoPathError: ``path`` is a folder, or holds something the demo did not write.
        StoreError: the store cannot be created there (its folder does not exist, ...).
    """
    path = os.path.expanduser(path)
    _clear(path)
    with _open(path) as mem:
        stats = _story(mem, path, out)
    sizes = {name: os.path.getsize(name) for name in _files(path)}
    out.write(f"files: {', '.join(f'{name} ({n:,} bytes)' for name, n in sizes.items())}\n")
    return stats
