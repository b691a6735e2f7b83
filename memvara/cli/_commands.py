"""What each ``memvara`` command does, given its parsed arguments: open the store (read
commands read-only, and never where no store is), make one public call, print the
answer as a table or, with ``--json``, as one JSON document of ``to_dict()`` forms."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from typing import IO, Any, TextIO, TypedDict

from memvara import (
    STATES,
    ImportConflictError,
    InvalidExportError,
    Memvara,
    NullLLM,
    SQLiteStore,
    export_jsonl,
    import_jsonl,
    parse_instant,
)

from .._facade.core import POSTGRES_SCHEMES
from . import _plot
from ._render import (
    claim_table,
    episode_table,
    provenance_text,
    search_table,
    stats_text,
    timeline_table,
)

__all__ = ["COMMANDS", "UsageError"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]


class Clocks(TypedDict):
    """The instants a read is asked at (``None``: the read's default)."""

    valid_at: datetime | None
    known_at: datetime | None
    as_of: datetime | None


class Levels(TypedDict):
    """The scope's levels (``None``: unset)."""

    tenant: str | None
    user: str | None
    agent: str | None
    session: str | None


class UsageError(Exception):
    """A command cannot run as asked; the message says why and what to do."""


def store_path(args: argparse.Namespace) -> str:
    """The store ``--db`` (or ``MEMVARA_DB``) names, ``~`` expanded."""
    raw = args.db if args.db is not None else os.environ.get("MEMVARA_DB", "")
    if not raw:
        raise UsageError("which store? pass --db PATH, or set MEMVARA_DB")
    return os.path.expanduser(raw)


def _not_a_folder(path: str, option: str, example: str) -> None:
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not a file; pass a file path to {option},"
                         f" such as {os.path.join(path, example)}")


def _scope(args: argparse.Namespace) -> Levels:
    return Levels(tenant=args.tenant, user=args.user, agent=args.agent, session=args.session)


def open_for_reading(args: argparse.Namespace) -> Memvara:
    """The store at ``--db``, opened read-only; a path with no store is an error (and
    nothing is created there)."""
    path = store_path(args)
    if path.startswith(POSTGRES_SCHEMES):  # a server: opening says if no store is there
        return Memvara(path, read_only=True, llm=NullLLM(), **_scope(args))
    _not_a_folder(path, "--db", "memory.db")
    if not os.path.exists(path):
        raise UsageError(
            f"no memvara store at {path} (nothing was created); make one with"
            f" `memvara import --db {path} FILE`, `memvara demo --path {path}`, or"
            f" memvara.Memvara({path!r}) in Python")
    return Memvara(path, read_only=True, llm=NullLLM(), **_scope(args))


def clocks(args: argparse.Namespace) -> Clocks:
    """``valid_at``/``known_at``/``as_of`` from their options (each needs its offset)."""
    return Clocks(valid_at=_instant(args.valid_at, "--valid-at"),
                  known_at=_instant(args.known_at, "--known-at"),
                  as_of=_instant(args.as_of, "--as-of"))


def _instant(text: str | None, option: str) -> datetime | None:
    return None if text is None else parse_instant(text, option)


def _listed(text: str | None, option: str, allowed: tuple[str, ...] | None = None) -> list[str] | None:
    """A comma-separated option as a list (``None`` when not given)."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise UsageError(f"{option}: expected a comma-separated list, got {text!r}")
    for item in items:
        if allowed is not None and item not in allowed:
            raise UsageError(f"{option}: unknown value {item!r}; expected a comma-separated"
                             f" list drawn from {', '.join(allowed)}")
    return items


def _states(args: argparse.Namespace) -> list[str] | None:
    return _listed(args.states, "--states", tuple(STATES))


def _emit(args: argparse.Namespace, out: TextIO, document: Any, text: Callable[[], str]) -> None:
    if args.json:
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(text())


def _none_or(items: list[Any], noun: str, render: Callable[[], str]) -> Callable[[], str]:
    return (lambda: f"(no {noun})\n") if not items else render


def stats(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara stats``: the population counts."""
    with open_for_reading(args) as mem:
        counts = mem.stats()
    _emit(args, out, counts, lambda: stats_text(counts))
    return 0


def search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara search QUERY``: the best matches, lexical and vector, at one instant."""
    times, states = clocks(args), _states(args)
    with open_for_reading(args) as mem:
        found = mem.search(args.query, k=args.k, states=states,
                           include_episodes=args.episodes, **times)
    _emit(args, out, [r.to_dict() for r in found],
          _none_or(found, "matches", lambda: search_table(found)))
    return 0


def history(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara history SUBJECT PREDICATE``: one slot's claims in every state."""
    times = clocks(args)
    with open_for_reading(args) as mem:
        claims = mem.history(args.subject, args.predicate, **times)
    _emit(args, out, [c.to_dict() for c in claims],
          _none_or(claims, "claims", lambda: claim_table(claims, slot=True)))
    return 0


