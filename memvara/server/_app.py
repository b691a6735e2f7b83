"""``memvara-mcp``: read the store and the scope from the environment, open the memory,
and serve MCP on standard input and output until the client closes it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from memvara import Memvara, MemvaraError, NullLLM

from ._protocol import Session
from ._wire import serve

__all__ = ["CONFIG", "LEVELS", "main"]

LEVELS = ("tenant", "user", "agent", "session")
"""The scope's levels, each read from ``MEMVARA_<LEVEL>``; no tool argument can set one."""

CONFIG = """\
{
  "mcpServers": {
    "memvara": {
      "command": "memvara-mcp",
      "env": {
        "MEMVARA_DB": "/absolute/path/to/memory.db",
        "MEMVARA_USER": "alice"
      }
    }
  }
}
"""
"""The block to put in an MCP client's configuration (Claude Desktop, Cursor, ...)."""

USAGE = f"""\
memvara-mcp: memvara's memory as an MCP server (JSON-RPC 2.0 over standard input and
output), started by an MCP client rather than by hand. It takes no arguments; the
environment says which store and whose memory:

  MEMVARA_DB        the store's file (required; created if missing; ~ is expanded)
  MEMVARA_TENANT, MEMVARA_USER, MEMVARA_AGENT, MEMVARA_SESSION
                    the scope every tool reads and writes (each optional)

Add it to your MCP client's configuration:

{CONFIG}"""


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Entry point of ``memvara-mcp`` and ``python -m memvara.server``: the exit status.

    0 when the client closed standard input, 1 when it stopped reading first, 2 when
    the server could not start (no ``MEMVARA_DB``, arguments given, or a store that will
    not open), with the reason on standard error.
    """
    argv = sys.argv[1:] if argv is None else argv
    env = os.environ if environ is None else environ
    if list(argv) in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if argv:
        sys.stderr.write(f"memvara-mcp: no arguments are taken, got {' '.join(argv)!r}\n\n{USAGE}")
        return 2
    db = env.get("MEMVARA_DB", "").strip()
    if not db:
        sys.stderr.write(f"memvara-mcp: MEMVARA_DB is not set: which store should memory"
                         f" live in?\n\n{USAGE}")
        return 2
    tenant, user, agent, session = (env.get(f"MEMVARA_{level.upper()}") or None
                                    for level in LEVELS)
    try:
        mem = Memvara(os.path.expanduser(db), llm=NullLLM(), tenant=tenant, user=user,
                      agent=agent, session=session)
    except MemvaraError as exc:
        sys.stderr.write(f"memvara-mcp: {exc}\n")
        return 2
    saved = sys.stdout
    sys.stdout = sys.stderr  # a stray print() must not corrupt the protocol's stream
    try:
        with mem:
            return serve(Session(mem), sys.stdin.buffer, saved.buffer)
    finally:
        sys.stdout = saved
