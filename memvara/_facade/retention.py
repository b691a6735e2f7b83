"""Retention: ``prune()`` moves claims that stopped holding long ago to an archive,
``archived()`` reads it, ``restore_archived()`` brings claims back."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg, resolve_time
from .._domain.model import STATES, Claim, Scope
from .._errors import ClaimNotFoundError, InvalidArgumentError, StoreError
from ..schema import Cardinality
from ..store.base import ArchiveStore, Store
from .core import Handle
from .governance import check_actor, logged

__all__ = ["RetentionAPI", "erase_even_archived"]

_FLOOR = -(2**62)
"""The earliest cutoff handed to the store (a 64-bit integer in SQL)."""


def erase_even_archived(store: Store, claim_id: str, scope: Scope, sources: bool) -> bool:
    """``erase_claim``, reaching a claim ``prune()`` archived in ``scope``'s subtree too
    (put back and erased in one transaction): whether a claim was erased."""
    with store.transaction():
        if store.erase_claim(claim_id, scope, sources=sources)["claims"]:
            return True
        if not isinstance(store, ArchiveStore):
            return False
        try:  # the store checks the archive holds it, and restores nothing if not
            store.restore_archived(scope, [claim_id])
        except ClaimNotFoundError:
            return False
        return store.erase_claim(claim_id, scope, sources=sources)["claims"] > 0


def _archive_of(store: Store) -> ArchiveStore:
    if not isinstance(store, ArchiveStore):
        raise StoreError(f"{type(store).__name__} keeps no archive (it is no ArchiveStore)")
    return store


def _states(states: object) -> tuple[str, ...]:
    if isinstance(states, str) or not isinstance(states, Iterable):
        raise InvalidArgumentError("states", f"expected a list of states, got {states!r:.40}")
    chosen = tuple(states)
    if not chosen or any(s not in STATES for s in chosen) or len(set(chosen)) != len(chosen):
        raise InvalidArgumentError(
            "states", f"expected one or more of {', '.join(STATES)}, each once; got {chosen!r:.60}")
    return chosen


class RetentionAPI(Handle):
    """Moving old claims out of reach, and back. Each call covers its scope and every
    scope beneath it (as ``purge()`` does)."""

    def prune(
        self,
        older_than: timedelta,
        *,
        states: Iterable[str] = ("ended", "retired"),
        keep_at_most: int | None = None,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> dict[str, int]:
        """Move claims that stopped holding more than ``older_than`` ago (by this
        memory's clock) to the archive, in one transaction.

        An ended claim stopped holding at its ``valid_to``, a retired one at its
        ``invalidated_at``. A live claim is moved only if ``states`` names ``"live"``
        (then: one last observed more than ``older_than`` ago). With ``keep_at_most``,
        if this scope's subtree still holds more claims than that, more claims of
        ``states`` go, whatever their age: ended ones first, the least salient first.

        Promises: an archived claim vanishes from every read (``get``, ``search``,
        ``history``, ``why``, ``count``...) until ``restore_archived()`` puts it back as
        it was (id, clocks, text, sources, search entry, vector); ``archived()`` lists
        it meanwhile; the write log records the move. Does not promise: erasure. The
        text stays in the store file; use ``erase()``/``forget_subject()`` for that.
        A claim still waiting for its vector is left for the next run.

        Returns:
            How many claims moved in each of ``states``, and ``evicted``: how many of
            them the capacity bound took.

        Raises:
            InvalidArgumentError: ``older_than`` is not a ``timedelta`` of 0 or more, a
                state is unknown or repeated, ``keep_at_most`` is not a count.
            StoreError: the store keeps no archive.
        """
        scope = self._at(tenant, user, agent, session)
        if not isinstance(older_than, timedelta) or older_than < timedelta(0):
            raise InvalidArgumentError(
                "older_than", f"expected a timedelta of 0 or more, got {older_than!r:.40}")
        chosen = _states(states)
        if keep_at_most is not None:
            keep_at_most = _args.check_int(keep_at_most, "keep_at_most", 0, 2**62)
        check_actor(actor, scope)
        store = _archive_of(self._core.store)
        writer = self._core.writer
        writer.embed_missing()  # so the rows it would skip as waiting are few
        now = writer.now()
        cutoff = max(_FLOOR, now - older_than // timedelta(microseconds=1))
        with logged(self._core, "prune", scope, actor):
            return store.archive_claims(scope, dict.fromkeys(chosen, cutoff), keep_at_most, now)

    def restore_archived(
        self,
        claim_ids: Iterable[str] | None = None,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> list[str]:
        """Bring archived claims back (``claim_ids``, or every one of this scope's
        subtree), exactly as they were archived, in one transaction.

        Returns:
            The ids restored, in row order.

        Raises:
            ClaimNotFoundError: an id the archive does not hold in this scope's subtree
                (nothing is restored).
            InvalidArgumentError: ``claim_ids`` is not a list of ids, or a live claim
                would come back beside the value its single-valued slot took since it
                was archived (nothing is restored).
            StoreError: the store keeps no archive.
        """
        scope = self._at(tenant, user, agent, session)
        wanted: list[str] | None = None
        if claim_ids is not None:
            if isinstance(claim_ids, str) or not isinstance(claim_ids, Iterable):
                raise InvalidArgumentError("claim_ids", f"expected a list of claim ids, got {claim_ids!r:.40}")
            wanted = list(dict.fromkeys(_args.check_claim_id(i) for i in claim_ids))
        check_actor(actor, scope)
        store = _archive_of(self._core.store)
        with logged(self._core, "restore_archived", scope, actor):
            held = {claim.id: claim for claim, _ in store.archived_claims(scope)}
            if wanted is not None:
                missing = [i for i in wanted if i not in held]
                if missing:
                    raise ClaimNotFoundError(
                        missing[0], f"the archive holds no claim {', '.join(missing[:5])} in"
                        " this scope", argument="claim_ids")
            self._refuse_second_values([held[i] for i in (held if wanted is None else wanted)])
            return store.restore_archived(scope, wanted)

    def _refuse_second_values(self, claims: list[Claim]) -> None:
        """``InvalidArgumentError`` if a live claim of a single-valued slot would come
        back beside the live value the slot took meanwhile (the slot's rule is that
        it holds one). The claim itself live again (another writer restored it since the
        archive was read) is the store's to refuse, by name."""
        now = self._core.writer.now()
        for claim in claims:
            if claim.state != "live" or \
                    self._core.registry.spec(claim.predicate).cardinality is not Cardinality.ONE:
                continue
            keys = self._core.aliases.keys_of(claim.scope, claim.subject)
            for other in self._core.store.slot_history(
                    claim.scope, keys, claim.predicate, resolve_time(None, None, None, now)):
                if other.state == "live" and other.scope == claim.scope \
                        and other.polarity == claim.polarity and other.id != claim.id:
                    raise InvalidArgumentError(
                        "claim_ids", f"{claim.id} would be live beside {other.id}, the value"
                        f" its single-valued slot ({claim.subject!r:.40}, {claim.predicate})"
                        " holds now: retire or end one of them first (nothing was restored)")

    def archived(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Claim]:
        """The archived claims of this scope's subtree (of one slot, given a subject and
        a predicate, reached by any of the subject's names), oldest row first: the only
        read that sees them.

        Raises:
            InvalidArgumentError: a subject without a predicate, or the other way round.
            StoreError: the store keeps no archive.
        """
        scope = self._at(tenant, user, agent, session)
        if (subject is None) != (predicate is None):
            raise InvalidArgumentError(
                "predicate" if predicate is None else "subject",
                "pass a subject and a predicate together, or neither")
        store = _archive_of(self._core.store)
        if subject is None or predicate is None:
            return [claim for claim, _ in store.archived_claims(scope)]
        keys = self._core.aliases.keys_of(scope, _args.check_text(subject, "subject"))
        canonical = self._core.registry.canonical(_args.check_text(predicate, "predicate"))
        found = [pair for key in keys for pair in store.archived_claims(scope, (key, canonical))]
        return [claim for claim, _ in sorted(found, key=lambda pair: (pair[0].recorded_at, pair[0].id))]
