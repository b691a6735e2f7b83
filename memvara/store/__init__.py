"""Storage backends: the public ``Store`` protocol and the default ``SQLiteStore``."""

from __future__ import annotations

from .._domain.model import STATES, TimeQuery
from .base import RankFields, Store
from .sqlite.store import SQLiteStore

__all__ = ["RankFields", "SQLiteStore", "STATES", "Store", "TimeQuery"]
