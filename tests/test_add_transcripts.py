"""Two whole conversations through ``add()`` (see ``transcripts.py``).

The first checks the write path's economy and correctness on a chatty transcript with a
perfect extractor: the model is called at most twice, and exactly the current value of
every fact is left live. The second reproduces the spec's finding about the fast path on
prose it cannot read: with no model, a support conversation yields no claims at all.
"""

from __future__ import annotations

import pytest

from memvara import Memvara
from memvara.llm import DegradedExtractionWarning

from .conftest import Clock, FakeLLM
from .transcripts import CURRENT, ORACLE, personal_chat, support_desk


def test_a_chatty_transcript_costs_at_most_two_model_calls_and_leaves_nothing_stale(
    clock: Clock,
) -> None:
    oracle = FakeLLM(ORACLE)
    with Memvara(clock=clock, llm=oracle) as mem:
        receipt = mem.add(personal_chat())
        calls = len(oracle.extract_calls) + len(oracle.classify_calls)
        assert calls <= 2
        assert (len(oracle.extract_calls), oracle.classify_calls) == (1, ["supports"])
        live = {c.predicate: c.object for c in mem.get_all()}
        assert live == CURRENT  # 10/10 current, and no stale value left live
        assert mem.count() == 10
        assert [c.object for c in mem.history("user", "lives_in")] == ["Berlin", "Lisbon", "Porto"]
        assert receipt.llm_calls == 1


def test_one_turn_per_add_costs_a_call_per_turn_the_rules_and_gate_pass_on(clock: Clock) -> None:
    """The batching is most of the economy: fed turn by turn, every fact the rules do not
    read and every substantive question costs its own call."""
    oracle = FakeLLM(ORACLE)
    with Memvara(clock=clock, llm=oracle) as mem:
        for turn in personal_chat():
            clock.advance(seconds=1)
            mem.add([turn])
        assert {c.predicate: c.object for c in mem.get_all()} == CURRENT
    per_turn = len(oracle.extract_calls)
    assert all(len(batch) == 1 for batch in oracle.extract_calls)
    # 12 fact turns the rules miss + 42 questions and replies: the chit-chat comes round
    # again every 25 minutes, past the window in which a repeat is a copy, so each time
    # it is a turn of its own (within one call, or within the window, it would be one).
    assert per_turn == 54


def test_a_support_conversation_yields_no_claims_without_a_model(clock: Clock) -> None:
    with pytest.warns(DegradedExtractionWarning):
        mem = Memvara(clock=clock, user="customer")
    with mem:
        receipt = mem.add(support_desk())
        assert mem.count() == 0 and receipt.added == ()
        assert (receipt.unextracted, len(receipt.skipped)) == (26, 14)
        assert mem.stats() == {"episodes": 40, "claims": 0, "live_claims": 0,
                               "ended_claims": 0, "invalidated": 0, "embeddings": 40}
