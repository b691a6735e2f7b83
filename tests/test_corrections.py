"""Corrections a user makes: revert a mistake, move a start earlier, never two values at
once, ask first with ``check_conflict``, and keep the memory's own words out of evidence."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta

import pytest

from memvara import (
    Claim,
    ClaimNotFoundError,
    InvalidArgumentError,
    Memvara,
    export_jsonl,
    import_jsonl,
)

from .conftest import JAN, JUN, MAR, NOW, SEP, Clock, FakeLLM, day

APR, MAY, AUG = day("2026-04-01"), day("2026-05-01"), day("2026-08-01")


def objects(mem: Memvara, valid_at: datetime | None = None,
            known_at: datetime | None = None) -> list[str]:
    return sorted(c.object for c in mem.get_all(subject="maya", valid_at=valid_at,
                                                known_at=known_at))


def got(mem: Memvara, claim_id: str) -> Claim:
    claim = mem.get(claim_id)
    assert claim is not None
    return claim


def everything(mem: Memvara) -> list[dict[str, object]]:
    """Every row in every state, as JSON: what an error must leave untouched."""
    return [c.to_dict() for c in mem.get_all(states=["live", "ended", "retired"])]


def live_values_everywhere(mem: Memvara, predicate: str) -> int:
    """The most values of ``maya``'s slot in force at one instant, over every boundary
    any row has, read at every belief instant any row has (the slot's whole plane)."""
    rows = mem.history("maya", predicate)
    instants = {t for c in rows for t in (c.valid_from, c.valid_to) if t is not None}
    beliefs = {t for c in rows for t in (c.recorded_at, c.invalidated_at, c.valid_to_known_at)
               if t is not None}
    most = 0
    for known in beliefs:
        for valid in instants | {t - timedelta(microseconds=1) for t in instants}:
            most = max(most, len(mem.get_all(subject="maya", predicate=predicate,
                                             valid_at=valid, known_at=known)))
    return most


@pytest.fixture
def acme_then_globex(mem: Memvara) -> tuple[Claim, Claim]:
    """Acme from January; Globex from June, a mishearing."""
    (acme,) = mem.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN).added
    (globex,) = mem.remember("maya", "works_at", "Globex", valid_from=JUN,
                             recorded_at=JUN).added
    return acme, globex


# -- revert ---------------------------------------------------------------------------------


def test_revert_retires_the_mistake_and_brings_back_what_it_ended(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim]) -> None:
    acme, globex = acme_then_globex
    receipt = mem.revert(globex.id)
    (restored,) = receipt.added
    assert (restored.object, restored.valid_from, restored.valid_to) == ("Acme", JAN, None)
    assert restored.recorded_at == NOW  # dated on the belief clock at the revert
    assert restored.meta == {"restored_from": acme.id, "reverts": globex.id}
    assert sorted(c.id for c in receipt.retired) == sorted([globex.id, acme.id])
    assert objects(mem) == ["Acme"]
    assert objects(mem, valid_at=AUG) == ["Acme"]


def test_reads_at_an_earlier_belief_still_see_what_was_believed_then(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim]) -> None:
    mem.revert(acme_then_globex[1].id)
    assert objects(mem, valid_at=AUG, known_at=SEP) == ["Globex"]
    assert objects(mem, valid_at=MAR, known_at=SEP) == ["Acme"]
    assert objects(mem, valid_at=AUG, known_at=NOW) == ["Acme"]


def test_revert_reopens_a_value_written_before_the_mistake_that_ended_it(mem: Memvara) -> None:
    lisbon = mem.remember("maya", "lives_in", "Lisbon", valid_from=JUN).added[0]
    porto = mem.remember("maya", "lives_in", "Porto", valid_from=MAR).added[0]  # ends in June
    receipt = mem.revert(lisbon.id)
    (restored,) = receipt.added
    assert (restored.object, restored.valid_from, restored.valid_to) == ("Porto", MAR, None)
    assert restored.meta == {"restored_from": porto.id, "reverts": lisbon.id}
    assert objects(mem) == ["Porto"]


