"""A plain-Python reference model of memvara's two clocks, scopes and three states.

Written from the product spec and ``docs/INTERNALS.md`` (and the argument defaults the
public docstrings state), never from the implementation in ``memvara/``, so that
``tests/test_model_check.py`` can compare the library against an independent reading of
the same rules. It favours being obviously right over being fast: every read is a scan
over every claim.

The rules it encodes, from the spec's sections on the two clocks, ``states=``, counting
claims, contradictions, scoping and the two meanings of delete, and from INTERNALS'
visibility rule:

* Visibility at ``(V, K)``: ``recorded_at <= K < invalidated_at`` and
  ``valid_from <= V < end(K)``, where ``end(K)`` is the end of valid time as believed
  at ``K`` -- the last end a write set whose learning instant is ``<= K``.
* States at ``(V, K)``: ``live`` is visibility; ``ended`` is believed at ``K`` with
  ``end(K) <= V``; ``retired`` is ``invalidated_at <= K``; all three together is the
  belief floor ``recorded_at <= K`` alone (not the union). A row read at ``K`` is
  materialized at ``K``: a retirement after ``K`` is not there, its end is ``end(K)``.
* Order: ``get_all`` is newest recorded first and ``history`` oldest first; rows
  recorded at one instant keep the order they were written in (as the spec's
  ``['Lisbon', 'Acme', 'Berlin']`` example shows).
* Scope: a reader sees a row when at every level the row's value is unset or equal to
  the reader's. A write settles against its own scope only. A purge takes the scope and
  every narrower scope beneath it.
* Writes: a slot is ``(subject key, canonical predicate)`` at the exact scope. An
  overlapping believed claim with the same object and polarity is reinforced and no row
  is added. Otherwise overlapping conflicts (opposite polarity on one object, or two
  different positive objects of a ``ONE`` predicate) close: ``close="retired"`` retires
  them; ``close="ended"`` ends an earlier-starting one where the new one starts, retires
  a same-start one, and bounds the new claim's end at a later-starting one (which is
  then what ended it: reverting that one reopens the new claim). Every
  closure is dated at the write's ``recorded_at``, never before the closed claim's own.
* Order of belief: a write recorded before now is refused (``InvalidTimeError``) when a
  row of its slot that it would conflict with (the rule above, believed or not) was
  recorded, learned an end or was retired after it, and the two intervals overlap (the
  row's current end counts only if learned by the write's ``recorded_at`` or the row's).
* Corrections: an overlapping believed claim with the same object and polarity in a
  ``ONE`` slot (polarity 1) that starts *later* than the new claim is corrected, not
  reinforced: it is retired in favour of the new row, which spans the union of the two
  intervals and carries one more observation than it; conflicts inside that union that
  start before the new claim are ended where it starts, the rest retired.
* ``revert(G)`` retires ``G`` (unless retired) and brings back, as copies recorded at the
  revert, each claim ``G`` retired or whose current end ``G`` set (unless a later write
  has closed it since), with the end it had before ``G``; each copy settles like a
  write with neither ``G`` nor the originals in its slot, and an original that ``G``
  only ended is retired in favour of what now holds its value. A copy cannot be
  reverted; a claim that closed nothing still closed by it neither.
* ``forget`` retires every believed value of a slot at the exact scope; ``delete``
  retires one claim; neither is dated before the claim was recorded. ``erase`` and
  ``purge`` remove rows outright; an erased claim is no longer named as what closed any
  row.

Where the spec leaves an outcome open, the model raises ``Ambiguous`` *before changing
anything*, so the caller can decline to drive the library into that case.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

ScopeKey = tuple[str | None, str | None, str | None, str | None]
"""``(tenant, user, agent, session)``; ``None`` is an unset level."""

ALL_STATES = frozenset({"live", "ended", "retired"})


class Ambiguous(Exception):
    """The spec does not decide what this operation does; the model refuses to guess."""


class Refused(Exception):
    """The operation must fail with the memvara error named in ``args[0]``, changing nothing."""


def scope_sees(reader: ScopeKey, row: ScopeKey) -> bool:
    """Read inheritance: every level of the row is unset or the reader's own."""
    return all(r is None or r == s for r, s in zip(row, reader))


def scope_contains(outer: ScopeKey, row: ScopeKey) -> bool:
    """Purge reach: the row is ``outer`` itself or narrower beneath it."""
    depth = max((i + 1 for i, v in enumerate(outer) if v is not None), default=0)
    return row[:depth] == outer[:depth]


