"""Storage backends: the public ``Store`` protocol and the default ``SQLiteStore``."""

from __future__ import annotations

from .._model import STATES, TimeQuery
from .base import RankFields, Store
from .sqlite import SQLiteStore

__all__ = ["RankFields", "SQLiteStore", "STATES", "Store", "TimeQuery"]
