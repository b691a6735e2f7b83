"""Retention: ``prune()`` moves claims that stopped holding long ago to an archive no
read sees, ``archived()`` lists them, ``restore_archived()`` puts them back as they were."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest

from memvara import Claim, Memvara, SQLiteStore
from memvara._domain.ledger import parse_anchor
from memvara._domain.model import Scope
from memvara._errors import ClaimNotFoundError, InvalidArgumentError, StoreError
from memvara.llm import NullLLM
from memvara.store.base import WriteLogStore

from .conftest import Clock
from .store_without import store_without

STATES3 = ("live", "ended", "retired")


def moved_house(mem: Memvara, clock: Clock) -> tuple[Claim, Claim, Claim]:
    """Porto (ended 40 days ago), a wrong value retired 40 days ago, Lisbon live."""
    porto = mem.remember("maya", "lives_in", "Porto").added[0]
    clock.advance(days=10)
    wrong = mem.remember("maya", "works_at", "Acme").added[0]
    lisbon = mem.remember("maya", "lives_in", "Lisbon").added[0]
    assert mem.delete(wrong.id)
    clock.advance(days=40)
    return porto, wrong, lisbon


def test_prune_moves_ended_and_retired_claims_that_stopped_holding_long_enough_ago(
        mem: Memvara, clock: Clock) -> None:
    porto, wrong, lisbon = moved_house(mem, clock)
    assert mem.prune(timedelta(days=41)) == {"ended": 0, "retired": 0, "evicted": 0}
    assert mem.prune(timedelta(days=30)) == {"ended": 1, "retired": 1, "evicted": 0}
    assert [c.id for c in mem.get_all(states=STATES3)] == [lisbon.id]
    assert [c.id for c in mem.archived()] == [porto.id, wrong.id]
    assert [c.id for c in mem.archived("Maya", "lives_in")] == [porto.id]
    assert mem.get(porto.id) is None and mem.why(porto.id) is None
    assert [c.object for c in mem.history("maya", "lives_in")] == ["Lisbon"]
    assert all(r.claim is None or r.claim.id == lisbon.id
               for r in mem.search("Porto Acme", states=STATES3))
    assert mem.count(states=STATES3) == 1
    assert mem.prune(timedelta(days=30)) == {"ended": 0, "retired": 0, "evicted": 0}


def test_live_claims_are_pruned_only_when_named(mem: Memvara, clock: Clock) -> None:
    _, _, lisbon = moved_house(mem, clock)
    clock.advance(days=400)
    assert mem.prune(timedelta(0)) == {"ended": 1, "retired": 1, "evicted": 0}
    assert [c.id for c in mem.get_all()] == [lisbon.id]
    # Lisbon was last observed 440 days ago
    assert mem.prune(timedelta(days=441), states=["live"]) == {"live": 0, "evicted": 0}
    assert mem.prune(timedelta(days=439), states=["live"]) == {"live": 1, "evicted": 0}
    assert mem.get_all() == []


def test_a_restored_claim_is_the_claim_it_was(mem: Memvara, clock: Clock) -> None:
    mem.add("hello, I am here to talk about my house", user="maya")  # a turn to cite
    episode = mem.episodes(user="maya")[0]
    first = mem.remember("maya", "lives_in", "Porto", sources=[episode.id], user="maya").added[0]
    clock.advance(days=5)
    mem.remember("maya", "lives_in", "Faro", valid_to=clock.now + timedelta(days=1), user="maya")
    clock.advance(days=1)
    mem.supersede(first.id, Claim("maya", "lives_in", "Lisbon"), at=clock.now - timedelta(days=3),
                  user="maya")  # revises Porto's end: it gets an earlier end on record
    clock.advance(days=60)
    maya = mem.scope(user="maya")
    before = {c.id: (c, maya.why(c.id), maya.why(c.id, known_at=clock.now - timedelta(days=61)))
              for c in maya.get_all(states=STATES3)}
    history = maya.history("maya", "lives_in")
    produced = maya.produced(episode.id)
    counts = maya.prune(timedelta(days=30))
    assert counts["ended"] >= 1
    archived = [c.id for c in maya.archived()]
    assert first.id in archived and maya.produced(episode.id) != produced
    assert maya.restore_archived() == sorted(archived, key=lambda i: int(i[1:].split("-")[0]))
    after = {c.id: (c, maya.why(c.id), maya.why(c.id, known_at=clock.now - timedelta(days=61)))
             for c in maya.get_all(states=STATES3)}
    assert after == before and maya.history("maya", "lives_in") == history
    assert maya.produced(episode.id) == produced and maya.archived() == []
    assert [r.claim.id for r in maya.search("Porto", states=STATES3) if r.claim][:1] == [first.id]
    assert mem.verify().ok


def test_the_capacity_bound_evicts_the_least_salient_ended_claims_first(mem: Memvara, clock: Clock) -> None:
    for town in ("A", "B", "C", "D"):
        mem.remember("maya", "lives_in", f"Town{town}")
        clock.advance(days=1)
    mem.remember("maya", "lives_in", "TownB")  # B again: a new row; the old B stays ended
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ended = [c for c in mem.get_all(states=("ended",))]
    salient = ended[1].id
    with store.transaction():
        store._writer.execute("UPDATE claims SET salience = 5 WHERE id = ?", (salient,))
    held = mem.count(states=STATES3)
    result = mem.prune(timedelta(days=365), keep_at_most=held - 2)
    assert result == {"ended": 2, "retired": 0, "evicted": 2}
    assert salient not in {c.id for c in mem.archived()}
    assert mem.count(states=STATES3) == held - 2
    # never more than the states allow: with only live rows left to take, it stops
    assert mem.prune(timedelta(days=365), keep_at_most=0)["evicted"] == held - 3
    assert mem.get_all(states=("live",)) != []


def test_prune_covers_its_scope_and_the_scopes_beneath_it(mem: Memvara, clock: Clock) -> None:
    for who in ("ann", "bob"):
        mem.remember(who, "lives_in", "Porto", user=who, agent="helper")
        clock.advance(days=1)
        mem.remember(who, "lives_in", "Lisbon", user=who, agent="helper")
    clock.advance(days=100)
    assert mem.prune(timedelta(days=30), user="ann")["ended"] == 1
    assert [c.subject for c in mem.archived()] == ["ann"]
    assert mem.archived(user="bob") == [] and len(mem.archived(user="ann")) == 1
    assert mem.restore_archived(user="bob") == []


def test_bad_input_is_refused_and_changes_nothing(mem: Memvara, clock: Clock) -> None:
    porto, _, _ = moved_house(mem, clock)
    for bad in (timedelta(days=-1), 30, None):
        with pytest.raises(InvalidArgumentError, match="older_than"):
            mem.prune(bad)  # type: ignore[arg-type]
    for states in ("ended", [], ["ended", "ended"], ["gone"], 5):
        with pytest.raises(InvalidArgumentError, match="states"):
            mem.prune(timedelta(0), states=states)  # type: ignore[arg-type]
    for bound in (-1, 1.5, True):
        with pytest.raises(InvalidArgumentError, match="keep_at_most"):
            mem.prune(timedelta(0), keep_at_most=bound)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="actor"):
        mem.prune(timedelta(0), actor="")
    assert mem.archived() == []
    mem.prune(timedelta(days=30))
    with pytest.raises(ClaimNotFoundError) as caught:
        mem.restore_archived([porto.id, "c999-00000000"])
    assert str(caught.value) == "claim_ids: the archive holds no claim c999-00000000 in this scope"
    assert porto.id in {c.id for c in mem.archived()}  # nothing half-done
    for ids in ("c1-x", 5):
        with pytest.raises(InvalidArgumentError, match="claim_ids"):
            mem.restore_archived(ids)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="claim_id"):
        mem.restore_archived([""])
    with pytest.raises(InvalidArgumentError, match="predicate"):
        mem.archived("maya")
    with pytest.raises(InvalidArgumentError, match="subject"):
        mem.archived(predicate="lives_in")
    assert mem.restore_archived([porto.id, porto.id]) == [porto.id]


def test_the_log_records_the_moves(mem: Memvara, clock: Clock) -> None:
    porto, _, _ = moved_house(mem, clock)
    mem.prune(timedelta(days=30), actor="retention-job")
    mem.restore_archived([porto.id], actor="auditor")
    store = mem.store
    assert isinstance(store, WriteLogStore)
    tail = store.log_records(0, 100)[-2:]
    rowid = int(porto.id[1:].split("-")[0])
    assert [(r[2], r[3]) for r in tail] == [("retention-job", "prune"), ("auditor", "restore_archived")]
    assert f'"archived":[{rowid},' in tail[0][4] and tail[1][4] == f'{{"restored":[{rowid}]}}'
    why = mem.why(porto.id)
    assert why is not None and why.actor == ""  # the writer's, kept across the move
    assert mem.verify().ok


def test_new_rows_never_take_an_archived_rows_id(mem: Memvara, clock: Clock) -> None:
    mem.remember("maya", "lives_in", "Porto")
    clock.advance(days=1)
    top = mem.remember("maya", "lives_in", "Lisbon", valid_to=clock.now + timedelta(days=1)).added[0]
    clock.advance(days=40)
    mem.prune(timedelta(days=30))
    assert top.id in {c.id for c in mem.archived()}
    fresh = mem.remember("maya", "likes", "tea").added[0]
    assert int(fresh.id[1:].split("-")[0]) > int(top.id[1:].split("-")[0])
    assert top.id in mem.restore_archived()


def test_a_claim_waiting_for_its_vector_is_left_for_the_next_run(mem: Memvara, clock: Clock) -> None:
    porto, _, _ = moved_house(mem, clock)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    with store.transaction():
        store._writer.execute("UPDATE claims SET vec_slot = NULL WHERE id = ?", (porto.id,))
    now = int(clock.now.timestamp() * 1_000_000)
    assert store.archive_claims(Scope(), {"ended": now}, None, now)["ended"] == 0
    with pytest.raises(ClaimNotFoundError, match="claim_ids: .*c77-00000000"):
        store.restore_archived(Scope(), ["c77-00000000"])  # checked again in its transaction


def test_the_archive_has_every_column_of_the_claims_table(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    claims = [r[1] for r in store._query("PRAGMA table_info(claims)")]
    archive = [r[1] for r in store._query("PRAGMA table_info(claims_archive)")]
    assert archive == [*claims, "archived_at", "closures"]


def test_a_claim_column_the_archive_lacks_is_named(db_path: str, clock: Clock) -> None:
    conn = sqlite3.connect(db_path)
    conn.close()
    with Memvara(db_path, clock=clock) as mem:
        moved_house(mem, clock)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("ALTER TABLE claims ADD COLUMN mood TEXT")
    conn.close()
    with Memvara(db_path, clock=clock) as mem:
        with pytest.raises(StoreError, match=r"claims_archive lacks the claim columns \['mood'\]"):
            mem.prune(timedelta(days=30))
        assert mem.count(states=STATES3) == 3


def test_a_store_without_an_archive_says_so(clock: Clock) -> None:
    bare = store_without("archive_claims")
    with Memvara(store=bare(), clock=clock, llm=NullLLM()) as mem:
        for call in (lambda: mem.prune(timedelta(0)), mem.restore_archived, mem.archived):
            with pytest.raises(StoreError, match="keeps no archive"):
                call()
        assert mem.erase("c999-00000000") is False  # nothing to erase, and no archive to look in


def test_a_huge_older_than_prunes_nothing(mem: Memvara, clock: Clock) -> None:
    moved_house(mem, clock)
    assert mem.prune(timedelta.max)["ended"] == 0


def test_a_bound_already_met_moves_nothing_more_and_an_unlogged_store_prunes_too(
        tmp_path: object, clock: Clock) -> None:
    with Memvara(store=SQLiteStore(write_log=False), clock=clock) as mem:
        porto, _, _ = moved_house(mem, clock)
        assert mem.prune(timedelta(days=30), keep_at_most=100) == {
            "ended": 1, "retired": 1, "evicted": 0}
        assert mem.restore_archived([porto.id]) == [porto.id]
        assert mem.store.log_records(0, 10) == []  # type: ignore[attr-defined]


def test_a_claim_restored_by_another_writer_meanwhile_is_named_not_skipped(
        mem: Memvara, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two restores of one claim at once: both found it archived, and the second put
    back nothing and said nothing. The store's own transaction checks it again."""
    porto = mem.remember("maya", "lives_in", "Porto").added[0]
    clock.advance(days=10)
    mem.prune(timedelta(days=1), states=("live",))
    store = mem.store
    stale = store.archived_claims(Scope())  # type: ignore[attr-defined]
    assert mem.restore_archived([porto.id]) == [porto.id]  # the other writer's
    monkeypatch.setattr(store, "archived_claims", lambda *args, **kwargs: stale)
    with pytest.raises(ClaimNotFoundError, match=f"claim_ids: .*{porto.id}.*meanwhile"):
        mem.restore_archived([porto.id])
    assert [c.id for c in mem.get_all()] == [porto.id] and mem.verify().ok


