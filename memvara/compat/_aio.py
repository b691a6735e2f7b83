"""``AsyncMemory``: the shim's methods as coroutines, for asyncio applications (mem0's
``AsyncMemory``).

Derived, not copied, as ``memvara.AsyncMemvara`` is: each coroutine runs the ``Memory``
method of the same name with ``asyncio.to_thread`` and has its parameters, result type
and docstring. The constructor, ``from_config`` and the properties stay synchronous.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Mapping
from types import MethodType, TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from .. import Memvara, Scope
from ._memory import Memory, config_refused

__all__ = ["AsyncMemory"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_SYNC = cast(Memory, Memory)  # ``_SYNC.add`` is the plain function, typed with self bound


class _ToThread(Generic[_P, _R]):
    """A coroutine method running ``self._sync.<name>`` on a worker thread."""

    def __init__(self, method: Callable[_P, _R]) -> None:
        name = method.__name__

        @functools.wraps(method)
        async def run(self: AsyncMemory, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            call: Callable[_P, _R] = getattr(self._sync, name)
            return await asyncio.to_thread(call, *args, **kwargs)

        run.__doc__ = (f"Coroutine: ``Memory.{name}()`` run on a worker thread.\n\n"
                       f"{method.__doc__ or ''}")
        self._run = run

    @overload
    def __get__(self, obj: None, owner: type | None = None
                ) -> Callable[Concatenate[AsyncMemory, _P], Coroutine[Any, Any, _R]]: ...

    @overload
    def __get__(self, obj: AsyncMemory, owner: type | None = None
                ) -> Callable[_P, Coroutine[Any, Any, _R]]: ...

    def __get__(self, obj: AsyncMemory | None, owner: type | None = None) -> Callable[..., Any]:
        return self._run if obj is None else MethodType(self._run, obj)


class AsyncMemory:
    """mem0's ``AsyncMemory``, backed by memvara; the arguments are ``Memory``'s.

    Every method of ``Memory`` that touches the store is a coroutine here; the store
    work runs on a worker thread, so the event loop keeps running.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sync = Memory(*args, **kwargs)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        """Refused, as ``Memory.from_config``.

        Raises:
            NoTranslationError: always.
        """
        raise config_refused("AsyncMemory.from_config()")

    @property
    def memvara(self) -> Memvara:
        """The ``Memvara`` behind this shim (synchronous; see ``memvara.AsyncMemvara``)."""
        return self._sync.memvara

    @property
    def default_scope(self) -> Scope:
        """The scope of a call that names no id."""
        return self._sync.default_scope

    add = _ToThread(_SYNC.add)
    search = _ToThread(_SYNC.search)
    get = _ToThread(_SYNC.get)
    get_all = _ToThread(_SYNC.get_all)
    update = _ToThread(_SYNC.update)
    delete = _ToThread(_SYNC.delete)
    delete_all = _ToThread(_SYNC.delete_all)
    history = _ToThread(_SYNC.history)
    reset = _ToThread(_SYNC.reset)
    close = _ToThread(_SYNC.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<memvara.compat.AsyncMemory {self.default_scope}>"