def _end_known_by(claim: MClaim, recorded_at: datetime) -> datetime | None:
    """The row's current end if it was learned by ``recorded_at`` or the row's own
    recording, else ``None`` (open)."""
    if claim.ends and claim.ends[-1][1] <= max(recorded_at, claim.recorded_at):
        return claim.ends[-1][0]
    return None


def _lt(a: datetime, b: datetime | None) -> bool:
    """``a < b`` with ``None`` as +infinity."""
    return b is None or a < b


@dataclass
class MClaim:
    """One claim row as the model keeps it."""

    seq: int  # insertion order: ties on recorded_at read in this order
    id: str
    scope: ScopeKey
    subject_key: str
    predicate: str
    object: str
    object_key: str
    polarity: int
    valid_from: datetime
    recorded_at: datetime
    # Every end a write set, in write order, with the belief instant it was learned at.
    ends: list[tuple[datetime, datetime]] = field(default_factory=list)
    invalidated_at: datetime | None = None
    invalidated_by: str | None = None
    observations: int = 1
    closers: list[str | None] = field(default_factory=list)  # who set each of ``ends``
    restored: bool = False  # written by a revert

    @property
    def end(self) -> datetime | None:
        """The end of valid time as the record holds it now."""
        return self.ends[-1][0] if self.ends else None

    def end_at(self, known_at: datetime) -> datetime | None:
        """``end(K)``: the last end written whose learning instant is ``<= K``."""
        return self._closure(known_at)[0]

    def _closure(self, known_at: datetime | None) -> tuple[datetime | None, datetime | None]:
        """``(end, learned_at)`` as believed at ``K`` (``None``: as recorded now)."""
        for end, learned in reversed(self.ends):
            if known_at is None or learned <= known_at:
                return end, learned
        return None, None

    def believed_at(self, known_at: datetime) -> bool:
        return self.recorded_at <= known_at and _lt(known_at, self.invalidated_at)

    def in_force(self, valid_at: datetime, known_at: datetime) -> bool:
        return self.valid_from <= valid_at and _lt(valid_at, self.end_at(known_at))

    def in_states(self, states: frozenset[str], valid_at: datetime, known_at: datetime) -> bool:
        """The ``states=`` read filter at ``(V, K)``."""
        if states == ALL_STATES:
            return self.recorded_at <= known_at
        end = self.end_at(known_at)
        return (
            ("live" in states and self.believed_at(known_at) and self.in_force(valid_at, known_at))
            or ("ended" in states and self.believed_at(known_at)
                and end is not None and end <= valid_at)
            or ("retired" in states and self.invalidated_at is not None
                and self.invalidated_at <= known_at)
        )

    def view(self, known_at: datetime | None) -> View:
        """The claim materialized at ``K`` (``None``: as currently recorded)."""
        end, learned = self._closure(known_at)
        gone = self.invalidated_at
        if known_at is not None and gone is not None and gone > known_at:
            gone = None
        state = "retired" if gone is not None else "ended" if end is not None else "live"
        return View(self.id, self.scope, self.object, self.polarity, self.valid_from, end,
                    learned, self.recorded_at, gone,
                    self.invalidated_by if gone is not None else None, state, self.observations)


@dataclass(frozen=True)
class View:
    """The fields of a returned ``Claim`` the model predicts."""

    id: str
    scope: ScopeKey
    object: str
    polarity: int
    valid_from: datetime
    valid_to: datetime | None
    valid_to_known_at: datetime | None
    recorded_at: datetime
    invalidated_at: datetime | None
    invalidated_by: str | None
    state: str
    observations: int


@dataclass(frozen=True)
class Outcome:
    """What one write did, by claim id (the model's side of a ``WriteReceipt``)."""

    added: bool
    reinforced: tuple[str, ...] = ()
    ended: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pending:
    """A planned write, applied once the library has said which id it got."""

    scope: ScopeKey
    subject_key: str
    predicate: str
    object: str
    object_key: str
    polarity: int
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    reinforce: MClaim | None
    end_at: tuple[MClaim, ...]
    retire: tuple[MClaim, ...]
    correct: MClaim | None = None
    observations: int = 1
    restored: bool = False
    bound_by: str | None = None  # the later value the new row ends at, if one does


