"""``Memvara`` and ``ScopedMemvara``: the public API, and nothing below it.

The facade validates arguments, resolves the scope and the read's instants once, and
delegates each call to one service (the write path, the read path) or store call. It has
no SQL and no ranking. The methods live in ``writes`` and ``reads``; this module joins
them and adds the lifecycle. ``ScopedMemvara`` is a cheap handle (a scope and a
back-reference, never cached rows).
"""

from __future__ import annotations

import os
from datetime import timedelta
from types import TracebackType

from .._domain.args import UNSET, ScopeArg
from .._domain.model import Scope
from .._domain.time import Clock
from .._errors import BackgroundWriteError
from .._write.background import QUEUE_SIZE
from .._write.ingest import DUPLICATE_WINDOW
from .._write.reembed import reembed_store
from ..embed import Embedder
from ..llm import LLM
from ..redact import Redactor
from ..rerank import Reranker
from ..schema import PredicateRegistry
from ..store.base import Store
from ..telemetry import Recorder
from .core import Core, check_embedder, open_core
from .forgetting import ForgetAPI
from .governance import GovernAPI
from .retention import RetentionAPI
from .reviews import ReviewAPI, check_threshold, set_threshold
from .keywords import check_every_public_method
from .reads import ReadAPI
from .writes import WriteAPI

__all__ = ["Memvara", "ScopedMemvara"]