def test_revert_brings_back_a_value_the_mistake_retired(mem: Memvara) -> None:
    (acme,) = mem.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN).added
    (globex,) = mem.remember("maya", "works_at", "Globex", valid_from=JUN, recorded_at=JUN,
                             close="retired").added
    (restored,) = mem.revert(globex.id).added
    assert (restored.valid_from, restored.valid_to) == (JAN, None)
    assert got(mem, acme.id).state == "retired"  # a retired original stays as it was
    assert objects(mem) == ["Acme"]


def test_a_deleted_mistake_can_still_be_reverted(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim]) -> None:
    """delete() asserts nothing about the world; revert() then restores."""
    _, globex = acme_then_globex
    assert mem.delete(globex.id)
    assert objects(mem) == []
    receipt = mem.revert(globex.id)
    assert [c.object for c in receipt.added] == ["Acme"]
    assert globex.id not in [c.id for c in receipt.retired]  # already retired
    assert objects(mem) == ["Acme"]


def test_a_value_written_after_the_mistake_still_bounds_the_restored_one(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim]) -> None:
    mem.remember("maya", "works_at", "Initech", valid_from=SEP, recorded_at=SEP)
    (restored,) = mem.revert(acme_then_globex[1].id).added
    assert (restored.valid_from, restored.valid_to) == (JAN, SEP)
    assert objects(mem) == ["Initech"]
    assert objects(mem, valid_at=AUG) == ["Acme"]
    assert live_values_everywhere(mem, "works_at") == 1


def test_a_value_closed_again_since_is_not_restored(mem: Memvara) -> None:
    (acme,) = mem.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN).added
    (globex,) = mem.remember("maya", "works_at", "Globex", valid_from=JUN,
                             recorded_at=JUN).added
    assert mem.delete(acme.id, at=SEP)  # a later write closed Acme on the belief clock
    with pytest.raises(InvalidArgumentError, match=globex.id):
        mem.revert(globex.id)


def test_revert_restores_an_earlier_end_the_mistake_moved(mem: Memvara) -> None:
    """Acme until December, then Globex from June ended it early: back to December."""
    dec = day("2026-12-01")
    mem.remember("maya", "works_at", "Acme", valid_from=JAN, valid_to=dec, recorded_at=JAN)
    (globex,) = mem.remember("maya", "works_at", "Globex", valid_from=JUN,
                             recorded_at=JUN).added
    (restored,) = mem.revert(globex.id).added
    assert (restored.valid_from, restored.valid_to) == (JAN, dec)


def test_revert_of_a_many_valued_negation_brings_the_value_back(mem: Memvara) -> None:
    (tea,) = mem.remember("maya", "likes", "tea", recorded_at=JAN).added
    (not_tea,) = mem.remember("maya", "likes", "tea", polarity=-1, recorded_at=JUN).added
    assert [c.id for c in mem.get_all(subject="maya")] == [not_tea.id]
    (restored,) = mem.revert(not_tea.id).added
    assert restored.meta["restored_from"] == tea.id
    assert [(c.object, c.polarity) for c in mem.get_all(subject="maya")] == [("tea", 1)]


@pytest.mark.parametrize("case", ["unknown", "other scope", "closed nothing", "twice",
                                  "a revert", "bad id"])
def test_bad_reverts_name_the_id_and_write_nothing(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim], case: str) -> None:
    acme, globex = acme_then_globex
    copy = mem.revert(globex.id).added[0]
    other = mem.remember("pat", "lives_in", "Oslo", user="bob").added[0]
    claim_id, error, scope = {
        "unknown": ("c999-00000000", ClaimNotFoundError, {}),
        "other scope": (other.id, ClaimNotFoundError, {"user": "alice"}),
        "closed nothing": (acme.id, InvalidArgumentError, {}),
        "twice": (globex.id, InvalidArgumentError, {}),
        "a revert": (copy.id, InvalidArgumentError, {}),
        "bad id": ("", InvalidArgumentError, {}),
    }[case]
    before = everything(mem)
    with pytest.raises(error) as caught:
        mem.revert(claim_id, **scope)
    if claim_id:
        assert claim_id in str(caught.value)
    assert everything(mem) == before


def test_the_scoped_handle_reverts_in_its_scope(mem: Memvara) -> None:
    alice = mem.scope(user="alice")
    alice.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    (globex,) = alice.remember("maya", "works_at", "Globex", valid_from=JUN,
                               recorded_at=JUN).added
    with pytest.raises(ClaimNotFoundError):
        mem.scope(user="bob").revert(globex.id)
    assert [c.object for c in alice.revert(globex.id).added] == ["Acme"]


