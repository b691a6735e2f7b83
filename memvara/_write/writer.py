"""Structured writes: remember, supersede, forget and delete.

Each write validates and embeds *before* its transaction opens, so the store's write lock
covers database work only; then it looks up the affected slots, settles contradictions
(``_reconcile``) and applies the result in one transaction: all of it lands or none.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from .._domain import args as _args
from .._errors import ClaimNotFoundError, InvalidArgumentError, InvalidTimeError, StoreError
from .._domain.model import Claim, Episode, Scope, assemble_claim, set_new_claim_id
from .._domain.results import WriteReceipt, assemble_receipt
from .reconcile import Plan, plan_write
from .._domain.time import Clock, from_micros, instant_pair, now_micros, optional_micros, to_micros
from ..embed import Embedder
from ..schema import PredicateRegistry, normalize_predicate
from ..store.base import (
    NO_SETTLEMENT, BulkWriteStore, Settlement, SingleWriteStore, Store, Written,
)
from .aliases import Aliases
from .belief_order import refuse_rewriting
from .encode import encode_checked
from .render import render

__all__ = ["EMBED_BATCH", "Writer"]

EMBED_BATCH = 256
"""Claims written in smaller batches wait for their vectors until this many do."""

_NO_VECTORS = np.zeros((0, 0), dtype=np.float32)


@dataclass(slots=True)
class _Outcome:
    added: list[Claim]
    reinforced: list[Claim]
    ended: list[Claim]
    retired: list[Claim]


class Writer:
    """Applies structured writes to a store under a registry, an embedder and a clock."""

    def __init__(
        self, store: Store, registry: PredicateRegistry, embedder: Embedder, clock: Clock
    ) -> None:
        self._store = store
        self._registry = registry
        self._embedder = embedder
        self._clock = clock
        self._backlog = len(store.claims_missing_vectors())  # claims awaiting a vector
        self.names = Aliases(store)
        """The owners' learned aliases, which every write files its subject through."""
        self._single: SingleWriteStore | None = (
            store if isinstance(store, SingleWriteStore) else None)
        """The store, if it takes a single write in one call (``SingleWriteStore``)."""
        self._bulk: BulkWriteStore | None = store if isinstance(store, BulkWriteStore) else None
        """The store, if it offers a slot read across scopes and an insert returning bare
        ids (``BulkWriteStore``)."""
        self.on_embedded: list[Callable[[Sequence[str]], None]] = []
        """Called with the ids of claims whose vectors a write just stored (searches
        drop the vectors they computed for them meanwhile: ``_read.waiting``)."""

    # -- learned entity aliases ---------------------------------------------------------
    def aliases(self, scope: Scope) -> Mapping[str, str]:
        """The aliases learned for ``scope``'s owner (see ``Aliases.of``)."""
        return self.names.of(scope)

    def learn_alias(self, scope: Scope, surface: str, entity: str, via: str) -> tuple[str, str]:
        """Make ``surface`` a name of ``entity`` for ``scope``'s owner; the two keys."""
        return self.names.learn(scope, surface, entity, self.now(), via)

    def key_of(self, scope: Scope, surface: str) -> str:
        """``surface``'s entity key for ``scope``'s owner (see ``Aliases.key_of``)."""
        return self.names.key_of(scope, surface)

    def embed_missing(self) -> int:
        """Embed every claim still waiting for its vector, in one batched encode (run
        before the write transaction, like every encode)."""
        waiting = self._store.claims_missing_vectors()
        if not waiting:  # nothing to encode, and no write transaction to open
            self._backlog = 0
            return 0
        vectors = self._encode_texts([text for _, text in waiting])
        with self._store.transaction():
            done = self._store.set_claim_vectors([cid for cid, _ in waiting], vectors)
        self._backlog = 0
        self._embedded([cid for cid, _ in waiting])
        return done

    def _embedded(self, claim_ids: Sequence[str]) -> None:
        if claim_ids:
            for listener in self.on_embedded:
                listener(claim_ids)

    def now(self) -> int:
        """The injected clock's current instant, in storage microseconds."""
        return now_micros(self._clock)

    # -- building claims ------------------------------------------------------------
    def prepare(
        self,
        claim: Claim,
        scope: Scope,
        now: int,
        *,
        default_valid_from: int | None = None,
    ) -> Claim:
        """Validate a caller's ``Claim`` and return it ready to write (see ``build``)."""
        if claim.invalidated_at is not None or claim.invalidated_by is not None:
            raise InvalidArgumentError("invalidated_at", "a new claim cannot be written retired")
        return self.build(
            claim.subject, claim.predicate, claim.object, scope, now,
            valid_from=claim.valid_from, valid_to=claim.valid_to,
            recorded_at=claim.recorded_at, sources=claim.sources, text=claim.text or None,
            confidence=claim.confidence, memory_type=claim.memory_type,
            polarity=claim.polarity, extractor=claim.extractor or None, meta=claim.meta,
            default_valid_from=default_valid_from,
        )

    def build(
        self,
        subject: object,
        predicate: object,
        obj: object,
        scope: Scope,
        now: int,
        *,
        valid_from: object = None,
        valid_to: object = None,
        recorded_at: object = None,
        sources: Iterable[str] = (),
        text: object = None,
        confidence: object = 1.0,
        memory_type: object = "semantic",
        polarity: object = 1,
        extractor: object = None,
        meta: Mapping[str, object] | None = None,
        default_valid_from: int | None = None,
    ) -> Claim:
        """Validate one claim's fields and fill in its canonical predicate, times, text
        and scope: the ``Claim`` as it will be stored, less its id.
        """
        subject = _args.check_text(subject, "subject")
        obj = _args.check_text(obj, "object")
        given = _args.check_text(predicate, "predicate")
        predicate = self._registry.canonical(given)
        polarity = _args.check_polarity(polarity)
        if recorded_at is None:
            recorded, recorded_at = now, from_micros(now)
        else:
            recorded, recorded_at = instant_pair(recorded_at, "recorded_at")
        if valid_from is not None:
            start, valid_from = instant_pair(valid_from, "valid_from")
        elif default_valid_from is None:
            start, valid_from = recorded, recorded_at
        else:
            start, valid_from = default_valid_from, from_micros(default_valid_from)
        if valid_to is not None:
            end, valid_to = instant_pair(valid_to, "valid_to")
            if end <= start:
                raise InvalidTimeError("valid_to", "must be later than valid_from")
        if text is None:  # rendered from checked parts, as said ("based in", not "lives in")
            text = render(subject, predicate if given == predicate else normalize_predicate(given),
                          obj, polarity)
        else:
            text = _args.check_text(text, "text")
        return assemble_claim(
            subject,
            predicate,
            obj,
            valid_from,
            valid_to,
            recorded_at,
            None,
            None,
            polarity,
            _args.check_confidence(confidence),
            _args.check_memory_type(memory_type),
            () if sources == () else _args.check_sources(sources),
            text,
            _args.check_text(extractor, "extractor") if extractor is not None else "remember",
            _args.check_meta(meta) if meta else {},
            scope,
            "",
            None if valid_to is None else recorded_at,  # an end written now is known now
            1,
            1.0,
        )

    def _encode_texts(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return encode_checked(self._embedder, texts)

    # -- remember ---------------------------------------------------------------------
    def remember(
        self,
        claims: Sequence[Claim],
        close: str,
        *,
        episodes: Sequence[Episode] = (),
        episode_vectors: npt.NDArray[np.float32] | None = None,
        unextracted: Sequence[str] = (), speakers: Mapping[str, str] | None = None,
        reason: str = "", extracted: Sequence[str] = (), call_meta: str | None = None,
        now: int | None = None,
        argument: Callable[[int], str] = lambda i: "recorded_at",
    ) -> WriteReceipt:
        """Write prepared claims, settling each against its slot; one transaction.

        A batch of at least ``EMBED_BATCH`` claims is embedded on the way in; smaller
        writes are stored without vectors, and embedded together once that many wait.
        ``episodes`` (the turns the claims cite, ids already set) land in the same
        transaction, and so do the marks of turns left ``unextracted`` (the model failed
        on them, for ``reason``, with who said them and ``call_meta``, the call's) and the
        clearing of those now ``extracted``. Given the write's ``now``, a claim recorded
        before it is refused (``InvalidTimeError`` named ``argument(i)``) behind a later
        change to a value it contradicts.
        """
        started = time.perf_counter()
        vectors, waiting, backlog_vectors = self._vectors_for(claims) if claims else (
            None, [], _NO_VECTORS)
        outcome = _Outcome([], [], [], [])
        with self._store.transaction():
            if episodes:
                self._store.insert_episodes(episodes, episode_vectors)
            if unextracted:
                self._store.mark_unextracted(unextracted, self.now(), reason, speakers, call_meta)
            if extracted:
                self._store.clear_unextracted(extracted)
            if waiting:
                self._store.set_claim_vectors(waiting, backlog_vectors)
            check = None if now is None else self.in_order(claims, now, argument)
            if check is not None:
                for i in range(len(claims)):
                    check(i)
            self._apply(claims, vectors, close, outcome, skip_ids=frozenset(), check=check)
        self._backlog = 0 if vectors is not None else self._backlog + len(outcome.added)
        self._embedded(waiting)
        return _receipt(outcome, started)

    def in_order(
        self, claims: Sequence[Claim], now: int, argument: Callable[[int], str]
    ) -> Callable[[int], None] | None:
        """A check of ``claims[i]`` against its slot's record as it stands (see
        ``refuse_rewriting``), or ``None`` when no claim is recorded before ``now``."""
        if all(to_micros(c.recorded_at, "recorded_at") >= now for c in claims):
            return None
        return lambda i: refuse_rewriting(  # noqa: E731 - one call, named where used
            self._store, self._registry, self.key_of, claims[i], now, argument(i))

    def _vectors_for(
        self, claims: Sequence[Claim]
    ) -> tuple[npt.NDArray[np.float32] | None, list[str], npt.NDArray[np.float32]]:
        """The new claims' vectors, or ``None`` to store them without; and the backlog's
        ids and vectors when this write is the one that brings it to ``EMBED_BATCH``.

        Encoding happens here, before the transaction, so a failing embedder fails the
        write that called it and nothing is stored.
        """
        if len(claims) + self._backlog < EMBED_BATCH:
            return None, [], _NO_VECTORS
        waiting = self._store.claims_missing_vectors() if self._backlog else []
        vectors = self._encode_texts([t for _, t in waiting] + [c.text for c in claims])
        return vectors[len(waiting):], [cid for cid, _ in waiting], vectors[: len(waiting)]

    def _apply(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        close: str,
        outcome: _Outcome,
        skip_ids: frozenset[str],
        check: Callable[[int], None] | None = None,
    ) -> None:
        """Settle and write ``claims``; ``check(i)`` runs again before each claim whose
        slot the batch writes more than once (earlier claims may have changed it)."""
        if len(claims) == 1:  # the common case: one lookup, one plan
            self._apply_one(claims, 0, vectors, close, outcome, skip_ids)
            return
        if not claims:  # add() of turns no rule read a claim from
            return
        by_scope: dict[Scope, list[int]] = {}
        last: Scope | None = None
        indices: list[int] = []
        for i, claim in enumerate(claims):
            if claim.scope is not last:  # a batch's claims often share one Scope object
                last = claim.scope
                indices = by_scope.setdefault(last, [])
            indices.append(i)
        slots_of = {scope: self._slots(scope, [claims[i] for i in indices])
                    for scope, indices in by_scope.items()}
        repeated = {  # a slot written twice in the batch settles one claim at a time
            scope: {slot for slot, n in Counter(slots).items() if n > 1}
            for scope, slots in slots_of.items()
        }
        existing = self._slot_claims(  # all (PostgreSQL locks them here), scopes in one order
            {scope: set(slots_of[scope]) for scope in sorted(slots_of, key=repr)},
            min(to_micros(claim.valid_from, "valid_from") for claim in claims),
        )
        batch: list[tuple[int, str, Settlement | None]] = []  # one insert for all
        one_by_one: list[int] = []
        for scope, indices in by_scope.items():
            twice, held = repeated[scope], existing[scope]
            for i, slot in zip(indices, slots_of[scope]):
                if twice and slot in twice:
                    one_by_one.append(i)
                    continue
                found = held.get(slot, _EMPTY_SLOT)
                current = [c for c in found if c.id not in skip_ids] if skip_ids else found
                # An empty slot needs no plan: the claim is inserted as it is.
                settled = self.settle(claims[i], current, close) if current else None
                batch.append((i, slot[0], settled))
        self._commit_plans(claims, vectors, batch, outcome)
        for i in sorted(one_by_one):  # the same slot twice: in order, one at a time
            if check is not None:
                check(i)
            self._apply_one(claims, i, vectors, close, outcome, skip_ids)

    def _slots(self, scope: Scope, claims: Sequence[Claim]) -> list[tuple[str, str]]:
        """Each claim's slot at ``scope``: ``key_of`` its subject (the scope's aliases
        read once), and its predicate."""
        aliases = self.aliases(scope)
        fold = self.names.fold
        return [(aliases.get(key, key), claim.predicate)
                for key, claim in zip([fold(scope, c.subject) for c in claims], claims)]

    def _slot_claims(
        self, wanted: dict[Scope, set[tuple[str, str]]], ending_after: int
    ) -> dict[Scope, Mapping[tuple[str, str], list[Claim]]]:
        """The still-believed claims of the wanted slots, per scope (a slot with none
        may be missing): in one lookup across scopes where the store offers one
        (``slot_claims_across``), else scope by scope. ``ending_after`` is the batch's
        earliest start; a claim that ends before a later one's start is planned around
        (``plan_write`` sees it ends first)."""
        if self._bulk is not None:
            return dict(self._bulk.slot_claims_across(wanted, ending_after=ending_after))
        return {scope: self._store.slot_claims(scope, slots, ending_after=ending_after)
                for scope, slots in wanted.items()}

    def _apply_one(
        self,
        claims: Sequence[Claim],
        i: int,
        vectors: npt.NDArray[np.float32] | None,
        close: str,
        outcome: _Outcome,
        skip_ids: frozenset[str],
    ) -> None:
        """Settle and write ``claims[i]`` alone: through the store's ``write_claim`` in
        one call where it has one, else its general methods, with the same rules."""
        claim = claims[i]
        key = self.key_of(claim.scope, claim.subject)
        rows = None if vectors is None else vectors[i : i + 1]

        def settle(found: list[Claim]) -> Settlement:
            current = [c for c in found if c.id not in skip_ids] if skip_ids else found
            return self.settle(claim, current, close)

        write = self._single.write_claim if self._single is not None else self._write_generally
        added, reinforced, ended, retired = write(claim, key, rows, settle)
        if added is not None:
            outcome.added.append(added)
        if reinforced is not None:
            outcome.reinforced.append(reinforced)
        outcome.ended.extend(ended)
        outcome.retired.extend(retired)

    def _write_generally(
        self,
        claim: Claim,
        key: str,
        rows: npt.NDArray[np.float32] | None,
        settle: Callable[[list[Claim]], Settlement],
    ) -> Written:
        """``Store.write_claim`` through the protocol's general methods."""
        slot = (key, claim.predicate)
        found = self._store.slot_claims(
            claim.scope, [slot], ending_after=to_micros(claim.valid_from, "valid_from")
        )[slot]
        new, old, ends, retires, bounded_by = settle(found)
        if new is None:
            if old is None:
                raise StoreError(NO_SETTLEMENT)
            return None, self._reinforce(old, claim), [], []
        (stored,) = self._insert([new], rows, [key])
        self._note_bound([(stored, bounded_by)])
        return (
            stored,
            None,
            self._store.end_claims([(c, valid_to, at, stored.id) for c, valid_to, at in ends]),
            self._store.retire_claims([(c, at, stored.id) for c, at in retires]),
        )

    def settle(self, claim: Claim, current: Sequence[Claim], close: str) -> Settlement:
        """What ``claim`` does to the believed ``current`` claims of its slot: inserted
        as it is when there are none, else as its plan says."""
        if not current:  # alone in its slot: no plan
            return Settlement(claim, None, (), ())
        plan = self._plan(claim, current, close)
        if plan.reinforce is not None:
            return Settlement(None, plan.reinforce, (), ())
        touched = [old for old, _, _ in plan.end] + [
            old for old, _ in plan.retire if old is not plan.correct]  # (its own value)
        if plan.bounded_by is not None:
            touched.append(plan.bounded_by)
        latest = max([to_micros(old.recorded_at, "recorded_at") for old in touched], default=0)
        if latest > to_micros(claim.recorded_at, "recorded_at"):
            # a clock stepped back, or a writer that read it first committed last: learned
            # no earlier than what it closes or ends at, or a past view holds two values
            claim = replace(claim, recorded_at=from_micros(latest))
        new = _bounded(claim, plan.valid_to)
        if plan.correct is not None:  # the earlier start replaces the row: keep its record
            old = plan.correct
            end = None if plan.valid_to is None else from_micros(plan.valid_to)
            new = replace(new, valid_to=end, valid_to_known_at=None if end is None else claim.recorded_at,
                          observations=old.observations + 1, sources=(
                *old.sources, *(s for s in new.sources if s not in old.sources)))
        return Settlement(new, None, plan.end, plan.retire,
                          None if plan.bounded_by is None else plan.bounded_by.id)

    def _plan(self, claim: Claim, existing: Sequence[Claim], close: str) -> Plan:
        """How ``claim`` settles against the slot's ``existing`` claims (never empty: a
        claim alone in its slot is inserted as it is, with no plan)."""
        cardinality = self._registry.spec(claim.predicate).cardinality
        scope = claim.scope
        if not self.aliases(scope):  # the common case: an object's key is its fold
            return plan_write(claim, existing, cardinality, close)
        return plan_write(
            claim, existing, cardinality, close, lambda surface: self.key_of(scope, surface)
        )

    def _commit_plans(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        batch: Sequence[tuple[int, str, Settlement | None]],
        outcome: _Outcome,
    ) -> None:
        """Apply each ``(claim index, subject key, settlement)`` (``None``: insert the
        claim as it is): reinforcements one by one, the new claims in one insert, then
        the closures they cause."""
        inserts: list[tuple[int, str, Claim, Settlement | None]] = []
        for i, key, settled in batch:
            if settled is None:
                inserts.append((i, key, claims[i], None))
            elif settled.insert is not None:
                inserts.append((i, key, settled.insert, settled))
            else:
                assert settled.reinforce is not None  # noqa: S101 - ``settle`` names one
                outcome.reinforced.append(self._reinforce(settled.reinforce, claims[i]))
        if not inserts:
            return
        rows = None if vectors is None else vectors[[i for i, _, _, _ in inserts]]
        stored = self._insert([new for _, _, new, _ in inserts], rows,
                              [key for _, key, _, _ in inserts])
        outcome.added.extend(stored)
        self._close([(claim, settled) for claim, (_, _, _, settled) in zip(stored, inserts)
                     if settled is not None], outcome)

    def _reinforce(self, old: Claim, claim: Claim) -> Claim:
        """Count ``claim`` as another observation of the believed ``old``."""
        return self._store.reinforce_claim(
            old.id, claim.sources, to_micros(claim.recorded_at, "recorded_at"))

    def _insert(
        self, new: list[Claim], rows: npt.NDArray[np.float32] | None, keys: list[str]
    ) -> list[Claim]:
        """Insert claims built for this write; each as stored, with its id."""
        if self._bulk is not None:  # the claims were built for this write: no copies
            ids = self._bulk.insert_claim_ids(new, rows, keys)
            return [set_new_claim_id(claim, cid) for claim, cid in zip(new, ids)]
        return self._store.insert_claims(new, rows, keys)

    def _close(self, settled: Sequence[tuple[Claim, Settlement]], outcome: _Outcome) -> None:
        """End and retire what each stored claim's settlement closes, naming the claim
        that closed it."""
        ends = [(old, valid_to, at, claim.id)
                for claim, done in settled for old, valid_to, at in done.end]
        retires = [(old, at, claim.id) for claim, done in settled for old, at in done.retire]
        outcome.ended.extend(self._store.end_claims(ends))
        outcome.retired.extend(self._store.retire_claims(retires))
        self._note_bound([(claim, done.bounded_by) for claim, done in settled])

    def _note_bound(self, inserted: Sequence[tuple[Claim, str | None]]) -> None:
        """Name the later value each new claim ends at (its end, unchanged) as what ended it."""
        self._store.end_claims([
            (claim, to_micros(claim.valid_to, "valid_to"),
             to_micros(claim.valid_to_known_at, "valid_to_known_at"), by)
            for claim, by in inserted if by is not None])

    # -- supersede ----------------------------------------------------------------------
    def supersede(
        self,
        scope: Scope,
        old_id: str,
        new: Claim,
        at: datetime | None,
        sources: Iterable[str] | None,
    ) -> WriteReceipt:
        """Close ``old_id`` where ``new`` takes over, and write ``new``; one transaction."""
        started = time.perf_counter()
        new = _args.check_new_claim(new, scope, sources)
        now = self.now()
        switch = None if at is None else to_micros(at, "at")
        if switch is None:
            switch = now if new.valid_from is None else to_micros(new.valid_from, "valid_from")
        prepared = self.prepare(new, scope, now, default_valid_from=switch)
        vectors, waiting, backlog_vectors = self._vectors_for([prepared])
        recorded = to_micros(prepared.recorded_at, "recorded_at")
        outcome = _Outcome([], [], [], [])
        with self._store.transaction():
            if waiting:
                self._store.set_claim_vectors(waiting, backlog_vectors)
            check = self.in_order([prepared], now, lambda _: "new_claim.recorded_at")
            if check is not None:  # a backdated new claim: as remember() checks it
                check(0)
            old = self._store.get_claim(old_id, scope)
            if old is None:
                raise ClaimNotFoundError(old_id, argument="old_claim_id")
            if old.invalidated_at is not None:
                raise InvalidArgumentError("old_claim_id", f"claim {old_id!r} is already retired")
            self._apply([prepared], vectors, "ended", outcome, skip_ids=frozenset([old.id]))
            holder = (outcome.added or outcome.reinforced)[0]
            by = outcome.added[0].id if outcome.added else None
            if self._same_slot(scope, old, holder):  # never two values at one instant
                switch = min(switch, to_micros(holder.valid_from, "valid_from"))
            at_belief = max(recorded, to_micros(old.recorded_at, "recorded_at"))
            old_end = optional_micros(old.valid_to, "valid_to")
            if switch <= to_micros(old.valid_from, "valid_from"):
                outcome.retired.extend(self._store.retire_claims([(old, at_belief, by)]))
            elif old_end is None or switch < old_end:
                outcome.ended.extend(self._store.end_claims([(old, switch, at_belief, by)]))
        self._backlog = 0 if vectors is not None else self._backlog + len(outcome.added)
        self._embedded(waiting)
        return _receipt(outcome, started)

    # -- revert ---------------------------------------------------------------------------
    def restore(
        self, mistake: Claim, restored: Sequence[tuple[Claim, Claim]], at: int
    ) -> WriteReceipt:
        """Retire ``mistake`` at ``at`` (unless it is retired already) and write each
        ``(original, copy)``'s copy, settled against its slot as if neither ``mistake``
        nor the original were there; an original still believed (an *ended* one) is
        retired in favour of what now holds its value. One transaction."""
        started = time.perf_counter()
        copies = [copy for _, copy in restored]
        vectors, waiting, backlog_vectors = self._vectors_for(copies)
        outcome = _Outcome([], [], [], [])
        skip = frozenset([mistake.id, *(original.id for original, _ in restored)])
        with self._store.transaction():
            if waiting:
                self._store.set_claim_vectors(waiting, backlog_vectors)
            if mistake.invalidated_at is None:
                outcome.retired.extend(self._store.retire_claims([(mistake, at, None)]))
            for i, (original, copy) in enumerate(restored):
                held = _Outcome([], [], [], [])
                rows = None if vectors is None else vectors[i : i + 1]
                self._apply([copy], rows, "ended", held, skip_ids=skip)
                if original.invalidated_at is None:
                    holder = (held.added or held.reinforced)[0]
                    held.retired.extend(self._store.retire_claims([(original, at, holder.id)]))
                for mine, theirs in zip(_lists(outcome), _lists(held)):
                    mine.extend(theirs)
        self._backlog = 0 if vectors is not None else self._backlog + len(outcome.added)
        self._embedded(waiting)
        return _receipt(outcome, started)

    def _same_slot(self, scope: Scope, one: Claim, other: Claim) -> bool:
        return one.predicate == other.predicate and (
            self.key_of(scope, one.subject) == self.key_of(scope, other.subject))


_EMPTY_SLOT: list[Claim] = []
"""What a batch finds in a slot no lookup returned (read, never changed)."""


def _bounded(claim: Claim, valid_to: int | None) -> Claim:
    if valid_to is None or claim.valid_to == from_micros(valid_to):
        return claim
    return replace(claim, valid_to=from_micros(valid_to), valid_to_known_at=claim.recorded_at)


def _lists(outcome: _Outcome) -> tuple[list[Claim], ...]:
    return outcome.added, outcome.reinforced, outcome.ended, outcome.retired


def _receipt(outcome: _Outcome, started: float) -> WriteReceipt:
    return assemble_receipt(
        tuple(outcome.added), tuple(outcome.reinforced), tuple(outcome.ended),
        tuple(outcome.retired), (time.perf_counter() - started) * 1000.0,
    )
