"""Storage backends: the public ``Store`` protocol and the default ``SQLiteStore``."""

from __future__ import annotations

from .._model import STATES, TimeQuery
from .base import Store
from .sqlite import SQLiteStore

__all__ = ["SQLiteStore", "STATES", "Store", "TimeQuery"]
