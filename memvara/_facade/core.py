"""What one open memory owns (``Core``), how it is opened (``open_core``), and the base of
every handle on it (``Handle``: a core and a default scope)."""

from __future__ import annotations

import os
from datetime import timedelta
import warnings

from .._caller import user_stacklevel
from .._domain.args import ScopeArg, resolve_scope
from .._domain import args as _args
from .._domain.model import Scope
from .._domain.time import Clock, system_clock
from .._errors import ClosedError, DimensionMismatchError, InvalidArgumentError
from .._read.retrieve import Retriever
from .._write.aliases import Aliases
from .._write.background import QUEUE_SIZE, Background
from .._write.ingest import DUPLICATE_WINDOW, Ingest
from .._write.reembed import fingerprint, reembed_store
from .._write.encode import encode_checked
from .._write.writer import Writer
from ..embed import Embedder, HashingEmbedder
from ..llm import LLM, DegradedExtractionWarning, NullLLM
from ..redact import Redactor
from ..rerank import Reranker
from ..schema import BUILTIN_PREDICATES, PredicateRegistry
from ..store.base import Store
from ..store.postgres import PostgresStore
from ..store.sqlite import SQLiteStore
from ..telemetry import Recorder

__all__ = ["Core", "Handle", "check_embedder", "open_core"]


class Core:
    """What one open memory owns: the store, schema, embedder, model, clock and services."""

    def __init__(
        self,
        store: Store,
        registry: PredicateRegistry,
        embedder: Embedder,
        clock: Clock,
        llm: LLM,
        redactor: Redactor | None,
        recorder: Recorder | None,
        resolve_entities: bool = False,
        vector_weight: float | None = None,
        reranker: Reranker | None = None,
        rerank_top_n: int = 20,
        queue_size: int = QUEUE_SIZE,
        duplicate_window: timedelta = DUPLICATE_WINDOW,
    ) -> None:
        self.store = store
        self.registry = registry
        self.embedder = embedder
        self.clock = clock
        self.llm = llm
        self.redactor = redactor
        """What every turn is rewritten by before it is stored (adapters that keep a
        turn's text in a claim of their own rewrite it the same way)."""
        self.recorder = recorder
        self.writer = Writer(store, registry, embedder, clock)
        self.aliases: Aliases = self.writer.names
        self.retriever = Retriever(
            store, embedder, registry, self.writer, vector_weight,
            reranker=reranker, rerank_top_n=rerank_top_n, recorder=recorder,
        )
        self.ingest = Ingest(
            self.writer, store, embedder, registry, llm, redactor=redactor, recorder=recorder,
            resolve_entities=resolve_entities, duplicate_window=duplicate_window,
        )
        self.background = Background(queue_size)  # add(wait=False); no thread until used
        self.closed = False

    def use_embedder(self, embedder: Embedder) -> None:
        """Encode with ``embedder`` from now on (after ``reembed()`` swapped the vectors)."""
        self.embedder = embedder
        self.writer._embedder = embedder
        self.retriever._embedder = embedder
        self.ingest.use_embedder(embedder)

    def forget_erased(self) -> None:
        """After an erasure: drop the vectors kept in memory of rows and turns that may be
        gone, the ones searches computed for waiting rows and the recent turns ``add()``
        compares a new turn with (an erased turn's vector would make the same words, said
        again, a skipped "near_duplicate": a test of a guess, and a turn lost)."""
        self.retriever.forget_waiting()
        self.ingest.forget_recent()

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError("this Memvara is closed; open a new one to keep using the store")


class Handle:
    """A core and the default scope calls on it use."""

    _core: Core
    _scope: Scope

    @property
    def default_scope(self) -> Scope:
        """The scope calls use when no ``tenant=/user=/agent=/session=`` is passed."""
        return self._scope

    def _at(self, tenant: ScopeArg, user: ScopeArg, agent: ScopeArg, session: ScopeArg) -> Scope:
        self._core.check_open()
        return resolve_scope(self._scope, tenant, user, agent, session)


