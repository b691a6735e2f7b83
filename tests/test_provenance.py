"""Provenance: ``why()`` says where a claim came from and what became of it, and
``produced()`` walks the same link backwards; both read at any instant."""

from __future__ import annotations

import pytest

from memvara import Claim, InvalidArgumentError, Memvara, NullLLM, Provenance, ScopedMemvara

from .conftest import AUG, JAN, JUN, MAR, Clock


def _why(mem: Memvara | ScopedMemvara, claim_id: str, **kwargs: object) -> Provenance:
    prov = mem.why(claim_id, **kwargs)  # type: ignore[arg-type]
    assert prov is not None
    return prov


def test_a_claim_from_a_turn_names_the_turn_and_the_rule_that_read_it(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock, user="alice") as mem:
        receipt = mem.add("I live in Berlin")
        claim = receipt.added[0]
        prov = _why(mem, claim.id)
        assert [e.content for e in prov.episodes] == ["I live in Berlin"]
        assert prov.sources == (prov.episodes[0].id,)
        assert prov.extractor == "rules:v1"
        assert prov.claim == claim
        assert prov.superseded == () and prov.closed_by is None


def test_a_new_value_supersedes_the_old_one_and_the_old_one_names_its_closer(
    mem: Memvara,
) -> None:
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN).added[0]
    lisbon = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN).added[0]
    assert [c.object for c in _why(mem, lisbon.id).superseded] == ["Berlin"]
    closed = _why(mem, berlin.id)
    assert closed.claim.state == "ended"
    assert closed.closed_by is not None and closed.closed_by.id == lisbon.id
    assert _why(mem, berlin.id).extractor == "remember"


@pytest.mark.parametrize("how", ["remember", "remember_many"])
def test_a_value_written_before_a_later_one_names_it_as_what_ends_it(
    mem: Memvara, how: str,
) -> None:
    lisbon = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN).added[0]
    if how == "remember":
        porto = mem.remember("user", "lives_in", "Porto", valid_from=MAR).added[0]
    else:  # the batch path, beside a claim of another slot
        porto = mem.remember_many([Claim("user", "lives_in", "Porto", valid_from=MAR),
                                   Claim("user", "likes", "tea")]).added[0]
    assert porto.valid_to == JUN and porto.state == "ended"
    closed = _why(mem, porto.id)
    assert closed.closed_by is not None and closed.closed_by.id == lisbon.id
    assert [c.id for c in _why(mem, lisbon.id).superseded] == [porto.id]
    assert _why(mem, lisbon.id).closed_by is None


def test_a_retired_value_names_the_claim_that_retired_it(mem: Memvara) -> None:
    wrong = mem.remember("user", "lives_in", "Oslo").added[0]
    right = mem.remember("user", "lives_in", "Lisbon", close="retired").added[0]
    prov = _why(mem, wrong.id)
    assert prov.claim.state == "retired"
    assert prov.closed_by is not None and prov.closed_by.id == right.id
    assert [c.id for c in _why(mem, right.id).superseded] == [wrong.id]


def test_supersede_records_its_closer(mem: Memvara, clock: Clock) -> None:
    old = mem.remember("user", "works_at", "Acme", valid_from=JAN).added[0]
    clock.advance(days=1)
    new = mem.supersede(old.id, Claim("user", "works_at", "Globex"), at=MAR).added[0]
    assert _why(mem, old.id).closed_by == mem.get(new.id)
    assert [c.id for c in _why(mem, new.id).superseded] == [old.id]


def test_a_plain_delete_has_no_closer(mem: Memvara) -> None:
    claim = mem.remember("user", "likes", "tea").added[0]
    assert mem.delete(claim.id)
    prov = _why(mem, claim.id)
    assert prov.claim.state == "retired" and prov.closed_by is None


def test_known_at_answers_as_believed_then(mem: Memvara, clock: Clock) -> None:
    before = clock.now
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN).added[0]
    learned_berlin = clock.advance(days=1)
    clock.advance(days=1)
    lisbon = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN).added[0]
    # Before anything was recorded there is nothing to explain.
    assert mem.why(berlin.id, known_at=before.replace(year=2025)) is None
    # Before Lisbon was learned, Berlin was open-ended and closed by nothing...
    then = _why(mem, berlin.id, known_at=learned_berlin)
    assert then.claim.state == "live" and then.closed_by is None
    assert mem.why(lisbon.id, known_at=learned_berlin) is None
    # ...and now it is ended, by Lisbon.
    assert _why(mem, berlin.id).closed_by is not None


