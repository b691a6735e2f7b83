"""Structured writes: contradictions settle on cardinality, aliases and folded names."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memvara import (
    BUILTIN_PREDICATES,
    Cardinality,
    Claim,
    ClaimNotFoundError,
    InvalidArgumentError,
    InvalidTimeError,
    Memvara,
    PredicateRegistry,
    PredicateSpec,
    Scope,
    Volatility,
    export_jsonl,
)
from memvara.store import STATES, SQLiteStore, TimeQuery

from .conftest import AUG, JAN, JUN, MAR, NOW, Clock
from .store_without import store_without


def objects(claims: list[Claim] | tuple[Claim, ...]) -> list[str]:
    return [c.object for c in claims]


def test_one_valued_predicate_keeps_one_live_value(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    assert objects(mem.get_all()) == ["Lisbon"]


def test_many_valued_predicate_accumulates(mem: Memvara) -> None:
    mem.remember("user", "likes", "sushi")
    receipt = mem.remember("user", "likes", "jazz")
    assert receipt.closed == ()
    assert sorted(objects(mem.get_all())) == ["jazz", "sushi"]


def test_unknown_predicates_default_to_many(mem: Memvara) -> None:
    mem.remember("account", "billing_address", "Coldharbour Road", valid_from=JAN, recorded_at=JAN)
    mem.remember("account", "billing_address", "Bramble Cottage", valid_from=AUG, recorded_at=AUG)
    assert objects(mem.get_all()) == ["Bramble Cottage", "Coldharbour Road"]


def test_declared_cardinality_makes_an_unknown_predicate_supersede(clock: Clock) -> None:
    registry = PredicateRegistry(BUILTIN_PREDICATES + (
        PredicateSpec("billing_address", Cardinality.ONE, Volatility.SLOW),
    ))
    with Memvara(registry=registry, clock=clock) as mem:
        mem.remember("account", "billing_address", "Coldharbour Road", valid_from=JAN, recorded_at=JAN)
        mem.remember("account", "billing_address", "Bramble Cottage", valid_from=AUG, recorded_at=AUG)
        assert objects(mem.get_all()) == ["Bramble Cottage"]


@pytest.mark.parametrize("alias", ["resides_in", "based_in", "moved_to", "Lives In", "lives-in"])
def test_aliases_are_one_slot(mem: Memvara, alias: str) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", alias, "Lisbon", valid_from=JUN, recorded_at=JUN)
    assert objects(receipt.ended) == ["Berlin"]
    assert receipt.added[0].predicate == "lives_in"
    assert objects(mem.history("user", alias)) == ["Berlin", "Lisbon"]


def test_folded_names_key_one_slot_and_reinforce(mem: Memvara) -> None:
    first = mem.remember("Alice", "works_at", "Acme Corp.", sources=["ep1"])
    again = mem.remember("ALICE", "works_at", "ACME, Inc.", sources=["ep2"])
    assert again.added == () and again.closed == ()
    (reinforced,) = again.reinforced
    assert reinforced.id == first.added[0].id
    assert reinforced.observations == 2
    assert reinforced.sources == ("ep1", "ep2")
    assert mem.count() == 1
    assert objects(mem.history("alice", "works_at")) == ["Acme Corp."]


def test_moving_back_is_a_new_interval_not_a_reinforcement(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAR, recorded_at=MAR)
    receipt = mem.remember("user", "lives_in", "Berlin", valid_from=JUN, recorded_at=JUN)
    assert len(receipt.added) == 1 and objects(receipt.ended) == ["Lisbon"]
    assert [(c.object, c.state) for c in mem.history("user", "lives_in")] == [
        ("Berlin", "ended"), ("Lisbon", "ended"), ("Berlin", "live")
    ]


def test_a_late_fact_about_the_past_is_bounded_by_the_later_value(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    # In August we learn she spent March to June in Paris.
    receipt = mem.remember("user", "lives_in", "Paris", valid_from=MAR, recorded_at=AUG)
    (paris,) = receipt.added
    assert paris.valid_to == JUN
    assert [(c.object, c.valid_to) for c in receipt.ended] == [("Berlin", MAR)]
    assert objects(mem.get_all()) == ["Lisbon"]
    assert objects(mem.get_all(valid_at=MAR + timedelta(days=1))) == ["Paris"]
    assert objects(mem.get_all(as_of=JUN + timedelta(days=1))) == ["Lisbon"]


def test_same_start_conflict_retires_the_older_record(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin")
    receipt = mem.remember("user", "lives_in", "Lisbon")  # same clock instant
    assert objects(receipt.retired) == ["Berlin"] and receipt.ended == ()
    assert objects(mem.get_all()) == ["Lisbon"]


def test_negative_polarity_ends_the_positive_claim_only(mem: Memvara) -> None:
    mem.remember("user", "likes", "sushi", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "likes", "jazz", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", "likes", "sushi", polarity=-1, valid_from=JUN, recorded_at=JUN)
    assert objects(receipt.ended) == ["sushi"]
    live = mem.get_all()
    assert sorted((c.object, c.polarity) for c in live) == [("jazz", 1), ("sushi", -1)]
    assert "not" in receipt.added[0].text


def test_negative_claim_on_one_valued_slot_does_not_close_other_values(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Lisbon", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", "lives_in", "Berlin", polarity=-1, valid_from=JUN, recorded_at=JUN)
    assert receipt.closed == ()
    assert mem.count() == 2


def test_receipt_counts_and_repr(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    assert receipt.closed == receipt.invalidated == receipt.ended + receipt.retired
    assert repr(receipt).startswith("<WriteReceipt +1 ~0 -1 skip=0 llm=0 ")
    assert receipt.elapsed_ms >= 0.0


def test_remember_keeps_text_meta_sources_and_extractor(mem: Memvara) -> None:
    (claim,) = mem.remember(
        "user", "likes", "tea", sources=["ep-1"], confidence=0.4, memory_type="episodic",
        extractor="rule:v1", text="The user likes green tea", meta={"mood": "calm", "weight": 3},
    ).added
    stored = mem.get(claim.id)
    assert stored == claim
    assert stored is not None
    assert stored.text == "The user likes green tea"
    assert stored.meta == {"mood": "calm", "weight": 3}
    assert stored.sources == ("ep-1",) and stored.extractor == "rule:v1"
    assert stored.confidence == pytest.approx(0.4) and stored.memory_type == "episodic"


def test_default_text_is_rendered_from_the_triple(mem: Memvara) -> None:
    (claim,) = mem.remember("user", "lives_in", "Lisbon").added
    assert claim.text == "user lives in Lisbon"
    assert claim.extractor == "remember"


def test_remember_many_settles_in_order_within_one_batch(mem: Memvara) -> None:
    receipt = mem.remember_many([
        Claim("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN),
        Claim("user", "likes", "jazz"),
        Claim("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN),
        Claim("user", "likes", "jazz"),
    ])
    assert objects(receipt.added) == ["Berlin", "jazz", "Lisbon"]
    assert objects(receipt.ended) == ["Berlin"] and objects(receipt.reinforced) == ["jazz"]
    assert sorted(objects(mem.get_all())) == ["Lisbon", "jazz"]


def test_remember_many_writes_named_scopes_and_defaults_to_the_callers(mem: Memvara) -> None:
    from memvara import Scope
    mem.remember_many([Claim("a", "likes", "x"), Claim("b", "likes", "y", scope=Scope(user="bob"))],
                      user="alice")
    assert objects(mem.get_all(user="alice")) == ["x"]
    assert objects(mem.get_all(user="bob")) == ["y"]


def _batch_across_scopes(mem: Memvara) -> list[tuple[object, ...]]:
    """Settle a batch over three users' scopes (one slot already held, one written twice)
    and return what it did, ids included."""
    from memvara import Scope
    ada, bob, cy = Scope(user="ada"), Scope(user="bob"), Scope(user="cy")
    mem.remember("me", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN, user="ada")
    receipt = mem.remember_many([
        Claim("me", "lives_in", "Lisbon", valid_from=JUN, scope=ada),  # ends Berlin
        Claim("me", "lives_in", "Oslo", valid_from=MAR, scope=bob),
        Claim("me", "likes", "tea", scope=bob),
        Claim("me", "lives_in", "Rome", valid_from=MAR, scope=cy),
        Claim("me", "lives_in", "Pisa", valid_from=JUN, scope=cy),  # twice: ends Rome
    ])
    return [
        *((c.id, c.object, c.scope.user) for c in receipt.added),
        *((c.id, c.object, c.valid_to) for c in receipt.ended),
        *((c.object, c.state, c.scope.user) for c in mem.history("me", "lives_in", user="cy")),
    ]


def test_a_batch_across_scopes_settles_as_with_a_store_of_the_bare_protocol(
    clock: Clock,
) -> None:
    # SQLiteStore reads the slots of many scopes in one statement (slot_claims_across) and
    # hands back bare ids for the writer's own claims (insert_claim_ids); a store with
    # neither settles the same batch to the same rows, slot by slot and scope by scope.
    with Memvara(clock=clock) as mem:
        fast = _batch_across_scopes(mem)
    assert [row[1] for row in fast[:5]] == ["Lisbon", "Oslo", "tea", "Rome", "Pisa"]
    assert [row[1:] for row in fast[5:7]] == [("Berlin", JUN), ("Rome", JUN)]
    assert fast[7:] == [("Rome", "ended", "cy"), ("Pisa", "live", "cy")]
    bare = store_without("slot_claims_across", "insert_claim_ids")()  # no BulkWriteStore
    with Memvara(store=bare, clock=Clock(NOW)) as mem:
        assert _batch_across_scopes(mem) == fast


_Row = tuple[str, str, "datetime | None", "str | None", tuple[str, ...], int]
_Receipt = tuple[tuple[_Row, ...], ...]  # added, reinforced, ended, retired
ADDED, REINFORCED, ENDED, RETIRED = range(4)


def _single_writes(
    mem: Memvara,
) -> tuple[list[_Receipt], list[tuple[str, str | None, list[str]]], list[object]]:
    """One write of each kind a single ``remember()`` settles (fresh, reinforced with a
    new source, ended, bounded by a later value, retired, superseded, and the write
    that brings the vector backlog due): each receipt, each new claim's ``why()``
    (closer, superseded), and what the store then holds."""
    writes = [
        mem.remember("me", "lives_in", "Berlin", valid_from=JAN, sources=["e1"]),
        mem.remember("me", "lives_in", "berlin", valid_from=MAR, sources=["e2"]),  # again
        mem.remember("me", "lives_in", "Lisbon", valid_from=JUN),  # ends Berlin
        mem.remember("me", "lives_in", "Oslo", valid_from=MAR),  # bounded by Lisbon
        mem.remember("me", "works_at", "Acme", valid_from=JAN),
        mem.remember("me", "works_at", "Initech", valid_from=MAR, close="retired"),
    ]
    (initech,) = writes[-1].added
    writes.append(mem.supersede(initech.id, Claim("me", "works_at", "Globex"), at=JUN))
    receipts = [
        tuple(tuple((c.id, c.object, c.valid_to, c.invalidated_by, c.sources, c.observations)
                    for c in part)
              for part in (w.added, w.reinforced, w.ended, w.retired))
        for w in writes
    ]
    whys: list[tuple[str, str | None, list[str]]] = []
    for claim_id in sorted({c.id for w in writes for c in w.added}):
        why = mem.why(claim_id)
        assert why is not None
        whys.append((claim_id, why.closed_by.id if why.closed_by else None,
                     [c.id for c in why.superseded]))
    store, now = mem.store, TimeQuery(known_at=10**18, valid_at=None)
    assert isinstance(store, SQLiteStore)
    held: list[object] = [
        [[c.id for c in store.claims_citing(e, Scope(), now)] for e in ("e1", "e2")],
        mem.stats(),  # "embeddings" counts the vectors stored
        store._meta("vectors_claims"),  # the rows at or below it all have theirs
        mem.search("where does me live", k=3),  # embeds and indexes what waits first
    ]
    return receipts, whys, held


def test_single_writes_settle_as_with_a_store_of_the_bare_protocol(
    monkeypatch: pytest.MonkeyPatch, clock: Clock,
) -> None:
    # SQLiteStore takes a single write in one call (write_claim); a store without it is
    # driven through slot_claims, insert_claims, end_claims and retire_claims, to the
    # same rows, receipts and provenance.
    import memvara._write.writer
    monkeypatch.setattr(memvara._write.writer, "EMBED_BATCH", 5)  # the fifth write embeds five
    with Memvara(clock=clock) as mem:
        fast = _single_writes(mem)
    receipts, whys, held = fast
    (berlin,) = receipts[0][ADDED]
    assert berlin[1:] == ("Berlin", None, None, ("e1",), 1)
    assert receipts[1] == ((), ((berlin[0], "Berlin", None, None, ("e1", "e2"), 2),), (), ())
    assert receipts[2][ENDED][0][1:3] == ("Berlin", JUN)
    assert [(c[1], c[2]) for part in receipts[3] for c in part] == [
        ("Oslo", JUN), ("Berlin", MAR)]  # Oslo, told late, ends where Lisbon starts
    ((acme, *_),), ((initech, *_),) = receipts[4][ADDED], receipts[5][ADDED]
    assert receipts[5][RETIRED] == ((acme, "Acme", None, initech, (), 1),)
    ((globex, *_),) = receipts[6][ADDED]
    assert receipts[6][ENDED] == ((initech, "Initech", JUN, None, (), 1),)
    assert (acme, initech, []) in whys and (initech, globex, [acme]) in whys
    citing, stats, watermark, _ = held
    assert citing == [[berlin[0]], [berlin[0]]]  # each source indexed once, on Berlin
    assert isinstance(stats, dict) and stats["embeddings"] == 5 and watermark == "5"
    assert held[3]  # the search found the live value
    bare = store_without("write_claim")()  # no SingleWriteStore
    with Memvara(store=bare, clock=Clock(NOW)) as mem:
        assert _single_writes(mem) == fast


def test_a_slot_is_settled_in_the_order_its_values_start(mem: Memvara) -> None:
    # Written in one order, starting in the other: the earlier-starting value is the one
    # a new observation reinforces, and closures come back in start order.
    june = mem.remember("me", "likes", "tea", valid_from=JUN).added[0]
    spring = mem.remember("me", "likes", "tea", valid_from=JAN, valid_to=MAR).added[0]
    again = mem.remember("me", "likes", "tea", valid_from=JAN + timedelta(days=1),
                         valid_to=AUG)
    assert [c.id for c in again.reinforced] == [spring.id] and again.added == ()
    paris = mem.remember("me", "lives_in", "Paris", valid_from=JUN).added[0]
    rome = mem.remember("me", "lives_in", "Rome", valid_from=JAN, valid_to=MAR).added[0]
    oslo = mem.remember("me", "lives_in", "Oslo", valid_from=JAN + timedelta(days=1),
                        close="retired")
    assert [c.id for c in oslo.retired] == [rome.id, paris.id]
    assert june.id != spring.id


def test_a_bad_settlement_is_refused_by_the_general_path_too(
    monkeypatch: pytest.MonkeyPatch, mem: Memvara,
) -> None:
    from memvara import StoreError
    from memvara.store.base import Settlement
    writer, store = mem._core.writer, mem._core.store
    claim = writer.build("me", "likes", "tea", mem.default_scope, writer.now())
    with pytest.raises(StoreError, match="no claim to insert or to reinforce"):
        with store.transaction():
            writer._write_generally(claim, "me", None, lambda found: Settlement(None, None, (), ()))
    assert mem.count() == 0


def test_remember_many_rejects_bad_items_and_writes_nothing(mem: Memvara) -> None:
    with pytest.raises(InvalidArgumentError, match=r"claims\[1\]"):
        mem.remember_many([Claim("a", "likes", "x"), "not a claim"])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError, match=r"claims\[1\]\.object"):
        mem.remember_many([Claim("a", "likes", "x"), Claim("a", "likes", "")])
    with pytest.raises(InvalidTimeError, match=r"claims\[2\]\.valid_to: must be later"):
        mem.remember_many([Claim("a", "likes", "x"), Claim("b", "likes", "y"),
                           Claim("c", "likes", "z", valid_from=JUN, valid_to=JAN)])
    with pytest.raises(InvalidArgumentError, match=r"claims\[1\]\.scope: expected a Scope, got str"):
        mem.remember_many([Claim("a", "likes", "x"),
                           Claim("b", "likes", "y", scope="user-1")])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="claims"):
        mem.remember_many("abc")  # type: ignore[arg-type]
    assert mem.count(states=STATES) == 0


@pytest.mark.parametrize(("call", "argument"), [
    (lambda m: m.remember("a\x00b", "likes", "x"), "subject"),
    (lambda m: m.remember("a", "likes", "x\x00"), "object"),
    (lambda m: m.remember("a", "likes", "x", text="a\x00 likes x"), "text"),
    (lambda m: m.remember("a", "likes", "x", sources=["e1", "e\x00"]), r"sources\[1\]"),
    (lambda m: m.remember("a", "likes", "x", extractor="rules\x00"), "extractor"),
    (lambda m: m.remember_many([Claim("a", "likes", "x"), Claim("b\x00", "likes", "y")]),
     r"claims\[1\]\.subject"),
    (lambda m: m.get_all(subject="a\x00b"), "subject"),
    (lambda m: m.history("a", "likes\x00"), "predicate"),
    (lambda m: m.why("c1\x00"), "claim_id"),
    (lambda m: m.erase("c1\x00"), "claim_id"),
    (lambda m: m.produced("e\x00"), "episode_id"),
])
def test_a_nul_character_is_refused_by_name_on_every_backend(
        mem: Memvara, call: Callable[[Memvara], object], argument: str) -> None:
    # PostgreSQL's text cannot hold NUL (SQLite's can): both refuse it the same way,
    # before anything is written, as add() refuses a NUL in a turn.
    kept = mem.remember("a", "likes", "tea").added[0]
    with pytest.raises(InvalidArgumentError, match=rf"^{argument}: holds a NUL character"):
        call(mem)
    assert mem.get_all(states=STATES) == [kept]


def test_spec_supersede_and_delete_example(mem: Memvara) -> None:
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN).added[0]
    oslo = mem.remember("user", "lives_in", "Oslo").added[0]
    assert mem.delete(oslo.id)
    receipt = mem.supersede(berlin.id, Claim(subject="user", predicate="lives_in", object="Lisbon",
                                             valid_from=JUN, scope=mem.default_scope), at=JUN)
    assert [(c.object, c.state) for c in mem.history("user", "lives_in")] == [
        ("Berlin", "ended"), ("Oslo", "retired"), ("Lisbon", "live")
    ]
    assert [(c.object, c.valid_to) for c in receipt.ended] == [("Berlin", JUN)]
    assert objects(receipt.added) == ["Lisbon"]


def test_supersede_defaults_to_the_new_claims_start(mem: Memvara) -> None:
    old = mem.remember("user", "job_title", "engineer", valid_from=JAN, recorded_at=JAN).added[0]
    receipt = mem.supersede(old.id, Claim("user", "job_title", "manager", valid_from=JUN),
                            sources=["ep9"])
    assert receipt.ended[0].valid_to == JUN
    assert receipt.added[0].sources == ("ep9",)
    assert receipt.added[0].recorded_at == NOW


def test_supersede_at_or_before_the_old_start_retires_it(mem: Memvara) -> None:
    old = mem.remember("user", "likes", "tea", valid_from=JUN, recorded_at=JUN).added[0]
    receipt = mem.supersede(old.id, Claim("user", "likes", "coffee"), at=JAN)
    assert objects(receipt.retired) == ["tea"]
    assert receipt.retired[0].invalidated_by == receipt.added[0].id


@pytest.mark.parametrize("at", [MAR, JUN], ids=["at-its-end", "after-its-end"])
def test_supersede_of_a_claim_that_ended_before_the_switch_leaves_it_as_it_was(
    mem: Memvara, at: datetime,
) -> None:
    old = mem.remember("user", "likes", "tea", valid_from=JAN, valid_to=MAR,
                       recorded_at=JAN).added[0]
    receipt = mem.supersede(old.id, Claim("user", "likes", "coffee"), at=at)
    assert objects(receipt.added) == ["coffee"] and receipt.added[0].valid_from == at
    assert receipt.ended == () and receipt.retired == ()
    (kept,) = [c for c in mem.history("user", "likes") if c.id == old.id]
    assert kept == old and kept.state == "ended"  # its end stays MAR, nothing retired it


def test_remember_stores_its_fields_as_given_even_with_a_redactor(clock: Clock) -> None:
    from memvara import NullLLM
    from memvara.redact import BasicRedactor

    with Memvara(clock=clock, redactor=BasicRedactor(), llm=NullLLM()) as mem:  # it reads add()'s turns
        claim = mem.remember("ann", "email", "ann@example.com").added[0]
        assert (claim.object, claim.text) == ("ann@example.com", "ann email ann@example.com")


def test_supersede_errors(mem: Memvara) -> None:
    old = mem.remember("user", "likes", "tea").added[0]
    with pytest.raises(ClaimNotFoundError) as caught:
        mem.supersede("nope", Claim("user", "likes", "coffee"))
    assert str(caught.value) == "old_claim_id: no claim 'nope' is visible in this scope"
    with pytest.raises(InvalidArgumentError, match="new_claim"):
        mem.supersede(old.id, "coffee")  # type: ignore[arg-type]
    from memvara import Scope
    with pytest.raises(InvalidArgumentError, match="scope"):
        mem.supersede(old.id, Claim("user", "likes", "coffee", scope=Scope(user="eve")))
    mem.delete(old.id)
    with pytest.raises(InvalidArgumentError, match="already retired"):
        mem.supersede(old.id, Claim("user", "likes", "coffee"))
    assert mem.count(states=STATES) == 1


def test_forget_retires_the_whole_slot_and_keeps_history(mem: Memvara, clock: Clock) -> None:
    mem.remember("user", "likes", "tea", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "likes", "jazz", valid_from=JAN, recorded_at=JAN)
    forgotten = mem.forget("user", "likes")
    assert sorted(objects(forgotten)) == ["jazz", "tea"]
    assert all(c.state == "retired" and c.invalidated_at == NOW for c in forgotten)
    assert mem.count() == 0
    assert len(mem.history("user", "likes")) == 2
    assert mem.count(known_at=MAR) == 2
    assert mem.forget("user", "likes") == []


def test_delete_retires_one_claim(mem: Memvara) -> None:
    claim = mem.remember("user", "likes", "tea", valid_from=JAN, recorded_at=JAN).added[0]
    assert mem.delete(claim.id, at=JUN)
    stored = mem.get(claim.id)
    assert stored is not None and stored.invalidated_at == JUN and stored.state == "retired"
    assert not mem.delete(claim.id)
    assert not mem.delete("no-such-claim")
    assert objects(mem.get_all(as_of=MAR)) == ["tea"]


def test_a_retirement_is_never_dated_before_the_claim_was_recorded(mem: Memvara) -> None:
    claim = mem.remember("user", "likes", "tea", recorded_at=JUN, valid_from=JUN).added[0]
    assert mem.delete(claim.id, at=JAN)
    stored = mem.get(claim.id)
    assert stored is not None and stored.invalidated_at == JUN


def test_learned_schema_is_durable_across_processes(db_path: str, clock: Clock) -> None:
    registry = PredicateRegistry(BUILTIN_PREDICATES + (
        PredicateSpec("plan", Cardinality.ONE, Volatility.SLOW, ("subscription",)),
    ))
    with Memvara(db_path, registry=registry, clock=clock):
        pass
    with Memvara(db_path, clock=clock) as fresh:
        assert fresh.registry.spec("subscription").cardinality is Cardinality.ONE
        fresh.remember("acct", "plan", "basic", valid_from=JAN, recorded_at=JAN)
        fresh.remember("acct", "subscription", "pro", valid_from=JUN, recorded_at=JUN)
        assert objects(fresh.get_all()) == ["pro"]
        assert fresh.reset()["predicates"] == 1
    with Memvara(db_path, clock=clock) as after_reset:
        assert not after_reset.registry.is_known("plan")


def test_a_declared_spec_wins_over_a_persisted_one(db_path: str, clock: Clock) -> None:
    one = PredicateRegistry([PredicateSpec("plan", Cardinality.ONE)])
    with Memvara(db_path, registry=one, clock=clock):
        pass
    many = PredicateRegistry([PredicateSpec("tier", Cardinality.MANY, aliases=("plan_alias",)),
                              PredicateSpec("plan", Cardinality.MANY)])
    with Memvara(db_path, registry=many, clock=clock) as mem:
        assert mem.registry.spec("plan").cardinality is Cardinality.MANY


def test_a_persisted_spec_whose_alias_is_taken_is_skipped(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock,
                 registry=PredicateRegistry([PredicateSpec("plan", Cardinality.ONE, aliases=("tier",))])):
        pass
    mine = PredicateRegistry([PredicateSpec("tier", Cardinality.MANY)])
    with Memvara(db_path, registry=mine, clock=clock) as mem:
        assert not mem.registry.is_known("plan")
        assert mem.registry.spec("tier").cardinality is Cardinality.MANY


@pytest.mark.parametrize("predicate, text", [
    ("lives_in", "user lives in Paris"),
    ("based_in", "user is based in Paris"),  # an alias of lives_in, said as it was said
    ("allergic_to", "user is allergic to Paris"),
    ("born_in", "user was born in Paris"),
    ("moved_to", "user moved to Paris"),
])
def test_a_claim_reads_as_it_was_said(mem: Memvara, predicate: str, text: str) -> None:
    (claim,) = mem.remember("user", predicate, "Paris").added
    assert claim.text == text


@pytest.mark.parametrize("predicate, text", [
    ("lives_in", "user does not live in Paris"),
    ("moved_to", "user did not move to Paris"),
    ("visited", "user did not visit Paris"),
    ("graduated_from", "user did not graduate from Paris"),
    ("stopped_at", "user did not stop at Paris"),
    ("studied", "user did not study Paris"),
    ("speed", "user speed is not Paris"),  # a noun in -eed is no past tense
    ("works_at", "user does not work at Paris"),
    ("likes", "user does not like Paris"),
    ("allergic_to", "user is not allergic to Paris"),
    ("born_in", "user was not born in Paris"),
    ("name", "user name is not Paris"),
    ("has_pet", "user does not have pet Paris"),
    ("studies", "user does not study Paris"),
    ("watches", "user does not watch Paris"),
    ("status", "user status is not Paris"),  # a noun that ends in -s is not a verb
    ("his_name", "user his name is not Paris"),
    ("alias", "user alias is not Paris"),
])
def test_a_negative_claim_reads_as_a_negative_sentence(
    mem: Memvara, predicate: str, text: str
) -> None:
    (claim,) = mem.remember("user", predicate, "Paris", polarity=-1).added
    assert claim.text == text and claim.polarity == -1
    assert text in repr(claim)


def test_recall_says_what_does_not_hold(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Paris", polarity=-1)
    mem.remember("user", "lives_in", "Lyon")
    block = mem.recall("does the user live in Paris or Lyon?")
    assert "- user does not live in Paris" in block.splitlines()
    assert "- user lives in Lyon" in block.splitlines()


def test_an_erased_claims_id_is_left_in_no_other_row(mem: Memvara, clock: Clock, tmp_path: Path) -> None:
    """A claim id carries a digest of its claim's content (``c<rowid>-<8 hex>``): a
    surviving row still naming an erased claim as what ended or retired it would let
    anyone holding the store or an export confirm a guess of the erased value."""
    mem.remember("alice", "phone", "+351 912 345 678", valid_from=JAN, recorded_at=JAN)
    wrong = mem.remember("alice", "phone", "+351 900 000 111", valid_from=MAR, recorded_at=MAR)
    moved = mem.remember("bo", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN).added[0]
    mem.remember("bo", "lives_in", "Faro", valid_from=MAR, recorded_at=MAR)
    corrected = mem.remember("bo", "lives_in", "Faro", valid_from=JUN - timedelta(days=150))
    old = mem.remember("cy", "likes", "tea").added[0]
    merged = mem.supersede(old.id, Claim("cy", "likes", "green tea")).added[0]
    clock.now = NOW + timedelta(days=400)
    assert mem.prune(timedelta(days=30))["ended"] >= 1 and moved.id in [c.id for c in mem.archived()]
    gone = [wrong.added[0].id, merged.id, *(c.id for c in corrected.added)]
    for claim_id in gone:
        assert mem.erase(claim_id)
    path = tmp_path / "after.jsonl"
    export_jsonl(mem, str(path))
    text = path.read_text()
    assert not [claim_id for claim_id in gone if claim_id in text]
    assert all(c.invalidated_by not in gone for c in mem.get_all(states=STATES))


def test_an_erased_claim_is_no_longer_a_source_of_the_claims_citing_it(
    mem: Memvara, clock: Clock,
) -> None:
    """A claim derived from another cites its id (a digest of the erased value): erased,
    the id leaves the sources of every claim citing it, live or archived."""
    phone = mem.remember("alice", "phone", "+351 912 345 678").added[0]
    derived = mem.remember("alice", "reachable_by", "phone",
                           sources=[phone.id, "call-notes-7"]).added[0]
    alone = mem.remember("alice", "has", "a mobile", sources=[phone.id]).added[0]
    old = mem.remember("alice", "works_at", "Acme", valid_from=JAN, recorded_at=JAN,
                       sources=[phone.id, "crm-1"]).added[0]
    mem.remember("alice", "works_at", "Globex", valid_from=MAR, recorded_at=MAR)
    clock.now = NOW + timedelta(days=400)
    mem.prune(timedelta(days=30))
    assert old.id in [c.id for c in mem.archived()]

    assert mem.erase(phone.id)

    assert mem.get(derived.id).sources == ("call-notes-7",)  # type: ignore[union-attr]
    assert mem.get(alone.id).sources == ()  # type: ignore[union-attr]
    assert [c.sources for c in mem.archived() if c.id == old.id] == [("crm-1",)]
    assert mem.why(derived.id).sources == ("call-notes-7",)  # type: ignore[union-attr]
    assert mem.store.claims_citing(phone.id, Scope(), TimeQuery(known_at=1 << 62, valid_at=None)) == []
