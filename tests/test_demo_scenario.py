"""demo/scenario.py: the corpus has the shape the answer-quality demo needs, and every
authored gold and trap can be found where the question says it can."""

from __future__ import annotations

import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "demo"))

from harness import norm  # noqa: E402 - demo/ is put on the path just above
from scenario import (  # noqa: E402
    CONVERSATIONS,
    END,
    FACT_EVENTS,
    QUESTIONS,
    FactEvent,
    filler_conversation,
    turns,
)


def _changes() -> list[tuple[FactEvent, FactEvent]]:
    """(the value closed, the event that closed it), in order."""
    last: dict[str, FactEvent] = {}
    out = []
    for event in FACT_EVENTS:
        if event.predicate in last:
            out.append((last[event.predicate], event))
        last[event.predicate] = event
    return out


def _last_ts(conversation: str) -> datetime:
    return next(c for c in CONVERSATIONS if c.key == conversation).turns()[-1].ts


def test_a_support_history_of_sixty_turns_or_more_from_january_to_august() -> None:
    said = turns()
    assert len(said) >= 60
    assert said[0].ts.month == 1 and said[-1].ts.month == 8
    assert all(a.ts <= b.ts for a, b in zip(said, said[1:]))
    assert {t.role for t in said} == {"user", "assistant", "tool"}


def test_six_facts_move_in_seven_changes_some_ended_some_retired() -> None:
    changes = _changes()
    assert len(changes) >= 7
    assert len({new.predicate for _, new in changes}) >= 6
    closes = Counter(new.close for _, new in changes)
    assert closes["ended"] >= 3 and closes["retired"] >= 2, closes
    # A retirement corrects a value that never held, so the right one held from the same
    # instant; an ending starts the new value later.
    for old, new in changes:
        if new.close == "retired":
            assert new.valid_from == old.valid_from
        else:
            assert new.valid_from > old.valid_from


def test_every_fact_value_is_said_in_the_conversation_it_is_written_from() -> None:
    for event in FACT_EVENTS:
        conversation = next(c for c in CONVERSATIONS if c.key == event.conversation)
        assert any(norm(event.value) in norm(text) for _, text in conversation.lines), event


def test_every_superseded_value_comes_up_again_after_its_replacement() -> None:
    said = turns()
    for old, new in _changes():
        replaced_at = _last_ts(new.conversation)
        later = [t for t in said if t.ts > replaced_at and norm(old.value) in norm(t.text)]
        assert later, f"{old.value!r} is never mentioned after {new.conversation}"


def test_twenty_questions_or_more_with_authored_golds_traps_and_closures() -> None:
    assert len(QUESTIONS) >= 20
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    kinds = Counter(q.kind for q in QUESTIONS)
    assert set(kinds) == {"now", "past", "stable", "unanswerable"} and kinds["unanswerable"] >= 2
    assert {q.closure for q in QUESTIONS} == {"ended", "retired", ""}
    for q in QUESTIONS:
        assert q.asked_at <= END
        if q.kind == "unanswerable":
            assert q.gold == q.trap == q.closure == ""
        elif q.kind == "stable":
            assert q.gold and q.trap == q.closure == ""
        else:
            assert q.gold and q.trap and q.closure and norm(q.gold) != norm(q.trap)


def test_each_gold_and_trap_is_in_the_turns_said_before_its_question() -> None:
    said = turns()
    for q in QUESTIONS:
        visible = norm(" ".join(t.text for t in said if t.ts <= q.asked_at))
        for value in (q.gold, q.trap):
            if value:
                assert norm(value) in visible, (q.id, value)


def test_a_now_questions_trap_is_the_value_it_replaced_and_is_repeated_later() -> None:
    """Recency points the wrong way: by the time the question is asked, the trap has been
    said again after the gold was last established."""
    said = turns()
    closed = {(old.value, new.value) for old, new in _changes()}
    for q in (q for q in QUESTIONS if q.kind == "now"):
        assert any(norm(q.trap) in norm(old) and norm(q.gold) in norm(new)
                   for old, new in closed), q.id
        mentions = [t.ts for t in said if t.ts <= q.asked_at and norm(q.trap) in norm(t.text)]
        first_gold = min(t.ts for t in said if norm(q.gold) in norm(t.text))
        assert max(mentions) > first_gold, q.id


def test_ordinary_turns_name_no_fact_and_no_contact_channel() -> None:
    values = {norm(v) for q in QUESTIONS for v in (q.gold, q.trap) if v}
    values |= {norm(e.value) for e in FACT_EVENTS} | {"email", "sms", "inbox"}
    texts = [text for n in range(400) for _, text in filler_conversation(n, END).lines]
    assert len(set(texts)) > len(texts) // 4  # a long corpus is not a few lines repeated
    for text in texts:
        assert not any(v in norm(text) for v in values), text


@pytest.mark.parametrize("scale", [1, 2, 3, 10])
def test_scale_lengthens_the_corpus_with_ordinary_turns_only(scale: int) -> None:
    base, longer = turns(1), turns(scale)
    assert abs(len(longer) - scale * len(base)) < 4
    assert all(a.ts <= b.ts for a, b in zip(longer, longer[1:]))
    assert longer[-1].ts < END
    story = [t for t in longer if not t.conversation.startswith("ordinary-")]
    assert story == base


@pytest.mark.parametrize("bad", [0, 101, True, 2.0, "3"])
def test_a_bad_scale_is_refused_by_name(bad: object) -> None:
    with pytest.raises(ValueError, match="scale"):
        turns(bad)  # type: ignore[arg-type]