def test_a_live_claim_is_not_restored_beside_a_newer_value_of_its_single_valued_slot(
        mem: Memvara, clock: Clock) -> None:
    """Pruned while live, the slot then took another value: restored as it was, the two
    were both live (recall said maya lived in Porto and in Lisbon). Refused, naming
    both, and nothing is restored; once the newer one is retired it comes back."""
    porto = mem.remember("maya", "lives_in", "Porto").added[0]
    tea = mem.remember("maya", "likes", "tea").added[0]  # many-valued: no conflict
    clock.advance(days=10)
    assert mem.prune(timedelta(days=1), states=("live",)) == {"live": 2, "evicted": 0}
    mem.remember("maya", "likes", "jazz")
    lisbon = mem.remember("maya", "lives_in", "Lisbon").added[0]
    anchor = mem.anchor()
    for ids in (None, [porto.id], [tea.id, porto.id]):
        with pytest.raises(InvalidArgumentError, match=f"claim_ids: {porto.id} .*{lisbon.id}"):
            mem.restore_archived(ids)
    assert {c.id for c in mem.archived()} == {porto.id, tea.id} and mem.anchor() == anchor
    assert mem.restore_archived([tea.id]) == [tea.id]
    assert mem.delete(lisbon.id)
    assert mem.restore_archived() == [porto.id]
    assert [c.object for c in mem.get_all(subject="maya", predicate="lives_in")] == ["Porto"]


