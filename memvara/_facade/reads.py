"""The read half of the memory API: every method checks its arguments, resolves the
scope and the instants once, and makes one call into the read path or the store."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg, resolve_states, resolve_time
from .._domain.model import Claim, Episode, Scope
from .._domain.results import Path, Provenance, Retrieved
from .._errors import InvalidArgumentError
from .._read import graph
from .._read.graph import MAX_DEPTH
from .._read.provenance import claims_from, provenance
from .._read.recall import EPISODE_HEADER, HISTORY_HEADER, contender, earlier_values
from .._read.recall import HEADER as RECALL_HEADER
from .._read.recall import render as render_recall
from .core import Handle
from .reviews import contested

__all__ = ["ReadAPI"]


class ReadAPI(Handle):
    """Every read of a memory, at a bound default scope."""

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
        subject: str | None = None,
        predicate: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """Every claim in ``states`` (default live) at one instant, newest recorded first
        (then newest written: a stable order to page through).

        Args:
            valid_at: the world clock (default now).
            known_at: the belief clock (default now); claims come back as believed then.
            as_of: both clocks at once; not combinable with either.
            states: a non-empty subset of ``("live", "ended", "retired")``; all three is
                the audit view, where ``valid_at`` no longer narrows anything.
            include_invalidated: alias: ``False`` is ``["live"]``, ``True`` all three.
            subject: only claims about this entity (by its folded key and its learned
                aliases, as ``history()`` finds them).
            predicate: only claims with this predicate (or an alias of it).
            limit: at most this many (default: all).
            offset: skip this many first (for paging with ``limit``).
        """
        scope = self._at(tenant, user, agent, session)
        chosen = resolve_states(states, include_invalidated)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        keys, canonical = self._slot_filter(scope, subject, predicate)
        return self._core.store.find_claims(
            scope, tq, chosen, limit=_args.check_limit(limit), offset=_args.check_offset(offset),
            subject_keys=keys, predicate=canonical,
        )

    def _slot_filter(
        self, scope: Scope, subject: str | None, predicate: str | None
    ) -> tuple[list[str] | None, str | None]:
        """The subject keys and canonical predicate a ``subject=``/``predicate=`` filter
        names (``None`` where none is given)."""
        keys = None if subject is None else self._core.aliases.keys_of(
            scope, _args.check_text(subject, "subject"))
        canonical = None if predicate is None else self._core.registry.canonical(
            _args.check_text(predicate, "predicate"))
        return keys, canonical

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
            k: at most this many results, from 1 to 1,000,000. Only results that match
                come back: each shares a word with the query (or is a turn beside one
                that does), or its vector is at least as close as the embedder's
                declared ``similarity_floor`` (for a lexical embedder, its unhashed
                spelling too: ``memvara.embed.lexical_similarities``); fewer than ``k``
                when fewer match.
            min_score: drop results scoring below this (scores run from 0 to 2).
            memory_types: only these kinds of claim (``semantic``, ``episodic``,
                ``procedural``).
            include_episodes: rank raw conversation turns alongside claims.
        """
        scope = self._at(tenant, user, agent, session)
        query = _args.check_text(query, "query", allow_nul=True)
        k = _args.check_k(k)
        min_score = _args.check_min_score(min_score)
        kinds = None if memory_types is None else _args.check_memory_types(memory_types)
        chosen = resolve_states(states, include_invalidated)
        if not isinstance(include_episodes, bool):
            raise InvalidArgumentError("include_episodes", "must be True or False")
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return contested(self._core, scope, self._core.retriever.search(
            query, scope, tq, chosen, k=k, min_score=min_score, memory_types=kinds,
            include_episodes=include_episodes,
        ))

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
                _args.check_text(value, name, allow_nul=True)
        if not isinstance(include_history, bool):
            raise InvalidArgumentError("include_history", "must be True or False")
        scope = self._at(tenant, user, agent, session)
        found = self.search(query, k=k, min_score=min_score, include_episodes=include_episodes,
                            tenant=scope.tenant, user=scope.user, agent=scope.agent,
                            session=scope.session)
        claims = [r.claim for r in found if r.claim is not None]
        disputed = {r.claim.id: contender(r.claim, r.review) for r in found
                    if r.claim is not None and r.review is not None}
        episodes = [r.episode for r in found if r.episode is not None]
        past = earlier_values(self._core.store, self._core.aliases.keys_of, claims,
                              self._core.writer.now()) if include_history else []
        return render_recall(
            claims, episodes, past,
            header=header or RECALL_HEADER, episode_header=episode_header or EPISODE_HEADER,
            history_header=history_header or HISTORY_HEADER, disputed=disputed,
        )

    def count(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Iterable[str] | None = None,
        include_invalidated: bool | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> int:
        """How many claims ``get_all()`` with the same arguments returns (with no
        ``limit`` or ``offset``)."""
        scope = self._at(tenant, user, agent, session)
        chosen = resolve_states(states, include_invalidated)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        keys, canonical = self._slot_filter(scope, subject, predicate)
        return self._core.store.count_claims(
            scope, tq, chosen, subject_keys=keys, predicate=canonical)

    def episodes(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        roles: Iterable[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Episode]:
        """The stored conversation turns visible here, oldest said first (then first
        stored), for reading a transcript back or paging through it.

        Args:
            valid_at: only turns said at or before this instant (default: any time).
            known_at: only turns stored by this instant (default: now).
            as_of: both at once; not combinable with either.
            roles: only turns of these roles (``user``, ``assistant``, ``system``,
                ``tool``).
            limit: at most this many (default: all).
            offset: skip this many first.
        """
        scope = self._at(tenant, user, agent, session)
        tq = resolve_time(
            valid_at, known_at, as_of, self._core.writer.now(), valid_default_now=False)
        wanted = None if roles is None else _args.check_roles(roles)
        return self._core.store.list_episodes(
            scope, tq, roles=wanted, limit=_args.check_limit(limit),
            offset=_args.check_offset(offset))

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
        keys = self._core.aliases.keys_of(scope, _args.check_text(subject, "subject"))
        canonical = self._core.registry.canonical(_args.check_text(predicate, "predicate"))
        tq = resolve_time(
            valid_at, known_at, as_of, self._core.writer.now(), valid_default_now=False
        )
        return self._core.store.slot_history(scope, keys, canonical, tq)

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
        return provenance(self._core.store, claim_id, scope, tq)

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
        return claims_from(self._core.store, episode_id, scope, tq)

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
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return graph.neighborhood(
            self._core.store, self._core.registry, scope, tq,
            self._core.aliases.fold(scope, label), aliases=self._core.aliases.fresh(scope),
            depth=depth,
            min_hops=min_hops, predicates=predicates, floor=floor, k=k,
        )

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

        Two names of one entity (same fold, or a learned alias) have no path between
        them: an entity is not connected to itself. An unknown entity joins nothing (an
        empty list).
        """
        scope = self._at(tenant, user, agent, session)
        source_label = _args.check_text(source, "source")
        target_label = _args.check_text(target, "target")
        depth = _args.check_int(depth, "depth", 1, MAX_DEPTH)
        k = _args.check_k(k)
        floor = _args.check_min_score(min_score)
        tq = resolve_time(valid_at, known_at, as_of, self._core.writer.now())
        return graph.paths_between(
            self._core.store, self._core.registry, scope, tq,
            self._core.aliases.fold(scope, source_label),
            self._core.aliases.fold(scope, target_label), aliases=self._core.aliases.fresh(scope),
            depth=depth, predicates=predicates, floor=floor, k=k,
        )

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
        ended and then retired counts only as ``invalidated``. ``claims`` is
        the only total.
        """
        scope = self._at(tenant, user, agent, session)
        return self._core.store.stats(scope, self._core.writer.now())
