"""``Memvara`` and ``ScopedMemvara``: the public API, and nothing below it.

The facade validates arguments, resolves the scope and the read's instants once, and
delegates: writes to ``Writer``, reads to the store. It has no SQL and no ranking.
``ScopedMemvara`` is a cheap handle (a scope and a back-reference, never cached rows).
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterable
from concurrent.futures import Future
from datetime import datetime
from types import TracebackType
from typing import Literal, overload

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg, resolve_scope, resolve_states, resolve_time
from .._write.consolidate import consolidate as consolidate_store
from .._domain.entities import entity_key
from .._write.background import QUEUE_SIZE, Background, frozen_turns
from .._errors import BackgroundWriteError, ClosedError, DimensionMismatchError, InvalidArgumentError
from .._read.graph import MAX_DEPTH, Walker
from .._domain.model import Claim, Path, Provenance, Retrieved, Scope, TimeQuery, WriteReceipt
from .._read.recall import EPISODE_HEADER, HISTORY_HEADER
from .._write.reembed import fingerprint, reembed_store
from .._read.recall import HEADER as RECALL_HEADER
from .._read.recall import render as render_recall
from .._read.retrieve import Retriever
from .._domain.time import Clock, system_clock, to_micros
from .._write.ingest import Ingest
from .._write.writer import Writer, encode_checked
from ..llm import LLM, DegradedExtractionWarning, NullLLM
from ..redact import Redactor
from ..rerank import Reranker
from ..telemetry import Recorder
from ..embed import Embedder, HashingEmbedder
from ..schema import BUILTIN_PREDICATES, PredicateRegistry
from ..store.base import Store
from ..store.sqlite.store import SQLiteStore

__all__ = ["Memvara", "ScopedMemvara"]


class _Core:
    """What one open memory owns: the store, schema, embedder, model, clock and writers."""

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
    ) -> None:
        self.store = store
        self.registry = registry
        self.embedder = embedder
        self.clock = clock
        self.llm = llm
        self.recorder = recorder
        self.writer = Writer(store, registry, embedder, clock)
        self.retriever = Retriever(
            store, embedder, registry, self.writer, vector_weight,
            reranker=reranker, rerank_top_n=rerank_top_n, recorder=recorder,
        )
        self.ingest = Ingest(
            self.writer, store, embedder, registry, llm, redactor=redactor, recorder=recorder,
            resolve_entities=resolve_entities,
        )
        self.background = Background(queue_size)  # add(wait=False); no thread until used
        self.closed = False

    def use_embedder(self, embedder: Embedder) -> None:
        """Encode with ``embedder`` from now on (after ``reembed()`` swapped the vectors)."""
        self.embedder = embedder
        self.writer._embedder = embedder
        self.retriever._embedder = embedder
        self.ingest.use_embedder(embedder)

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError("this Memvara is closed; open a new one to keep using the store")


class _MemoryAPI:
    """Every operation on a memory, at a bound default scope (shared by both handles)."""

    _core: _Core
    _scope: Scope

    @property
    def default_scope(self) -> Scope:
        """The scope calls use when no ``tenant=/user=/agent=/session=`` is passed."""
        return self._scope

    def _at(self, tenant: ScopeArg, user: ScopeArg, agent: ScopeArg, session: ScopeArg) -> Scope:
        self._core.check_open()
        return resolve_scope(self._scope, tenant, user, agent, session)

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

    # -- writes ---------------------------------------------------------------------
    @overload
    def add(
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
    def add(
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
    ) -> Future[WriteReceipt]: ...

    @overload
    def add(
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
    ) -> WriteReceipt | Future[WriteReceipt]: ...

    def add(
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
    ) -> WriteReceipt | Future[WriteReceipt]:
        """Store conversation turns and the facts they state, in one transaction.

        Accepts a string, a list of strings, ``Episode`` objects, or OpenAI/mem0-style
        ``[{"role": ..., "content": ...}]`` lists. Every turn is kept as an ``Episode``
        (exact and near duplicates of the scope's turns are skipped); filler is not mined
        for claims; unambiguous first-person statements ("I live in Berlin") become
        claims by rule; what is left goes to the model in one call, or, with no model, is
        counted in ``receipt.unextracted``. Each claim cites the turn it came from.

        Args:
            messages: the turns.
            role: the role of turns given as plain strings (``user``, ``assistant``,
                ``system`` or ``tool``).
            ts: when the turns were said (default: now); a claim read from a turn is
                valid from then.
            wait: ``False`` queues the call and returns at once (see ``flush()``). The
                arguments are checked and copied now, and a turn without ``ts`` is dated
                now; the call runs later on this memory's background thread, in queue
                order, and a full queue (``queue_size``) blocks here until there is
                room. Reads and synchronous writes do not wait for the queue.

        Returns:
            A ``WriteReceipt``: claims added, reinforced and closed; turns skipped, with
            reasons; turns left unextracted; model calls made. With ``wait=False``, a
            ``concurrent.futures.Future`` of it, which also carries the call's error.

        Raises:
            InvalidArgumentError: bad messages, role or timestamp; nothing is written.
            LLMError: the model failed; nothing is written, so the call can be retried.
        """
        scope = self._at(tenant, user, agent, session)
        if wait is True:
            return self._core.ingest.add(messages, role, ts, scope)
        if wait is not False:
            raise InvalidArgumentError("wait", f"must be True or False, got {wait!r:.40}")
        turns = frozen_turns(messages, role, ts, self._core.clock())
        return self._core.background.submit(
            functools.partial(self._core.ingest.add, turns, role, None, scope)
        )

    def flush(self) -> None:
        """Block until every ``add(..., wait=False)`` queued so far has committed.

        Reads never flush on their own: a read sees a queued turn once its add has
        committed, so flush first to read your own queued writes.

        Raises:
            BackgroundWriteError: queued adds failed since the last flush (each one's
                ``Future`` holds its exception too); the others committed.
        """
        self._core.check_open()
        self._core.background.flush()

    def remember(
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
        """Write one structured fact; a single-valued slot closes its old value.

        No model is consulted. Contradictions resolve on the predicate's cardinality:
        for a ``ONE`` predicate a new object closes the old one, ``close="ended"``
        (default: the world changed; the old value's valid time ends) or
        ``close="retired"`` (the record was wrong; belief in it ends, its interval
        untouched). Re-stating a believed value reinforces it instead of adding a row.

        Args:
            subject, predicate, obj: the triple; the subject and object are matched by
                their folded ``entity_key``, the predicate by its canonical name.
            valid_from: when it became true (default: ``recorded_at``).
            valid_to: when it stopped being true (default: open).
            recorded_at: when we learned it (default: now, from the clock).
            sources: ids of the episodes or documents it came from.
            text: the line it is indexed and shown as (default: rendered from the triple).
            confidence: from 0 to 1.
            memory_type: ``"semantic"``, ``"episodic"`` or ``"procedural"``.
            polarity: ``1``, or ``-1`` for "this does not hold".
            extractor: what produced it (default ``"remember"``).
            close: ``"ended"`` or ``"retired"``.
            **meta: JSON-serializable metadata stored with the claim.

        Returns:
            A ``WriteReceipt`` with the added, reinforced, ended and retired claims.

        Raises:
            InvalidArgumentError: a bad value; nothing is written.
        """
        scope = self._at(tenant, user, agent, session)
        close = _args.check_close(close)
        writer = self._core.writer
        claim = writer.build(
            subject, predicate, obj, scope, writer.now(), valid_from=valid_from,
            valid_to=valid_to, recorded_at=recorded_at, sources=sources, text=text,
            confidence=confidence, memory_type=memory_type, polarity=polarity,
            extractor=extractor, meta=meta,
        )
        return writer.remember([claim], close)

    def remember_many(
        self,
        claims: Iterable[Claim],
        *,
        close: str = "ended",
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> WriteReceipt:
        """Write many claims in one transaction: the bulk form of ``remember()``.

        Claims are embedded in one batch and settled exactly as if remembered one after
        another, in order. A claim with the root ``Scope()`` is written at this call's
        scope; one that names a scope is written there.

        Raises:
            InvalidArgumentError: any claim is bad (named by index); nothing is written.
        """
        scope = self._at(tenant, user, agent, session)
        close = _args.check_close(close)
        if isinstance(claims, (str, Claim)) or not isinstance(claims, Iterable):
            raise InvalidArgumentError("claims", "expected an iterable of Claim objects")
        writer = self._core.writer
        now = writer.now()
        prepared: list[Claim] = []
        for i, claim in enumerate(claims):
            if not isinstance(claim, Claim):
                raise InvalidArgumentError(f"claims[{i}]", f"expected a Claim, got {type(claim).__name__}")
            own = claim.scope  # the root scope (every level unset) means this call's
            if not isinstance(own, Scope):
                raise InvalidArgumentError(
                    f"claims[{i}].scope", f"expected a Scope, got {type(own).__name__}")
            target = scope if (own.tenant is None and own.user is None and own.agent is None
                               and own.session is None) else own
            try:
                prepared.append(writer.prepare(claim, target, now))
            except InvalidArgumentError as exc:  # named by its place in the batch
                raise type(exc)(f"claims[{i}].{exc.argument}", exc.problem) from None
        return writer.remember(prepared, close)

    def supersede(
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
        """Replace one claim with another, explicitly.

        The old claim's valid time ends at ``at`` (default: the new claim's
        ``valid_from``, else now); the new claim starts there unless it says otherwise.
        If ``at`` is not after the old claim's start, the old claim is retired instead;
        if its valid time had already ended by ``at``, it is left as it is (the receipt's
        ``ended`` and ``retired`` are then empty).

        Raises:
            ClaimNotFoundError: ``old_claim_id`` names no claim visible in this scope.
            InvalidArgumentError: the old claim is already retired, or a bad value.
        """
        scope = self._at(tenant, user, agent, session)
        old_claim_id = _args.check_claim_id(old_claim_id)
        return self._core.writer.supersede(scope, old_claim_id, new_claim, at, sources)

    def forget(
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
        """Retire a whole slot: stop believing every value of ``(subject, predicate)``.

        Reversible in the sense that matters: the rows stay, ``history()`` and
        ``known_at`` reads still see them. Nothing is asserted about the world.
        ``at`` dates the retirement on the belief clock (default: now).

        Returns:
            The claims retired, as updated.
        """
        return self._core.writer.forget(self._at(tenant, user, agent, session), subject, predicate, at)

    def delete(
        self,
        claim_id: str,
        *,
        at: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> bool:
        """Retire one claim (belief ends at ``at``, default now; the row stays).

        Returns:
            ``True`` if a believed claim was retired; ``False`` if the id names no
            claim visible here, or one already retired.
        """
        return self._core.writer.delete(self._at(tenant, user, agent, session), claim_id, at)

    def erase(
        self,
        claim_id: str,
        *,
        sources: bool = False,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> bool:
        """Remove one claim irreversibly: the row, its text index entry and its vector.

        With ``sources=True`` the episodes it cites go too, unless another surviving
        claim still cites them. Not a retirement: nothing of it remains to read.

        Returns:
            ``True`` if a claim was erased, ``False`` if none is visible under that id.
        """
        scope = self._at(tenant, user, agent, session)
        claim_id = _args.check_claim_id(claim_id)
        if not isinstance(sources, bool):
            raise InvalidArgumentError("sources", "must be True or False")
        return self._core.store.erase_claim(claim_id, scope, sources=sources)["claims"] > 0

    def purge(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """Erase this scope and every narrower scope beneath it, irreversibly.

        Purging a user takes their agents and sessions with them. At the root scope
        (no level set) that is the whole store.

        Returns:
            Counts removed: ``claims``, ``episodes``, ``embeddings``, ``sources``.
        """
        return self._core.store.purge(self._at(tenant, user, agent, session))

    def reset(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """``purge()`` plus the persisted predicate schema (``predicates`` in the counts)."""
        counts = self.purge(tenant=tenant, user=user, agent=agent, session=session)
        counts["predicates"] = self._core.store.clear_predicates()
        return counts

    def consolidate(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """Maintain this scope's claims and those of every scope beneath it: run it on a
        schedule, off the write path.

        Retrieval strength decays toward a floor with the time since each claim was
        last observed (slower for claims observed more, and at well-spaced intervals);
        near-duplicate claims of one slot merge into the oldest, which takes their
        sources and observation counts while they are retired (kept in ``history()``);
        episodic claims observed five times or more become semantic. Idempotent: a
        second run at the same instant changes nothing. It commits every 500 rows or
        so, so writers are never locked out for the whole sweep.

        Returns:
            How many claims changed: ``decayed``, ``merged`` (retired into a survivor)
            and ``promoted``.

        Raises:
            StoreError: a window failed; that window is rolled back, earlier ones stay,
                and running it again completes the sweep.
        """
        scope = self._at(tenant, user, agent, session)
        self._core.writer.embed_missing()  # near-duplicates are found by vector, too
        counts = consolidate_store(self._core.store, scope, self._core.writer.now())
        if self._core.recorder is not None:  # at zero too: "nothing merged" != "never ran"
            self._core.recorder.record("consolidate.merged", counts["merged"])
        return counts

    # -- reads ------------------------------------------------------------------------
    def get(
        self,
        claim_id: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> Claim | None:
        """The claim as currently recorded, or ``None`` if no such claim is visible here."""
        scope = self._at(tenant, user, agent, session)
        return self._core.store.get_claim(_args.check_claim_id(claim_id), scope)

    def get_all(
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
        """Every claim in ``states`` (default live) at one instant, newest recorded first.

        Args:
            valid_at: the world clock (default now).
            known_at: the belief clock (default now); claims come back as believed then.
            as_of: both clocks at once; not combinable with either.
            states: a non-empty subset of ``("live", "ended", "retired")``; all three is
                the audit view, where ``valid_at`` no longer narrows anything.
            include_invalidated: alias: ``False`` is ``["live"]``, ``True`` all three.
        """
        scope = self._at(tenant, user, agent, session)
        chosen = resolve_states(states, include_invalidated)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return self._core.store.find_claims(scope, tq, chosen)

    def search(
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
        """The ``k`` best matches for ``query``, lexical and vector, at one instant.

        Only what this read may see is searched (scope, ``valid_at``/``known_at``,
        ``states``) before the lists are cut, so a search into the past finds the
        past's answer. Ranks from BM25 and from cosine are fused, then scaled by recency
        (by the predicate's volatility), confidence and salience; each result explains
        its score (``r.explain.summary()``).

        Args:
            query: what to look for; any text (quotes and FTS syntax are taken literally).
            k: how many results, from 1 to 1,000,000.
            min_score: drop results scoring below this (scores run from 0 to 2).
            memory_types: only these kinds of claim (``semantic``, ``episodic``,
                ``procedural``).
            include_episodes: rank raw conversation turns alongside claims.
        """
        scope = self._at(tenant, user, agent, session)
        query = _args.check_text(query, "query")
        k = _args.check_k(k)
        min_score = _args.check_min_score(min_score)
        kinds = None if memory_types is None else _args.check_memory_types(memory_types)
        chosen = resolve_states(states, include_invalidated)
        if not isinstance(include_episodes, bool):
            raise InvalidArgumentError("include_episodes", "must be True or False")
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return self._core.retriever.search(
            query, scope, tq, chosen, k=k, min_score=min_score, memory_types=kinds,
            include_episodes=include_episodes,
        )

    def recall(
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
        """A block to put in a prompt: what is believed and true now about ``query``.

        One line per fact, under a header that labels the block as stored reference
        data rather than instructions; text is flattened to one line so stored text
        cannot forge structure. There are deliberately no time or state keywords: a
        prompt gets live facts only. ``include_history=True`` adds, for the facts
        surfaced, their *ended* earlier values (never retired ones), one lookup per slot.
        Empty when nothing matches.
        """
        for name, value in (("header", header), ("episode_header", episode_header),
                            ("history_header", history_header)):
            if value is not None:
                _args.check_text(value, name)
        if not isinstance(include_history, bool):
            raise InvalidArgumentError("include_history", "must be True or False")
        scope = self._at(tenant, user, agent, session)
        found = self.search(query, k=k, min_score=min_score, include_episodes=include_episodes,
                            tenant=scope.tenant, user=scope.user, agent=scope.agent,
                            session=scope.session)
        claims = [r.claim for r in found if r.claim is not None]
        episodes = [r.episode for r in found if r.episode is not None]
        past = self._earlier_values(scope, claims) if include_history else []
        return render_recall(
            claims, episodes, past,
            header=header or RECALL_HEADER, episode_header=episode_header or EPISODE_HEADER,
            history_header=history_header or HISTORY_HEADER,
        )

    def _earlier_values(self, scope: Scope, claims: list[Claim]) -> list[Claim]:
        """The ended values of the surfaced claims' slots, one lookup per slot."""
        shown = {c.id for c in claims}
        now = self._core.writer.now()
        past: list[Claim] = []
        seen: set[tuple[str, str, Scope]] = set()
        for claim in claims:
            slot = (entity_key(claim.subject), claim.predicate, claim.scope)
            if slot in seen:
                continue
            seen.add(slot)
            timeline = self._core.store.slot_history(
                claim.scope, self._entity_keys(claim.scope, claim.subject), claim.predicate,
                TimeQuery(known_at=now, valid_at=None),
            )
            past.extend(c for c in timeline if c.state == "ended" and c.id not in shown)
        return past

    def count(
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
        """How many claims ``get_all()`` with the same arguments returns."""
        scope = self._at(tenant, user, agent, session)
        chosen = resolve_states(states, include_invalidated)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return self._core.store.count_claims(scope, tq, chosen)

    def history(
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
        """The timeline of one slot, in recorded order, every state included.

        ``known_at`` rewinds belief (claims recorded later vanish; closures learned
        later are undone); ``valid_at`` keeps only the values in force at that instant.
        """
        scope = self._at(tenant, user, agent, session)
        keys = self._entity_keys(scope, _args.check_text(subject, "subject"))
        canonical = self._core.registry.canonical(_args.check_text(predicate, "predicate"))
        tq = resolve_time(
            valid_at, known_at, as_of, self._core.writer.now(), valid_default_now=False
        )
        return self._core.store.slot_history(scope, keys, canonical, tq)

    def _entity_keys(self, scope: Scope, probe: str) -> list[str]:
        """Every key ``probe`` names for ``scope``'s owner: its fold, the entity a learned
        alias maps it to, and every other alias of that entity. The owner's aliases only:
        a broader owner's never apply."""
        key = entity_key(probe)
        aliases = self._core.store.aliases(Scope(scope.tenant, scope.user))
        entity = aliases.get(key, key)
        return list(dict.fromkeys([key, entity, *(a for a, e in aliases.items() if e == entity)]))

    def alias_entity(
        self,
        surface: str,
        entity: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> None:
        """Decide that ``surface`` is another name of ``entity`` (``"Big Blue"``, ``"IBM"``)
        for this owner (tenant and user).

        New writes file either name under one key, and ``history()`` reached by either
        name returns both names' claims. Claims already written keep their key until
        ``backfill_entities()`` re-files them.

        Raises:
            InvalidArgumentError: a blank name, or two names that already fold together.
        """
        scope = self._at(tenant, user, agent, session)
        self._core.writer.learn_alias(scope, surface, entity, via="owner")

    def backfill_entities(
        self,
        *,
        dry_run: bool = True,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """Re-file this owner's claims written under an alias under its entity.

        A dry run (the default) changes nothing and returns the claims it would change.
        Each changed claim's ``meta["entity_backfill"]`` records the old key, the new one
        and when, so an explanation can say why its history moved.
        """
        if not isinstance(dry_run, bool):
            raise InvalidArgumentError("dry_run", f"expected True or False, got {dry_run!r:.40}")
        scope = self._at(tenant, user, agent, session)
        owner = Scope(scope.tenant, scope.user)
        store = self._core.store
        return store.rekey_subjects(
            owner, store.aliases(owner), self._core.writer.now(), dry_run=dry_run
        )

    # -- provenance -------------------------------------------------------------------
    def why(
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
        """Where a claim came from and what became of it: its source turns, what it
        superseded, what closed it, and its extractor.

        Any state counts (an audit read): ``known_at`` answers as believed then (``None``
        if the claim was not yet recorded), and ``valid_at``, when given, requires the
        claim to have been in force then. ``None`` also for an unknown id or one this
        scope cannot see. Turns recorded after ``known_at`` are left out.
        """
        scope = self._at(tenant, user, agent, session)
        claim_id = _args.check_claim_id(claim_id)
        tq = resolve_time(
            valid_at, known_at, as_of, self._core.writer.now(), valid_default_now=False
        )
        store = self._core.store
        with store.snapshot():
            found = store.claim_at(claim_id, scope, tq)
            if found is None:
                return None
            claim, ended_by = found
            closer_id = claim.invalidated_by or ended_by
            closer = None if closer_id is None else store.claim_at(
                closer_id, scope, TimeQuery(known_at=tq.known_at, valid_at=None)
            )
            episodes = [store.get_episode(source, scope) for source in claim.sources]
            return Provenance(
                claim=claim,
                episodes=tuple(
                    e for e in episodes if e is not None and e.recorded_at is not None
                    and to_micros(e.recorded_at, "recorded_at") <= tq.known_at
                ),
                superseded=tuple(store.superseded_by(claim_id, scope, tq)),
                closed_by=None if closer is None else closer[0],
            )

    def produced(
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
        """The claims derived from one turn (``why()`` backwards), oldest first, in any
        state, as believed at ``known_at`` and in force at ``valid_at`` when given.
        Empty for an unknown turn or one this scope cannot see."""
        scope = self._at(tenant, user, agent, session)
        episode_id = _args.check_text(episode_id, "episode_id")
        tq = resolve_time(
            valid_at, known_at, as_of, self._core.writer.now(), valid_default_now=False
        )
        store = self._core.store
        with store.snapshot():
            if store.get_episode(episode_id, scope) is None:
                return []
            return store.claims_citing(episode_id, scope, tq)

    # -- the graph ----------------------------------------------------------------------
    def _walkable(self, predicates: object) -> list[str]:
        """Canonical names for a walk's relation filter: each one registered, or used by
        some stored claim (a relation nobody ever wrote is a typo, not an empty walk)."""
        if isinstance(predicates, str) or not isinstance(predicates, Iterable):
            raise InvalidArgumentError("predicates", "expected a list of predicate names")
        registry, store = self._core.registry, self._core.store
        names: list[str] = []
        unknown: list[str] = []
        for item in predicates:
            try:
                name = registry.canonical(item)
            except InvalidArgumentError:
                name = ""
            if name and (registry.is_known(name) or store.predicate_in_use(name)):
                names.append(name)
            else:
                unknown.append(repr(item)[:40])
        if not names or unknown:
            raise InvalidArgumentError(
                "predicates", f"expected known predicate names; unknown: {unknown or 'none given'}"
            )
        return names

    def neighborhood(
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
        """The best ``k`` paths out of ``entity``, of ``min_hops`` to ``depth`` hops.

        Every hop reads live claims at one pinned instant (default now) and never walks
        a negative claim; ``predicates`` limits which relations are walked. An unknown
        entity has no neighbourhood (an empty list).
        """
        scope = self._at(tenant, user, agent, session)
        label = _args.check_text(entity, "entity")
        depth = _args.check_int(depth, "depth", 1, MAX_DEPTH)
        k = _args.check_k(k)
        min_hops = _args.check_int(min_hops, "min_hops", 1, depth)
        floor = _args.check_min_score(min_score)
        walker = self._walker(scope, predicates, valid_at, known_at, as_of)
        with self._core.store.snapshot():
            paths = walker.neighborhood(walker.node(entity_key(label)), depth, min_hops)
        return [p for p in paths if p.score >= floor][:k]

    def paths_between(
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
        """The best ``k`` chains of at most ``depth`` claims joining two entities, every
        hop read at one pinned instant (default now).

        Two names of one entity (same fold, or a learned alias) are joined by one path
        with no claims. An unknown entity joins nothing (an empty list).
        """
        scope = self._at(tenant, user, agent, session)
        source_label = _args.check_text(source, "source")
        target_label = _args.check_text(target, "target")
        depth = _args.check_int(depth, "depth", 1, MAX_DEPTH)
        k = _args.check_k(k)
        floor = _args.check_min_score(min_score)
        walker = self._walker(scope, predicates, valid_at, known_at, as_of)
        start, end = walker.node(entity_key(source_label)), walker.node(entity_key(target_label))
        if start == end:
            same = Path((), (start,), (source_label,), (), 1.0)
            return [same] if same.score >= floor else []
        with self._core.store.snapshot():
            paths = walker.paths_between(start, end, depth)
        return [p for p in paths if p.score >= floor][:k]

    def _walker(
        self,
        scope: Scope,
        predicates: Iterable[str] | None,
        valid_at: datetime | None,
        known_at: datetime | None,
        as_of: datetime | None,
    ) -> Walker:
        """A walker pinned to one instant, with the owner's aliases and the relations
        to walk."""
        names = None if predicates is None else self._walkable(predicates)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        aliases = self._core.store.aliases(Scope(scope.tenant, scope.user))
        return Walker(self._core.store, scope, tq, aliases, names)

    def stats(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> dict[str, int]:
        """Population counts, now: ``episodes``, ``claims``, ``live_claims``,
        ``ended_claims``, ``invalidated`` and ``embeddings``.

        They do not sum: a claim scheduled to start later is in no state, and a claim
        that ended and was later retired counts only as ``invalidated``. ``claims`` is
        the only total.
        """
        scope = self._at(tenant, user, agent, session)
        return self._core.store.stats(scope, self._core.writer.now())


class ScopedMemvara(_MemoryAPI):
    """The whole memory API with a scope bound; made by ``Memvara.scope()``."""

    def __init__(self, core: _Core, scope: Scope) -> None:
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

    Raises:
        InvalidArgumentError: a bad argument.
        StoreError: the store cannot be opened (not a store, too new, unreadable).
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
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgumentError("path", f"expected a file path or ':memory:', got {path!r:.60}")
        if store is not None and os.fspath(path) != ":memory:":
            raise InvalidArgumentError("store", "pass a path or a store, not both")
        if clock is not None and not callable(clock):
            raise InvalidArgumentError("clock", "expected a zero-argument callable returning a datetime")
        if registry is not None and not isinstance(registry, PredicateRegistry):
            raise InvalidArgumentError("registry", "expected a PredicateRegistry")
        embedder = HashingEmbedder() if embedder is None else embedder
        _check_embedder(embedder)
        if llm is None:
            llm = NullLLM()
            warnings.warn(
                "Memvara has no model (llm=None): add() will keep every turn, but only the"
                " first-person statements its rules read become claims; the rest are counted"
                " as receipt.unextracted. Pass llm=AnthropicLLM() or OpenAILLM() to read"
                " prose, or llm=NullLLM() to say that rules and remember() are enough.",
                DegradedExtractionWarning,
                stacklevel=2,
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
        scope = Scope(tenant, user, agent, session)
        registry = PredicateRegistry() if registry is None else registry
        store = SQLiteStore(path) if store is None else store
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
            _sync_schema(store, registry)
        except BaseException:
            store.close()
            raise
        self._core = _Core(
            store, registry, embedder, clock or system_clock, llm, redactor, telemetry,
            resolve_entities, None if vector_weight is None else float(vector_weight),
            read_reranker, read_rerank_top_n, queue_size,
        )
        self._scope = scope

    @property
    def store(self) -> Store:
        """The backing store."""
        return self._core.store

    @property
    def registry(self) -> PredicateRegistry:
        """The predicate schema in force."""
        return self._core.registry

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
        _check_embedder(embedder)
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


def _check_embedder(embedder: object) -> None:
    """Refuse a non-embedder, and run a broken one once on a probe, so it fails at the
    call that hands it over rather than in the middle of a write."""
    if not isinstance(embedder, Embedder):
        raise InvalidArgumentError("embedder", "expected an object with .dim and .encode(texts)")
    encode_checked(embedder, ["memvara"])


def _sync_schema(store: Store, registry: PredicateRegistry) -> None:
    """Load specs earlier processes persisted; persist the ones this registry declares."""
    persisted = store.load_predicates()
    for spec in persisted:
        if not registry.is_known(spec.name):
            try:
                registry.register(spec)
            except InvalidArgumentError:  # an alias this registry gives another predicate
                continue
    seeds = set(BUILTIN_PREDICATES)
    known = set(persisted)
    store.save_predicates([s for s in registry if s not in seeds and s not in known])
