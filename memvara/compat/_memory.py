"""``Memory``: mem0 2.x's method surface and return shapes, backed by a ``Memvara``.

Each method maps mem0's arguments onto one memvara call and its result onto mem0's
dictionaries. What mem0 does that memvara cannot do without meaning something else —
editing a memory's text in place, storing a message unread, custom extraction prompts,
procedural memory, metadata operators — raises ``NoTranslationError`` and says why,
rather than returning something that looks right and is not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from types import TracebackType
from typing import Any, cast

from .. import LLM, Claim, Embedder, InvalidArgumentError, Memvara, Scope, ScopedMemvara
from ._errors import MemoryNotFoundError, NoTranslationError
from ._shapes import history_rows, item, matches, metadata_filters, scope_for

__all__ = ["Memory", "config_refused"]

_FILTERED_POOL = 1000
"""How many best matches a search with metadata filters looks through before filtering."""


def config_refused(call: str) -> NoTranslationError:
    """The error for a mem0 configuration (``Memory(config)``, ``from_config()``)."""
    return NoTranslationError(
        call, "mem0's configuration chooses its vector store, LLM and embedder providers,"
        " which memvara does not have (it has one store format). Use Memory(path) or"
        " Memory(memory=Memvara(path, llm=..., embedder=...))")


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(name, f"expected True or False, got {value!r:.40}")
    return value


def _threshold(value: object) -> float:
    """mem0's ``threshold``, checked under its own name: a score from 0 to 2 (memvara's)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise InvalidArgumentError("threshold", f"expected a number from 0 to 2 (memvara's"
                                   f" scores), got {value!r:.40}")
    return float(value)


def _count(top_k: object, limit: object) -> int:
    """mem0's ``top_k`` (2.x) or ``limit`` (its older name), a count of 0 or more."""
    if limit is not None:
        if top_k is not None:
            raise InvalidArgumentError("limit", "pass top_k or limit, not both")
        top_k, name = limit, "limit"
    else:
        top_k, name = (20 if top_k is None else top_k), "top_k"
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise InvalidArgumentError(name, f"expected an int of 0 or more, got {top_k!r:.40}")
    return top_k


