"""Where a benchmark ran: printed beside every table, so a figure carries its machine."""

from __future__ import annotations

import os
import platform
import shlex
import sqlite3
import sys

import numpy as np

import memvara

__all__ = ["environment"]


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
