"""memvara: bitemporal memory for AI agents, embedded on SQLite and numpy.

Facts are ``Claim`` triples with two clocks, valid time and transaction time;
contradictions resolve on the predicate's cardinality, with no model on the write path;
every read can be asked at any ``(valid_at, known_at)`` pair.
"""

from __future__ import annotations

import typing

from ._facade.aio import AsyncMemvara, AsyncScopedMemvara
from ._domain.entities import entity_key
from ._domain.time import parse_instant
from ._errors import (
    BackgroundWriteError,
    ClaimNotFoundError,
    ClosedError,
    DimensionMismatchError,
    ImportConflictError,
    InvalidArgumentError,
    InvalidExportError,
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
from ._facade.memvara import Memvara, ScopedMemvara
from ._facade.transfer import export_jsonl, import_jsonl
from ._domain.erasure import ErasureManifest, ErasureRequest, ErasureTarget
from ._domain.ledger import LogReport
from ._domain.review import Observation, Review
from ._domain.model import MEMORY_TYPES, STATES, Claim, Episode, Scope, State
from ._domain.results import (
    ConflictCheck, Explanation, Path, Provenance, Retrieved, Skip, WriteReceipt,
)
from .embed import Embedder, HashingEmbedder
from .llm import LLM, DegradedExtractionWarning, ExtractionPendingError, LLMError, NullLLM
from .redact import BasicRedactor, Redactor
from .schema import (
    BUILTIN_PREDICATES,
    Cardinality,
    PredicateRegistry,
    PredicateSpec,
    Volatility,
)
from .store import SQLiteStore, Store
from .telemetry import MemoryRecorder, Recorder

if typing.TYPE_CHECKING:
    from .llm.anthropic import AnthropicLLM
    from .llm.openai import OpenAILLM

__version__ = "0.1.0"

__all__ = [
    "AnthropicLLM",
    "AsyncMemvara",
    "AsyncScopedMemvara",
    "BUILTIN_PREDICATES",
    "BackgroundWriteError",
    "BasicRedactor",
    "Cardinality",
    "Claim",
    "ClaimNotFoundError",
    "ClosedError",
    "ConflictCheck",
    "DegradedExtractionWarning",
    "DimensionMismatchError",
    "Embedder",
    "Episode",
    "ErasureManifest",
    "ErasureRequest",
    "ErasureTarget",
    "Explanation",
    "ExtractionPendingError",
    "HashingEmbedder",
    "ImportConflictError",
    "InvalidArgumentError",
    "InvalidExportError",
    "InvalidTimeError",
    "LLM",
    "LLMError",
    "LogReport",
    "MEMORY_TYPES",
    "MemoryRecorder",
    "Memvara",
    "MemvaraError",
    "NotAStoreError",
    "NullLLM",
    "Observation",
    "OpenAILLM",
    "Path",
    "PredicateRegistry",
    "PredicateSpec",
    "Provenance",
    "ReadOnlyStoreError",
    "Recorder",
    "Redactor",
    "Retrieved",
    "Review",
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
    "export_jsonl",
    "import_jsonl",
    "parse_instant",
]


def __getattr__(name: str) -> object:
    """``AnthropicLLM`` and ``OpenAILLM`` load on first use, so importing memvara never
    imports a model SDK (the core install is memvara and numpy)."""
    if name in ("AnthropicLLM", "OpenAILLM"):
        from . import llm

        return getattr(llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
