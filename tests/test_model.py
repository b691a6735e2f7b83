"""The domain values: claims, scopes, receipts, states."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memvara import (
    STATES, Claim, Explanation, InvalidArgumentError, Memvara, Scope, Skip, WriteReceipt,
)

from .conftest import JAN, JUN, Clock


def test_state_is_derived_from_the_record() -> None:
    assert Claim("u", "p", "o").state == "live"
    assert Claim("u", "p", "o", valid_to=JUN).state == "ended"
    assert Claim("u", "p", "o", valid_to=JUN, invalidated_at=JUN).state == "retired"
    assert STATES == ("live", "ended", "retired")


def test_claims_are_hashable_values() -> None:
    a = Claim("u", "p", "o", meta={"k": [1, 2]})
    assert a == Claim("u", "p", "o", meta={"k": [1, 2]})
    assert len({a, Claim("u", "p", "o", meta={"k": [1, 2]})}) == 1


def test_scope_renders_and_validates() -> None:
    assert str(Scope()) == "<root>"
    assert str(Scope("t", "u", None, "s")) == "tenant=t/user=u/session=s"
    with pytest.raises(InvalidArgumentError, match="agent"):
        Scope(agent="")


def test_receipt_aliases_and_repr() -> None:
    c = Claim("u", "p", "o")
    receipt = WriteReceipt(added=(c,), ended=(c,), retired=(c,), skipped=(Skip("ok", "ack"),),
                           llm_calls=1, elapsed_ms=42.25)
    assert receipt.closed == (c, c) and receipt.invalidated == receipt.closed
    assert repr(receipt) == "<WriteReceipt +1 ~0 -2 skip=1 llm=1 42.2ms>"
    waiting = WriteReceipt(llm_calls=1, elapsed_ms=3.0, pending=("e1", "e2"))  # the model failed
    assert repr(waiting) == "<WriteReceipt +0 ~0 -0 skip=0 llm=1 waiting=2 3.0ms>"


def test_an_explanation_names_only_the_lists_that_found_the_result() -> None:
    by_text = Explanation(vector_rank=None, vector_score=None, bm25_rank=2, bm25_score=6.437,
                          fused=0.5, recency=0.98, confidence=0.9, salience=1.25, score=0.5513)
    by_vector = replace(by_text, vector_rank=1, vector_score=0.8123, bm25_rank=None,
                        bm25_score=None)
    assert by_text.summary() == "bm25#2(6.44) recency=0.98 conf=0.90 sal=1.25 -> 0.5513"
    assert by_vector.summary() == "vector#1(0.812) recency=0.98 conf=0.90 sal=1.25 -> 0.5513"


def test_a_new_claim_cannot_arrive_retired(clock: Clock) -> None:
    with Memvara(clock=clock) as mem:
        with pytest.raises(InvalidArgumentError, match="invalidated_at"):
            mem.remember_many([Claim("u", "p", "o", invalidated_at=JAN)])


def test_with_id_copies_every_field() -> None:
    from dataclasses import fields, replace

    from memvara.store.sqlite._rows import with_id

    full = Claim("u", "p", "o", valid_from=JAN, valid_to=JUN, recorded_at=JAN,
                 invalidated_at=JUN, invalidated_by="c2", polarity=-1, confidence=0.5,
                 memory_type="episodic", sources=("e1",), text="t", extractor="x",
                 meta={"k": 1}, scope=Scope(user="u"), id="old", valid_to_known_at=JUN,
                 observations=3)
    copied = with_id(full, "new")
    assert copied == replace(full, id="new")
    assert all(getattr(copied, f.name) == getattr(full, f.name) for f in fields(Claim) if f.name != "id")


def test_assemble_claim_equals_the_dataclass_built_from_the_same_fields() -> None:
    from dataclasses import astuple, fields

    from memvara._domain.model import assemble_claim

    full = Claim("u", "p", "o", valid_from=JAN, valid_to=JUN, recorded_at=JAN,
                 invalidated_at=JUN, invalidated_by="c2", polarity=-1, confidence=0.5,
                 memory_type="episodic", sources=("e1",), text="t", extractor="x",
                 meta={"k": 1}, scope=Scope(user="u"), id="c1-00000000",
                 valid_to_known_at=JUN, observations=3, salience=0.25)
    built = assemble_claim(*(getattr(full, f.name) for f in fields(Claim)))
    assert type(built) is Claim and built == full and astuple(built) == astuple(full)
    assert built.state == "retired" and hash(built) == hash(full)
    with pytest.raises(AttributeError):  # still frozen
        built.subject = "v"  # type: ignore[misc]


def test_assemble_scope_equals_the_dataclass_built_from_the_same_levels() -> None:
    from memvara._domain.model import assemble_scope

    for levels in ((None, None, None, None), ("t", "u", "a", "s"), (None, "u", None, "s")):
        built = assemble_scope(*levels)
        assert type(built) is Scope and built == Scope(*levels)
        assert hash(built) == hash(Scope(*levels)) and str(built) == str(Scope(*levels))
    with pytest.raises(AttributeError):  # still frozen
        built.user = "v"  # type: ignore[misc]


def test_a_claim_id_is_its_rowid_and_a_digest_of_what_it_says() -> None:
    import hashlib

    from memvara.store.sqlite._rows import claim_rowid, new_claim_id

    parts = ("t", "u", "", "", "User", "user", "lives_in", "Berlin", -1, 1_700_000, 1_700_001)
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=4).hexdigest()
    claim_id = new_claim_id(42, ("t", "u", "", ""), "User", "user", "lives_in", "Berlin",
                            -1, 1_700_000, 1_700_001)
    assert claim_id == f"c42-{digest}" and claim_rowid(claim_id) == 42
    assert new_claim_id(42, ("t", "u", "", ""), "User", "user", "lives_in", "Paris",
                        -1, 1_700_000, 1_700_001) != claim_id  # another claim at that rowid
