"""``AsyncMemvara``: the memory API as coroutines, for asyncio applications.

Each coroutine runs the synchronous method in a worker thread (``asyncio.to_thread``);
nothing below it is asynchronous, because the store is SQLite and a call spends its time
on the CPU and the disk rather than waiting on a network.

The coroutines are derived from the sync methods, not copied: ``search =
_ToThread(_SYNC.search)`` is a coroutine method with the sync one's parameters and
result type (a ``ParamSpec``, so a type checker checks callers and infers results), its
runtime signature and its docstring (``functools.wraps``). No ``__getattr__``: each name
is spelled once here, and ``tests/test_async.py`` fails when the sync API gains a method
this module does not wrap.

Written by hand, because they cannot be derived: ``add`` (its overloads on ``wait``, and
an ``asyncio.Future`` in place of the ``concurrent.futures.Future`` of ``wait=False``);
``scope()``, which stays a plain method (it only records the four scope levels, reads
nothing, and returns an ``AsyncScopedMemvara``, one handle per request in a server); the
properties, constructors and ``async with``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from datetime import datetime
from types import MethodType, TracebackType
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, cast, overload

from .._domain.args import UNSET, ScopeArg
from .._domain.model import Scope
from .._domain.results import WriteReceipt
from .._errors import InvalidArgumentError
from ..embed import Embedder
from ..schema import PredicateRegistry
from ..store.base import Store
from .memvara import Memvara, ScopedMemvara, _MemoryAPI

__all__ = ["AsyncMemvara", "AsyncScopedMemvara"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


def _unbound(cls: type[_T]) -> _T:
    """``cls`` itself, typed as an instance of it: ``_unbound(C).m`` is the plain function
    ``C.m`` at run time and, to a type checker, ``m`` with ``self`` bound. A
    ``Callable[Concatenate[Any, P], R]`` parameter would say the same without the cast,
    but mypy rejects it for a method with a named ``self`` and ``**kwargs``
    (``remember``)."""
    return cast(_T, cls)


_SYNC = _unbound(_MemoryAPI)


def _doc(method: Callable[..., object], note: str) -> str:
    """The sync method's docstring, under a note on how the async twin differs."""
    return f"{note}\n\n{inspect.cleandoc(method.__doc__ or '')}"


