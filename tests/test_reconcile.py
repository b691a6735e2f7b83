"""The contradiction rules as pure functions of a slot (no store involved)."""

from __future__ import annotations

from datetime import datetime

from memvara import Claim
from memvara._write.reconcile import plan_write
from memvara._domain.time import to_micros
from memvara.schema import Cardinality

from .conftest import AUG, JAN, JUN, MAR

ONE, MANY = Cardinality.ONE, Cardinality.MANY


def claim(obj: str, start: datetime, end: datetime | None = None, *, polarity: int = 1,
          recorded: datetime | None = None, cid: str = "") -> Claim:
    return Claim("user", "p", obj, valid_from=start, valid_to=end, recorded_at=recorded or start,
                 polarity=polarity, id=cid or obj)


def test_a_claim_alone_in_its_slot_keeps_its_interval_and_closes_nothing() -> None:
    plan = plan_write(claim("Berlin", JAN, JUN), [], ONE, "ended")
    assert plan.valid_to == to_micros(JUN, "x")
    assert plan.reinforce is None and plan.end == [] and plan.retire == []


def test_reinforce_wins_over_everything_else() -> None:
    plan = plan_write(claim("berlin", JUN), [claim("Berlin", JAN)], ONE, "ended")
    assert plan.reinforce is not None and plan.reinforce.id == "Berlin"
    assert plan.end == [] and plan.retire == []


def test_earlier_value_ends_where_the_new_one_starts() -> None:
    plan = plan_write(claim("Lisbon", JUN, recorded=AUG), [claim("Berlin", JAN)], ONE, "ended")
    assert [(c.id, to, at) for c, to, at in plan.end] == [
        ("Berlin", to_micros(JUN, "x"), to_micros(AUG, "x"))
    ]


def test_retired_close_leaves_the_interval() -> None:
    plan = plan_write(claim("Lisbon", JUN), [claim("Berlin", JAN)], ONE, "retired")
    assert [c.id for c, _ in plan.retire] == ["Berlin"] and plan.end == []


def test_later_value_bounds_the_new_claim() -> None:
    plan = plan_write(claim("Paris", MAR), [claim("Berlin", JAN), claim("Lisbon", JUN)], ONE, "ended")
    assert plan.valid_to == to_micros(JUN, "x")
    assert [c.id for c, _, _ in plan.end] == ["Berlin"]


def test_non_overlapping_values_are_left_alone() -> None:
    plan = plan_write(claim("Paris", JUN), [claim("Berlin", JAN, MAR)], ONE, "ended")
    assert plan.end == [] and plan.retire == [] and plan.reinforce is None


def test_many_valued_only_conflicts_on_opposite_polarity() -> None:
    plan = plan_write(claim("jazz", JUN), [claim("sushi", JAN)], MANY, "ended")
    assert plan.end == []
    plan = plan_write(claim("sushi", JUN, polarity=-1), [claim("sushi", JAN)], MANY, "ended")
    assert [c.id for c, _, _ in plan.end] == ["sushi"]


def test_closure_is_never_dated_before_the_old_claim_was_recorded() -> None:
    old = claim("Berlin", JAN, recorded=AUG)
    plan = plan_write(claim("Lisbon", JUN, recorded=MAR), [old], ONE, "ended")
    assert plan.end[0][2] == to_micros(AUG, "x")


def test_the_same_value_in_a_separate_interval_is_not_a_reinforcement() -> None:
    plan = plan_write(claim("Berlin", JAN, MAR), [claim("Berlin", JUN, cid="later")], ONE, "ended")
    assert plan.reinforce is None and plan.end == [] and plan.retire == []
