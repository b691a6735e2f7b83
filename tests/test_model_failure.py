"""A failing model loses nothing: ``add()`` stores the call's turns and the claims its
rules read, says which turns wait for the model, and ``retry_extraction()`` reads them
later, once."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Callable, Sequence

import pytest

from memvara import (
    Claim, Episode, ExtractionPendingError, LLMError, Memvara, NullLLM, WriteReceipt, export_jsonl,
    import_jsonl,
)
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
        assert recorder.total("llm.calls", kind="extract") == receipt.llm_calls == 1

        llm.fail = True  # still failing: the turns keep waiting
        with pytest.raises(ExtractionPendingError) as again:
            mem.retry_extraction()
        assert again.value.pending == tuple(waiting)
        assert recorder.values("llm.failed") == [1.0, 1.0]  # the retry's failure is counted too
        assert recorder.total("llm.calls", kind="extract") == 2

        llm.fail = False
        retried = mem.retry_extraction()
        assert [c.text for c in retried.added] == ["maya has pet Miso"]
        assert retried.added[0].sources == tuple(waiting) and retried.llm_calls == 1
        assert mem.retry_extraction().added == ()  # read once: nothing is written twice
        assert sorted(c.object for c in mem.get_all()) == ["Berlin", "Miso"]


def test_a_turn_said_again_while_its_copy_waits_names_the_copy_as_pending(
    clock: Clock,
) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    llm.fail = True
    with Memvara(clock=clock, llm=llm, user="maya") as mem:
        with pytest.raises(ExtractionPendingError) as failed:
            mem.add(TURNS)
        llm.fail = False
        again = mem.add(TURNS[1])  # the caller tries again: a copy, not a second turn
        assert [s.reason for s in again.skipped] == ["duplicate"] and again.llm_calls == 0
        assert again.pending == failed.value.pending and "waiting=1" in repr(again)
        assert mem.add(TURNS[0]).pending == ()  # a copy of a turn already read waits for nothing
        llm.fail = True
        with pytest.raises(ExtractionPendingError) as both:  # a copy beside a new turn
            mem.add([TURNS[1], "My cat naps on the piano all day"])
        (new,) = [e.id for e in mem.episodes() if e.content.startswith("My cat")]
        assert both.value.pending == (new, *failed.value.pending)
        llm.fail = False
        assert [c.text for c in mem.retry_extraction().added] == ["maya has pet Miso"]
        assert mem.add(TURNS[1]).pending == ()


def test_a_retried_turn_is_about_whoever_said_it(clock: Clock, db_path: str) -> None:
    # one shared session, two speakers named by their messages: what each says about
    # "I" is about them, when the model reads it at add() and when it reads it later
    llm = FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso")],
                   "my dog is called Rex": [("user", "has_pet", "Rex")]})
    llm.fail = True
    said = [{"role": "user", "name": "ana", "content": "my cat is called Miso"},
            {"role": "user", "name": "Bruno", "content": "my dog is called Rex"},
            {"role": "user", "content": "my cat is called Miso, too"}]
    with Memvara(db_path, clock=clock, llm=llm, session="standup") as mem:
        with pytest.raises(ExtractionPendingError) as failed:
            mem.add(said, meta={"channel": "slack"})
        assert len(failed.value.pending) == 3
    llm.fail = False  # a later process, the marks read from the file
    llm.facts["my cat is called Miso, too"] = [("user", "has_pet", "Miso")]
    with Memvara(db_path, clock=clock, llm=llm, session="standup") as mem:
        retried = mem.retry_extraction()
        assert sorted(c.text for c in retried.added) == [
            "Bruno has pet Rex", "ana has pet Miso", "user has pet Miso"]
        assert [c.object for c in mem.history("bruno", "has_pet")] == ["Rex"]
        # and with the call's meta, as add() writes it on the claims it reads at once
        assert [c.meta for c in retried.added] == [{"channel": "slack"}] * 3


def test_a_schema_12_store_s_waiting_turns_are_read_after_migrating(clock: Clock, db_path: str) -> None:
    # what the code before speakers left: marks with no speaker column
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    llm.fail = True
    with Memvara(db_path, clock=clock, llm=llm, user="maya") as mem, \
            pytest.raises(ExtractionPendingError):
        mem.add({"role": "user", "name": "ana", "content": TURNS[1]})
    with sqlite3.connect(db_path) as conn:
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 12")
    conn.close()
    llm.fail = False
    with Memvara(db_path, clock=clock, llm=llm, user="maya") as mem:  # migrates
        # the old mark named no one: read as the scope's user's, as before
        assert [c.text for c in mem.retry_extraction().added] == ["maya has pet Miso"]
        llm.fail = True
        with pytest.raises(ExtractionPendingError):  # a new mark keeps its speaker
            mem.add({"role": "user", "name": "ana", "content": "my dog is called Rex"})
        llm.fail = False
        llm.facts["my dog is called Rex"] = [("user", "has_pet", "Rex")]
        assert [c.text for c in mem.retry_extraction().added] == ["ana has pet Rex"]


def test_waiting_turns_are_found_beneath_the_scope_and_erased_with_it(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    llm.fail = True
    with Memvara(clock=clock, llm=llm) as mem:
        with pytest.raises(ExtractionPendingError):
            mem.add(TURNS[1], user="ann", session="s1")
        with pytest.raises(ExtractionPendingError):
            mem.add(TURNS[1], user="bob")
        with pytest.raises(ExtractionPendingError) as again:
            mem.retry_extraction()
        assert len(again.value.pending) == 2  # both users' turns still wait
        llm.fail = False
        assert mem.retry_extraction(user="zed").added == ()  # nothing waits there
        assert [c.scope.user for c in mem.retry_extraction(user="ann").added] == ["ann"]
        mem.purge(user="bob")  # erased turns leave no mark to read
        assert mem.retry_extraction().added == ()
        assert len(llm.extract_calls) == 4


def test_an_export_carries_the_waiting_turns_to_the_store_that_imports_it(clock: Clock) -> None:
    llm = FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso")],
                   "my dog is called Rex": [("user", "has_pet", "Rex")]})
    llm.fail = True
    out = io.StringIO()
    with Memvara(clock=clock, llm=llm) as mem:
        with pytest.raises(ExtractionPendingError):
            mem.add([{"role": "user", "name": "Bruno", "content": "my dog is called Rex"},
                     {"role": "user", "content": "my cat is called Miso"}],
                    user="ann", session="s1", meta={"channel": "slack"})
        with pytest.raises(ExtractionPendingError):
            mem.add("my cat is called Miso", user="bob")
        assert export_jsonl(mem, out)["waiting"] == 3
        ann = io.StringIO()
        assert export_jsonl(mem.scope(user="ann"), ann)["waiting"] == 2  # the subtree's only
    marks = [json.loads(line) for line in out.getvalue().splitlines()
             if '"type":"waiting"' in line]
    assert [(m["speaker"], m["meta"], m["reason"]) for m in marks] == [
        ("Bruno", {"channel": "slack"}, "TimeoutError"),
        (None, {"channel": "slack"}, "TimeoutError"), (None, None, "TimeoutError")]
    llm.fail = False
    with Memvara(clock=clock, llm=llm) as other:
        assert import_jsonl(other, io.StringIO(out.getvalue()))["waiting"] == 3
        again = io.StringIO()
        export_jsonl(other, again)
        assert again.getvalue().splitlines()[1:] == out.getvalue().splitlines()[1:]  # as they were
        retried = other.retry_extraction()
        assert sorted((c.text, c.scope.user, tuple(c.meta.items())) for c in retried.added) == [
            ("Bruno has pet Rex", "ann", (("channel", "slack"),)),
            ("ann has pet Miso", "ann", (("channel", "slack"),)),
            ("bob has pet Miso", "bob", ())]
        assert other.retry_extraction().added == ()


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


def test_a_failing_entity_resolver_costs_the_alias_not_the_turn(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("user", "has_pet", "Miso")]})
    asked: list[str] = []

    def down(surface: str, candidates: list[str]) -> str:
        asked.append(surface)
        raise LLMError("anthropic: InternalServerError: Error code: 500")

    llm.resolve_entity = down  # type: ignore[attr-defined]
    with Memvara(clock=clock, llm=llm, user="maya", resolve_entities=True) as mem:
        mem.remember("maya", "has_pet", "Rex")  # a name to resolve against
        receipt = mem.add(TURNS)
        assert asked == ["Miso"]
        assert sorted(c.text for c in receipt.added) == ["maya has pet Miso", "maya lives in Berlin"]
        assert len(mem.episodes()) == 2 and receipt.pending == ()


def test_a_classification_that_is_no_predicate_spec_is_no_answer(clock: Clock) -> None:
    llm = FakeLLM({TURNS[1]: [("Miso", "hides_from", "rain")],
                   "and from thunder": [("Miso", "hides_from", "thunder")]})
    llm.classify_predicate = lambda name: {"cardinality": "one"}  # type: ignore[method-assign, assignment, return-value]
    with Memvara(clock=clock, llm=llm) as mem:
        assert [c.text for c in mem.add(TURNS[1]).added] == ["Miso hides from rain"]
        second = mem.add("and from thunder")  # the default, MANY: both values hold
        assert [c.object for c in second.added] == ["thunder"] and second.closed == ()
        assert not mem.registry.is_known("hides_from")  # nothing unusable was kept


class _Meanwhile(FakeLLM):
    """A model during whose call something else happens to the store."""

    def __init__(self, facts: dict[str, list[tuple[str, str, str]]]) -> None:
        super().__init__(facts)
        self.meanwhile: list[Callable[[], object]] = []

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        claims = super().extract(turns)
        while self.meanwhile:
            self.meanwhile.pop(0)()
        return claims


def _waiting(mem: Memvara, llm: _Meanwhile, turns: list[str], session: str | None = None,
             ) -> tuple[str, ...]:
    llm.fail = True
    with pytest.raises(ExtractionPendingError) as failed:
        mem.add(turns, session=session)
    llm.fail = False
    return failed.value.pending


def test_a_turn_purged_while_the_model_reads_it_is_not_written(clock: Clock, db_path: str) -> None:
    llm = _Meanwhile({TURNS[1]: [("user", "has_pet", "Miso")]})
    with Memvara(db_path, clock=clock, llm=llm, user="maya") as mem, \
            Memvara(db_path, clock=clock, llm=llm) as other:
        _waiting(mem, llm, [TURNS[1]], session="s1")
        llm.meanwhile.append(lambda: other.purge(user="maya", session="s1"))
        assert mem.retry_extraction().added == ()
        assert other.get_all(user="maya", session="s1") == [] and other.count() == 0


def test_a_turn_scrubbed_while_the_model_reads_it_is_read_again(clock: Clock, db_path: str) -> None:
    turn = "my sister Zorblatt moved to Quito"
    llm = _Meanwhile({turn: [("Zorblatt", "lives_in", "Quito")]})
    with Memvara(db_path, clock=clock, llm=llm, user="maya") as mem, \
            Memvara(db_path, clock=clock, llm=llm, user="maya") as other:
        mem.remember("Zorblatt", "likes", "tea")
        [waiting] = _waiting(mem, llm, [turn])
        llm.meanwhile.append(lambda: other.forget_subject("Zorblatt", reason="asked",
                                                          requested_by="maya"))
        assert mem.retry_extraction().added == ()  # read before the scrub: not written
        assert mem.get_all() == []
        assert mem.retry_extraction().added == ()  # the scrubbed text is read, and it still waited
        assert llm.extract_calls[-1] == ["my sister [erased] moved to Quito"]
        assert mem.retry_extraction().llm_calls == 0  # and now it does not


def test_two_retries_at_once_write_a_turn_s_claims_once(clock: Clock, db_path: str) -> None:
    llm = _Meanwhile({TURNS[1]: [("user", "has_pet", "Miso")]})
    with Memvara(db_path, clock=clock, llm=llm, user="maya") as mem, \
            Memvara(db_path, clock=clock, llm=llm, user="maya") as other:
        _waiting(mem, llm, TURNS)
        inner: list[WriteReceipt] = []
        llm.meanwhile.append(lambda: inner.append(other.retry_extraction()))
        outer = mem.retry_extraction()
        assert [c.text for c in inner[0].added] == ["maya has pet Miso"]
        assert outer.added == outer.reinforced == ()
        [claim] = mem.get_all(predicate="has_pet")
        assert claim.observations == 1


def test_a_model_claim_no_write_could_take_is_dropped_and_the_rest_kept(clock: Clock) -> None:
    turn = "my sister Zorblatt moved to Quito"

    class Sloppy(FakeLLM):  # a user's own model, whose claims nothing validated
        def extract(self, turns: Sequence[Episode]) -> list[Claim]:
            cite = (turns[0].id,)
            return [Claim("Zorblatt", "--", "Quito", sources=cite),
                    Claim("Zorblatt", "lives\x00in", "Quito", sources=cite),
                    Claim("Zorblatt", "likes", "rain", sources=None),  # type: ignore[arg-type]
                    Claim("Zorblatt", "likes", "tea", sources=([turns[0].id],)),  # type: ignore[arg-type]
                    Claim("Zorblatt", "lives_in", "Quito", sources=cite)]

    with Memvara(clock=clock, llm=Sloppy(), user="maya") as mem:
        receipt = mem.add(["I live in Berlin", turn])  # the turns, the rule's claim, the rest
        said = {e.content: e.id for e in mem.episodes()}
        assert sorted((c.text, c.sources) for c in receipt.added) == [
            ("Zorblatt likes rain", (said[turn],)), ("Zorblatt likes tea", (said[turn],)),
            ("Zorblatt lives in Quito", (said[turn],)),
            ("maya lives in Berlin", (said["I live in Berlin"],))]