@dataclass(frozen=True)
class Superseding:
    """A planned ``supersede``: the claim it closes, where, and the write that follows."""

    old: MClaim
    at: datetime
    new: Pending


class Model:
    """Every claim ever written and not erased, with the rules above as methods."""

    def __init__(self, one_valued: Iterable[str]) -> None:
        self.one_valued = frozenset(one_valued)
        self.claims: dict[str, MClaim] = {}
        self._seq = 0

    # -- reads ------------------------------------------------------------------------
    def visible(self, reader: ScopeKey) -> list[MClaim]:
        return [c for c in self.claims.values() if scope_sees(reader, c.scope)]

    def get_all(self, reader: ScopeKey, valid_at: datetime, known_at: datetime,
                states: Iterable[str]) -> list[View]:
        """Newest recorded first; ties in the order written, newest first."""
        chosen = frozenset(states)
        rows = [c for c in self.visible(reader) if c.in_states(chosen, valid_at, known_at)]
        rows.sort(key=lambda c: (c.recorded_at, c.seq), reverse=True)
        return [c.view(known_at) for c in rows]

    def history(self, reader: ScopeKey, subject_key: str, predicate: str,
                valid_at: datetime | None, known_at: datetime) -> list[View]:
        """One slot's timeline in recorded order: everything recorded by ``K`` and, when
        ``valid_at`` is given, in force at it as believed at ``K``."""
        rows = [
            c for c in self.visible(reader)
            if c.subject_key == subject_key and c.predicate == predicate
            and c.recorded_at <= known_at
            and (valid_at is None or c.in_force(valid_at, known_at))
        ]
        rows.sort(key=lambda c: (c.recorded_at, c.seq))
        return [c.view(known_at) for c in rows]

    def get(self, reader: ScopeKey, claim_id: str) -> View | None:
        claim = self.claims.get(claim_id)
        return claim.view(None) if claim is not None and scope_sees(reader, claim.scope) else None

    def stats(self, reader: ScopeKey, now: datetime) -> dict[str, int]:
        """The claim populations now (``embeddings`` is the store's business: vectors may
        be computed later than the write, so the model does not predict it)."""
        rows = self.visible(reader)
        return {
            "episodes": 0,
            "claims": len(rows),
            "live_claims": sum(c.in_states(frozenset({"live"}), now, now) for c in rows),
            "ended_claims": sum(c.in_states(frozenset({"ended"}), now, now) for c in rows),
            "invalidated": sum(c.in_states(frozenset({"retired"}), now, now) for c in rows),
        }

    # -- writes -----------------------------------------------------------------------
    def _slot(self, scope: ScopeKey, subject_key: str, predicate: str) -> list[MClaim]:
        """The believed claims of one slot at exactly this scope."""
        return [
            c for c in self.claims.values()
            if c.scope == scope and c.subject_key == subject_key and c.predicate == predicate
            and c.invalidated_at is None
        ]

    def plan_remember(self, scope: ScopeKey, subject_key: str, predicate: str, obj: str,
                      object_key: str, polarity: int, valid_from: datetime,
                      valid_to: datetime | None, recorded_at: datetime, close: str,
                      now: datetime) -> Pending:
        """Settle a new claim against its slot; changes nothing until ``apply``."""
        if recorded_at < now and any(
            change > recorded_at
            for c in self.claims.values()
            if c.scope == scope and c.subject_key == subject_key and c.predicate == predicate
            and ((c.object_key == object_key and c.polarity != polarity)
                 or (predicate in self.one_valued and c.polarity == 1 and polarity == 1
                     and c.object_key != object_key))
            and _lt(c.valid_from, valid_to) and _lt(valid_from, _end_known_by(c, recorded_at))
            for change in (c.recorded_at, *(learned for _, learned in c.ends), c.invalidated_at)
            if change is not None
        ):
            raise Refused("InvalidTimeError")
        slot = self._slot(scope, subject_key, predicate)
        overlapping = [c for c in slot if _lt(c.valid_from, valid_to) and _lt(valid_from, c.end)]
        same = [c for c in overlapping if c.object_key == object_key and c.polarity == polarity]
        if len(same) > 1:
            raise Ambiguous("the new claim overlaps two intervals of the same value")
        correct = None
        if same:
            old = same[0]
            if not (predicate in self.one_valued and polarity == 1
                    and valid_from < old.valid_from):
                return Pending(scope, subject_key, predicate, obj, object_key, polarity,
                               valid_from, valid_to, recorded_at, same[0], (), ())
            correct = old
            valid_to = None if valid_to is None or old.end is None else max(valid_to, old.end)
            overlapping = [c for c in slot if c is not old and _lt(c.valid_from, valid_to)
                           and _lt(valid_from, c.end)]
        conflicts = [
            c for c in overlapping
            if (c.object_key == object_key and c.polarity != polarity)
            or (predicate in self.one_valued and c.polarity == 1 and polarity == 1
                and c.object_key != object_key)
        ]
        observations = 1 if correct is None else correct.observations + 1
        corrected = () if correct is None else (correct,)
        if close == "retired":
            return Pending(scope, subject_key, predicate, obj, object_key, polarity, valid_from,
                           valid_to, recorded_at, None, (), tuple(conflicts) + corrected,
                           correct, observations)
        ends = tuple(c for c in conflicts if c.valid_from < valid_from)
        bound_by = None
        if correct is not None:  # inside a correction, a later start was never true
            retires = tuple(c for c in conflicts if c.valid_from >= valid_from)
        else:
            retires = tuple(c for c in conflicts if c.valid_from == valid_from)
            for later in (c for c in conflicts if c.valid_from > valid_from):
                if valid_to is None or later.valid_from < valid_to:  # it ends the new one
                    valid_to, bound_by = later.valid_from, later.id
        return Pending(scope, subject_key, predicate, obj, object_key, polarity, valid_from,
                       valid_to, recorded_at, None, ends, retires + corrected, correct,
                       observations, bound_by=bound_by)

    def apply(self, plan: Pending, new_id: str | None) -> Outcome:
        """Apply a plan; ``new_id`` is the id the library gave the added row."""
        if plan.reinforce is not None:
            plan.reinforce.observations += 1
            return Outcome(added=False, reinforced=(plan.reinforce.id,))
        assert new_id is not None, "a write that adds a row needs the row's id"
        at = plan.recorded_at
        for old in plan.end_at:
            old.ends.append((plan.valid_from, max(at, old.recorded_at)))
            old.closers.append(new_id)
        for old in plan.retire:
            self._retire(old, at, new_id)
        self._seq += 1
        bounded = plan.valid_to is not None
        self.claims[new_id] = MClaim(
            self._seq, new_id, plan.scope, plan.subject_key, plan.predicate, plan.object,
            plan.object_key, plan.polarity, plan.valid_from, plan.recorded_at,
            [] if plan.valid_to is None else [(plan.valid_to, plan.recorded_at)],
            observations=plan.observations, closers=[plan.bound_by] if bounded else [],
            restored=plan.restored,
        )
        return Outcome(True, (), tuple(c.id for c in plan.end_at), tuple(c.id for c in plan.retire))

    def plan_supersede(self, reader: ScopeKey, old_id: str, obj: str, object_key: str,
                       at: datetime, now: datetime) -> Superseding:
        """Close ``old_id`` at ``at`` (retire it if ``at`` is not after its start) and
        remember the new value from ``at``, recorded ``now``."""
        old = self.claims.get(old_id)
        if old is None or not scope_sees(reader, old.scope):
            raise Refused("ClaimNotFoundError")
        if old.invalidated_at is not None:
            raise Refused("InvalidArgumentError")
        if old.scope != reader:
            raise Ambiguous("superseding a claim inherited from a broader scope")
        if old.end is not None and at >= old.end:
            raise Ambiguous("superseding at or after the old claim's known end")
        if old.object_key == object_key:
            raise Ambiguous("superseding a value with itself")
        # The old claim is closed first, so it is not in the slot the new one settles in.
        old.invalidated_at = now
        try:
            new = self.plan_remember(reader, old.subject_key, old.predicate, obj, object_key,
                                     1, at, None, now, "ended", now)
        finally:
            old.invalidated_at = None
        if new.reinforce is not None:
            raise Ambiguous("the new value re-states one already believed")
        return Superseding(old, at, new)

    def apply_supersede(self, plan: Superseding, new_id: str) -> Outcome:
        old, at, now = plan.old, plan.at, plan.new.recorded_at
        ended: tuple[str, ...] = ()
        retired: tuple[str, ...] = ()
        if at > old.valid_from:
            old.ends.append((at, max(now, old.recorded_at)))
            old.closers.append(new_id)
            ended = (old.id,)
        else:
            self._retire(old, now, new_id)
            retired = (old.id,)
        done = self.apply(plan.new, new_id)
        return Outcome(True, (), ended + done.ended, retired + done.retired)

    def revert(self, reader: ScopeKey, claim_id: str, now: datetime,
               new_ids: Iterator[str]) -> tuple[list[str], list[str], list[str], list[str]]:
        """Revert ``claim_id`` (see the module); ``new_ids`` gives each added copy the id
        the library gave it. Returns the ids added, reinforced, ended and retired.
        Raises ``Refused`` or ``Ambiguous`` before changing anything only when run on a
        copy of the model first (``copy.deepcopy``): it applies as it goes."""
        mistake = self.claims.get(claim_id)
        if mistake is None or not scope_sees(reader, mistake.scope):
            raise Refused("ClaimNotFoundError")
        if mistake.restored:
            raise Refused("InvalidArgumentError")
        closed = sorted((
            c for c in self.visible(reader) if c.recorded_at <= now and (
                (c.invalidated_by == claim_id and c.invalidated_at is not None
                 and c.invalidated_at <= now)
                or (c.invalidated_at is None and c.closers and c.closers[-1] == claim_id))
        ), key=lambda c: (c.recorded_at, c.seq))
        if not closed:
            raise Refused("InvalidArgumentError")
        at = max([now, mistake.recorded_at, *(c.recorded_at for c in closed)])
        added: list[str] = []
        reinforced: list[str] = []
        ended: list[str] = []
        retired: list[str] = []
        if mistake.invalidated_at is None:
            self._retire(mistake, at, None)
            retired.append(mistake.id)
        originals = [c for c in closed if c.invalidated_at is None]
        for original in closed:
            end = self._end_before_closure(original)
            hidden = [(c, c.invalidated_at) for c in originals]
            for c in originals:  # out of the slot while the copy settles
                c.invalidated_at = at
            try:
                plan = self.plan_remember(
                    original.scope, original.subject_key, original.predicate, original.object,
                    original.object_key, original.polarity, original.valid_from, end, at,
                    "ended", at)
            finally:
                for c, gone in hidden:
                    c.invalidated_at = gone
            plan = replace(plan, restored=True, observations=(
                original.observations if plan.correct is None else plan.observations))
            new_id = None if plan.reinforce is not None else next(new_ids)
            done = self.apply(plan, new_id)
            holder = new_id if new_id is not None else done.reinforced[0]
            added.extend([] if new_id is None else [new_id])
            reinforced.extend(done.reinforced)
            ended.extend(done.ended)
            retired.extend(done.retired)
            if original.invalidated_at is None:
                self._retire(original, at, holder)
                retired.append(original.id)
        return added, reinforced, ended, retired

    @staticmethod
    def _end_before_closure(claim: MClaim) -> datetime | None:
        """The end ``claim`` had just before its latest closure (a retired claim's
        interval was never touched)."""
        if claim.invalidated_at is not None or not claim.ends:
            return claim.end
        before = claim.ends[-1][1] - timedelta(microseconds=1)
        if before < claim.recorded_at:
            return None
        return claim.end_at(before)

    def forget(self, scope: ScopeKey, subject_key: str, predicate: str, at: datetime) -> list[str]:
        slot = self._slot(scope, subject_key, predicate)
        for claim in slot:
            self._retire(claim, at, None)
        return [c.id for c in slot]

    def delete(self, reader: ScopeKey, claim_id: str, at: datetime) -> bool:
        claim = self.claims.get(claim_id)
        if claim is None or not scope_sees(reader, claim.scope) or claim.invalidated_at is not None:
            return False
        self._retire(claim, at, None)
        return True

    def erase(self, reader: ScopeKey, claim_id: str) -> bool:
        claim = self.claims.get(claim_id)
        if claim is None or not scope_sees(reader, claim.scope):
            return False
        del self.claims[claim_id]
        for other in self.claims.values():  # no row keeps the erased id as its closer
            if other.invalidated_by == claim_id:
                other.invalidated_by = None
            other.closers = [None if by == claim_id else by for by in other.closers]
        return True

    def purge(self, outer: ScopeKey) -> int:
        doomed = [i for i, c in self.claims.items() if scope_contains(outer, c.scope)]
        for claim_id in doomed:
            del self.claims[claim_id]
        return len(doomed)

    def _retire(self, claim: MClaim, at: datetime, by: str | None) -> None:
        claim.invalidated_at = max(at, claim.recorded_at)
        claim.invalidated_by = by
