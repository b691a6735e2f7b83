"""The review queue: evidence against what a slot holds is counted by distinct ground,
reopens the slot for review at the threshold, marks searches and recall meanwhile, and
``resolve()`` keeps the slot or accepts the value (the review is the new claim's source)."""

from __future__ import annotations

import json

import pytest

from memvara import Memvara, Scope
from memvara._errors import InvalidArgumentError, StoreError
from memvara.llm import NullLLM
from memvara.store.base import WriteLogStore

from .conftest import Clock
from .store_without import store_without


def contested_porto(mem: Memvara) -> str:
    """Maya lives in Porto; two distinct grounds say Lisbon: a review opens."""
    mem.remember("Maya", "lives_in", "Porto")
    first = mem.observe("Maya", "lives_in", "Lisbon", support=["turn-1"])
    assert (first.held, first.grounds, first.echoes, first.review) == (False, 1, 0, None)
    echo = mem.observe("maya", "lives_in", "Lisbon", support=["turn-1"])  # the same ground
    assert (echo.grounds, echo.echoes, echo.review) == (1, 1, None)
    second = mem.observe("Maya", "lives_in", "lisbon", support=["doc-7", "doc-7"])
    assert second.grounds == 2 and second.echoes == 1 and second.review is not None
    assert second.review.status == "open" and second.review.object == "lisbon"
    return second.review.id


def test_distinct_grounds_reopen_a_slot_and_reads_say_so(mem: Memvara) -> None:
    rid = contested_porto(mem)
    (review,) = mem.reviews()
    assert review.id == rid and review.grounds == 2 and len(review.held) == 1
    assert review.to_dict()["scope"] == {"tenant": None, "user": None, "agent": None, "session": None}
    hit = mem.search("where does Maya live")[0]
    assert hit.claim is not None and hit.claim.object == "Porto"
    assert hit.review is not None and hit.review.object == "lisbon"
    assert hit.to_dict()["review"]["id"] == rid
    assert "- Maya lives in Porto (under review: contested by 'lisbon')" in mem.recall("Maya live")
    assert [c.object for c in mem.get_all()] == ["Porto"]  # nothing superseded
    later = mem.observe("Maya", "lives_in", "Lisbon", support=["turn-9"])  # joins the review
    assert later.review is not None and later.review.id == rid and later.grounds == 3


def test_keep_closes_the_review_and_spends_its_evidence(mem: Memvara) -> None:
    rid = contested_porto(mem)
    kept = mem.resolve(rid, "keep", actor="editor")
    assert (kept.status, kept.decided_by, kept.claim) == ("kept", "editor", None)
    assert kept.closed_at is not None and mem.reviews() == []
    assert mem.search("where does Maya live")[0].review is None
    assert "under review" not in mem.recall("Maya live")
    again = mem.observe("Maya", "lives_in", "Lisbon", support=["turn-1", "doc-7"])
    assert (again.grounds, again.echoes, again.review) == (0, 2, None)  # spent: echoes now
    with pytest.raises(InvalidArgumentError, match="resolved already .kept by editor"):
        mem.resolve(rid, "accept")


def test_accept_supersedes_with_the_review_as_the_claims_source(mem: Memvara, clock: Clock) -> None:
    rid = contested_porto(mem)
    clock.advance(days=1)
    accepted = mem.resolve(rid, "accept", actor="editor")
    assert accepted.status == "accepted" and accepted.claim is not None
    assert [(c.object, c.state) for c in mem.history("Maya", "lives_in")] == [
        ("Porto", "ended"), ("lisbon", "live")]
    why = mem.why(accepted.claim)
    assert why is not None and why.sources == (rid,) and why.extractor == "review"
    assert why.actor == "editor"
    store = mem.store
    assert isinstance(store, WriteLogStore)
    last = store.log_records(0, 100)[-1]
    assert last[3] == "resolve" and json.loads(last[4])["notes"] == [
        {"review": {"decision": "accepted", "id": rid}}]
    assert mem.verify().ok


def test_a_value_held_by_the_time_of_the_accept_is_reinforced(mem: Memvara) -> None:
    rid = contested_porto(mem)
    mem.remember("Maya", "lives_in", "Lisbon")
    accepted = mem.resolve(rid, "accept")
    assert accepted.claim == mem.get_all()[0].id