class _MemoryAPI(WriteAPI, ReadAPI, GovernAPI, RetentionAPI, ForgetAPI, ReviewAPI):
    """Every operation on a memory, at a bound default scope (shared by both handles)."""

    @property
    def registry(self) -> PredicateRegistry:
        """The predicate schema in force (one per memory: every handle shares it, so an
        adapter holding a scoped handle can declare the predicates it writes)."""
        return self._core.registry

    def scope(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> ScopedMemvara:
        """A handle with the same API, bound to a scope derived from this one.

        Passing a level replaces it and clears the narrower levels not also passed, so
        ``mem.scope(user="bob")`` is bob's user-level memory.
        """
        return ScopedMemvara(self._core, self._at(tenant, user, agent, session))


class ScopedMemvara(_MemoryAPI):
    """The whole memory API with a scope bound; made by ``Memvara.scope()``."""

    def __init__(self, core: Core, scope: Scope) -> None:
        self._core = core
        self._scope = scope

    def __repr__(self) -> str:
        return f"<ScopedMemvara {self._scope}>"


class Memvara(_MemoryAPI):
    """Bitemporal memory for an agent, embedded in this process.

    Every fact is a ``Claim`` with two clocks: valid time (when it held in the world)
    and transaction time (when we believed it). Every read answers at any
    ``(valid_at, known_at)`` pair.

    >>> from datetime import datetime, timezone
    >>> mem = Memvara()
    >>> jan, jun = datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2026, 6, 1, tzinfo=timezone.utc)
    >>> _ = mem.remember("user", "lives_in", "Berlin", valid_from=jan, recorded_at=jan)
    >>> _ = mem.remember("user", "lives_in", "Lisbon", valid_from=jun, recorded_at=jun)
    >>> [c.object for c in mem.get_all()]
    ['Lisbon']
    >>> [c.object for c in mem.get_all(as_of=datetime(2026, 3, 1, tzinfo=timezone.utc))]
    ['Berlin']
    >>> mem.close()

    Args:
        path: a SQLite file (created if missing) or ``":memory:"``.
        store: any ``Store`` implementation, instead of ``path``.
        embedder: vectors for every write (default ``HashingEmbedder()``).
        llm: the model ``add()`` extracts with when the rules cannot. Left out, it is
            ``NullLLM()`` (no model: such turns are stored but yield no claims) and
            construction warns once with ``DegradedExtractionWarning``; pass
            ``NullLLM()`` yourself to choose that knowingly, without the warning.
            ``remember()`` never consults it.
        telemetry: a ``Recorder`` for the failure-mode series (default ``None``: off).
        redactor: applied to every turn before it is stored, indexed or embedded.
        vector_weight: the vector ranking's weight against BM25's in search (default:
            0.25 for a semantic embedder; for a lexical one such as ``HashingEmbedder``,
            only enough to break BM25's ties; both measured best on LOCOMO's dev split).
        read_reranker: reorders the fused top ``read_rerank_top_n`` results of every
            search (for example ``CrossEncoderReranker()``); if it fails, the fused order
            stands and ``rerank.failed`` is counted.
        read_rerank_top_n: how many of the fused results the reranker sees (1-1000).
        resolve_entities: let ``add()`` ask the model (its ``resolve_entity``) whether a
            name it has not seen for this owner is another name of one it has
            (``"Big Blue"`` for ``"IBM"``). Off by default: names never run out, so it is a
            per-name cost forever.
        registry: the predicate schema (default: ``BUILTIN_PREDICATES``). Non-seed specs
            are persisted in the store, and ones persisted by earlier processes are
            loaded where this registry does not declare the name itself.
        tenant, user, agent, session: the default scope.
        clock: a zero-argument callable returning "now" (inject one in tests).
        queue_size: how many ``add(..., wait=False)`` calls may wait for the background
            thread before the next one blocks (1 to 1,000,000; default 256).
        reembed: if the store's vectors were not made by this embedder (another width,
            or another model by its fingerprint, or made before any was recorded),
            re-encode them all on open instead of refusing (see ``reembed()``).
        duplicate_window: how close in time (by each turn's ``ts``) a turn must repeat
            one of the same text, role and scope for ``add()`` to skip it as a copy
            (default 10 minutes); said again later, it is a new turn, and its claims
            are stated again.
        read_only: open an existing store file without writing to it at all: every read
            answers, every write raises ``ReadOnlyStoreError``. A file (or folder) this
            process cannot write is opened read-only without it, with a warning. Reads
            never write in any case: what the write side has not stored yet (text waiting
            for the index, vectors waiting to be encoded) a search computes in memory.
        review_threshold: how many distinct grounds ``observe()`` must gather against
            what a slot holds before the slot is reopened for review (1 to 1,000;
            default 2).

    Raises:
        InvalidArgumentError: a bad argument.
        StoreError: the store cannot be opened (not a store, too new, unreadable, its
            folder missing); the message names the path and what to do.
        DimensionMismatchError: the embedder's width differs from the store's vectors
            (and ``reembed`` is false).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        registry: PredicateRegistry | None = None,
        llm: LLM | None = None,
        telemetry: Recorder | None = None,
        redactor: Redactor | None = None,
        resolve_entities: bool = False,
        vector_weight: float | None = None,
        read_reranker: Reranker | None = None,
        read_rerank_top_n: int = 20,
        tenant: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        clock: Clock | None = None,
        queue_size: int = QUEUE_SIZE,
        reembed: bool = False,
        read_only: bool = False,
        duplicate_window: timedelta = DUPLICATE_WINDOW,
        review_threshold: int = 2,
    ) -> None:
        # The scope is checked before the store opens: a bad one raising after would
        # leave a connection no caller could close.
        self._scope = Scope(tenant, user, agent, session)
        threshold = check_threshold(review_threshold)
        self._core = open_core(
            path, store, embedder, registry, llm, telemetry, redactor, resolve_entities,
            vector_weight, read_reranker, read_rerank_top_n, clock, queue_size, reembed,
            read_only, duplicate_window,
        )
        set_threshold(self._core, threshold)

    @property
    def store(self) -> Store:
        """The backing store."""
        return self._core.store

    @property
    def embedder(self) -> Embedder:
        """The embedder every write uses."""
        return self._core.embedder

    def reembed(self, embedder: Embedder | None = None) -> int:
        """Encode every claim and turn in the store again, with ``embedder`` (default:
        this memory's), replace all their vectors at once, and use that embedder from
        now on; how many rows were encoded.

        For a model change: the new vectors may have another width. Encoding runs with no
        transaction open and searches keep using the old vectors until the swap; rows
        written meanwhile are embedded again by the next write. Queued
        ``add(..., wait=False)`` calls are applied first. Another process with the store
        open switches to the new vectors at its next write (one that only reads, when it
        reopens the store), but keeps encoding with its own embedder: re-embed when every
        process moves to the new model.

        Raises:
            InvalidArgumentError: ``embedder`` is not an embedder, or returns bad vectors.
        """
        self._core.check_open()
        if embedder is None:
            embedder = self._core.embedder
        check_embedder(embedder)
        self.flush()
        done = reembed_store(self._core.store, embedder)
        self._core.use_embedder(embedder)
        return done

    def close(self) -> None:
        """Apply every queued ``add(..., wait=False)``, then close the store. Idempotent;
        any later call on this memory raises ``ClosedError``.

        Raises:
            BackgroundWriteError: queued adds failed that no ``flush()`` reported; the
                store is closed all the same.
        """
        if not self._core.closed:
            failures = self._core.background.close()
            self._core.closed = True
            self._core.store.close()
            if failures:
                raise BackgroundWriteError(failures) from failures[0]

    def __enter__(self) -> Memvara:
        self._core.check_open()  # a closed memory in a with block fails at its top
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.close()
        except BackgroundWriteError:
            if exc is None:
                raise
            # The block's own exception is the one to see; each failed queued add
            # still holds its error in its Future.

    def __repr__(self) -> str:
        state = "closed" if self._core.closed else "open"
        return f"<Memvara {getattr(self._core.store, 'path', type(self._core.store).__name__)} {self._scope} {state}>"


for _api in (WriteAPI, ReadAPI, _MemoryAPI, Memvara):
    check_every_public_method(_api)
