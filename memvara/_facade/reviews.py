"""The review queue: ``observe()`` files evidence against what a slot holds, enough
distinct grounds reopen the slot for review, ``reviews()`` lists them, ``resolve()``
closes one; searches and ``recall()`` mark results whose slot is under review."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import replace

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg, resolve_time
from .._domain.entities import entity_key
from .._domain.model import Claim, Scope
from .._domain.results import Retrieved
from .._domain.review import Observation, Review
from .._errors import InvalidArgumentError, StoreError
from ..store.base import ReviewStore, Store
from .core import Core, Handle
from .governance import check_actor, logged

__all__ = ["DEFAULT_THRESHOLD", "ReviewAPI", "check_threshold", "contested", "set_threshold"]

DEFAULT_THRESHOLD = 2
"""Distinct grounds that reopen a slot for review, unless ``Memvara(review_threshold=)``
says otherwise."""

_THRESHOLDS: weakref.WeakKeyDictionary[Core, int] = weakref.WeakKeyDictionary()


def check_threshold(value: object) -> int:
    """``review_threshold=``: a count from 1 to 1,000."""
    return _args.check_int(value, "review_threshold", 1, 1000)


def set_threshold(core: Core, value: int) -> None:
    """Record an open memory's threshold (every handle on it shares it)."""
    _THRESHOLDS[core] = value


def _reviews_of(store: Store) -> ReviewStore:
    if not isinstance(store, ReviewStore):
        raise StoreError(f"{type(store).__name__} keeps no review queue (it is no ReviewStore)")
    return store


def contested(core: Core, scope: Scope, results: Sequence[Retrieved]) -> list[Retrieved]:
    """``results`` with each claim whose slot is under review (a review visible from
    ``scope``, of another value than the claim's) marked with it; one small read, none
    for a store without reviews."""
    store = core.store
    if not results or not isinstance(store, ReviewStore):
        return list(results)
    open_ones = store.reviews(scope, visible=True)
    if not open_ones:
        return list(results)
    by_slot: dict[tuple[str, str], list[Review]] = {}
    for review in open_ones:
        by_slot.setdefault((entity_key(review.subject), review.predicate), []).append(review)

    def against(claim: Claim) -> Review | None:  # not the value the claim holds itself
        held = (entity_key(claim.object), claim.polarity)
        return next((review for review in by_slot.get((entity_key(claim.subject), claim.predicate), ())
                     if (entity_key(review.object), review.polarity) != held), None)

    return [r if r.claim is None else replace(r, review=against(r.claim)) for r in results]