def test_a_many_valued_slot_takes_evidence_for_a_value_it_lacks(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), review_threshold=1) as mem:
        mem.remember("Maya", "likes", "tea")
        held = mem.observe("Maya", "likes", "Tea", support=["t1"])
        assert held.held and held.to_dict()["review"] is None
        opened = mem.observe("Maya", "likes", "jazz", support=["t1"], user=None)
        assert opened.review is not None and opened.review.object == "jazz"
        against = mem.observe("Maya", "likes", "tea", support=["t2"], polarity=-1)
        assert against.review is not None and against.review.polarity == -1
        assert len(mem.reviews()) == 2
        mem.resolve(opened.review.id, "accept")
        assert sorted(c.object for c in mem.get_all()) == ["jazz", "tea"]


def test_reviews_belong_to_their_scope(mem: Memvara) -> None:
    mem.remember("Maya", "lives_in", "Porto", user="maya")
    for ground in ("a", "b"):
        mem.observe("Maya", "lives_in", "Faro", support=[ground], user="maya", agent="crm")
    assert len(mem.reviews()) == 1 and mem.reviews(user="bob") == []
    rid = mem.reviews(user="maya")[0].id
    with pytest.raises(InvalidArgumentError, match="no review"):
        mem.resolve(rid, "keep", user="bob")
    assert mem.search("Maya", user="maya")[0].review is None  # the agent's review: not seen here
    assert mem.search("Maya", user="maya", agent="crm")[0].review is not None
    accepted = mem.resolve(rid, "accept", user="maya")
    assert [c.object for c in mem.get_all(user="maya", agent="crm")] == ["Faro"]
    assert accepted.scope.agent == "crm"  # filed there; the value went where Porto was
    why = mem.why(accepted.claim or "", user="maya")
    assert why is not None and why.claim.scope.agent is None


def test_bad_input_is_refused_and_files_nothing(mem: Memvara) -> None:
    mem.remember("Maya", "lives_in", "Porto")
    for kwargs, argument in (({"support": "t1"}, "support"), ({"support": []}, "support"),
                             ({"support": [3]}, "support"), ({"support": ["t"], "polarity": 0}, "polarity"),
                             ({"support": ["t"], "polarity": True}, "polarity"),
                             ({"support": ["t"], "actor": ""}, "actor")):
        with pytest.raises(InvalidArgumentError, match=argument):
            mem.observe("Maya", "lives_in", "Lisbon", **kwargs)
    with pytest.raises(InvalidArgumentError, match="obj"):
        mem.observe("Maya", "lives_in", " ", support=["t"])
    with pytest.raises(InvalidArgumentError, match=r"^support\[1\]: expected a string, got int$"):
        mem.observe("Maya", "lives_in", "Lisbon", support=["t", 3])  # type: ignore[list-item]
    assert mem.observe("Maya", "lives_in", "Lisbon", support=["t"]).grounds == 1  # none before
    for rid, decision, argument in (("r99", "keep", "review_id"), ("x", "keep", "review_id"),
                                    ("r1", "maybe", "decision"), ("", "keep", "review_id")):
        with pytest.raises(InvalidArgumentError, match=argument):
            mem.resolve(rid, decision)
    with pytest.raises(InvalidArgumentError, match="review_threshold"):
        Memvara(review_threshold=0)


def test_a_store_without_reviews_says_so_and_searches_as_before(clock: Clock) -> None:
    with Memvara(store=store_without("file_evidence")(), clock=clock, llm=NullLLM()) as mem:
        mem.remember("Maya", "lives_in", "Porto")
        for call in (lambda: mem.observe("Maya", "lives_in", "Faro", support=["t"]),
                     mem.reviews, lambda: mem.resolve("r1", "keep")):
            with pytest.raises(StoreError, match="keeps no review queue"):
                call()
        assert mem.search("Maya")[0].review is None


def test_an_empty_search_and_a_queue_with_nothing_open_cost_no_marks(mem: Memvara) -> None:
    assert mem.search("nothing at all") == []
    mem.remember("Maya", "lives_in", "Porto")
    assert mem.search("Maya")[0].review is None


