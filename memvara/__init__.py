"""memvara: bitemporal memory for AI agents, embedded on SQLite and numpy.

Facts are ``Claim`` triples with two clocks, valid time and transaction time;
contradictions resolve on the predicate's cardinality, with no model on the write path;
every read can be asked at any ``(valid_at, known_at)`` pair.
"""

from __future__ import annotations

from ._entities import entity_key
from ._errors import (
    ClaimNotFoundError,
    ClosedError,
    DimensionMismatchError,
    InvalidArgumentError,
    InvalidTimeError,
    MemvaraError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StorageFullError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
)
from ._facade import Memvara, ScopedMemvara
from ._model import MEMORY_TYPES, STATES, Claim, Episode, Scope, Skip, State, WriteReceipt
from .embed import Embedder, HashingEmbedder
from .schema import (
    BUILTIN_PREDICATES,
    Cardinality,
    PredicateRegistry,
    PredicateSpec,
    Volatility,
)
from .store import SQLiteStore, Store

__version__ = "0.1.0"

__all__ = [
    "BUILTIN_PREDICATES",
    "Cardinality",
    "Claim",
    "ClaimNotFoundError",
    "ClosedError",
    "DimensionMismatchError",
    "Embedder",
    "Episode",
    "HashingEmbedder",
    "InvalidArgumentError",
    "InvalidTimeError",
    "MEMORY_TYPES",
    "Memvara",
    "MemvaraError",
    "NotAStoreError",
    "PredicateRegistry",
    "PredicateSpec",
    "ReadOnlyStoreError",
    "SQLiteStore",
    "STATES",
    "SchemaVersionError",
    "Scope",
    "ScopedMemvara",
    "Skip",
    "State",
    "StorageFullError",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "Volatility",
    "WriteReceipt",
    "__version__",
    "entity_key",
]