class ReviewAPI(Handle):
    """Evidence that contradicts what is held, weighed before anything changes."""

    def observe(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        support: Iterable[str],
        polarity: int = 1,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> Observation:
        """Record evidence that ``(subject, predicate)`` has the value ``obj``, without
        changing what the slot holds.

        Evidence is filed only for a value the slot does not hold now (for a
        single-valued predicate, one other than its value; for a many-valued one, one
        not among them). Each distinct ground in ``support`` (a turn id, a document, a
        URL: any string naming where it came from) counts once for that value: a ground
        given again, now or in an earlier call, is an echo, not a vote. When the
        distinct grounds reach the memory's ``review_threshold``, the slot is reopened
        for review (``reviews()``), and searches and ``recall()`` say so until
        ``resolve()`` decides.

        Returns:
            An ``Observation``: ``held`` (the slot holds the value: nothing filed), the
            ``grounds`` counted for the value, the ``echoes``, and the open ``review``.

        Raises:
            InvalidArgumentError: a blank subject, predicate or value, no ground, a
                ground that is not a string.
            StoreError: the store keeps no review queue.
        """
        scope = self._at(tenant, user, agent, session)
        subject = _args.check_text(subject, "subject")
        obj = _args.check_text(obj, "obj")
        canonical = self._core.registry.canonical(_args.check_text(predicate, "predicate"))
        if isinstance(support, str) or not isinstance(support, Iterable):
            raise InvalidArgumentError("support", f"expected a list of grounds, got {support!r:.40}")
        grounds = [_args.check_text(g, f"support[{i}]") for i, g in enumerate(support)]
        if not grounds:
            raise InvalidArgumentError("support", "name at least one ground the evidence came from")
        if polarity not in (1, -1) or isinstance(polarity, bool):
            raise InvalidArgumentError("polarity", f"expected 1 or -1, got {polarity!r:.40}")
        name = check_actor(actor, scope)
        store = _reviews_of(self._core.store)
        writer = self._core.writer
        now = writer.now()
        keys = self._core.aliases.keys_of(scope, subject)
        held = [c for c in self._core.store.slot_history(
            scope, keys, canonical, resolve_time(None, None, None, now)) if c.state == "live"]
        value = entity_key(obj)
        if any(entity_key(c.object) == value and c.polarity == polarity for c in held):
            return Observation(held=True, grounds=0, echoes=0, review=None)
        slot = (writer.key_of(scope, subject), canonical, value, polarity)
        # one transaction: the filer's hold on the value lasts until the review is open,
        # so two observers never open one each, and a failed open files nothing
        with logged(self._core, "observe", scope, actor), self._core.store.transaction():
            count, echoes, review = store.file_evidence(scope, slot, grounds, now, name)
            if review is None and count >= _THRESHOLDS.get(self._core, DEFAULT_THRESHOLD):
                review = store.open_review(scope, subject, slot, obj, [c.id for c in held], now)
        return Observation(held=False, grounds=count, echoes=echoes, review=review)

    def reviews(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[Review]:
        """The open reviews of this scope and every scope beneath it, oldest first.

        Raises:
            StoreError: the store keeps no review queue.
        """
        scope = self._at(tenant, user, agent, session)
        return _reviews_of(self._core.store).reviews(scope)

    def resolve(
        self,
        review_id: str,
        decision: str,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> Review:
        """Close a review: ``"keep"`` what the slot holds, or ``"accept"`` the contested
        value, which is then written as ``remember()`` would write it (superseding a
        single-valued slot's value), at the scope of the value it contests (else the
        review's), with the review's id as its source, so ``why()`` names the review. Its evidence is spent either way: it never counts again.

        Returns:
            The closed ``Review`` (``claim``: the claim an accept wrote).

        Raises:
            InvalidArgumentError: no open review ``review_id`` in this scope's subtree
                (unknown, or resolved already: the message says which), or a decision
                other than ``"keep"`` and ``"accept"``. Nothing is written.
            StoreError: the store keeps no review queue.
        """
        scope = self._at(tenant, user, agent, session)
        review_id = _args.check_text(review_id, "review_id")
        if decision not in ("keep", "accept"):
            raise InvalidArgumentError("decision", f"expected 'keep' or 'accept', got {decision!r:.40}")
        name = check_actor(actor, scope)
        store = _reviews_of(self._core.store)
        found = store.review(review_id, scope)
        if found is None:
            raise InvalidArgumentError("review_id", f"no review {review_id!r:.40} in this scope")
        if found.status != "open":
            raise InvalidArgumentError("review_id", f"review {review_id} was resolved already"
                                       f" ({found.status} by {found.decided_by or 'no one named'})")
        writer = self._core.writer
        now = writer.now()
        claim: Claim | None = None
        with logged(self._core, "resolve", scope, actor), self._core.store.transaction():
            if decision == "accept":  # where the value it contests is, so it supersedes it
                held = [c for c in (self._core.store.get_claim(i, found.scope) for i in found.held)
                        if c is not None]
                built = writer.build(found.subject, found.predicate, found.object,
                                     held[0].scope if held else found.scope, now,
                                     sources=[review_id], polarity=found.polarity,
                                     extractor="review")
                receipt = writer.remember([built], "ended")
                claim = (receipt.added or receipt.reinforced)[0]  # held by now: reinforced
            if not store.close_review(review_id, "accepted" if claim else "kept", now, name,
                                      None if claim is None else claim.id):  # raising undoes the accept
                raise InvalidArgumentError("review_id", f"review {review_id} was resolved meanwhile"
                                           " by another writer")
        closed = store.review(review_id, scope)
        assert closed is not None  # closed, not removed
        return closed