def open_core(
    path: str | os.PathLike[str],
    store: Store | None,
    embedder: Embedder | None,
    registry: PredicateRegistry | None,
    llm: LLM | None,
    telemetry: Recorder | None,
    redactor: Redactor | None,
    resolve_entities: bool,
    vector_weight: float | None,
    read_reranker: Reranker | None,
    read_rerank_top_n: int,
    clock: Clock | None,
    queue_size: int,
    reembed: bool,
    read_only: bool = False,
    duplicate_window: timedelta = DUPLICATE_WINDOW,
) -> Core:
    """Check ``Memvara()``'s arguments, open (or take) the store, reconcile it with the
    embedder and the schema, and build the core; a store opened here is closed again if
    any of that fails."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgumentError("path", f"expected a file path or ':memory:', got {path!r:.60}")
    if store is not None and os.fspath(path) != ":memory:":
        raise InvalidArgumentError("store", "pass a path or a store, not both")
    if clock is not None and not callable(clock):
        raise InvalidArgumentError("clock", "expected a zero-argument callable returning a datetime")
    if registry is not None and not isinstance(registry, PredicateRegistry):
        raise InvalidArgumentError("registry", "expected a PredicateRegistry")
    embedder = HashingEmbedder() if embedder is None else embedder
    check_embedder(embedder)
    if llm is None:
        llm = NullLLM()
        warnings.warn(
            "Memvara has no model (llm=None): add() will keep every turn, but only the"
            " first-person statements its rules read become claims; the rest are counted"
            " as receipt.unextracted. Pass llm=AnthropicLLM() or OpenAILLM() to read"
            " prose, or llm=NullLLM() to say that rules and remember() are enough.",
            DegradedExtractionWarning,
            stacklevel=user_stacklevel(),  # the caller of Memvara(), however deep
        )
    if not isinstance(llm, LLM):
        raise InvalidArgumentError("llm", "expected an object with .extract() and .classify_predicate()")
    if telemetry is not None and not isinstance(telemetry, Recorder):
        raise InvalidArgumentError("telemetry", "expected an object with .record(name, value, **tags)")
    if redactor is not None and not isinstance(redactor, Redactor):
        raise InvalidArgumentError("redactor", "expected an object with .redact(text)")
    if not isinstance(resolve_entities, bool):
        raise InvalidArgumentError("resolve_entities", "expected True or False")
    if read_reranker is not None and not isinstance(read_reranker, Reranker):
        raise InvalidArgumentError("read_reranker", "expected an object with .rerank(query, texts)")
    if isinstance(read_rerank_top_n, bool) or not isinstance(read_rerank_top_n, int) \
            or not 1 <= read_rerank_top_n <= 1000:
        raise InvalidArgumentError("read_rerank_top_n", f"expected an int from 1 to 1000, got {read_rerank_top_n!r:.40}")
    _args.check_int(queue_size, "queue_size", 1, 1_000_000)
    if vector_weight is not None and (
        isinstance(vector_weight, bool) or not isinstance(vector_weight, (int, float))
        or not 0.0 <= vector_weight <= 10.0
    ):
        raise InvalidArgumentError("vector_weight", f"expected a number from 0 to 10, got {vector_weight!r:.40}")
    if resolve_entities and not callable(getattr(llm, "resolve_entity", None)):
        raise InvalidArgumentError(
            "resolve_entities", "the llm has no resolve_entity(surface, candidates) method"
        )
    if not isinstance(duplicate_window, timedelta) or duplicate_window < timedelta(0):
        raise InvalidArgumentError(
            "duplicate_window", f"expected a timedelta of 0 or more, got {duplicate_window!r:.40}")
    if not isinstance(read_only, bool):
        raise InvalidArgumentError("read_only", f"expected True or False, got {read_only!r:.40}")
    if read_only and store is not None:
        raise InvalidArgumentError(
            "read_only", "a store passed in opens as it was made: pass read_only=True to it"
            " (SQLiteStore(path, read_only=True))")
    registry = PredicateRegistry() if registry is None else registry
    store = open_store(path, read_only) if store is None else store
    try:
        if not isinstance(reembed, bool):
            raise InvalidArgumentError("reembed", f"expected True or False, got {reembed!r:.40}")
        if reembed and store.embedder_label != fingerprint(embedder):
            reembed_store(store, embedder)
        if store.dim is not None and store.dim != embedder.dim:
            raise DimensionMismatchError(
                f"the store holds {store.dim}-d vectors but the embedder makes"
                f" {embedder.dim}-d ones; use an embedder of the store's width"
            )
        _sync_schema(store, registry, save=getattr(store, "read_only", False) is not True)
    except BaseException:
        store.close()
        raise
    return Core(
        store, registry, embedder, clock or system_clock, llm, redactor, telemetry,
        resolve_entities, None if vector_weight is None else float(vector_weight),
        read_reranker, read_rerank_top_n, queue_size, duplicate_window,
    )


POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""A path starting with one of these is a PostgreSQL URL: ``PostgresStore`` opens it."""


def open_store(path: str | os.PathLike[str], read_only: bool) -> Store:
    """The store ``path`` names: a PostgreSQL URL, else a SQLite file."""
    if os.fspath(path).startswith(POSTGRES_SCHEMES):
        return PostgresStore(os.fspath(path), read_only=read_only)
    return SQLiteStore(path, read_only=read_only)


def check_embedder(embedder: object) -> None:
    """Refuse a non-embedder, and run a broken one once on a probe, so it fails at the
    call that hands it over rather than in the middle of a write."""
    if not isinstance(embedder, Embedder):
        raise InvalidArgumentError("embedder", "expected an object with .dim and .encode(texts)")
    encode_checked(embedder, ["memvara"])


def _sync_schema(store: Store, registry: PredicateRegistry, *, save: bool) -> None:
    """Load specs earlier processes persisted; persist the ones this registry declares
    (unless not ``save``: a read-only store keeps them in this process only)."""
    persisted = store.load_predicates()
    for spec in persisted:
        if not registry.is_known(spec.name):
            try:
                registry.register(spec)
            except InvalidArgumentError:  # an alias this registry gives another predicate
                continue
    seeds = set(BUILTIN_PREDICATES)
    known = set(persisted)
    if save:
        store.save_predicates([s for s in registry if s not in seeds and s not in known])
