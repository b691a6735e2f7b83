"""A failing model loses nothing: ``add()`` stores the call's turns and the claims its
rules read, says which turns wait for the model, and ``retry_extraction()`` reads them
later, once."""

from __future__ import annotations

import pytest

from memvara import ExtractionPendingError, LLMError, Memvara, NullLLM
from memvara.telemetry import MemoryRecorder

from .conftest import Clock, FakeLLM

TURNS = ["I live in Berlin", "my cat is called Miso and she hates rain"]


def test_the_turns_and_rule_claims_are_kept_and_the_rest_waits(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    llm.fail = True
    recorder = MemoryRecorder()
    with Memvara(clock=clock, llm=llm, user="maya", telemetry=recorder) as mem:
        with pytest.raises(ExtractionPendingError) as failed:
            mem.add(TURNS)
        assert isinstance(failed.value, LLMError) and failed.value.code == "extraction_pending"
        receipt = failed.value.receipt
        assert [c.text for c in receipt.added] == ["maya lives in Berlin"]  # the rule's claim
        assert len(mem.episodes()) == 2  # every turn is stored
        waiting = [e.id for e in mem.episodes() if e.content == TURNS[1]]
        assert failed.value.pending == receipt.pending == tuple(waiting)
        assert receipt.unextracted == 1 and "TimeoutError" in str(failed.value.__cause__)
        assert recorder.values("llm.failed") == [1.0]

        llm.fail = True  # still failing: the turns keep waiting
        with pytest.raises(ExtractionPendingError) as again:
            mem.retry_extraction()
        assert again.value.pending == tuple(waiting)

        llm.fail = False
        retried = mem.retry_extraction()
        assert [c.text for c in retried.added] == ["maya has pet Miso"]
        assert retried.added[0].sources == tuple(waiting) and retried.llm_calls == 1
        assert mem.retry_extraction().added == ()  # read once: nothing is written twice
        assert sorted(c.object for c in mem.get_all()) == ["Berlin", "Miso"]


def test_waiting_turns_are_found_beneath_the_scope_and_erased_with_it(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    llm.fail = True
    with Memvara(clock=clock, llm=llm) as mem:
        with pytest.raises(ExtractionPendingError):
            mem.add(TURNS[1], user="ann", session="s1")
        with pytest.raises(ExtractionPendingError):
            mem.add(TURNS[1], user="bob")
        llm.fail = False
        assert mem.retry_extraction(user="zed").added == ()  # nothing waits there
        assert [c.scope.user for c in mem.retry_extraction(user="ann").added] == ["ann"]
        mem.purge(user="bob")  # erased turns leave no mark to read
        assert mem.retry_extraction().added == ()
        assert len(llm.extract_calls) == 3


def test_a_memory_with_no_model_cannot_retry(clock: Clock, db_path: str) -> None:
    llm = FakeLLM()
    llm.fail = True
    with Memvara(db_path, clock=clock, llm=llm) as mem:
        with pytest.raises(ExtractionPendingError):
            mem.add(TURNS[1])
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        with pytest.raises(LLMError, match="1 turns wait for extraction, but this memory has no model"):
            mem.retry_extraction()
        assert mem.retry_extraction(user="nobody").added == ()
        with pytest.raises(ValueError, match="^limit: "):
            mem.retry_extraction(limit=0)


def test_a_failing_classifier_costs_the_class_not_the_turn(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "owns_cat", "Miso")]})

    def broken(name: str) -> None:
        raise RuntimeError("down")

    llm.classify_predicate = broken  # type: ignore[method-assign, assignment]
    with Memvara(clock=clock, llm=llm) as mem:
        assert [c.object for c in mem.add(TURNS[1]).added] == ["Miso"]