def test_purge_erases_the_scopes_archived_claims_too(mem: Memvara, clock: Clock) -> None:
    """A purge erases a scope; its archived claims stayed, listed and restorable."""
    u = mem.scope(user="u1")
    u.remember("maya", "lives_in", "Porto")
    clock.advance(days=1)
    u.remember("maya", "lives_in", "Faro")
    mem.remember("ann", "lives_in", "Oslo", user="u2")
    clock.advance(days=100)
    mem.remember("ann", "lives_in", "Rome", user="u2")
    clock.advance(days=100)
    assert mem.prune(timedelta(days=1)) == {"ended": 2, "retired": 0, "evicted": 0}
    anchor = mem.anchor()
    assert mem.purge(user="u1") == {"claims": 2, "episodes": 0, "embeddings": 2, "sources": 0}
    assert u.archived() == [] and u.restore_archived() == []
    assert [c.object for c in mem.archived()] == ["Oslo"]  # another scope's archive stays
    log = mem.store.log_records(parse_anchor(anchor).seq, 10)  # type: ignore[attr-defined]
    assert [(r[3], json.loads(r[4]).get("notes")) for r in log] == [
        ("purge", [{"purge": {"archived": 1, "evidence": 0, "reviews": 0}}])]
    assert mem.verify().ok


def test_erase_reaches_an_archived_claim(mem: Memvara, clock: Clock) -> None:
    """The guide sends a user who wants an archived claim's text gone to erase(); it
    answered False (no claim) and the row stayed in the archive, restorable."""
    porto = mem.remember("maya", "lives_in", "Porto").added[0]
    clock.advance(days=1)
    mem.remember("maya", "lives_in", "Faro")
    clock.advance(days=100)
    assert mem.prune(timedelta(days=1))["ended"] == 1
    assert mem.erase(porto.id, actor="dpo") is True
    assert mem.archived() == [] and mem.restore_archived() == [] and mem.why(porto.id) is None
    last = mem.store.log_records(0, 100)[-1]  # type: ignore[attr-defined]
    assert last[2:4] == ("dpo", "erase") and int(porto.id[1:].split("-")[0]) in json.loads(last[4])["erased"]
    assert mem.erase(porto.id) is False and mem.verify().ok
