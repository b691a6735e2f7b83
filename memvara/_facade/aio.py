"""``AsyncMemvara``: the memory API as coroutines, for asyncio applications.

A thread-pool wrapper, not an async rewrite: every method runs the synchronous one with
``asyncio.to_thread``. SQLite has no async driver worth the name, and the work is CPU
and disk, not network. Each method is written out with its full signature (no
``__getattr__``), so a type checker checks callers; ``tests/test_async.py`` fails when
the sync API gains a method this module does not wrap.

``scope()`` is the one method that is not a coroutine: it binds four strings and touches
no store. It returns an ``AsyncScopedMemvara``, one handle per request in a server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import datetime
from types import TracebackType
from typing import Literal, overload

from .._domain.args import UNSET, ScopeArg
from .._errors import InvalidArgumentError
from .memvara import Memvara, ScopedMemvara, _MemoryAPI
from .._domain.model import Claim, Path, Provenance, Retrieved, Scope, WriteReceipt
from ..embed import Embedder
from ..schema import PredicateRegistry
from ..store.base import Store

__all__ = ["AsyncMemvara", "AsyncScopedMemvara"]


class _AsyncAPI:
    """Every operation of ``Memvara`` as a coroutine (shared by both async handles)."""

    _sync: _MemoryAPI

    @property
    def default_scope(self) -> Scope:
        """The scope calls use when no ``tenant=/user=/agent=/session=`` is passed."""
        return self._sync.default_scope

    def scope(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> AsyncScopedMemvara:
        """An async handle bound to a scope derived from this one (not a coroutine: it
        touches no store); see ``Memvara.scope``."""
        return AsyncScopedMemvara(
            self._sync.scope(tenant=tenant, user=user, agent=agent, session=session)
        )

    # -- writes ---------------------------------------------------------------------
    @overload
    async def add(
        self,
        messages: object,
        *,
        role: str = ...,
        ts: datetime | None = ...,
        wait: Literal[True] = ...,
        tenant: ScopeArg = ...,
        user: ScopeArg = ...,
        agent: ScopeArg = ...,
        session: ScopeArg = ...,
    ) -> WriteReceipt: ...

    @overload
    async def add(
        self,
        messages: object,
        *,
        role: str = ...,
        ts: datetime | None = ...,
        wait: Literal[False],
        tenant: ScopeArg = ...,
        user: ScopeArg = ...,
        agent: ScopeArg = ...,
        session: ScopeArg = ...,
    ) -> asyncio.Future[WriteReceipt]: ...

    @overload
    async def add(
        self,
        messages: object,
        *,
        role: str = ...,
        ts: datetime | None = ...,
        wait: bool,
        tenant: ScopeArg = ...,
        user: ScopeArg = ...,
        agent: ScopeArg = ...,
        session: ScopeArg = ...,
    ) -> WriteReceipt | asyncio.Future[WriteReceipt]: ...

    async def add(
        self,
        messages: object,
        *,
        role: str = "user",
        ts: datetime | None = None,
        wait: bool = True,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> WriteReceipt | asyncio.Future[WriteReceipt]:
        """``add()`` on a worker thread. With ``wait=False`` it returns once the call is
        queued (waiting off the event loop while the queue is full), with an
        ``asyncio.Future`` to await for the receipt; see ``Memvara.add``."""
        if wait is False:
            queued = await asyncio.to_thread(
                self._sync.add, messages, role=role, ts=ts, wait=False, tenant=tenant,
                user=user, agent=agent, session=session,
            )
            return asyncio.wrap_future(queued)
        return await asyncio.to_thread(
            self._sync.add, messages, role=role, ts=ts, wait=wait, tenant=tenant, user=user,
            agent=agent, session=session,
        )

    async def flush(self) -> None:
        """``flush()`` on a worker thread: every queued add has committed."""
        await asyncio.to_thread(self._sync.flush)

    async def remember(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        recorded_at: datetime | None = None,
        sources: Iterable[str] = (),
        text: str | None = None,
        confidence: float = 1.0,
        memory_type: str = "semantic",
        polarity: int = 1,
        extractor: str | None = None,
        close: str = "ended",
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        **meta: object,
    ) -> WriteReceipt:
        """``Memvara.remember()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.remember, subject, predicate, obj, valid_from=valid_from, valid_to=valid_to,
            recorded_at=recorded_at, sources=sources, text=text, confidence=confidence,
            memory_type=memory_type, polarity=polarity, extractor=extractor, close=close,
            tenant=tenant, user=user, agent=agent, session=session, **meta,
        )

    async def remember_many(
        self,
        claims: Iterable[Claim],
        *,
        close: str = "ended",
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> WriteReceipt:
        """``Memvara.remember_many()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.remember_many, claims, close=close, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def supersede(
        self,
        old_claim_id: str,
        new_claim: Claim,
        *,
        at: datetime | None = None,
        sources: Iterable[str] | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> WriteReceipt:
        """``Memvara.supersede()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.supersede, old_claim_id, new_claim, at=at, sources=sources, tenant=tenant,
            user=user, agent=agent, session=session,
        )

    async def forget(
        self,
        subject: str,
        predicate: str,
        *,
        at: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """``Memvara.forget()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.forget, subject, predicate, at=at, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def delete(
        self,
        claim_id: str,
        *,
        at: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> bool:
        """``Memvara.delete()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.delete, claim_id, at=at, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def erase(
        self,
        claim_id: str,
        *,
        sources: bool = False,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> bool:
        """``Memvara.erase()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.erase, claim_id, sources=sources, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def purge(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """``Memvara.purge()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.purge, tenant=tenant, user=user, agent=agent, session=session,
        )

    async def reset(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """``Memvara.reset()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.reset, tenant=tenant, user=user, agent=agent, session=session,
        )

    async def consolidate(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """``Memvara.consolidate()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.consolidate, tenant=tenant, user=user, agent=agent, session=session,
        )

    # -- reads ------------------------------------------------------------------------
    async def get(
        self,
        claim_id: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> Claim | None:
        """``Memvara.get()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.get, claim_id, tenant=tenant, user=user, agent=agent, session=session,
        )

    async def get_all(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Iterable[str] | None = None,
        include_invalidated: bool | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """``Memvara.get_all()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.get_all, valid_at=valid_at, known_at=known_at, as_of=as_of, states=states,
            include_invalidated=include_invalidated, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        min_score: float = 0.0,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        memory_types: Iterable[str] | None = None,
        states: Iterable[str] | None = None,
        include_invalidated: bool | None = None,
        include_episodes: bool = False,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Retrieved]:
        """``Memvara.search()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.search, query, k=k, min_score=min_score, valid_at=valid_at,
            known_at=known_at, as_of=as_of, memory_types=memory_types, states=states,
            include_invalidated=include_invalidated, include_episodes=include_episodes,
            tenant=tenant, user=user, agent=agent, session=session,
        )

    async def recall(
        self,
        query: str,
        *,
        k: int = 8,
        min_score: float = 0.0,
        header: str | None = None,
        include_episodes: bool = False,
        episode_header: str | None = None,
        include_history: bool = False,
        history_header: str | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> str:
        """``Memvara.recall()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.recall, query, k=k, min_score=min_score, header=header,
            include_episodes=include_episodes, episode_header=episode_header,
            include_history=include_history, history_header=history_header, tenant=tenant,
            user=user, agent=agent, session=session,
        )

    async def count(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Iterable[str] | None = None,
        include_invalidated: bool | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> int:
        """``Memvara.count()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.count, valid_at=valid_at, known_at=known_at, as_of=as_of, states=states,
            include_invalidated=include_invalidated, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def history(
        self,
        subject: str,
        predicate: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """``Memvara.history()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.history, subject, predicate, valid_at=valid_at, known_at=known_at,
            as_of=as_of, tenant=tenant, user=user, agent=agent, session=session,
        )

    async def alias_entity(
        self,
        surface: str,
        entity: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> None:
        """``Memvara.alias_entity()`` on a worker thread."""
        await asyncio.to_thread(
            self._sync.alias_entity, surface, entity, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    async def backfill_entities(
        self,
        *,
        dry_run: bool = True,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """``Memvara.backfill_entities()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.backfill_entities, dry_run=dry_run, tenant=tenant, user=user, agent=agent,
            session=session,
        )

    # -- provenance and the graph ---------------------------------------------------
    async def why(
        self,
        claim_id: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> Provenance | None:
        """``Memvara.why()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.why, claim_id, valid_at=valid_at, known_at=known_at, as_of=as_of,
            tenant=tenant, user=user, agent=agent, session=session,
        )

    async def produced(
        self,
        episode_id: str,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """``Memvara.produced()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.produced, episode_id, valid_at=valid_at, known_at=known_at, as_of=as_of,
            tenant=tenant, user=user, agent=agent, session=session,
        )

    async def neighborhood(
        self,
        entity: str,
        *,
        depth: int = 2,
        k: int = 10,
        min_hops: int = 1,
        predicates: Iterable[str] | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        min_score: float = 0.0,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Path]:
        """``Memvara.neighborhood()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.neighborhood, entity, depth=depth, k=k, min_hops=min_hops,
            predicates=predicates, valid_at=valid_at, known_at=known_at, as_of=as_of,
            min_score=min_score, tenant=tenant, user=user, agent=agent, session=session,
        )

    async def paths_between(
        self,
        source: str,
        target: str,
        *,
        depth: int = 3,
        k: int = 3,
        predicates: Iterable[str] | None = None,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        min_score: float = 0.0,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Path]:
        """``Memvara.paths_between()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.paths_between, source, target, depth=depth, k=k, predicates=predicates,
            valid_at=valid_at, known_at=known_at, as_of=as_of, min_score=min_score, tenant=tenant,
            user=user, agent=agent, session=session,
        )

    # -- maintenance ------------------------------------------------------------------
    async def stats(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """``Memvara.stats()`` on a worker thread."""
        return await asyncio.to_thread(
            self._sync.stats, tenant=tenant, user=user, agent=agent, session=session,
        )


class AsyncScopedMemvara(_AsyncAPI):
    """The async API with a scope bound; made by ``AsyncMemvara.scope()``."""

    def __init__(self, scoped: ScopedMemvara) -> None:
        if not isinstance(scoped, ScopedMemvara):
            raise InvalidArgumentError("scoped", "expected a ScopedMemvara (from Memvara.scope())")
        self._scoped = scoped
        self._sync = scoped

    @property
    def sync(self) -> ScopedMemvara:
        """The synchronous handle this one wraps."""
        return self._scoped

    def __repr__(self) -> str:
        return f"<AsyncScopedMemvara {self._scoped.default_scope}>"


class AsyncMemvara(_AsyncAPI):
    """A ``Memvara`` for asyncio: the same API, each method a coroutine.

    It wraps an open ``Memvara`` rather than building one, so the sync object stays at
    hand (``.sync``) for setup and for code that is not async. Closing either closes
    both.

    Args:
        mem: the memory to wrap.

    Raises:
        InvalidArgumentError: ``mem`` is not a ``Memvara``.
    """

    def __init__(self, mem: Memvara) -> None:
        if not isinstance(mem, Memvara):
            raise InvalidArgumentError("mem", "expected a Memvara, as in AsyncMemvara(Memvara(...))")
        self._mem = mem
        self._sync = mem

    @property
    def sync(self) -> Memvara:
        """The synchronous ``Memvara`` this wraps."""
        return self._mem

    @property
    def store(self) -> Store:
        """The backing store."""
        return self._mem.store

    @property
    def registry(self) -> PredicateRegistry:
        """The predicate schema in force."""
        return self._mem.registry

    @property
    def embedder(self) -> Embedder:
        """The embedder every write uses."""
        return self._mem.embedder

    async def reembed(self, embedder: Embedder | None = None) -> int:
        """``Memvara.reembed()`` on a worker thread."""
        return await asyncio.to_thread(self._mem.reembed, embedder)

    async def close(self) -> None:
        """``close()`` on a worker thread: queued adds are applied, then the store closes."""
        await asyncio.to_thread(self._mem.close)

    async def __aenter__(self) -> AsyncMemvara:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self._mem.__exit__, exc_type, exc, tb)

    def __repr__(self) -> str:
        return f"<AsyncMemvara wrapping {self._mem!r}>"
