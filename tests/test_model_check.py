"""Random histories of writes, each read back at random instants against a reference model.

A Hypothesis state machine drives ``remember`` (both ``close=`` modes, single- and
many-valued predicates, both polarities, explicit and default instants, earlier starts
that correct; each previewed by ``check_conflict`` first), ``supersede``, ``revert``,
``forget``, ``delete``, ``erase`` and ``purge`` across seven scopes: the root, two users,
an agent, two sibling sessions and the same user name in another tenant. The injected
clock only moves forward. After every step it compares what memvara returns with
``tests/reference_model.py``, a plain-Python reading of the spec:

* each write's receipt (added, reinforced, ended, retired) and the row it added;
* ``get_all`` and ``count`` at a random ``(valid_at, known_at)`` pair and a random
  non-empty subset of ``states`` (sometimes through ``as_of=`` or
  ``include_invalidated=``, which must mean the same thing);
* ``history`` of a random slot, probed by a different spelling of the same subject or
  predicate, with and without ``valid_at``;
* ``get_all()``, ``stats()`` and ``get(id)`` now, in every scope.

Instants are whole days, so writes collide on one instant often (which is where the
same-start rule lives) and probes land on boundaries; some probes sit one microsecond
before a boundary to check every interval is half-open.

Where the spec does not decide an outcome the model raises ``Ambiguous`` and the step is
skipped rather than guessed (each is counted as a Hypothesis event; run with
``--hypothesis-show-statistics`` to see how often): a write overlapping two intervals of
its own value; a ``supersede`` from a narrower scope than the old claim's, at or after the
old claim's known end, to the same value, or to a value already believed.

The default profile (50 examples of up to 40 steps) is derandomized, so a run is the same
run every time. ``MEMVARA_SLOW=1`` runs 1,000 random examples of up to 60 steps.
"""

from __future__ import annotations

import copy
import os
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memvara import (
    Claim,
    InvalidTimeError,
    Memvara,
    MemvaraError,
    ScopedMemvara,
    WriteReceipt,
)
from memvara.store import STATES