def _timestamp(value: object) -> datetime | None:
    """mem0's ``timestamp=`` (when the messages were said): a datetime or Unix seconds."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(
            "timestamp", f"expected a datetime or Unix seconds, got {type(value).__name__}")
    return datetime.fromtimestamp(value, timezone.utc)


class Memory:
    """mem0's ``Memory``, backed by memvara: ``from memvara.compat import Memory``.

    >>> m = Memory(user_id="alice")
    >>> [r["event"] for r in m.add("I live in Berlin")["results"]]
    ['ADD']
    >>> m.search("where does alice live?", top_k=1)["results"][0]["memory"]
    'alice lives in Berlin'
    >>> m.close()

    Args:
        path: the store file. Left out, ``$MEMVARA_DB`` names it, else the memory is a
            fresh in-memory store of this object's own (two ``Memory()`` never share).
            mem0's ``MemoryConfig`` has no translation and is refused.
        user_id, agent_id, run_id: a default scope for every call that names none (a
            memvara extension; mem0 requires one per call).
        memory: wrap this ``Memvara`` instead of opening one (its tenant is kept; closing
            the shim leaves it open).
        llm, embedder: passed to the ``Memvara`` opened here (see ``Memvara``).

    Raises:
        InvalidArgumentError: a bad argument.
        NoTranslationError: a mem0 config object.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        memory: Memvara | None = None,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise config_refused("Memory(config)")
        defaults = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        if any(v is not None for v in defaults.values()):
            scope_for(Scope(), {}, defaults, None, "Memory")  # checks the ids
        self._defaults = {k: None if v is None else str(v).strip() for k, v in defaults.items()}
        if memory is not None:
            if not isinstance(memory, Memvara):
                raise InvalidArgumentError("memory", f"expected a Memvara, got {type(memory).__name__}")
            if path is not None or llm is not None or embedder is not None:
                raise InvalidArgumentError(
                    "memory", "a Memvara passed in is used as it was opened: pass no path,"
                    " llm or embedder with it")
            self._mem, self._owned = memory, False
        else:
            where = path if path is not None else os.environ.get("MEMVARA_DB") or ":memory:"
            self._mem, self._owned = Memvara(where, llm=llm, embedder=embedder), True

    @property
    def memvara(self) -> Memvara:
        """The ``Memvara`` behind this shim: the whole bitemporal API (``as_of=``, ``why()``)."""
        return self._mem

    @property
    def default_scope(self) -> Scope:
        """The scope of a call that names no id (set by ``Memory(user_id=...)``)."""
        return Scope(self._mem.default_scope.tenant, self._defaults["user_id"],
                     self._defaults["agent_id"], self._defaults["run_id"])

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Refused: mem0's config names providers memvara does not have.

        Raises:
            NoTranslationError: always; open ``Memory(path)`` or wrap a ``Memvara``.
        """
        raise config_refused("Memory.from_config()")

    def _scope(self, call: str, ids: Mapping[str, object],
               filters: Mapping[str, object] | None = None) -> tuple[ScopedMemvara, dict[str, object]]:
        """A handle on the memory at the call's scope, and the filters left to apply."""
        scope, rest = scope_for(self._mem.default_scope, self._defaults, ids, filters, call)
        return self._mem.scope(tenant=scope.tenant, user=scope.user, agent=scope.agent,
                               session=scope.session), rest

    def _by_id(self, call: str, memory_id: object, ids: Mapping[str, object]) -> tuple[ScopedMemvara, Claim | None]:
        """The claim ``memory_id`` names in the call's scope (a read by id is scoped too)."""
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidArgumentError("memory_id", f"expected a memory id string, got {memory_id!r:.40}")
        at, _ = self._scope(call, ids)
        return at, at.get(memory_id)

    def add(
        self,
        messages: str | Mapping[str, Any] | list[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: datetime | float | None = None,
        expiration_date: object = None,
    ) -> dict[str, Any]:
        """Store the messages and the facts they state (mem0's ``add``).

        Returns ``{"results": [...]}``: an ``ADD`` for each claim written and a
        ``DELETE`` for each value a new one closed (memvara writes a new claim rather
        than editing the old one, so mem0's ``UPDATE`` is that pair). ``timestamp`` is
        when the messages were said (memvara's ``ts``).

        Raises:
            InvalidArgumentError: bad messages, ids or metadata; nothing is written.
            NoTranslationError: ``infer=False``, ``memory_type``, ``prompt`` or
                ``expiration_date``.
        """
        if not _check_bool(infer, "infer"):
            raise NoTranslationError(
                "add(infer=False)", "memvara's add() always reads the facts out of the"
                " messages (and keeps each message as a turn); storing text unread as a"
                " memory has no counterpart. Write a fact with Memory.memvara.remember()")
        if memory_type is not None:
            raise NoTranslationError(
                "add(memory_type=...)", "mem0's procedural memory summarizes an agent's run"
                " with a model; memvara has no such summary")
        if prompt is not None:
            raise NoTranslationError(
                "add(prompt=...)", "memvara extracts by rules and its model's own fixed"
                " prompt; a custom prompt has no place to go")
        if expiration_date is not None:
            raise NoTranslationError(
                "add(expiration_date=...)", "memvara does not hide memories on a date; a"
                " fact that stops holding is closed by the next value, or by"
                " Memory.memvara.remember(..., valid_to=...)")
        at, _ = self._scope("add", {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        turns = [messages] if isinstance(messages, Mapping) else messages
        try:
            receipt = at.add(turns, ts=_timestamp(timestamp), meta=metadata)
        except InvalidArgumentError as exc:
            if exc.argument != "meta":
                raise
            raise InvalidArgumentError("metadata", exc.problem) from None  # the caller's word
        results = [{"id": c.id, "memory": c.text, "event": "ADD"} for c in receipt.added]
        results += [{"id": c.id, "memory": c.text, "event": "DELETE"} for c in receipt.closed]
        return {"results": results}

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        limit: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        rerank: bool = False,
        explain: bool = False,
        reference_date: object = None,
        show_expired: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """The ``top_k`` best memories for ``query`` (mem0's ``search``), each with its
        ``score``. Scores are memvara's (0 to 2); ``threshold`` drops those below it.

        Raises:
            InvalidArgumentError: a bad argument, or an unknown filter operator.
            NoTranslationError: ``rerank=True``, ``reference_date``, or a metadata
                filter other than equality.
        """
        k = _count(top_k, limit)
        min_score = _threshold(threshold)
        _check_bool(explain, "explain")
        _check_bool(show_expired, "show_expired")  # memvara never hides a memory by date
        if _check_bool(rerank, "rerank"):
            raise NoTranslationError(
                "search(rerank=True)", "memvara reranks every search or none: open the"
                " memory with Memvara(read_reranker=...) and wrap it with Memory(memory=...)")
        if reference_date is not None:
            raise NoTranslationError(
                "search(reference_date=...)", "use the memvara reads' as_of=/valid_at= on"
                " Memory.memvara, which answer at any instant")
        at, rest = self._scope(
            "search", {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters)
        wanted = metadata_filters(rest)
        if k == 0:
            return {"results": []}
        found = at.search(
            query, k=max(k, _FILTERED_POOL) if wanted else k,
            min_score=min_score)
        results = []
        for r in found:
            claim = cast(Claim, r.claim)  # a search without include_episodes finds claims only
            if not matches(claim, wanted):
                continue
            entry = item(claim, r.score)
            if explain:
                entry["score_details"] = r.explain.to_dict()
            results.append(entry)
        return {"results": results[:k]}

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any] | None:
        """The live memory ``memory_id`` names, or ``None`` (as mem0 returns).

        memvara reads by id only inside a scope: the memory must be visible from the
        call's ids or the ``Memory(user_id=...)`` default.
        """
        _, claim = self._by_id("get", memory_id, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        return None if claim is None or claim.state != "live" else item(claim)

    def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int | None = None,
        limit: int | None = None,
        show_expired: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """The live memories of the scope, newest first, at most ``top_k`` (mem0's
        ``get_all``): ``{"results": [...]}``, without scores."""
        k = _count(top_k, limit)
        _check_bool(show_expired, "show_expired")
        at, rest = self._scope(
            "get_all", {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters)
        wanted = metadata_filters(rest)
        claims = at.get_all(
            limit=None if wanted else k)
        chosen = [c for c in claims if matches(c, wanted)][:k]
        return {"results": [item(c, with_score=False) for c in chosen]}

    def update(self, memory_id: str, text: str | None = None, **_: object) -> dict[str, Any]:
        """Refused: memvara never rewrites a memory's text in place.

        Raises:
            NoTranslationError: always; say the new value with ``add()`` (a
                single-valued fact closes the old one, dated) or replace a claim with
                ``Memory.memvara.supersede()``.
        """
        raise NoTranslationError(
            "update()", "memvara never rewrites a memory in place: that would erase when"
            " the old text was believed. Say the new value with add() (a single-valued"
            " fact closes the old one, dated), or replace a claim with"
            " Memory.memvara.supersede(memory_id, Claim(...))")

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Retire one memory (mem0's ``delete``): it leaves every read of what is
        believed, and stays in ``history()`` and reads with ``known_at=`` before now.

        Raises:
            MemoryNotFoundError: no believed memory has this id in the call's scope
                (a ``ValueError``, as mem0 raises).
        """
        at, claim = self._by_id("delete", memory_id, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        if claim is None or not at.delete(claim.id):
            raise MemoryNotFoundError(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Retire every live memory written at exactly this scope (mem0's
        ``delete_all``). Rows of narrower scopes are left: see the guide's note on
        scopes."""
        at, _ = self._scope("delete_all", {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        for claim in at.get_all():
            if claim.scope == at.default_scope:
                at.delete(claim.id)
        return {"message": "Memories deleted successfully!"}

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """mem0 ``history()`` rows for the slot ``memory_id`` belongs to: every value
        its (subject, predicate) has held in this scope, oldest first; each row's
        ``memory_id`` is the claim it is about. ``[]`` for an unknown id, as mem0."""
        at, claim = self._by_id("history", memory_id, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        if claim is None:
            return []
        slot = at.history(claim.subject, claim.predicate)
        return history_rows(slot)

    def reset(self) -> None:
        """Erase the whole memory irreversibly (mem0's ``reset``): every claim, turn
        and vector of the store, under the wrapped memory's tenant."""
        self._mem.reset()

    def close(self) -> None:
        """Close the memory this shim opened (one passed in with ``memory=`` stays open)."""
        if self._owned:
            self._mem.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<memvara.compat.Memory {self.default_scope}>"
