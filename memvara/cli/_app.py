"""The ``memvara`` command line: its parser, and ``main()``, which runs one command and
turns every failure into one line on standard error and exit status 2."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from memvara import InvalidArgumentError, MemvaraError, __version__

from ._commands import COMMANDS, UsageError
from ._demo import DemoPathError, run_demo
from ._plot import PlotUnavailableError

__all__ = ["main"]

DESCRIPTION = """\
Read a memvara store from the shell: each claim on two clocks (valid time, when it held
in the world; transaction time, when memvara believed it). Read commands open the store
read-only and never create one. Options follow the command:
  memvara history --db memory.db --user alice --json alice lives_in"""

EPILOG = """\
instants are ISO-8601 with a UTC offset (2026-06-24T09:30:00+02:00, or Z for UTC);
--db defaults to $MEMVARA_DB; exit status: 0 done, 1 nothing found (why, timeline --png),
2 an error (one line on standard error)"""


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line (``UsageError``), not usage plus a message."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _options(kind: str) -> _Parser:
    """A parent parser holding one group of the options commands share."""
    group = _Parser(add_help=False)
    if kind == "store":
        group.add_argument("--db", metavar="PATH",
                           help="the store's file (default: $MEMVARA_DB); ~ is expanded")
        for level in ("tenant", "user", "agent", "session"):
            group.add_argument(f"--{level}", metavar="ID", help=f"the scope's {level}")
    elif kind == "clocks":
        group.add_argument("--valid-at", metavar="INSTANT",
                           help="the world clock: what held at this instant (default: now"
                           " for search and get-all; any time for the others)")
        group.add_argument("--known-at", metavar="INSTANT",
                           help="the belief clock: as believed at this instant (default: now)")
        group.add_argument("--as-of", metavar="INSTANT",
                           help="both clocks at once; not with --valid-at or --known-at")
    elif kind == "states":
        group.add_argument("--states", metavar="LIST",
                           help="comma-separated, from live, ended, retired (default: live)")
    else:
        group.add_argument("--json", action="store_true",
                           help="print one JSON document of the results' to_dict() forms")
    return group


def _paging(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, metavar="N", help="at most N (default: all)")
    parser.add_argument("--offset", type=int, default=0, metavar="N", help="skip the first N")


def build_parser() -> argparse.ArgumentParser:
    """The ``memvara`` parser, with every command."""
    parser = _Parser(prog="memvara", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"memvara {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    store, clocks, states, as_json = (_options(kind) for kind in ("store", "clocks", "states", "json"))

    def command(name: str, summary: str, *parents: _Parser) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=summary, description=summary, parents=list(parents))

    command("stats", "population counts: claims in each state, turns, vectors", store, as_json)
    found = command("search", "the best matches for a query, keyword and vector, at one instant",
                    store, clocks, states, as_json)
    found.add_argument("query", metavar="QUERY", help="what to look for (any text)")
    found.add_argument("-k", type=int, default=10, metavar="N", help="at most N results (default 10)")
    found.add_argument("--episodes", action="store_true",
                       help="rank conversation turns alongside claims")
    slots = {name: command(name, summary, store, clocks, as_json) for name, summary in (
        ("history", "one slot's claims, every state, in recorded order"),
        ("timeline", "one slot on both clocks: a table, or a diagram (--png)"))}
    for slot in slots.values():
        slot.add_argument("subject", metavar="SUBJECT")
        slot.add_argument("predicate", metavar="PREDICATE")
    slots["timeline"].add_argument(
        "--png", metavar="FILE",
        help="draw the bitemporal diagram to FILE (needs matplotlib: pip install '.[plot]')")
    listing = command("get-all", "the claims at one instant (default: live now), newest first",
                      store, clocks, states, as_json)
    listing.add_argument("--subject", help="only claims about this entity")
    listing.add_argument("--predicate", help="only claims with this predicate")
    _paging(listing)
    command("why", "where a claim came from and what became of it", store, clocks,
            as_json).add_argument("claim_id", metavar="CLAIM_ID")
    turns = command("episodes", "the stored conversation turns, oldest first", store, clocks,
                    as_json)
    turns.add_argument("--roles", metavar="LIST",
                       help="comma-separated, from user, assistant, system, tool")
    _paging(turns)
    command("export", "write the store (the scope's subtree) as JSON Lines", store).add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE, whole or not at all"
        " (default: standard output)")
    command("import", "read a file export wrote into the store (creating it if missing)",
            store, as_json).add_argument("file", metavar="FILE", help="the export, or - for"
                                         " standard input")
    demo = command("demo", "write a short bitemporal story to a new SQLite file and read it back")
    demo.add_argument("--path", default="memvara-demo.db",
                      help="where to write it (default: memvara-demo.db); a demo store made"
                      " there before is re-created, anything else is left alone")
    return parser


_OPTION = {"k": "-k", "query": "QUERY", "claim_id": "CLAIM_ID", "out": "-o", "dsn": "--db"}


def _argument(name: str, command: str) -> str:
    """The option or operand of ``command`` that a library argument's name stands for."""
    if name.startswith("-"):  # already an option's name (parse_instant's argument)
        return name
    if name in ("subject", "predicate") and command in ("history", "timeline"):
        return name.upper()
    return _OPTION.get(name, "--" + name.replace("_", "-"))


def _os_error(exc: OSError) -> str:
    name = exc.filename2 if exc.filename2 is not None else exc.filename
    text = exc.strerror or str(exc)
    return f"{name}: {text}" if name is not None else text


def _demo(args: argparse.Namespace) -> int:
    run_demo(args.path, sys.stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``memvara`` console script: run one command; its exit status.

    0 when it did what was asked, 1 when what was asked for is not there (``why`` of an
    unknown id), 2 for an error, reported as one line on standard error.
    """
    out, err = sys.stdout, sys.stderr
    command = "memvara"
    try:
        try:
            args, extra = build_parser().parse_known_args(argv)
        except SystemExit as done:  # --help and --version print, then exit 0
            return done.code if isinstance(done.code, int) else 0
        if extra:  # argparse would send the reader to ``memvara --help``, not the command's
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}"
                             f" (see memvara {args.command} --help)")
        command = f"memvara {args.command}"
        status = _demo(args) if args.command == "demo" else COMMANDS[args.command](args, out, err)
        out.flush()
        return status
    except BrokenPipeError:  # the reader went away (memvara export | head): stop quietly
        _silence(out)
        return 1
    except KeyboardInterrupt:
        err.write(f"{command}: interrupted\n")
        return 130
    except InvalidArgumentError as exc:
        message = f"{_argument(exc.argument, command.split()[-1])}: {exc.problem}"
    except (MemvaraError, UsageError, DemoPathError, PlotUnavailableError) as exc:
        message = str(exc)
    except ImportError as exc:  # an extra the store needs (--db postgresql://...): its hint
        message = str(exc)
    except OSError as exc:
        message = _os_error(exc)
    err.write(f"{command}: {message}\n")
    return 2


def _silence(out: TextIO) -> None:
    """Point standard output at the null device, so that Python's own flush at exit does
    not fail on the closed pipe a second time."""
    try:
        fd = out.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError):  # not a real file: nothing will flush it
        pass
