"""The ``memvara`` command: read a store from the shell (``stats``, ``search``,
``history``, ``get-all``, ``why``, ``episodes``, ``timeline``), move it in and out as
JSON Lines (``export``, ``import``), and ``demo``, which walks the two clocks on a
SQLite file.

An edge of the package: it uses memvara's public API only, as a user's program would.
``python -m memvara.cli`` runs it too.
"""

from __future__ import annotations

from .. import Claim as Claim
from .. import Memvara as Memvara
from .. import NullLLM as NullLLM
from .. import SQLiteStore as SQLiteStore
from ._app import main
from ._demo import run_demo

# Claim, Memvara, NullLLM and SQLiteStore were importable from memvara.cli when it was
# one module; they stay so (import them from memvara).

__all__ = ["main", "run_demo"]
