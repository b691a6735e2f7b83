"""What the CrewAI, OpenAI Agents and Pydantic AI adapters take from their callers, checked
once: the memory handle they are given, and the instants a framework passes as text.

Frameworks hand over values they parsed themselves (a tool argument is JSON, so an
instant arrives as a string); the checks here turn those into what the public API takes,
and a wrong value into a memvara error that names the argument.
"""

from __future__ import annotations

from datetime import datetime

from .. import AsyncMemvara, AsyncScopedMemvara, InvalidArgumentError, Memvara, ScopedMemvara
from .. import InvalidTimeError, parse_instant

__all__ = ["MemoryHandle", "instant", "sync_handle"]

MemoryHandle = Memvara | ScopedMemvara | AsyncMemvara | AsyncScopedMemvara
"""Any memory an adapter accepts: a handle, sync or async, at any scope."""


def sync_handle(memory: object, argument: str = "memory") -> Memvara | ScopedMemvara:
    """The synchronous handle behind ``memory`` (an async one's ``.sync``): adapters run
    memvara's calls themselves, on a worker thread where the framework is async."""
    if isinstance(memory, (AsyncMemvara, AsyncScopedMemvara)):
        return memory.sync
    if isinstance(memory, (Memvara, ScopedMemvara)):
        return memory
    raise InvalidArgumentError(
        argument, f"expected a Memvara, ScopedMemvara or their async twins, got"
                  f" {type(memory).__name__}")


def instant(value: object, argument: str) -> datetime | None:
    """A time keyword as given: ``None``, a ``datetime``, or an ISO-8601 string with a UTC
    offset (a tool argument); anything else is an ``InvalidTimeError`` naming it."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return parse_instant(value, argument)
    raise InvalidTimeError(
        argument, f"expected a datetime or an ISO-8601 string with a UTC offset, got"
                  f" {type(value).__name__} {value!r:.40}")