def test_valid_at_requires_the_claim_in_force_then(mem: Memvara) -> None:
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN).added[0]
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN)
    assert mem.why(berlin.id, valid_at=MAR) is not None
    assert mem.why(berlin.id, valid_at=AUG) is None
    assert mem.why(berlin.id, as_of=AUG) is None


def test_a_revised_end_keeps_the_closer_believed_at_each_instant(
    mem: Memvara, clock: Clock
) -> None:
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN).added[0]
    clock.advance(days=1)
    lisbon = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN).added[0]
    first_closure = clock.now
    clock.advance(days=1)
    # A late correction: the move was via Paris, in March, which re-ends Berlin there.
    paris = mem.remember("user", "lives_in", "Paris", valid_from=MAR).added[0]
    assert _why(mem, berlin.id).closed_by == mem.get(paris.id)
    then = _why(mem, berlin.id, known_at=first_closure)
    assert then.closed_by is not None and then.closed_by.id == lisbon.id
    assert [c.id for c in _why(mem, lisbon.id, known_at=first_closure).superseded] == [
        berlin.id
    ]
    assert berlin.id not in [c.id for c in _why(mem, lisbon.id).superseded]
    assert berlin.id in [c.id for c in _why(mem, paris.id).superseded]


def test_turns_recorded_after_known_at_are_left_out(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock) as mem:
        claim = mem.add("I live in Berlin").added[0]
        first = clock.now
        clock.advance(days=3)
        again = mem.add("I moved to Berlin")
        assert again.reinforced and again.reinforced[0].id == claim.id
        assert len(_why(mem, claim.id).episodes) == 2
        assert [e.content for e in _why(mem, claim.id, known_at=first).episodes] == [
            "I live in Berlin"
        ]


def test_an_erased_source_turn_is_gone_from_the_explanation(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock) as mem:
        first = mem.add("I live in Berlin").added[0]
        mem.add("I moved to Berlin")
        (_, later) = _why(mem, first.id).episodes
        other = mem.add("I speak Danish").added[0]
        mem.erase(other.id, sources=True)
        assert len(_why(mem, first.id).episodes) == 2
        assert mem.produced(later.id) == [mem.get(first.id)]


def test_why_sees_only_what_the_scope_can_see(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock) as mem:
        bob = mem.scope(user="bob")
        claim = bob.add("I live in Oslo").added[0]
        assert mem.scope(user="alice").why(claim.id) is None
        assert mem.why(claim.id) is None  # the root scope never sees a user's rows
        assert bob.scope(session="s1").why(claim.id) is not None  # inherited
        episode = _why(bob, claim.id).episodes[0]
        assert mem.scope(user="alice").produced(episode.id) == []


def test_a_shared_claim_hides_a_turn_from_a_scope_that_cannot_see_it(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock) as mem:
        (turn,) = mem.scope(user="bob").add("I live in Oslo").added[0].sources
        # A root-scope claim citing bob's turn: readers see the claim, not bob's turn.
        shared = mem.remember("team", "meets_in", "Oslo", sources=[turn]).added[0]
        assert _why(mem, shared.id).episodes == ()
        assert _why(mem, shared.id).sources == (turn,)
        assert [e.id for e in _why(mem.scope(user="bob"), shared.id).episodes] == [turn]


def test_unknown_ids_give_nothing_and_bad_ids_raise(mem: Memvara) -> None:
    assert mem.why("c999-00000000") is None
    assert mem.why("not an id") is None
    assert mem.produced("e-missing") == []
    with pytest.raises(InvalidArgumentError, match="claim_id"):
        mem.why(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="episode_id"):
        mem.produced("")
    with pytest.raises(InvalidArgumentError, match="as_of"):
        mem.why("c1-00000000", as_of=JAN, known_at=JAN)


def test_produced_lists_every_claim_a_turn_gave_in_any_state(clock: Clock) -> None:
    with Memvara(llm=NullLLM(), clock=clock) as mem:
        (turn,) = mem.add("I live in Berlin. I work at Acme.").added[0].sources
        made = mem.produced(turn)
        assert sorted(c.predicate for c in made) == ["lives_in", "works_at"]
        before = clock.now
        clock.advance(days=1)
        mem.forget("user", "works_at")
        assert sorted(c.state for c in mem.produced(turn)) == ["live", "retired"]
        assert all(c.state == "live" for c in mem.produced(turn, known_at=before))
        assert mem.produced(turn, known_at=before.replace(year=2020)) == []


def test_inside_a_transaction_why_sees_the_transactions_own_writes(db_path: str) -> None:
    with Memvara(db_path, llm=NullLLM()) as mem:
        with mem.store.transaction():
            claim = mem.remember("user", "likes", "tea").added[0]
            assert _why(mem, claim.id).claim == claim
        assert _why(mem, claim.id).claim == claim
