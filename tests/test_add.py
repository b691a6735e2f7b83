"""``add()``: turns become episodes, and the facts in them claims, through four tiers.

A call-counting fake model stands in for tier 2, so each test can say exactly when the
model is consulted: never for filler, duplicates or what the rules read; once per
``add()`` for everything else; once, ever, to classify a predicate it has not seen.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence

import pytest

from memvara import STATES, Claim, Episode, InvalidArgumentError, Memvara, PredicateSpec
from memvara.llm import DegradedExtractionWarning, LLMError

from .conftest import JUN, NOW, Clock, FakeLLM


@pytest.fixture
def fake() -> FakeLLM:
    return FakeLLM()


@pytest.fixture
def quiet_mem(clock: Clock, fake: FakeLLM) -> Iterator[Memvara]:
    with Memvara(clock=clock, llm=fake) as mem:
        yield mem


def test_a_first_person_fact_becomes_a_claim_citing_its_turn(quiet_mem: Memvara, fake: FakeLLM) -> None:
    receipt = quiet_mem.add("I live in Berlin", ts=JUN)
    (claim,) = receipt.added
    assert (claim.subject, claim.predicate, claim.object) == ("user", "lives_in", "Berlin")
    assert claim.valid_from == JUN and claim.recorded_at == NOW  # said in June, learned now
    assert claim.extractor == "rules:v1"
    (source,) = claim.sources
    episode = quiet_mem.store.get_episode(source, quiet_mem.default_scope)
    assert episode is not None and episode.content == "I live in Berlin" and episode.ts == JUN
    assert fake.extract_calls == []  # the rules read it; no model
    assert receipt.llm_calls == 0 and quiet_mem.stats()["episodes"] == 1


def test_a_later_move_ends_the_earlier_home(quiet_mem: Memvara) -> None:
    quiet_mem.add("I live in Berlin", ts=JUN)
    receipt = quiet_mem.add("I moved to Lisbon!")
    assert [c.object for c in receipt.added] == ["Lisbon"]
    assert [(c.object, c.state) for c in receipt.closed] == [("Berlin", "ended")]
    assert [c.object for c in quiet_mem.get_all()] == ["Lisbon"]


def test_filler_is_kept_as_an_episode_but_not_mined(quiet_mem: Memvara, fake: FakeLLM) -> None:
    receipt = quiet_mem.add(["ok thanks", "\U0001f44d", "hello"])
    assert [(s.content, s.reason) for s in receipt.skipped] == [
        ("ok thanks", "ack_only"), ("\U0001f44d", "emoji_only"), ("hello", "greeting")]
    assert fake.extract_calls == []
    assert quiet_mem.stats()["episodes"] == 3 and quiet_mem.count() == 0


def test_exact_and_near_duplicates_are_skipped_and_not_stored_again(quiet_mem: Memvara) -> None:
    quiet_mem.add("I live in Berlin")
    receipt = quiet_mem.add(["I live in Berlin", "i live in berlin", "I work at Acme", "I work at Acme"])
    assert [(s.content, s.reason) for s in receipt.skipped] == [
        ("I live in Berlin", "duplicate"), ("I work at Acme", "duplicate"),
        ("i live in berlin", "near_duplicate")]
    assert quiet_mem.stats()["episodes"] == 2
    assert sorted(c.object for c in quiet_mem.get_all()) == ["Acme", "Berlin"]


def test_everything_the_rules_miss_goes_to_the_model_in_one_call(quiet_mem: Memvara, fake: FakeLLM) -> None:
    fake.facts = {"My sister Jo is a nurse in Leeds": [("Jo", "works_as", "nurse")],
                  "We adopted a beagle called Rex": [("user", "has_pet", "Rex")]}
    receipt = quiet_mem.add(["I live in Berlin", "My sister Jo is a nurse in Leeds",
                             "thanks!", "We adopted a beagle called Rex"])
    assert fake.extract_calls == [["My sister Jo is a nurse in Leeds", "We adopted a beagle called Rex"]]
    assert receipt.llm_calls == 1
    assert sorted(c.object for c in receipt.added) == ["Berlin", "Rex", "nurse"]
    by_object = {c.object: c for c in receipt.added}
    rex_turn = quiet_mem.store.get_episode(by_object["Rex"].sources[0], quiet_mem.default_scope)
    assert rex_turn is not None and rex_turn.content == "We adopted a beagle called Rex"
    assert by_object["nurse"].predicate == "job_title"  # the registry folds the model's alias


def test_an_unknown_predicate_is_classified_once_ever(db_path: str, clock: Clock) -> None:
    fake = FakeLLM({"Our billing address is Coldharbour Road": [("account", "billing_address", "Coldharbour Road")],
                    "Billing moved to Bramble Cottage": [("account", "billing_address", "Bramble Cottage")]})
    with Memvara(db_path, clock=clock, llm=fake) as mem:
        mem.add("Our billing address is Coldharbour Road")
        assert fake.classify_calls == ["billing_address"]
    fake.classify_calls.clear()
    with Memvara(db_path, clock=clock, llm=fake) as mem:  # a fresh process reuses the answer
        clock.advance(days=1)
        mem.add("Billing moved to Bramble Cottage")
        assert fake.classify_calls == []
        assert [c.object for c in mem.get_all()] == ["Bramble Cottage"]  # ONE: it superseded


def test_with_no_model_construction_warns_once_and_add_counts_what_nobody_read(clock: Clock) -> None:
    with pytest.warns(DegradedExtractionWarning, match="unextracted") as caught:
        mem = Memvara(clock=clock)
    assert caught[0].filename == __file__  # the caller's line, not one inside memvara
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # add() itself does not warn again
        receipt = mem.add(["My order hasn't arrived", "I live in Oslo", "ok"])
        assert mem.add("Can you check ticket 4411?").unextracted == 1
    assert receipt.unextracted == 1 and len(receipt.skipped) == 1
    assert [c.object for c in receipt.added] == ["Oslo"]
    mem.close()


def test_choosing_no_model_explicitly_is_not_warned_about(clock: Clock) -> None:
    from memvara import NullLLM

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Memvara(clock=clock, llm=NullLLM()) as mem:
            assert mem.add("Can you check ticket 4411?").unextracted == 1


def test_a_failing_model_keeps_the_turns_and_the_rule_claims(quiet_mem: Memvara, fake: FakeLLM) -> None:
    fake.fail = True
    with pytest.raises(LLMError, match="timed out") as failed:
        quiet_mem.add(["I live in Berlin", "My sister is a nurse"])
    assert quiet_mem.stats()["episodes"] == 2 and quiet_mem.count(states=STATES) == 1
    assert len(failed.value.receipt.pending) == 1  # type: ignore[attr-defined]
    fake.fail = False
    assert quiet_mem.retry_extraction().pending == ()  # read again; it states no fact


def test_malformed_model_claims_are_dropped_not_fatal(quiet_mem: Memvara, fake: FakeLLM) -> None:
    class Sloppy(FakeLLM):
        def extract(self, turns: Sequence[Episode]) -> list[Claim]:
            super().extract(turns)
            return [Claim("", "likes", "x", sources=(turns[0].id,)),  # empty subject
                    "not a claim",  # type: ignore[list-item]
                    Claim("user", "likes", "tea", sources=("made-up",)),  # unknown source
                    Claim("user", "likes", "jazz", confidence=7.0, sources=(turns[0].id,))]

    mem = Memvara(clock=Clock(), llm=Sloppy())
    receipt = mem.add("Tea and jazz, always")
    assert [c.object for c in receipt.added] == ["tea"]  # the other three were dropped
    (source,) = receipt.added[0].sources  # an unknown source is replaced by the real turn
    turn = mem.store.get_episode(source, mem.default_scope)
    assert turn is not None and turn.content == "Tea and jazz, always"
    mem.close()


def test_roles_and_message_shapes(quiet_mem: Memvara, fake: FakeLLM) -> None:
    receipt = quiet_mem.add([
        {"role": "user", "content": "I work at Acme"},
        {"role": "assistant", "content": "I live in the cloud"},  # not the user's fact
        {"role": "user", "content": [{"type": "text", "text": "I speak Welsh"}]},
        Episode("I like tea", role="user", ts=JUN),
    ])
    assert sorted(c.object for c in receipt.added) == ["Acme", "Welsh", "tea"]
    assert fake.extract_calls == [["I live in the cloud"]]
    assert quiet_mem.add("I live in Oslo", role="system").added == ()  # rules read user turns only


def test_an_openai_tool_call_turn_passes_through_as_a_skipped_empty_turn(
        quiet_mem: Memvara, fake: FakeLLM) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    receipt = quiet_mem.add([  # an agent loop's messages, as the OpenAI SDK gives them
        {"role": "user", "content": "I live in Oslo"},
        {"role": "assistant", "content": None, "tool_calls": [call]},  # was refused: content None
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ])
    assert [c.object for c in receipt.added] == ["Oslo"]
    assert [(s.content, s.reason) for s in receipt.skipped] == [("", "empty")]
    with pytest.raises(InvalidArgumentError, match=r"^messages\[0\]\.content: expected a string"):
        quiet_mem.add([{"role": "assistant", "content": None}])  # no tool call: still a mistake


def test_an_empty_turn_is_skipped_as_empty_not_as_an_echo(quiet_mem: Memvara) -> None:
    assert [(s.content, s.reason) for s in quiet_mem.add("").skipped] == [("", "empty")]


@pytest.mark.parametrize(("messages", "kwargs", "argument"), [
    (None, {}, "messages"),
    (42, {}, "messages"),
    (b"bytes", {}, "messages"),
    ([["nested"]], {}, "messages[0]"),
    ([{"role": "user", "content": {"deep": {"er": 1}}}], {}, "messages[0].content"),
    ([{"role": "user", "content": [{"type": "image"}]}], {}, "messages[0].content[0]"),
    ([{"role": "narrator", "content": "hi"}], {}, "messages[0].role"),
    ("hello", {"role": "robot"}, "role"),
    ("hello", {"ts": "yesterday"}, "ts"),
    (["ok", 7], {}, "messages[1]"),
    (["x" * 5_000_001], {}, "messages[0]"),
    (["a\x00b"], {}, "messages[0]"),
    (["\ud800"], {}, "messages[0]"),
])
def test_bad_messages_are_refused_and_nothing_is_written(
    quiet_mem: Memvara, messages: object, kwargs: dict[str, object], argument: str
) -> None:
    quiet_mem.add("I live in Berlin")
    with pytest.raises(InvalidArgumentError) as caught:
        quiet_mem.add(messages, **kwargs)  # type: ignore[call-overload]
    assert caught.value.argument == argument
    assert quiet_mem.stats()["episodes"] == 1 and quiet_mem.count() == 1


def test_the_receipt_reads_at_a_glance(quiet_mem: Memvara) -> None:
    quiet_mem.add("I live in Berlin")
    receipt = quiet_mem.add(["I moved to Lisbon", "I work at Acme", "ok thanks"])
    assert repr(receipt).startswith("<WriteReceipt +2 ~0 -1 skip=1 llm=0 ")


def test_telemetry_counts_what_the_fast_path_read_missed_and_dropped(clock: Clock) -> None:
    from memvara.telemetry import MemoryRecorder

    rec = MemoryRecorder()
    chinese = "\u4f60\u597d\uff0c\u6211\u4f4f\u5728\u5317\u4eac"
    model = FakeLLM({chinese: [("user", "hometown", "Beijing")]})
    with Memvara(clock=clock, llm=model, telemetry=rec) as mem:
        mem.add(["I live in Berlin", chinese, "ok thanks"])
    assert rec.total("llm.calls", kind="classify") == 1  # "hometown" was new
    assert rec.total("fast.hit", script="latin") == 1  # read by rule, no model
    assert rec.total("fast.miss", script="han") == 1  # fell through to the model
    assert rec.total("gate.drop", reason="ack_only") == 1
    assert rec.total("llm.calls", kind="extract") == 1
    assert rec.total("fast.miss") == 1 and rec.total("fast.hit") == 1


def test_redaction_happens_before_anything_is_stored_indexed_or_embedded(clock: Clock) -> None:
    from memvara.redact import BasicRedactor
    from memvara.telemetry import MemoryRecorder

    rec = MemoryRecorder()
    with Memvara(clock=clock, redactor=BasicRedactor(), telemetry=rec, llm=FakeLLM()) as mem:
        receipt = mem.add(["write to ann@example.com or call 555-123-4567", "I live in Berlin"])
        stored = [mem.store.get_episode(c.sources[0], mem.default_scope) for c in receipt.added]
        texts = [r[0] for r in mem.store._query("SELECT content FROM episodes")]  # type: ignore[attr-defined]
    assert "write to [email] or call [phone]" in texts
    assert not any("ann@example.com" in t or "4567" in t for t in texts)
    assert stored[0] is not None and stored[0].content == "I live in Berlin"
    assert rec.total("redact.inspected", field="content") == 2
    assert rec.total("redact.changed", field="content", script="latin") == 1


def test_redaction_needs_no_recorder(clock: Clock) -> None:
    from memvara.redact import BasicRedactor

    with Memvara(clock=clock, redactor=BasicRedactor(), llm=FakeLLM()) as mem:
        mem.add("mail me at ann@example.com")
        texts = [r[0] for r in mem.store._query("SELECT content FROM episodes")]  # type: ignore[attr-defined]
    assert texts == ["mail me at [email]"]


def test_a_redactor_that_returns_no_text_is_named_and_nothing_is_stored(clock: Clock) -> None:
    class Broken:
        def redact(self, text: str) -> str:
            return None  # type: ignore[return-value]  # forgot to return the text

    with Memvara(clock=clock, redactor=Broken(), llm=FakeLLM()) as mem:
        with pytest.raises(InvalidArgumentError) as caught:  # was AttributeError from deep inside
            mem.add("I live in Berlin")
        assert str(caught.value) == "redactor: redact() must return the text as a string, got NoneType"
        assert mem.stats()["episodes"] == 0


def test_a_backends_own_llm_error_is_the_cause_not_rewrapped(quiet_mem: Memvara, fake: FakeLLM) -> None:
    def broken(turns: Sequence[Episode]) -> list[Claim]:
        raise LLMError("HTTP 529 from the provider")

    fake.extract = broken  # type: ignore[method-assign]
    with pytest.raises(LLMError, match="529") as caught:
        quiet_mem.add("My sister is a nurse")
    cause = caught.value.__cause__
    assert type(cause) is LLMError and cause.__cause__ is None  # the backend's own error
    assert quiet_mem.stats()["episodes"] == 1  # kept, waiting for retry_extraction()


def test_a_claim_without_a_usable_predicate_is_dropped_without_asking_the_model(
    quiet_mem: Memvara, fake: FakeLLM
) -> None:
    fake.facts = {"My sister is a nurse": [("sister", " ", "nurse"), ("sister", "job_title", "nurse")]}
    receipt = quiet_mem.add("My sister is a nurse")
    assert [(c.subject, c.predicate) for c in receipt.added] == [("sister", "job_title")]
    assert fake.classify_calls == []


def test_an_episode_without_a_timestamp_is_said_now(quiet_mem: Memvara) -> None:
    (claim,) = quiet_mem.add([Episode("I live in Oslo")]).added
    assert claim.valid_from == NOW


def test_near_duplicates_are_caught_across_processes_and_many_scopes(
    db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memvara._write.ingest as ingest

    monkeypatch.setattr(ingest, "RECENT_SCOPES", 1)  # every new scope evicts the last
    with Memvara(db_path, clock=clock, llm=FakeLLM()) as mem:
        mem.add("I live in Berlin", user="ann")
        mem.add("I live in Oslo", user="bob")
        clock.advance(minutes=1)
        again = mem.add("i live in berlin", user="ann")  # ann's turns reread from the store
        assert [s.reason for s in again.skipped] == ["near_duplicate"]
    with Memvara(db_path, clock=clock, llm=FakeLLM()) as mem:  # a fresh process
        assert [s.reason for s in mem.add("I LIVE IN OSLO", user="bob").skipped] == ["near_duplicate"]
        assert mem.stats(user="bob")["episodes"] == 1


def test_turns_get_their_own_sidecar_once_claims_have_vectors(db_path: str, clock: Clock) -> None:
    from .conftest import embed_all

    with Memvara(db_path, clock=clock, llm=FakeLLM()) as mem:
        mem.remember("user", "likes", "tea")
        embed_all(mem)  # the claims' sidecar now fixes the store's width
        mem.add("I live in Oslo")
        assert mem.stats()["embeddings"] == 2
    from pathlib import Path
    assert Path(db_path + ".episodes.vecs").exists()


def test_a_classification_with_no_usable_answer_is_not_kept(db_path: str, clock: Clock) -> None:
    class Unsure(FakeLLM):
        def classify_predicate(self, name: str) -> PredicateSpec | None:  # type: ignore[override]
            self.classify_calls.append(name)
            return None

    facts = {"Billing is at Coldharbour Road": [("account", "billing_address", "Coldharbour Road")],
             "Billing is at Bramble Cottage": [("account", "billing_address", "Bramble Cottage")]}
    model = Unsure(facts)
    with Memvara(db_path, clock=clock, llm=model) as mem:
        mem.add("Billing is at Coldharbour Road")
        clock.advance(minutes=1)
        mem.add("Billing is at Bramble Cottage")
        assert model.classify_calls == ["billing_address", "billing_address"]  # asked again
        assert sorted(c.object for c in mem.get_all()) == ["Bramble Cottage", "Coldharbour Road"]
        assert "billing_address" not in mem.registry


def test_a_messages_name_is_redacted_as_its_text_is(clock: Clock) -> None:
    """A message's ``name`` becomes the subject of what it says: an address there must
    not reach the store either."""
    from memvara.redact import BasicRedactor
    from memvara.telemetry import MemoryRecorder

    rec = MemoryRecorder()
    with Memvara(clock=clock, redactor=BasicRedactor(), telemetry=rec, llm=FakeLLM()) as mem:
        receipt = mem.add([{"role": "user", "name": "ann@example.com", "content": "I live in Berlin"},
                           {"role": "user", "name": "bo", "content": "I live in Oslo"}])
        assert [c.subject for c in receipt.added] == ["[email]", "bo"]
        rows = mem.store._query("SELECT subject, text FROM claims")  # type: ignore[attr-defined]
    assert not any("ann@example.com" in str(row) for row in rows)
    assert rec.total("redact.inspected", field="name") == 2
    assert rec.total("redact.changed", field="name", script="latin") == 1