from .conftest import Clock
from .reference_model import (
    ALL_STATES,
    Ambiguous,
    Model,
    Outcome,
    Refused,
    ScopeKey,
    View,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
START_DAY = 40
TICK = timedelta(microseconds=1)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


SCOPES: dict[str, ScopeKey] = {
    "root": (None, None, None, None),
    "alice": (None, "alice", None, None),
    "bob": (None, "bob", None, None),
    "agent": (None, "alice", "helper", None),
    "s1": (None, "alice", "helper", "s1"),
    "s2": (None, "alice", "helper", "s2"),
    "t2": ("t2", "alice", None, None),
}

# Surface spellings and the key each folds to, as the spec states the fold: casefold,
# punctuation and legal suffixes stripped ("Acme Corp." == "ACME, Inc." == "acme").
SUBJECTS = {"user": "user", "User": "user", "pat": "pat"}
PREDICATES = {"lives_in": "lives_in", "resides_in": "lives_in", "works_at": "works_at",
              "likes": "likes"}
ONE_VALUED = ("lives_in", "works_at")
OBJECTS = {
    "lives_in": {"Berlin": "berlin", "berlin": "berlin", "Lisbon": "lisbon", "Oslo": "oslo"},
    "works_at": {"Acme": "acme", "ACME, Inc.": "acme", "Acme Corp.": "acme", "Globex": "globex"},
    "likes": {"tea": "tea", "Tea": "tea", "jazz": "jazz", "chess": "chess"},
}

# Weighted towards a few slots so that writes collide: contradictions need a shared slot.
# (``sampled_from`` shrinks towards the first entry, so the busiest one comes first.)
scope_names = st.sampled_from(["alice"] * 6 + ["s1"] * 2 + ["root", "bob", "agent", "s2", "t2"])
subjects = st.sampled_from(["user"] * 5 + ["User", "pat"])
predicates = st.sampled_from(["lives_in"] * 3 + ["resides_in", "likes", "likes", "likes",
                                                  "works_at", "works_at"])
days = st.integers(min_value=0, max_value=100)


def instant(n: int, early: bool) -> datetime:
    """Midnight of day ``n``, or one microsecond before it."""
    return day(n) - TICK if early else day(n)


instants = st.builds(instant, days, st.booleans())
state_sets = st.sets(st.sampled_from(STATES), min_size=1).map(frozenset)
advances = st.sampled_from([0, 0, 1, 3])


def mostly_default(values: st.SearchStrategy[int]) -> st.SearchStrategy[int | None]:
    """``None`` (the library's default) two times in three."""
    return st.one_of(st.none(), st.none(), values)


Probe = tuple[str, datetime, datetime, frozenset[str], str]
SlotProbe = tuple[str, str, str, datetime | None, datetime]


@st.composite
def probes(draw: st.DrawFn) -> Probe:
    """A read to compare: scope, valid_at, known_at, states, and how to spell it."""
    spelling = draw(st.sampled_from(["explicit", "as_of", "alias"]))
    v = draw(instants)
    k = v if spelling == "as_of" else draw(instants)
    chosen = draw(state_sets)
    if spelling == "alias" and chosen not in ({"live"}, ALL_STATES):
        spelling = "explicit"
    return draw(scope_names), v, k, chosen, spelling


@st.composite
def history_probes(draw: st.DrawFn) -> SlotProbe:
    """A slot's timeline to compare: scope, subject and predicate as spelled, valid_at
    (or none: the whole timeline), known_at."""
    return (draw(scope_names), draw(subjects), draw(predicates),
            draw(st.none() | instants), draw(instants))


def view(claim: Claim) -> View:
    """The fields of a library claim the model predicts."""
    assert claim.valid_from is not None and claim.recorded_at is not None
    gone = claim.invalidated_at
    return View(claim.id, claim.scope.values(), claim.object, claim.polarity, claim.valid_from,
                claim.valid_to, claim.valid_to_known_at, claim.recorded_at, gone,
                claim.invalidated_by if gone is not None else None, claim.state,
                claim.observations)


class MemvaraMachine(RuleBasedStateMachine):
    """memvara and the reference model, driven side by side."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock(day(START_DAY))
        self.mem = Memvara(clock=self.clock)
        self.model = Model(ONE_VALUED)
        self.ids: list[str] = []  # every id ever added, erased ones included

    def teardown(self) -> None:
        self.mem.close()

    # -- helpers ----------------------------------------------------------------------
    @property
    def now(self) -> datetime:
        return self.clock.now

    def at(self, name: str) -> ScopedMemvara:
        tenant, user, agent, session = SCOPES[name]
        return self.mem.scope(tenant=tenant, user=user, agent=agent, session=session)

    def tick(self, days_forward: int) -> None:
        self.clock.advance(days=days_forward)

    def everything(self) -> list[View]:
        """Every row in the store, whatever its scope or state, by id."""
        rows = {c.id: view(c) for name in ("s1", "s2", "bob", "t2")
                for c in self.at(name).get_all(states=STATES)}
        return [rows[i] for i in sorted(rows)]

    def check_receipt(self, receipt: WriteReceipt, want: Outcome) -> None:
        """The receipt names what the model did, and the added row reads back as modelled."""
        assert len(receipt.added) == int(want.added)
        assert sorted(c.id for c in receipt.reinforced) == sorted(want.reinforced)
        assert sorted(c.id for c in receipt.ended) == sorted(want.ended)
        assert sorted(c.id for c in receipt.retired) == sorted(want.retired)
        for claim in receipt.added + receipt.reinforced + receipt.closed:
            assert view(claim) == self.model.claims[claim.id].view(None), claim

    def check(self, probe: Probe, slot: SlotProbe) -> None:
        """One random read of each kind, against the model."""
        name, v, k, chosen, spelling = probe
        handle = self.at(name)
        want = self.model.get_all(SCOPES[name], v, k, chosen)
        if spelling == "as_of":
            got = handle.get_all(as_of=k, states=chosen)
            n = handle.count(as_of=k, states=chosen)
        elif spelling == "alias":
            got = handle.get_all(valid_at=v, known_at=k, include_invalidated=chosen == ALL_STATES)
            n = handle.count(valid_at=v, known_at=k, include_invalidated=chosen == ALL_STATES)
        else:
            got = handle.get_all(valid_at=v, known_at=k, states=sorted(chosen))
            n = handle.count(valid_at=v, known_at=k, states=sorted(chosen))
        assert [view(c) for c in got] == want, (name, v, k, sorted(chosen))
        assert n == len(want)

        name, subject, predicate, hv, hk = slot
        want = self.model.history(SCOPES[name], SUBJECTS[subject], PREDICATES[predicate], hv, hk)
        got = self.at(name).history(subject, predicate, valid_at=hv, known_at=hk)
        assert [view(c) for c in got] == want, (name, subject, predicate, hv, hk)

    # -- writes -----------------------------------------------------------------------
    def write(self, name: str, subject: str, predicate: str, obj_index: int, close: str,
              polarity: int, forward: int, recorded: int | None, valid_from: int | None,
              length: int | None) -> None:
        """One ``remember``: ``recorded`` days before now and ``length`` days long when
        given; a ``length`` of zero or less is an empty interval and must be refused."""
        self.tick(forward)
        canonical = PREDICATES[predicate]
        obj = sorted(OBJECTS[canonical])[obj_index]
        recorded_at = None if recorded is None else self.now - timedelta(days=recorded)
        start = day(valid_from) if valid_from is not None else recorded_at or self.now
        valid_to = None if length is None else start + timedelta(days=length)
        handle = self.at(name)

        def call() -> WriteReceipt:
            return handle.remember(subject, predicate, obj, close=close, polarity=polarity,
                                   recorded_at=recorded_at, valid_to=valid_to,
                                   valid_from=None if valid_from is None else start)

        if valid_to is not None and valid_to <= start:
            before = self.everything()
            with pytest.raises(InvalidTimeError, match="valid_to"):
                call()
            assert self.everything() == before
            event("remember: empty interval refused")
            return
        try:
            plan = self.model.plan_remember(
                SCOPES[name], SUBJECTS[subject], canonical, obj, OBJECTS[canonical][obj],
                polarity, start, valid_to, recorded_at or self.now, close, self.now)
        except Ambiguous as why:
            event(f"remember skipped: {why}")
            return
        except Refused as refused:  # recorded behind a change to what it contradicts
            event(f"remember refused: {refused.args[0]}")
            before = self.everything()
            for attempt in (call, lambda: handle.check_conflict(
                    subject, predicate, obj, polarity=polarity, recorded_at=recorded_at,
                    valid_to=valid_to, valid_from=None if valid_from is None else start)):
                with pytest.raises(InvalidTimeError, match="recorded in order"):
                    attempt()
            assert self.everything() == before
            return
        preview = handle.check_conflict(subject, predicate, obj, polarity=polarity,
                                        recorded_at=recorded_at, valid_to=valid_to,
                                        valid_from=None if valid_from is None else start,
                                        close=close)
        assert preview.action == ("reinforce" if plan.reinforce is not None else
                                  "correct" if plan.correct is not None else "add")
        assert sorted(c.id for c in preview.ends) == sorted(c.id for c in plan.end_at)
        assert sorted(preview.closes) == sorted(c.id for c in (*plan.end_at, *plan.retire))
        receipt = call()
        outcome = self.model.apply(plan, receipt.added[0].id if receipt.added else None)
        self.ids.extend(c.id for c in receipt.added)
        self.check_receipt(receipt, outcome)
        for kind in ("reinforced", "ended", "retired"):
            if getattr(outcome, kind):
                event(f"remember close={close}: {kind}")
        if plan.correct is not None:
            event("remember: an earlier start corrects")
        elif plan.valid_to != valid_to:
            event("remember: bounded by a later value")

    @rule(name=scope_names, subject=subjects, predicate=predicates,
          obj_index=st.integers(0, 3), forward=advances, probe=probes(), slot=history_probes())
    def remember_now(self, name: str, subject: str, predicate: str, obj_index: int,
                     forward: int, probe: Probe, slot: SlotProbe) -> None:
        """The common write: true from now, learned now, a new value ends the old one."""
        self.write(name, subject, predicate, obj_index, "ended", 1, forward, None, None, None)
        self.check(probe, slot)

    @rule(name=scope_names, subject=subjects, predicate=predicates, obj_index=st.integers(0, 3),
          close=st.sampled_from(["ended", "retired"]), polarity=st.sampled_from([1, 1, -1]),
          forward=advances, recorded=mostly_default(st.integers(min_value=0, max_value=30)),
          valid_from=mostly_default(days),
          length=mostly_default(st.integers(min_value=-2, max_value=30)),
          probe=probes(), slot=history_probes())
    def remember(self, name: str, subject: str, predicate: str, obj_index: int, close: str,
                 polarity: int, forward: int, recorded: int | None, valid_from: int | None,
                 length: int | None, probe: Probe, slot: SlotProbe) -> None:
        """Any write: either close mode, either polarity, late news, scheduled facts."""
        self.write(name, subject, predicate, obj_index, close, polarity, forward, recorded,
                   valid_from, length)
        self.check(probe, slot)

    def pick(self, data: st.DataObject, name: str, own_scope: bool) -> tuple[str, str]:
        """A claim and the scope to call from: with ``own_scope``, a claim that exists and
        its own scope; else any id ever written (perhaps erased since) and ``name``."""
        if own_scope and self.model.claims:
            claim_id = data.draw(st.sampled_from(sorted(self.model.claims)), label="claim_id")
            scope = self.model.claims[claim_id].scope
            return claim_id, next(n for n, key in SCOPES.items() if key == scope)
        return data.draw(st.sampled_from(self.ids), label="claim_id"), name

    @rule(name=scope_names, data=st.data(), own_scope=st.booleans(), forward=advances,
          obj_index=st.integers(0, 3), how=st.sampled_from(["now", "at", "valid_from", "both"]),
          when=st.integers(min_value=-40, max_value=30), probe=probes(), slot=history_probes())
    def supersede(self, name: str, data: st.DataObject, own_scope: bool, forward: int,
                  obj_index: int, how: str, when: int, probe: Probe, slot: SlotProbe) -> None:
        """Replace one claim explicitly, ending it at ``at``: by default the new claim's
        ``valid_from``, else now. The id may be erased, retired or another scope's."""
        if not self.ids:
            return
        self.tick(forward)
        old_id, name = self.pick(data, name, own_scope)
        old = self.model.claims.get(old_id)
        canonical = old.predicate if old is not None else "likes"
        others = [o for o, key in sorted(OBJECTS[canonical].items())
                  if old is None or key != old.object_key]  # a new value, not a restatement
        obj = others[obj_index % len(others)]
        moment = self.now + timedelta(days=when)
        handle = self.at(name)
        new = Claim("user" if old is None else old.subject_key, canonical, obj,
                    scope=handle.default_scope,
                    valid_from=moment if how in ("valid_from", "both") else None)
        try:
            plan = self.model.plan_supersede(SCOPES[name], old_id, obj, OBJECTS[canonical][obj],
                                             self.now if how == "now" else moment, self.now)
        except Ambiguous as why:
            event(f"supersede skipped: {why}")
            return
        except Refused as refused:
            event(f"supersede refused: {refused.args[0]}")
            before = self.everything()
            with pytest.raises(MemvaraError) as caught:
                handle.supersede(old_id, new)
            assert type(caught.value).__name__ == refused.args[0]
            assert self.everything() == before
        else:
            receipt = handle.supersede(old_id, new, at=moment if how in ("at", "both") else None)
            outcome = self.model.apply_supersede(plan, receipt.added[0].id)
            self.ids.extend(c.id for c in receipt.added)
            self.check_receipt(receipt, outcome)
            event("supersede: " + ("retired" if plan.old.id in outcome.retired else "ended"))
        self.check(probe, slot)

    @rule(name=scope_names, data=st.data(), own_scope=st.booleans(), forward=advances,
          probe=probes(), slot=history_probes())
    def revert(self, name: str, data: st.DataObject, own_scope: bool, forward: int,
               probe: Probe, slot: SlotProbe) -> None:
        """Undo a write: retire it and bring back what it closed. The id may be erased,
        another scope's, a copy a revert wrote, or one that closed nothing."""
        if not self.ids:
            return
        self.tick(forward)
        claim_id, name = self.pick(data, name, own_scope)
        trial = copy.deepcopy(self.model)
        try:
            trial.revert(SCOPES[name], claim_id, self.now, iter(f"new{i}" for i in range(99)))
        except Ambiguous as why:
            event(f"revert skipped: {why}")
            return
        except Refused as refused:
            event(f"revert refused: {refused.args[0]}")
            before = self.everything()
            with pytest.raises(MemvaraError) as caught:
                self.at(name).revert(claim_id)
            assert type(caught.value).__name__ == refused.args[0]
            assert self.everything() == before
            self.check(probe, slot)
            return
        receipt = self.at(name).revert(claim_id)
        added, reinforced, ended, retired = self.model.revert(
            SCOPES[name], claim_id, self.now, iter(c.id for c in receipt.added))
        assert [c.id for c in receipt.added] == added
        assert sorted(c.id for c in receipt.reinforced) == sorted(reinforced)
        assert sorted(c.id for c in receipt.ended) == sorted(ended)
        assert sorted(c.id for c in receipt.retired) == sorted(retired)
        for claim in receipt.added + receipt.reinforced + receipt.closed:
            assert view(claim) == self.model.claims[claim.id].view(None), claim
        self.ids.extend(added)
        event(f"revert: restored {len(added)}, reinforced {len(reinforced)}")
        self.check(probe, slot)

    @rule(name=scope_names, subject=subjects, predicate=predicates, data=st.data(),
          how=st.sampled_from(["delete"] * 3 + ["forget"] * 2 + ["erase"] * 3 + ["purge"]),
          own_scope=st.booleans(), forward=advances,
          back=mostly_default(st.integers(min_value=0, max_value=30)),
          probe=probes(), slot=history_probes())
    def retire_or_erase(self, name: str, subject: str, predicate: str, data: st.DataObject,
                        how: str, own_scope: bool, forward: int, back: int | None,
                        probe: Probe, slot: SlotProbe) -> None:
        """The two meanings of delete. Retire: ``delete`` one claim by id (``False`` for
        one unknown, invisible or already retired) or ``forget`` a whole slot at one scope,
        now or ``back`` days ago. Erase: ``erase`` one claim by id, or ``purge`` a scope and
        everything beneath it, after which every read behaves as if they never existed."""
        self.tick(forward)
        at = None if back is None else self.now - timedelta(days=back)
        if how == "forget" or not self.ids:
            forgotten = self.at(name).forget(subject, predicate, at=at)
            want = self.model.forget(SCOPES[name], SUBJECTS[subject], PREDICATES[predicate],
                                     at or self.now)
            assert sorted(c.id for c in forgotten) == sorted(want)
            assert [view(c) for c in forgotten] == [
                self.model.claims[c.id].view(None) for c in forgotten
            ]
        elif how == "purge":
            erased = self.model.purge(SCOPES[name])
            counts = self.at(name).purge()
            assert 0 <= counts.pop("embeddings") <= erased
            assert counts == {"claims": erased, "episodes": 0, "sources": 0}
        else:
            claim_id, name = self.pick(data, name, own_scope)
            if how == "delete":
                assert self.at(name).delete(claim_id, at=at) == self.model.delete(
                    SCOPES[name], claim_id, at or self.now)
            else:
                assert self.at(name).erase(claim_id) == self.model.erase(SCOPES[name], claim_id)
        event(how)
        self.check(probe, slot)

    # -- after every step ---------------------------------------------------------------
    @invariant()
    def every_scope_agrees_now(self) -> None:
        for name, key in SCOPES.items():
            handle = self.at(name)
            assert [view(c) for c in handle.get_all()] == self.model.get_all(
                key, self.now, self.now, {"live"}), name
            stats = handle.stats()
            assert 0 <= stats.pop("embeddings") <= stats["claims"]
            assert stats == self.model.stats(key, self.now), name
        for claim_id in self.ids[-3:]:
            for name in ("s1", "bob"):
                got = self.at(name).get(claim_id)
                want = self.model.get(SCOPES[name], claim_id)
                assert (None if got is None else view(got)) == want, (name, claim_id)


SLOW = os.environ.get("MEMVARA_SLOW") == "1"

MemvaraMachine.TestCase.settings = settings(
    max_examples=1000 if SLOW else 50,
    stateful_step_count=60 if SLOW else 40,
    deadline=None,
    derandomize=not SLOW,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestMemvaraAgainstTheModel = MemvaraMachine.TestCase


# -- focused regressions: each a minimal case the state machine found or must keep -------


def test_a_receipt_reports_when_the_end_it_was_written_with_was_learned() -> None:
    """The claim a receipt hands back is the claim that was stored: a claim written with
    an end learned that end when it was recorded, in the receipt as in ``get()``."""
    with Memvara(clock=Clock(day(60))) as mem:
        (added,) = mem.remember("user", "lives_in", "Berlin", valid_from=day(1), valid_to=day(9),
                                recorded_at=day(20)).added
        assert mem.get(added.id) == added
        assert added.valid_to_known_at == day(20)


def test_late_news_recorded_before_the_claim_it_would_close_is_refused() -> None:
    """Late news about the past, recorded *before* the claim it would close was: settled,
    a March write would end August's news, so it is refused and nothing changes."""
    with Memvara(clock=Clock(day(60))) as mem:
        (berlin,) = mem.remember("user", "lives_in", "Berlin", valid_from=day(1),
                                 recorded_at=day(40)).added
        with pytest.raises(InvalidTimeError, match="'Berlin' .which 'Lisbon' contradicts."):
            mem.remember("user", "lives_in", "Lisbon", valid_from=day(10), recorded_at=day(30))
        assert mem.get_all(states=("live", "ended", "retired")) == [berlin]
        receipt = mem.remember("user", "lives_in", "Lisbon", valid_from=day(10),
                               recorded_at=day(40))
        assert [c.id for c in receipt.ended] == [berlin.id]
        assert receipt.ended[0].valid_to_known_at == day(40)