"""Where a benchmark ran: printed beside every table, so a figure carries its machine."""

from __future__ import annotations

import json
import os
import platform
import shlex
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Protocol

import numpy as np

import memvara

__all__ = ["environment", "save_rows", "tally"]


def environment() -> dict[str, str]:
    """The command line and the versions and machine that shape the timings."""
    return {
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "numpy": np.__version__,
        "memvara": memvara.__version__,
        "platform": platform.platform(),
        "cpus": str(os.cpu_count()),
        "switch interval": f"{sys.getswitchinterval() * 1000:g} ms",
    }


class _Judged(Protocol):
    passed: bool | None  # None: informational


def tally(rows: Sequence[_Judged]) -> str:
    """The closing line of a table: how many rows pass (or are informational) and fail."""
    fails = sum(1 for r in rows if r.passed is False)
    return f"{len(rows) - fails} of {len(rows)} rows pass or are informational; {fails} FAIL."


def save_rows(path: str, env: dict[str, str], rows: Sequence[Any]) -> None:
    """Write ``{"environment": env, "rows": [...]}`` (each row a dataclass) as JSON."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"environment": env, "rows": [asdict(r) for r in rows]}, handle, indent=2)
