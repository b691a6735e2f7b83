"""The governance half of the API: the write log's ``verify()`` and ``anchor()``, and
``logged``, which every write method holds around its call so the record it appends
names the verb and the actor."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from .._domain import args as _args
from .._domain.ledger import LogReport, default_actor, parse_anchor
from .._domain.model import Scope
from .._errors import InvalidArgumentError, StoreError
from .._read.audit import verify_log
from ..store.base import Store, WriteLogStore
from .core import Core, Handle

__all__ = ["GovernAPI", "check_actor", "logged", "logged_call"]

_T = TypeVar("_T")

MAX_ACTOR = 200
"""The longest actor name taken (it is stored in every record the call appends)."""


def check_actor(actor: object, scope: Scope) -> str:
    """``actor=``: a name, or by default the scope's agent, else its user, else ``""``."""
    if actor is None:
        return default_actor(scope)
    if not isinstance(actor, str) or not actor.strip() or len(actor) > MAX_ACTOR:
        raise InvalidArgumentError(
            "actor", f"expected a non-blank name of at most {MAX_ACTOR} characters, got {actor!r:.40}")
    return _args.check_text(actor, "actor")  # no lone surrogate, no NUL: stored in the log


_LOGGING: dict[type, bool] = {}
"""Whether each store class keeps a write log: a protocol's ``isinstance`` cost ~17 us,
a sixth of a single write."""


def logged(core: Core, action: str, scope: Scope, actor: object) -> AbstractContextManager[None]:
    """Name the records this call's writes append (``actor`` checked first, so a bad one
    fails before anything is written). A store with no log needs no name."""
    name = check_actor(actor, scope)
    store = core.store
    kind = type(store)
    keeps = _LOGGING.get(kind)
    if keeps is None:
        keeps = _LOGGING[kind] = isinstance(store, WriteLogStore)
    if not keeps:
        return nullcontext()
    return store.logged(  # type: ignore[attr-defined,no-any-return]
        action, name, core.writer.now(), named=actor is not None)


def logged_call(core: Core, action: str, scope: Scope, actor: object, call: Callable[[], _T]) -> _T:
    """``call()`` under ``logged``: for a write run later on another thread (``add(wait=
    False)``), which names its records there."""
    with logged(core, action, scope, actor):
        return call()


def _log_of(store: Store) -> WriteLogStore:
    if not isinstance(store, WriteLogStore):
        raise StoreError(f"{type(store).__name__} keeps no write log (it is no WriteLogStore)")
    return store


class GovernAPI(Handle):
    """The write log's checks. They cover the whole store, whatever scope the handle has:
    the log is one chain."""

    def verify(self, *, since: str | None = None) -> LogReport:
        """Walk the write log and report the first record that does not chain.

        Promises: a record edited, deleted or moved in the file (``sqlite3``, a hex
        editor) is reported by its number, as is every record after it until the chain
        is rewritten. With ``since`` (a string ``anchor()`` returned earlier and you kept
        somewhere else), a history rewritten or rolled back since that anchor is
        reported even when every hash was recomputed.

        Does not promise: that the claims and turns still hold what the log recorded
        (the log holds ids, not text), nor anything about writes made with a store
        opened with ``write_log=False`` or by other software; without ``since``, a log
        whose tail was cut off or whose every hash was recomputed looks whole.

        Returns:
            A ``LogReport``: ``ok``, ``records`` checked, the ``head`` anchor, and the
            first ``broken`` record's number with the ``problem``.

        Raises:
            InvalidArgumentError: ``since`` is not an anchor, or one of another store.
            StoreError: the store keeps no write log.
        """
        self._core.check_open()
        store = _log_of(self._core.store)
        anchor = None if since is None else parse_anchor(since)
        if anchor is not None and anchor.store != store.log_identity():
            raise InvalidArgumentError(
                "since", f"the anchor is of another store ({anchor.store}), not this one"
                f" ({store.log_identity()})")
        return verify_log(store, anchor)

    def anchor(self) -> str:
        """The write log's current head, as a string to keep outside the store (a
        ticket, another database) and hand back to ``verify(since=...)`` later.

        Raises:
            StoreError: the store keeps no write log.
        """
        self._core.check_open()
        return str(_log_of(self._core.store).log_head())