# -- an earlier start is a correction -------------------------------------------------------


def porto_then_lisbon(mem: Memvara) -> None:
    mem.remember("maya", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN)
    mem.remember("maya", "lives_in", "Lisbon", valid_from=APR, recorded_at=MAY)


def test_restating_the_current_value_from_earlier_moves_the_switch(mem: Memvara) -> None:
    porto_then_lisbon(mem)
    receipt = mem.remember("maya", "lives_in", "Lisbon", valid_from=MAR, recorded_at=SEP)
    mid_march = MAR + timedelta(days=14)
    assert objects(mem, valid_at=mid_march) == ["Lisbon"]
    assert objects(mem, valid_at=mid_march, known_at=JUN) == ["Porto"]
    (lisbon,) = receipt.added
    assert (lisbon.valid_from, lisbon.observations) == (MAR, 2)
    assert [c.object for c in receipt.retired] == ["Lisbon"]
    assert [(c.object, c.valid_to) for c in receipt.ended] == [("Porto", MAR)]
    assert live_values_everywhere(mem, "lives_in") == 1


def test_a_later_start_stays_a_reinforcement(mem: Memvara) -> None:
    porto_then_lisbon(mem)
    receipt = mem.remember("maya", "lives_in", "Lisbon", valid_from=JUN, recorded_at=SEP)
    assert receipt.added == () and receipt.reinforced[0].observations == 2


def test_a_correction_retires_a_value_it_shows_was_never_true(mem: Memvara) -> None:
    """Porto, then Faro in March, then Lisbon from April; "Lisbon since February"."""
    mem.remember("maya", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN)
    mem.remember("maya", "lives_in", "Faro", valid_from=MAR, recorded_at=MAR)
    mem.remember("maya", "lives_in", "Lisbon", valid_from=APR, recorded_at=APR)
    feb = day("2026-02-01")
    receipt = mem.remember("maya", "lives_in", "Lisbon", valid_from=feb, recorded_at=SEP)
    assert sorted(c.object for c in receipt.retired) == ["Faro", "Lisbon"]
    assert [(c.object, c.valid_to) for c in receipt.ended] == [("Porto", feb)]
    assert live_values_everywhere(mem, "lives_in") == 1


def test_many_valued_predicates_keep_reinforcing(mem: Memvara) -> None:
    mem.remember("maya", "likes", "tea", valid_from=APR, recorded_at=MAY)
    receipt = mem.remember("maya", "likes", "tea", valid_from=MAR, recorded_at=SEP)
    assert receipt.added == () and len(receipt.reinforced) == 1


def test_add_corrects_too_when_an_older_turn_arrives_late(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN)
    mem.add("I live in Lisbon", ts=MAY)
    mem.add("I live in Lisbon", ts=MAR)
    assert [c.object for c in mem.get_all(valid_at=APR)] == ["Lisbon"]


# -- never two values at once -----------------------------------------------------------------


def test_supersede_with_an_earlier_start_ends_the_old_value_there(mem: Memvara) -> None:
    """The issue's case: the same fact must not be valid twice at one instant."""
    porto_then_lisbon(mem)
    (lisbon,) = mem.get_all(subject="maya")
    receipt = mem.supersede(lisbon.id, Claim("maya", "lives_in", "Lisbon", valid_from=MAR),
                            at=JUN)
    assert [c.id for c in receipt.retired] == [lisbon.id]  # nothing of it is left to overlap
    assert live_values_everywhere(mem, "lives_in") == 1
    hits = mem.search("where does maya live", k=10)
    assert [r.claim.object for r in hits if r.claim is not None] == ["Lisbon"]


def test_supersede_onto_a_believed_value_ends_the_old_one_where_that_value_starts(
        mem: Memvara) -> None:
    porto_then_lisbon(mem)
    porto = mem.history("maya", "lives_in")[0]
    receipt = mem.supersede(porto.id, Claim("maya", "lives_in", "Lisbon", valid_from=JUN))
    assert receipt.added == () and len(receipt.reinforced) == 1
    assert got(mem, porto.id).valid_to == APR
    assert live_values_everywhere(mem, "lives_in") == 1