def get_all(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara get-all``: the claims in some states at one instant, newest first."""
    times, states = clocks(args), _states(args)
    narrow = {"subject": args.subject, "predicate": args.predicate}
    paging = args.limit is not None or args.offset != 0
    with open_for_reading(args) as mem:
        claims = mem.get_all(states=states, limit=args.limit, offset=args.offset,
                             **narrow, **times)
        total = mem.count(states=states, **narrow, **times) if paging and not args.json else 0

    def text() -> str:
        return (claim_table(claims) if claims else "") + (
            f"{len(claims)} of {_many(total, 'claims')}, from offset {args.offset}\n" if paging
            else f"{_many(len(claims), 'claims')}\n")

    _emit(args, out, [c.to_dict() for c in claims], text)
    return 0


def why(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara why CLAIM_ID``: where a claim came from and what became of it; exit
    status 1 when no such claim is visible."""
    times = clocks(args)
    with open_for_reading(args) as mem:
        found = mem.why(args.claim_id, **times)
    if found is None:
        err.write(f"memvara why: no claim {args.claim_id!r} is visible in this scope"
                  " (check the id, --tenant/--user/--agent/--session, and the clocks)\n")
        if args.json:
            out.write("null\n")
        return 1
    _emit(args, out, found.to_dict(), lambda: provenance_text(found))
    return 0


def episodes(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara episodes``: the stored conversation turns, oldest first."""
    times = clocks(args)
    roles = _listed(args.roles, "--roles")
    with open_for_reading(args) as mem:
        turns = mem.episodes(roles=roles, limit=args.limit, offset=args.offset, **times)
    _emit(args, out, [e.to_dict() for e in turns],
          _none_or(turns, "turns", lambda: episode_table(turns)))
    return 0


_ONE = {"aliases": "alias", "claims": "claim", "episodes": "episode", "predicates": "predicate",
        "tombstones": "tombstone"}
"""The singular of each plural noun a count is printed with."""


def _many(n: int, noun: str) -> str:
    """``n`` and ``noun``, singular when ``n`` is 1: "1 claim", "3 claims"."""
    return f"{n:,} {_ONE.get(noun, noun) if n == 1 else noun}"


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(_many(n, kind) for kind, n in counts.items())


def export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara export``: the store (the scope's subtree) as JSON Lines, to standard
    output or ``-o FILE``; a summary on standard error."""
    target = None if args.output in (None, "-") else os.path.expanduser(args.output)
    if target is not None:
        _not_a_folder(target, "-o", "memory.jsonl")
    with open_for_reading(args) as mem:
        counts = export_jsonl(mem, out if target is None else target)
    out.flush()
    err.write(f"memvara export: {_counted(counts)} from {store_path(args)}"
              f"{'' if target is None else ' to ' + target}\n")
    return 0


def import_(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara import FILE``: a file ``export`` wrote, into the store (created if
    missing; on any error nothing is imported, and a store made for it is removed)."""
    path = store_path(args)
    _not_a_folder(path, "--db", "memory.db")
    name = "<stdin>" if args.file == "-" else os.path.expanduser(args.file)
    if name != "<stdin>":
        _not_a_folder(name, "FILE", "memory.jsonl")
    source: IO[str] = sys.stdin if name == "<stdin>" else open(name, encoding="utf-8")
    before = {p for p in (path + s for s in SQLiteStore.FILE_SUFFIXES) if os.path.lexists(p)}
    try:
        with source, Memvara(path, llm=NullLLM(), **_scope(args)) as mem:
            counts = import_jsonl(mem, source)
    except (InvalidExportError, ImportConflictError) as exc:
        _remove_new(path, before)
        problem = exc.problem if isinstance(exc, InvalidExportError) \
            else f"line {exc.line}: {exc.problem}"
        raise UsageError(f"{name}: {problem}; nothing was imported") from None
    except BaseException:
        _remove_new(path, before)
        raise
    _emit(args, out, counts, lambda: f"imported {_counted(counts)} into {path}\n")
    return 0


def _remove_new(path: str, before: set[str]) -> None:
    """Remove the files of a store this import created (none if it was there before)."""
    if path in before:
        return
    for name in (path + s for s in SQLiteStore.FILE_SUFFIXES):
        if name not in before and os.path.lexists(name):
            os.remove(name)


def timeline(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``memvara timeline SUBJECT PREDICATE``: one slot on both clocks, as a table and,
    with ``--png FILE``, as the bitemporal diagram."""
    times = clocks(args)
    png = None if args.png is None else os.path.expanduser(args.png)
    if png is not None:
        _not_a_folder(png, "--png", "timeline.png")
        _plot.require_matplotlib()
    with open_for_reading(args) as mem:
        claims = mem.history(args.subject, args.predicate, **times)
    _emit(args, out, [c.to_dict() for c in claims], lambda: (
        f"{args.subject} {args.predicate}: {_many(len(claims), 'claims')} on both clocks\n"
        + (timeline_table(claims) if claims else "")))
    if png is None:
        return 0
    if not claims:
        err.write(f"memvara timeline: no claims for {args.subject} {args.predicate}"
                  f" here; {png} was not written\n")
        return 1
    now = times["as_of"] or times["known_at"] or datetime.now(timezone.utc)
    figure = _plot.timeline_figure(claims, now, f"{args.subject} {args.predicate}")
    size = _plot.save_png(figure, png)
    (err if args.json else out).write(f"wrote {png} ({size:,} bytes)\n")
    return 0


COMMANDS: dict[str, Command] = {
    "stats": stats, "search": search, "history": history, "get-all": get_all, "why": why,
    "episodes": episodes, "export": export, "import": import_, "timeline": timeline,
}
