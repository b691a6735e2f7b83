"""The write half of the memory API: every method checks its arguments, resolves the
scope once, and makes one call into the write path or the store."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from datetime import datetime
from typing import Literal, overload

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg
from .._domain.model import Claim, Scope
from .._domain.results import ConflictCheck, WriteReceipt
from .._errors import InvalidArgumentError
from .._write.background import frozen_turns
from .._write.consolidate import consolidate as consolidate_store
from .._write.corrections import check_conflict, revert
from .._write.retire import delete, forget
from .core import Handle
from .governance import check_actor, logged, logged_call
from .retention import erase_even_archived

__all__ = ["WriteAPI"]


class WriteAPI(Handle):
    """Every write of a memory, at a bound default scope."""

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
        meta: Mapping[str, object] | None = ...,
        actor: str | None = ...,
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
        meta: Mapping[str, object] | None = ...,
        actor: str | None = ...,
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
        meta: Mapping[str, object] | None = ...,
        actor: str | None = ...,
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
        meta: Mapping[str, object] | None = None,
        actor: str | None = None,
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
            meta: JSON-serializable metadata added to every claim this call writes.
            actor: who is writing, named in the write log and ``why()`` (default: the
                scope's agent, else its user). Every write method takes it.

        Returns:
            A ``WriteReceipt``: claims added, reinforced and closed; turns skipped, with
            reasons; turns left unextracted; model calls made. With ``wait=False``, a
            ``concurrent.futures.Future`` of it, which also carries the call's error.

        Raises:
            InvalidArgumentError: bad messages, role or timestamp; nothing is written.
            ExtractionPendingError: the model failed (an ``LLMError``). Nothing is lost:
                the turns and the claims the rules read are stored (the error's
                ``receipt``), and the turns left for the model wait for
                ``retry_extraction()`` (``receipt.pending`` lists them).
        """
        scope = self._at(tenant, user, agent, session)
        extra = _args.check_meta(meta)
        check_actor(actor, scope)
        if wait is True:
            with logged(self._core, "add", scope, actor):
                return self._core.ingest.add(messages, role, ts, scope, extra)
        if wait is not False:
            raise InvalidArgumentError("wait", f"must be True or False, got {wait!r:.40}")
        turns = frozen_turns(messages, role, ts, self._core.clock())
        return self._core.background.submit(functools.partial(  # named on its thread
            logged_call, self._core, "add", scope, actor,
            functools.partial(self._core.ingest.add, turns, role, None, scope, extra)))

    def retry_extraction(
        self,
        *,
        limit: int = 1000,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> WriteReceipt:
        """Read again, with the model, the turns an ``add()`` stored while the model was
        failing: those of this scope and every scope beneath it, up to ``limit``.

        Each turn is read once: its claims are written and its mark cleared in one
        transaction, so running this twice never writes a claim twice.

        Returns:
            A ``WriteReceipt`` of the claims written (empty when nothing waits).

        Raises:
            ExtractionPendingError: the model failed again; the turns keep waiting.
            LLMError: turns wait, but this memory has no model.
        """
        scope = self._at(tenant, user, agent, session)
        limit = _args.check_int(limit, "limit", 1, 1_000_000)
        with logged(self._core, "retry_extraction", scope, actor):
            return self._core.ingest.retry(scope, limit)

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
        meta: Mapping[str, object] | None = None,
        actor: str | None = None,
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
            recorded_at: when we learned it (default: now, from the clock); never
                before a retirement its slot has recorded (``InvalidTimeError``).
            sources: ids of the episodes or documents it came from.
            text: the line it is indexed and shown as (default: rendered from the triple).
            confidence: from 0 to 1.
            memory_type: ``"semantic"``, ``"episodic"`` or ``"procedural"``.
            polarity: ``1``, or ``-1`` for "this does not hold".
            extractor: what produced it (default ``"remember"``).
            close: ``"ended"`` or ``"retired"``.
            meta: JSON-serializable metadata stored with the claim (never a scope: only
                the scope keywords choose where a write goes).

        Returns:
            A ``WriteReceipt`` with the added, reinforced, ended and retired claims.

        Raises:
            InvalidArgumentError: a bad value; nothing is written.
        """
        scope = self._at(tenant, user, agent, session)
        close = _args.check_close(close)
        writer = self._core.writer
        now = writer.now()
        claim = writer.build(subject, predicate, obj, scope, now, valid_from=valid_from,
                             valid_to=valid_to, recorded_at=recorded_at, sources=sources,
                             text=text, confidence=confidence, memory_type=memory_type,
                             polarity=polarity, extractor=extractor, meta=_args.check_meta(meta))
        with logged(self._core, "remember", scope, actor):  # a given recorded_at: checked
            return writer.remember([claim], close, now=None if recorded_at is None else now)

    def remember_many(
        self,
        claims: Iterable[Claim],
        *,
        close: str = "ended",
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        meta: Mapping[str, object] | None = None,
        actor: str | None = None,
    ) -> WriteReceipt:
        """Write many claims in one transaction: the bulk form of ``remember()``.

        Claims are embedded in one batch and settled exactly as if remembered one after
        another, in order. A claim with the root ``Scope()`` is written at this call's
        scope; one that names a scope is written there. ``meta`` is added to every
        claim's own metadata (a claim's own key wins).

        Raises:
            InvalidArgumentError: any claim is bad (named by index); nothing is written.
        """
        scope = self._at(tenant, user, agent, session)
        close = _args.check_close(close)
        extra = _args.check_meta(meta)
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
            if extra:
                claim = replace(claim, meta={**extra, **claim.meta})
            try:
                prepared.append(writer.prepare(claim, target, now))
            except InvalidArgumentError as exc:  # named by its place in the batch
                raise type(exc)(f"claims[{i}].{exc.argument}", exc.problem) from None
        with logged(self._core, "remember_many", scope, actor):
            return writer.remember(prepared, close, now=now, argument="claims[{}].recorded_at".format)

    def check_conflict(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        recorded_at: datetime | None = None,
        polarity: int = 1,
        close: str = "ended",
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> ConflictCheck:
        """What ``remember()`` with the same arguments would do, without writing.

        Reads the slot as the write would and settles the claim the same way: a new
        row (and which claims it would end or retire), a reinforcement of a believed
        row, or a correction of one (the same value with an earlier start). Nothing is
        written, so it works on a read-only store too; a write made in between can
        change the answer.

        Raises:
            InvalidArgumentError: a bad value, as ``remember()`` would raise it.
        """
        scope = self._at(tenant, user, agent, session)
        close = _args.check_close(close)
        writer = self._core.writer
        now = writer.now()
        claim = writer.build(subject, predicate, obj, scope, now, valid_from=valid_from,
                             valid_to=valid_to, recorded_at=recorded_at, polarity=polarity)
        return check_conflict(writer, self._core.store, claim, close, now)

    def revert(
        self,
        claim_id: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> WriteReceipt:
        """Undo a mistaken write: retire ``claim_id`` and restore what it closed.

        ``delete()`` only retires; ``revert()`` also brings back the values the
        mistake ended or retired, unless a later write has closed them since. Each
        comes back as a new claim recorded now (its ``meta["restored_from"]`` names the
        original, ``meta["reverts"]`` the mistake), settled against its slot like any
        write, so a value written after the mistake still bounds it. Reads at an
        earlier ``known_at`` keep showing what was believed then. A retired mistake
        (already ``delete()``-d) can still be reverted.

        Returns:
            A ``WriteReceipt``: ``added`` holds the restored claims; ``retired`` the
            mistake and the originals the copies replace.

        Raises:
            ClaimNotFoundError: no claim with this id is visible in this scope.
            InvalidArgumentError: the claim closed nothing still closed by it, or was
                itself written by a revert; nothing is written.
        """
        scope = self._at(tenant, user, agent, session)
        with logged(self._core, "revert", scope, actor):
            return revert(self._core.writer, self._core.store, scope, claim_id)

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
        actor: str | None = None,
    ) -> WriteReceipt:
        """Replace one claim with another, explicitly.

        The old claim's valid time ends at ``at`` (default: the new claim's
        ``valid_from``, else now); the new claim starts there unless it says otherwise.
        When both share a slot, the two are never valid at one instant: if the new
        claim starts before ``at`` (or re-states a believed value that does), the old
        one ends where that value starts instead. If the end is not after the old
        claim's start, the old claim is retired; if its valid time had already ended by
        then, it is left as it is (the receipt's ``ended`` and ``retired`` are then
        empty). The new claim settles against the rest of its slot as with ``remember()``.

        Raises:
            ClaimNotFoundError: ``old_claim_id`` names no claim visible in this scope.
            InvalidArgumentError: the old claim is already retired, or a bad value.
        """
        scope = self._at(tenant, user, agent, session)
        old_claim_id = _args.check_claim_id(old_claim_id)
        with logged(self._core, "supersede", scope, actor):
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
        actor: str | None = None,
    ) -> list[Claim]:
        """Retire a whole slot: stop believing every value of ``(subject, predicate)``.

        Reversible in the sense that matters: the rows stay, ``history()`` and
        ``known_at`` reads still see them. Nothing is asserted about the world.
        ``at`` dates the retirement on the belief clock (default: now).

        Returns:
            The claims retired, as updated.
        """
        scope = self._at(tenant, user, agent, session)
        with logged(self._core, "forget", scope, actor):
            core = self._core
            return forget(core.writer, core.store, core.registry, scope, subject, predicate, at)

    def delete(
        self,
        claim_id: str,
        *,
        at: datetime | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> bool:
        """Retire one claim (belief ends at ``at``, default now; the row stays).

        Returns:
            ``True`` if a believed claim was retired; ``False`` if the id names no
            claim visible here, or one already retired.
        """
        scope = self._at(tenant, user, agent, session)
        with logged(self._core, "delete", scope, actor):
            return delete(self._core.writer, self._core.store, scope, claim_id, at)

    def erase(
        self,
        claim_id: str,
        *,
        sources: bool = False,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> bool:
        """Remove one claim irreversibly: the row, its text index entry and its vector.

        With ``sources=True`` the episodes it cites go too, unless another surviving
        claim still cites them. Not a retirement: nothing of it remains to read, nor its id
        in other claims (as their closer or a source). A claim ``prune()`` archived (in
        this scope's subtree) is erased from the archive.

        Returns:
            ``True`` if a claim was erased, ``False`` if none is visible under that id.
        """
        scope = self._at(tenant, user, agent, session)
        claim_id = _args.check_claim_id(claim_id)
        if not isinstance(sources, bool):
            raise InvalidArgumentError("sources", "must be True or False")
        self._core.background.settle()  # an add(wait=False) queued before: erased too
        with logged(self._core, "erase", scope, actor):
            erased = erase_even_archived(self._core.store, claim_id, scope, sources)
        self._core.forget_erased()  # no vector kept in memory outlives its row
        return erased

    def purge(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> dict[str, int]:
        """Erase this scope and every narrower scope beneath it, irreversibly.

        A user's purge removes every agent and session under that user too. At the root
        scope (no level set) that is the whole store.

        Returns:
            Counts removed: ``claims`` (archived ones too: the scope's archive, reviews
            and evidence go with it), ``episodes``, ``embeddings``, ``sources``.
        """
        scope = self._at(tenant, user, agent, session)
        self._core.background.settle()  # an add(wait=False) queued before: purged too
        with logged(self._core, "purge", scope, actor):
            counts = self._core.store.purge(scope)
        self._core.forget_erased()
        return counts

    def reset(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> dict[str, int]:
        """``purge()`` plus the persisted predicate schema (``predicates`` in the counts)."""
        scope = self._at(tenant, user, agent, session)
        with logged(self._core, "reset", scope, actor):
            counts = self.purge(tenant=tenant, user=user, agent=agent, session=session, actor=actor)
            counts["predicates"] = self._core.store.clear_predicates()
        return counts

    def consolidate(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
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
        with logged(self._core, "consolidate", scope, actor):
            counts = consolidate_store(self._core.store, scope, self._core.writer.now())
        if self._core.recorder is not None:  # at zero too: "nothing merged" != "never ran"
            self._core.recorder.record("consolidate.merged", counts["merged"])
        return counts

    def alias_entity(
        self,
        surface: str,
        entity: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
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
        with logged(self._core, "alias_entity", scope, actor):
            self._core.aliases.learn(scope, surface, entity, self._core.writer.now(), via="owner")

    def backfill_entities(
        self,
        *,
        dry_run: bool = True,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> list[Claim]:
        """Re-file this owner's claims written under an alias under its entity.

        A dry run (the default) changes nothing and returns the claims it would change.
        Each changed claim's ``meta["entity_backfill"]`` records the old key, the new one
        and when, so an explanation can say why its history moved.
        """
        if not isinstance(dry_run, bool):
            raise InvalidArgumentError("dry_run", f"expected True or False, got {dry_run!r:.40}")
        scope = self._at(tenant, user, agent, session)
        with logged(self._core, "backfill_entities", scope, actor):
            return self._core.aliases.backfill(scope, self._core.writer.now(), dry_run=dry_run)