def test_supersede_in_another_slot_still_ends_at(mem: Memvara) -> None:
    (old,) = mem.remember("maya", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN).added
    mem.supersede(old.id, Claim("maya", "works_at", "Acme", valid_from=MAR), at=JUN)
    assert got(mem, old.id).valid_to == JUN


def test_remember_many_settles_a_correction_in_order(mem: Memvara) -> None:
    receipt = mem.remember_many([
        Claim("maya", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN),
        Claim("maya", "lives_in", "Lisbon", valid_from=APR, recorded_at=MAY),
        Claim("maya", "lives_in", "Lisbon", valid_from=MAR, recorded_at=SEP),
    ])
    assert len(receipt.added) == 3
    assert live_values_everywhere(mem, "lives_in") == 1
    assert objects(mem, valid_at=MAR + timedelta(days=1)) == ["Lisbon"]


# -- check_conflict ---------------------------------------------------------------------------


def test_check_conflict_says_what_a_write_would_do_and_writes_nothing(mem: Memvara) -> None:
    porto_then_lisbon(mem)
    porto, lisbon = mem.history("maya", "lives_in")
    before = everything(mem)
    new = mem.check_conflict("maya", "lives_in", "Oslo", valid_from=SEP)
    assert new.action == "add" and [c.id for c in new.ends] == [lisbon.id]
    assert new.closes == (lisbon.id,) and new.claim.object == "Oslo"
    same = mem.check_conflict("maya", "lives_in", "lisbon", valid_from=JUN)
    assert same.action == "reinforce" and same.reinforces is not None
    assert same.reinforces.id == lisbon.id and same.closes == ()
    earlier = mem.check_conflict("maya", "lives_in", "Lisbon", valid_from=MAR)
    assert earlier.action == "correct" and earlier.corrects is not None
    assert earlier.corrects.id == lisbon.id
    assert [c.id for c in earlier.ends] == [porto.id]
    assert earlier.closes == (porto.id, lisbon.id)
    retired = mem.check_conflict("maya", "lives_in", "Oslo", valid_from=SEP, close="retired")
    assert [c.id for c in retired.retires] == [lisbon.id]
    bounded = mem.check_conflict("maya", "lives_in", "Faro", valid_from=MAR)
    assert bounded.claim.valid_to == APR  # Lisbon's later start bounds it
    assert everything(mem) == before
    form = json.loads(json.dumps(earlier.to_dict()))
    assert form["action"] == "correct" and form["closes"] == [porto.id, lisbon.id]


def test_check_conflict_works_on_a_read_only_store(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("maya", "lives_in", "Porto", valid_from=JAN)
    with Memvara(db_path, clock=clock, read_only=True) as reader:
        assert reader.check_conflict("maya", "lives_in", "Lisbon").action == "add"


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"close": "maybe"}, "close"), ({"polarity": 0}, "polarity"),
    ({"valid_from": "yesterday"}, "valid_from"), ({"valid_to": JAN, "valid_from": MAR}, "valid_to"),
])
def test_check_conflict_refuses_bad_input_as_remember_does(
        mem: Memvara, kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=argument):
        mem.check_conflict("maya", "lives_in", "Lisbon", **kwargs)  # type: ignore[arg-type]


# -- the echo guard ---------------------------------------------------------------------------


@pytest.fixture
def moved(mem: Memvara) -> Memvara:
    """Berlin (ended), then Lisbon (live)."""
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    return mem


def test_a_pasted_recall_block_is_not_read_as_a_statement(moved: Memvara) -> None:
    block = moved.recall("where does the user live", include_history=True)
    assert "Berlin" in block and "Lisbon" in block
    receipt = moved.add(f"{block}\nI live in Lisbon")
    assert [c.object for c in receipt.reinforced] == ["Lisbon"]  # the user's own line
    receipt = moved.add(block, role="user", ts=SEP)
    assert receipt.added == () and receipt.reinforced == ()
    assert [s.reason for s in receipt.skipped] == ["echo"]
    assert [c.object for c in moved.get_all()] == ["Lisbon"]