def test_a_review_that_fails_to_open_files_no_evidence(
        mem: Memvara, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filing the grounds and opening the review are one transaction: they were two,
    so a failed open left the grounds filed (spent as echoes) with no review, and two
    observers at once each opened a review of the same value."""
    mem.remember("maya", "lives_in", "Porto")
    anchor = mem.anchor()

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(mem.store, "open_review", broken)
    with pytest.raises(StoreError, match="disk full"):
        mem.observe("maya", "lives_in", "Faro", support=["a", "b"])
    monkeypatch.undo()
    assert mem.anchor() == anchor and mem.reviews() == []
    again = mem.observe("maya", "lives_in", "Faro", support=["a", "b"])
    assert (again.grounds, again.echoes) == (2, 0) and again.review is not None


def test_a_review_resolved_meanwhile_by_another_writer_writes_nothing(
        mem: Memvara, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two resolves of one review at once: both saw it open before either committed.
    The second's accept wrote the value and its close changed nothing, so the review
    said "kept" while the claim it wrote said otherwise. It is refused, its write undone."""
    review = contested_porto(mem)
    store = mem.store
    stale = store.review(review, Scope())  # type: ignore[attr-defined]
    assert stale is not None and stale.status == "open"
    mem.resolve(review, "keep", actor="first")
    before = [(c.id, c.state) for c in mem.get_all(states=("live", "ended", "retired"))]
    anchor = mem.anchor()
    monkeypatch.setattr(store, "review", lambda *args: stale)  # what the second one read
    with pytest.raises(InvalidArgumentError, match="review_id: review .* was resolved meanwhile"):
        mem.resolve(review, "accept", actor="second")
    monkeypatch.undo()
    assert [(c.id, c.state) for c in mem.get_all(states=("live", "ended", "retired"))] == before
    assert mem.anchor() == anchor
    closed = mem.store.review(review, Scope())  # type: ignore[attr-defined]
    assert closed is not None and (closed.status, closed.decided_by) == ("kept", "first")


def test_purge_erases_the_scopes_reviews_and_evidence(mem: Memvara) -> None:
    """They hold the scope's subjects, contested values and grounds: a purge left them,
    still listed by reviews()."""
    mem.remember("maya", "lives_in", "Porto", user="u1")
    mem.observe("maya", "lives_in", "Faro", support=["a", "b"], user="u1")
    mem.observe("maya", "likes", "tea", support=["a"], user="u1")  # evidence, no review
    kept = mem.observe("ann", "lives_in", "Rome", support=["a", "b"], user="u2").review
    anchor = mem.anchor()
    assert mem.purge(user="u1")["claims"] == 1
    notes = json.loads(mem.store.log_records(0, 100)[-1][4])["notes"]  # type: ignore[attr-defined]
    assert notes == [{"purge": {"archived": 0, "evidence": 3, "reviews": 1}}] and mem.anchor() != anchor
    assert mem.reviews(user="u1") == [] and [r.id for r in mem.reviews()] == [kept.id]  # type: ignore[union-attr]
    again = mem.observe("maya", "likes", "tea", support=["a"], user="u1")
    assert (again.grounds, again.echoes) == (1, 0)  # its evidence went: "a" is no echo


def test_a_value_is_not_marked_as_contested_by_itself(mem: Memvara) -> None:
    """A later write gave the slot the contested value before any resolve(): reads
    said "Maya lives in Lisbon (under review: contested by 'lisbon')"."""
    rid = contested_porto(mem)
    mem.remember("Maya", "lives_in", "Lisbon")
    hit = mem.search("where does Maya live")[0]
    assert hit.claim is not None and hit.claim.object == "Lisbon" and hit.review is None
    assert "under review" not in mem.recall("Maya live")
    other = mem.observe("Maya", "lives_in", "Faro", support=["a", "b"]).review
    assert other is not None and [r.id for r in mem.reviews()] == [rid, other.id]
    marked = mem.search("where does Maya live")[0].review  # another open review still says so
    assert marked is not None and marked.id == other.id