class _ToThread(Generic[_P, _R]):
    """A coroutine method derived from a sync one: same parameters, same result type,
    run on a worker thread. It calls the method of the same name on ``self._sync``, so
    ``Memvara`` overrides (and instance attributes) are what run."""

    def __init__(self, method: Callable[_P, _R]) -> None:
        name = method.__name__

        @functools.wraps(method)
        async def run(self: _AsyncAPI, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            call: Callable[_P, _R] = getattr(self._sync, name)
            return await asyncio.to_thread(call, *args, **kwargs)

        run.__doc__ = _doc(method, f"Coroutine: the synchronous ``{name}()``, run on a "
                                   "worker thread (``asyncio.to_thread``).")
        self._run = run

    def __set_name__(self, owner: type, name: str) -> None:
        self._run.__module__ = owner.__module__
        self._run.__qualname__ = f"{owner.__qualname__}.{name}"

    @overload
    def __get__(
        self, obj: None, owner: type | None = None
    ) -> Callable[Concatenate[_AsyncAPI, _P], Coroutine[Any, Any, _R]]: ...

    @overload
    def __get__(
        self, obj: _AsyncAPI, owner: type | None = None
    ) -> Callable[_P, Coroutine[Any, Any, _R]]: ...

    def __get__(self, obj: _AsyncAPI | None, owner: type | None = None) -> Callable[..., Any]:
        return self._run if obj is None else MethodType(self._run, obj)


class _AsyncAPI:
    """Every operation of ``Memvara`` as a coroutine (shared by both async handles)."""

    _sync: _MemoryAPI

    @property
    def registry(self) -> PredicateRegistry:
        """The predicate schema in force (shared by every handle on one memory)."""
        return self._sync.registry

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
        self, messages: object, *, role: str = ..., ts: datetime | None = ...,
        wait: Literal[True] = ..., tenant: ScopeArg = ..., user: ScopeArg = ...,
        agent: ScopeArg = ..., session: ScopeArg = ...,
        meta: Mapping[str, object] | None = ...,
    ) -> WriteReceipt: ...

    @overload
    async def add(
        self, messages: object, *, role: str = ..., ts: datetime | None = ...,
        wait: Literal[False], tenant: ScopeArg = ..., user: ScopeArg = ...,
        agent: ScopeArg = ..., session: ScopeArg = ...,
        meta: Mapping[str, object] | None = ...,
    ) -> asyncio.Future[WriteReceipt]: ...

    @overload
    async def add(
        self, messages: object, *, role: str = ..., ts: datetime | None = ...,
        wait: bool, tenant: ScopeArg = ..., user: ScopeArg = ...,
        agent: ScopeArg = ..., session: ScopeArg = ...,
        meta: Mapping[str, object] | None = ...,
    ) -> WriteReceipt | asyncio.Future[WriteReceipt]: ...

    async def add(
        self, messages: object, **kwargs: Any
    ) -> WriteReceipt | asyncio.Future[WriteReceipt]:
        add: Callable[..., WriteReceipt | Future[WriteReceipt]] = self._sync.add
        done = await asyncio.to_thread(add, messages, **kwargs)
        return asyncio.wrap_future(done) if isinstance(done, Future) else done

    add.__wrapped__ = _MemoryAPI.add  # type: ignore[attr-defined]  # its signature
    add.__doc__ = _doc(_MemoryAPI.add, (
        "Coroutine: the synchronous ``add()``, run on a worker thread. With ``wait=False``"
        " it returns once the call is queued (waiting off the event loop while the queue"
        " is full), with an ``asyncio.Future`` of the receipt in place of the"
        " ``concurrent.futures.Future`` named below."
    ))

    flush = _ToThread(_SYNC.flush)
    retry_extraction = _ToThread(_SYNC.retry_extraction)
    remember = _ToThread(_SYNC.remember)
    remember_many = _ToThread(_SYNC.remember_many)
    supersede = _ToThread(_SYNC.supersede)
    revert = _ToThread(_SYNC.revert)
    check_conflict = _ToThread(_SYNC.check_conflict)
    forget = _ToThread(_SYNC.forget)
    delete = _ToThread(_SYNC.delete)
    erase = _ToThread(_SYNC.erase)
    purge = _ToThread(_SYNC.purge)
    reset = _ToThread(_SYNC.reset)
    consolidate = _ToThread(_SYNC.consolidate)

    # -- reads ------------------------------------------------------------------------
    get = _ToThread(_SYNC.get)
    get_all = _ToThread(_SYNC.get_all)
    search = _ToThread(_SYNC.search)
    recall = _ToThread(_SYNC.recall)
    count = _ToThread(_SYNC.count)
    episodes = _ToThread(_SYNC.episodes)
    history = _ToThread(_SYNC.history)
    alias_entity = _ToThread(_SYNC.alias_entity)
    backfill_entities = _ToThread(_SYNC.backfill_entities)

    # -- provenance and the graph ---------------------------------------------------
    why = _ToThread(_SYNC.why)
    produced = _ToThread(_SYNC.produced)
    neighborhood = _ToThread(_SYNC.neighborhood)
    paths_between = _ToThread(_SYNC.paths_between)

    # -- maintenance ------------------------------------------------------------------
    stats = _ToThread(_SYNC.stats)

    # -- governance -------------------------------------------------------------------
    verify = _ToThread(_SYNC.verify)
    anchor = _ToThread(_SYNC.anchor)
    prune = _ToThread(_SYNC.prune)
    restore_archived = _ToThread(_SYNC.restore_archived)
    archived = _ToThread(_SYNC.archived)
    forget_subject = _ToThread(_SYNC.forget_subject)
    add_erasure_target = _ToThread(_SYNC.add_erasure_target)
    tombstones = _ToThread(_SYNC.tombstones)
    observe = _ToThread(_SYNC.observe)
    reviews = _ToThread(_SYNC.reviews)
    resolve = _ToThread(_SYNC.resolve)


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
    def embedder(self) -> Embedder:
        """The embedder every write uses."""
        return self._mem.embedder

    reembed = _ToThread(_unbound(Memvara).reembed)
    close = _ToThread(_unbound(Memvara).close)

    async def __aenter__(self) -> AsyncMemvara:
        self._mem.__enter__()  # refuses a closed memory, as the sync form does
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