def test_an_assistant_or_system_turn_never_reinforces_or_revives(clock: Clock) -> None:
    said = {
        "You live in Lisbon, right?": [("user", "lives_in", "Lisbon")],
        "Context: the user lived in Berlin.": [("user", "lives_in", "Berlin")],
        "Noted: you work at Acme.": [("user", "works_at", "Acme")],
    }
    with Memvara(clock=clock, llm=FakeLLM(said)) as mem:
        mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
        (lisbon,) = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN,
                                 recorded_at=JUN).added
        receipt = mem.add([
            {"role": "assistant", "content": "You live in Lisbon, right?"},
            {"role": "system", "content": "Context: the user lived in Berlin."},
            {"role": "assistant", "content": "Noted: you work at Acme."},
        ])
        assert [c.object for c in receipt.added] == ["Acme"]  # new to its slot: kept
        assert receipt.reinforced == () and receipt.closed == ()
        assert sorted(s.content for s in receipt.skipped if s.reason == "echo") == [
            "user lives in Berlin", "user lives in Lisbon"]
        assert got(mem, lisbon.id).observations == 1
        assert sorted(c.object for c in mem.get_all()) == ["Acme", "Lisbon"]


def test_retried_extraction_keeps_the_guard(clock: Clock) -> None:
    llm = FakeLLM({"You still live in Lisbon.": [("user", "lives_in", "Lisbon")]})
    with Memvara(clock=clock, llm=llm) as mem:
        (lisbon,) = mem.remember("user", "lives_in", "Lisbon", recorded_at=JAN).added
        llm.fail = True
        with pytest.raises(Exception, match="retry_extraction"):
            mem.add("You still live in Lisbon.", role="assistant")
        llm.fail = False
        receipt = mem.retry_extraction()
        assert receipt.reinforced == () and [s.reason for s in receipt.skipped] == ["echo"]
        assert got(mem, lisbon.id).observations == 1


def test_a_user_turn_still_reinforces(moved: Memvara) -> None:
    receipt = moved.add("I live in Lisbon")
    assert [c.object for c in receipt.reinforced] == ["Lisbon"]


# -- export and import carry it ---------------------------------------------------------------


def test_export_and_import_carry_reverts_and_corrections(
        mem: Memvara, acme_then_globex: tuple[Claim, Claim], clock: Clock) -> None:
    porto_then_lisbon(mem)
    mem.remember("maya", "lives_in", "Lisbon", valid_from=MAR, recorded_at=SEP)
    mem.revert(acme_then_globex[1].id)
    out = io.StringIO()
    export_jsonl(mem, out)
    with Memvara(clock=clock) as copy:
        import_jsonl(copy, io.StringIO(out.getvalue()))
        assert everything(copy) == everything(mem)
        for predicate in ("works_at", "lives_in"):
            for known in (JUN, SEP, NOW):
                for valid in (MAR + timedelta(days=1), AUG):
                    assert objects(copy, valid_at=valid, known_at=known) == objects(
                        mem, valid_at=valid, known_at=known)
        with pytest.raises(InvalidArgumentError):  # the copy still knows it is a copy
            restored = next(c for c in copy.get_all() if "restored_from" in c.meta)
            copy.revert(restored.id)


def test_a_revert_that_fills_the_vector_backlog_embeds_it(
        monkeypatch: pytest.MonkeyPatch, clock: Clock) -> None:
    import memvara._write.writer

    monkeypatch.setattr(memvara._write.writer, "EMBED_BATCH", 3)
    with Memvara(clock=clock) as mem:
        mem.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
        (globex,) = mem.remember("maya", "works_at", "Globex", valid_from=JUN,
                                 recorded_at=JUN).added
        assert mem.stats()["embeddings"] == 0
        mem.revert(globex.id)  # the third claim: all three get their vectors
        assert mem.stats()["embeddings"] == 3


def test_a_bounded_restatement_from_earlier_keeps_the_open_end(mem: Memvara) -> None:
    """The corrected row spans both intervals: an open one stays open."""
    mem.remember("maya", "lives_in", "Lisbon", valid_from=APR, recorded_at=MAY)
    (lisbon,) = mem.remember("maya", "lives_in", "Lisbon", valid_from=MAR, valid_to=JUN,
                             recorded_at=SEP).added
    assert (lisbon.valid_from, lisbon.valid_to, lisbon.valid_to_known_at) == (MAR, None, None)
