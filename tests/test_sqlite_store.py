"""The SQLite backend: file format, migrations, FTS in step, the sidecar, connections."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from memvara import (
    Claim,
    ClosedError,
    DimensionMismatchError,
    Episode,
    HashingEmbedder,
    Memvara,
    NotAStoreError,
    SchemaVersionError,
    Scope,
    SQLiteStore,
    StoreError,
    StoreLockedError,
)
from memvara._domain.model import TimeQuery
from memvara.store import (
    BulkWriteStore,
    DeferredTextIndexStore,
    RankingStore,
    SimilarityStore,
    SingleWriteStore,
    Store,
)
from memvara.store.sqlite._migrations import APPLICATION_ID, SCHEMA_VERSION
from memvara.store.sqlite import CHECKPOINT_PAGES
from memvara.store.sqlite._translate import translate

from .conftest import JAN, NOW, Clock, embed_all
from .schema_history import SCHEMA_4_INDEXES
from .store_without import OPTIONAL, store_without


def test_a_new_file_is_wal_and_marked_as_ours(db_path: str) -> None:
    SQLiteStore(db_path).close()
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def test_reopening_keeps_everything(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        claim = mem.remember("user", "lives_in", "Oslo").added[0]
        waiting = mem.remember("user", "likes", "tea").added[0]
        embed_all(mem)
        mem.remember("user", "likes", "coffee")  # still waiting for its vector at close
    with Memvara(db_path, clock=clock) as mem:
        assert mem.get(claim.id) == claim and mem.get(waiting.id) == waiting
        assert mem.store.dim == 512
        assert mem.stats()["embeddings"] == 2
        assert embed_all(mem) == 1


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"just some text, definitely not a database" * 100)
    with pytest.raises(NotAStoreError):
        Memvara(str(path))
    assert path.read_bytes().startswith(b"just some text")


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "other.db")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(NotAStoreError, match="not a memvara store"):
        Memvara(path)


def test_a_newer_schema_is_refused_and_left_untouched(db_path: str) -> None:
    SQLiteStore(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="newer memvara"):
        Memvara(db_path)
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    conn.close()


def _claim_indexes(path: str) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'claims'"
            " AND sql IS NOT NULL")]
        return {name: [r[2] for r in conn.execute(f"PRAGMA index_info({name})")]
                for name in names}
    finally:
        conn.close()


def _answers(mem: Memvara) -> list[object]:
    """What a few readers see: every read the scope index and the slot index served."""
    seen: list[object] = []
    for reader in (mem, mem.scope(user="ann"), mem.scope(user="ann", session="s1"),
                   mem.scope(user="bob")):
        seen += [
            sorted(c.id for c in reader.get_all()),
            sorted(c.id for c in reader.get_all(states=["ended", "retired"])),
            reader.count(), reader.count(states=["ended"]), reader.count(valid_at=JAN),
            [c.id for c in reader.history("user", "lives_in")],
            [r.claim.id for r in reader.search("lives in", k=5) if r.claim is not None],
            reader.stats(),
        ]
    return seen


def test_a_schema_4_store_gets_one_index_for_slots_and_scopes(db_path: str, clock: Clock) -> None:
    # Schema 5 folds the scope index into the slot index, led by the scope: the same
    # answers from the same rows, one index entry fewer a write.
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("user", "lives_in", "Oslo", valid_from=JAN)
        for user in ("ann", "bob"):
            mem.remember("user", "lives_in", "Rome", user=user, valid_from=JAN)
            mem.remember("user", "lives_in", "Lima", user=user)  # ends Rome
            mem.remember("user", "likes", "tea", user=user, session="s1")
        gone = mem.remember("user", "likes", "jazz", user="ann").added[0]
        mem.scope(user="ann").delete(gone.id)
        before = _answers(mem)
    assert set(_claim_indexes(db_path)) == {
        "claims_slot", "claims_object", "claims_invalidated_by", "claims_ended_by"}
    conn = sqlite3.connect(db_path)
    try:  # the file as schema 4 left it
        conn.executescript(SCHEMA_4_INDEXES)
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")  # v13 added it
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 4")
        conn.commit()
    finally:
        conn.close()
    assert _claim_indexes(db_path)["claims_slot"][:2] == ["subject_key", "predicate"]
    assert "claims_scope" in _claim_indexes(db_path)
    with Memvara(db_path, clock=clock) as mem:
        indexes = _claim_indexes(db_path)
        assert "claims_scope" not in indexes
        assert indexes["claims_slot"] == [
            "s_user", "s_tenant", "s_agent", "s_session", "subject_key", "predicate",
            "invalidated_at", "valid_to", "recorded_at", "valid_from", "valid_to_known_at",
            "revised"]  # the state filter's columns too: count() reads no rows
        assert _answers(mem) == before
        store = mem.store
        assert isinstance(store, SQLiteStore)
        assert store.integrity_problems() == []
        assert store._query("PRAGMA user_version")[0][0] == SCHEMA_VERSION == 13


SWEPT_SCOPES = [Scope(), Scope(tenant="t"), Scope(user="u"), Scope(tenant="t", user="u"),
                Scope(tenant="t", user="u", agent="a")]


Tracer = Callable[[str, Sequence[object]], None]


def _sweep_store(tracer: Tracer | None = None) -> tuple[Memvara, dict[Scope, set[str]]]:
    """A store whose claims sit in nested and sibling scopes; the believed ids in each
    scope of ``SWEPT_SCOPES``' subtree."""
    store = SQLiteStore(":memory:", tracer=tracer)
    mem = Memvara(store=store, clock=Clock())
    scopes = [Scope(), Scope(tenant="t"), Scope(user="u"), Scope(tenant="t", user="u"),
              Scope(tenant="t", user="v"), Scope(tenant="t", user="u", agent="a"),
              Scope(tenant="t", user="u", agent="a", session="s"),
              Scope(tenant="t", user="u", agent="b"), Scope(tenant="x", user="u")]
    claims = [Claim(f"e{i % 7}", ("likes", "owns", "lives_in")[i % 3], f"o{i}", scope=scope)
              for scope in scopes for i in range(9)]
    mem.remember_many(claims)
    believed = {c.id: c.scope for c in mem.get_all()}  # the root sees only its own
    everything = {c.id: c.scope for scope in scopes for c in mem.scope(
        **{k: v for k, v in zip(("tenant", "user", "agent", "session"), scope.values())
           if v is not None}).get_all()}
    believed.update(everything)
    wanted = {}
    for swept in SWEPT_SCOPES:
        levels = swept.values()
        deepest = max((i for i, v in enumerate(levels) if v is not None), default=-1)
        wanted[swept] = {cid for cid, scope in believed.items()
                         if all((scope.values()[i] or "") == (levels[i] or "")
                                for i in range(deepest + 1))}
    return mem, wanted


@pytest.mark.parametrize("swept", SWEPT_SCOPES, ids=str)
def test_a_sweep_visits_each_believed_claim_of_a_subtree_once_across_windows(
    swept: Scope,
) -> None:
    mem, wanted = _sweep_store()
    with mem:
        seen: list[str] = []
        slots: list[tuple[str, ...]] = []
        after = None
        for _ in range(100):  # a broken cursor would loop
            window = mem.store.sweep_claims(swept, after, 4)
            seen += window.ids
            slots += list(dict.fromkeys(window.slots))
            after = window.next
            if after is None:
                break
        assert after is None
        assert len(seen) == len(set(seen)) and set(seen) == wanted[swept]
        assert len(slots) == len(set(slots))  # no slot split across two windows
        assert len(wanted[swept]) > 8  # several windows' worth


@pytest.mark.parametrize("swept", [s for s in SWEPT_SCOPES if s != Scope(tenant="t")], ids=str)
def test_a_sweep_resumes_by_a_range_of_the_slot_index(swept: Scope) -> None:
    # The cursor compares only the columns the scope leaves free: a row-value
    # comparison from a fixed column is no range to SQLite, and every window would walk
    # the scope from its start. (A tenant without a user fixes no prefix of the index.)
    traced: list[tuple[str, Sequence[object]]] = []
    mem, _ = _sweep_store(lambda sql, params: traced.append((sql, params)))
    with mem:
        first = mem.store.sweep_claims(swept, None, 4)
        traced.clear()
        mem.store.sweep_claims(swept, first.next, 4)
        store = mem.store
        assert isinstance(store, SQLiteStore)
        sql, params = traced[0]
        plan = " ".join(row[-1] for row in store._query(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "claims_slot" in plan and ")>(" in plan and "TEMP B-TREE" not in plan, plan


def test_what_a_claim_closed_and_what_cites_a_turn_are_probed_by_rowid() -> None:
    traced: list[tuple[str, Sequence[object]]] = []
    mem, _ = _sweep_store(lambda sql, params: traced.append((sql, params)))
    with mem:
        user = mem.scope(tenant="t", user="u")
        user.remember("e1", "lives_in", "Oslo")
        closer = user.remember("e1", "lives_in", "Rome").added[0]
        store = mem.store
        assert isinstance(store, SQLiteStore)
        at = TimeQuery(known_at=10**17, valid_at=10**17)
        reads: list[Callable[[], object]] = [
            lambda: user.why(closer.id),
            lambda: store.claims_citing("turn-1", Scope(tenant="t", user="u"), at),
        ]
        for read in reads:
            traced.clear()
            read()
            plans = [" ".join(row[-1] for row in store._query(f"EXPLAIN QUERY PLAN {sql}", p))
                     for sql, p in traced if "rowid IN" in sql]
            assert plans and all("SEARCH claims USING INTEGER PRIMARY KEY" in plan
                                 and "claims_slot" not in plan for plan in plans), plans


def test_an_embedder_of_another_width_is_refused(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("a", "likes", "b")
        embed_all(mem)
    with pytest.raises(DimensionMismatchError, match="512-d"):
        Memvara(db_path, embedder=HashingEmbedder(dim=64))
    with Memvara(db_path, clock=clock) as mem:  # still usable at its own width
        assert mem.count() == 1


def test_fts_delete_is_an_indexed_lookup_not_a_scan(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    plan = store._query("EXPLAIN QUERY PLAN DELETE FROM claims WHERE rowid = 1")
    assert any("INTEGER PRIMARY KEY" in str(row) for row in plan)
    triggers = store._query("SELECT sql FROM sqlite_master WHERE name = 'claims_fts_delete'")
    assert "old.rowid" in triggers[0][0]


def test_each_vector_is_stored_once_in_the_sidecar(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        claims = [mem.remember(f"u{i}", "likes", f"thing {i}").added[0] for i in range(10)]
        assert embed_all(mem) == 10
        store = mem.store
        assert isinstance(store, SQLiteStore)
        columns = [r[1] for r in store._query("PRAGMA table_info(claims)")]
        assert "vec_slot" in columns and "embedding" not in columns
        rows = store._query("SELECT rowid, vec_slot FROM claims ORDER BY rowid")
        slots = [slot for _, slot in rows]
        assert slots == [rowid for rowid, _ in rows]  # a row's vector sits at its rowid
        expected = mem.embedder.encode([c.text for c in claims])
        np.testing.assert_array_equal(store.vectors(slots), expected)
    sidecar = Path(db_path + ".vecs").read_bytes()
    for row in expected:
        assert sidecar.count(row.tobytes()) == 1


def test_a_corrupt_sidecar_is_reported(db_path: str, clock: Clock) -> None:
    from memvara import StoreCorruptError
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("a", "likes", "b")
    Path(db_path + ".vecs").write_bytes(b"garbage")
    with pytest.raises(StoreCorruptError, match="sidecar"):
        Memvara(db_path)


def test_reads_do_not_wait_for_an_open_write_transaction(file_mem: Memvara) -> None:
    file_mem.remember("user", "likes", "tea")
    results: list[int] = []
    with file_mem.store.transaction():
        file_mem.remember("user", "likes", "coffee")  # uncommitted
        reader = threading.Thread(target=lambda: results.append(file_mem.count()))
        reader.start()
        reader.join(timeout=10)
        assert not reader.is_alive()
    assert results == [1]  # the reader saw the last committed state, without waiting
    assert file_mem.count() == 2


def test_a_failed_write_rolls_back_everything(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea")
    with pytest.raises(RuntimeError):
        with mem.store.transaction():
            mem.remember("user", "likes", "coffee")
            with mem.store.transaction():
                mem.remember("user", "likes", "cake")
            raise RuntimeError("boom")
    assert [c.object for c in mem.get_all()] == ["tea"]


def test_a_failed_nested_step_rolls_back_only_itself(mem: Memvara) -> None:
    with mem.store.transaction():
        mem.remember("user", "likes", "coffee")
        with pytest.raises(RuntimeError):
            with mem.store.transaction():
                mem.remember("user", "likes", "cake")
                raise RuntimeError("boom")
    assert [c.object for c in mem.get_all()] == ["coffee"]


def test_a_lock_held_past_the_busy_timeout_is_a_clear_error(db_path: str, clock: Clock) -> None:
    SQLiteStore(db_path).close()
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with Memvara(store=SQLiteStore(db_path, busy_timeout=0.05), clock=clock) as mem:
            with pytest.raises(StoreLockedError):
                mem.remember("user", "likes", "tea")
            blocker.execute("ROLLBACK")
            mem.remember("user", "likes", "tea")
            assert mem.count() == 1
    finally:
        blocker.close()


def test_backend_errors_are_translated() -> None:
    from memvara import ReadOnlyStoreError, StorageFullError, StoreCorruptError
    cases = {
        "attempt to write a readonly database": ReadOnlyStoreError,
        "database or disk is full": StorageFullError,
        "file is not a database": NotAStoreError,
        "database disk image is malformed": StoreCorruptError,
        "something else": StoreError,
    }
    for message, kind in cases.items():
        assert type(translate(sqlite3.OperationalError(message))) is kind


def test_the_tracer_sees_every_statement(tmp_path: Path, clock: Clock) -> None:
    seen: list[str] = []
    store = SQLiteStore(":memory:", tracer=lambda sql, params: seen.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        seen.clear()
        mem.get_all()
        assert len([s for s in seen if s.lstrip().upper().startswith("SELECT")]) == 1


def test_a_write_reads_its_slot_and_its_rowid_in_one_statement(db_path: str, clock: Clock) -> None:
    # BEGIN, the slot read (which also says where the new row goes), the insert, COMMIT:
    # a fresh value and a revision, each one statement short of a separate reservation.
    # (the write log's statements, which run at the commit, are counted in test_write_log)
    seen: list[str] = []
    store = SQLiteStore(db_path, tracer=lambda sql, params: seen.append(sql), write_log=False)
    with Memvara(store=store, clock=clock) as mem:
        mem.remember("ada", "lives_in", "Paris")
        clock.advance(days=1)
        seen.clear()
        mem.remember("ada", "lives_in", "Rome")
        # SQLite traces an UPDATE ... RETURNING twice (RETURNING runs as a trigger program)
        assert _verbs(seen) == ["BEGIN", "WITH", "INSERT", "UPDATE", "UPDATE", "COMMIT"]
        seen.clear()
        mem.remember("bob", "lives_in", "Oslo")
        assert _verbs(seen) == ["BEGIN", "WITH", "INSERT", "COMMIT"]
        first = mem.get_all()
        assert sorted((c.subject, c.object) for c in first) == [("ada", "Rome"), ("bob", "Oslo")]
        assert [c.state for c in mem.history("ada", "lives_in")] == ["ended", "live"]


def _verbs(statements: list[str]) -> list[str]:
    return [sql.split()[0].upper() for sql in statements]


def test_a_reservation_read_by_a_slot_read_ends_with_its_transaction(db_path: str) -> None:
    # A slot read notes where the next row goes, for the insert in the same transaction.
    # Once that transaction ends another process may write, so a later insert reads again.
    first, second = SQLiteStore(db_path), SQLiteStore(db_path)
    try:
        with first.transaction():
            first.slot_claims(Scope(), [("ada", "lives_in")])
        with second.transaction():
            second.insert_claims([_claim("ada", "Paris")], None)
        with first.transaction():
            (bob,) = first.insert_claims([_claim("bob", "Oslo")], None)
        assert bob.id.startswith("c2-")
        found = first.get_claim(bob.id, Scope())
        assert found is not None and found.subject == "bob"
    finally:
        first.close()
        second.close()


def test_slot_reads_return_each_slots_believed_claims(mem: Memvara) -> None:
    # One statement serves many slots; a read outside a write and a single write's own
    # read (which also reserves the insert's rowid) find the same claims, each slot's
    # in the order they became true (then the order they were written).
    store = mem.store
    paris = mem.remember("ada", "lives_in", "Paris").added[0]
    tea = mem.remember("ada", "likes", "tea").added[0]
    coffee = mem.remember("ada", "likes", "coffee").added[0]
    juice = mem.remember("ada", "likes", "juice", valid_from=JAN).added[0]  # true earlier
    mem.forget("bob", "likes")  # nothing to retire: an empty slot stays empty
    likes = [juice, tea, coffee]
    wanted = [("ada", "lives_in"), ("ada", "likes"), ("bob", "likes")]
    found = store.slot_claims(Scope(), wanted)
    assert found == {("ada", "lives_in"): [paris], ("ada", "likes"): likes,
                     ("bob", "likes"): []}
    assert store.slot_claims(Scope(), [("ada", "likes")]) == {("ada", "likes"): likes}
    with store.transaction():
        assert store.slot_claims(Scope(), [("ada", "likes")]) == {("ada", "likes"): likes}
        assert store.slot_claims(Scope(), [("bob", "likes")]) == {("bob", "likes"): []}


def _claim(subject: str, obj: str) -> Claim:
    return Claim(subject, "lives_in", obj, NOW, recorded_at=NOW, text=f"{subject} lives in {obj}")


def test_ended_and_retired_claims_are_returned_as_stored(clock: Clock) -> None:
    # The store builds them from the claims passed in instead of reading rows back: the
    # receipt must still say exactly what a later read returns.
    with Memvara(clock=clock) as mem:
        paris = mem.remember("ada", "lives_in", "Paris").added[0]
        clock.advance(days=1)
        receipt = mem.remember("ada", "lives_in", "Rome")
        assert receipt.ended == (mem.get(paris.id),)
        rome = receipt.added[0]
        clock.advance(days=1)
        assert mem.delete(rome.id)
        (gone,) = mem.get_all(states=["retired"])
        assert gone.id == rome.id and gone.invalidated_at == clock.now


def test_a_settlement_that_neither_inserts_nor_reinforces_is_refused(clock: Clock) -> None:
    # write_claim's settle() must name a claim to insert or one to reinforce; anything
    # else is a writer bug, raised inside the transaction so nothing is written.
    from memvara.store.base import Settlement
    store = SQLiteStore()
    with Memvara(store=store, clock=clock) as mem:
        ada = mem.remember("ada", "lives_in", "Paris").added[0]
        with pytest.raises(StoreError, match="no claim to insert or to reinforce"):
            with store.transaction():
                store.write_claim(_claim("ada", "Rome"), "ada", None,
                                  lambda found: Settlement(None, None, (), ()))
        assert mem.get_all() == [ada]


def test_a_single_write_that_fails_after_its_insert_leaves_nothing(clock: Clock) -> None:
    # The closure fails (its claim is not in the store) after the new row went in: the
    # whole write rolls back, the insert with it.
    from memvara.store.base import Settlement
    store = SQLiteStore()
    with Memvara(store=store, clock=clock) as mem:
        ada = mem.remember("ada", "lives_in", "Paris").added[0]
        rome, stranger = _claim("ada", "Rome"), _claim("bob", "Oslo")
        with pytest.raises(StoreError, match="not in the store"):
            with store.transaction():
                store.write_claim(rome, "ada", None,
                                  lambda found: Settlement(rome, None, [(stranger, 1, 1)], ()))
        assert mem.get_all() == [ada] and mem.count(states=["live", "ended", "retired"]) == 1


def test_ending_or_retiring_a_claim_the_store_lacks_raises(clock: Clock) -> None:
    store = SQLiteStore()
    with Memvara(store=store, clock=clock) as mem:
        ada = mem.remember("ada", "lives_in", "Paris").added[0]
        stranger = _claim("bob", "Oslo")
        with pytest.raises(StoreError, match="not in the store"):
            with store.transaction():
                store.end_claims([(ada, 1, 1, None), (stranger, 1, 1, None)])
        with pytest.raises(StoreError, match="not in the store"):
            with store.transaction():
                store.retire_claims([(stranger, 1, None)])
        assert mem.get_all() == [ada]  # the failed transaction changed nothing


def test_the_writer_checkpoints_every_few_thousand_pages(db_path: str) -> None:
    store = SQLiteStore(db_path)
    try:
        (pages,) = store._writer.execute("PRAGMA wal_autocheckpoint").fetchone()
        assert pages == CHECKPOINT_PAGES > 1000  # SQLite's default syncs four times as often
    finally:
        store.close()


def test_use_after_close_raises(db_path: str) -> None:
    store = SQLiteStore(db_path)
    store.close()
    store.close()  # idempotent
    assert store.closed
    with pytest.raises(ClosedError):
        store.get_claim("x", __import__("memvara").Scope())
    with pytest.raises(ClosedError):
        with store.transaction():
            pass


def test_an_old_sqlite_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 30, 0))
    with pytest.raises(StoreError, match="too old"):
        SQLiteStore()


def test_an_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        SQLiteStore(str(tmp_path / "missing-dir" / "x.db"))


def test_sqlite_errors_inside_reads_and_writes_are_translated(db_path: str) -> None:
    store = SQLiteStore(db_path)
    try:
        with pytest.raises(StoreError, match="no such table"):
            store._query("SELECT * FROM nope")
        with pytest.raises(StoreError, match="syntax"):
            with store._writing() as conn:
                conn.execute("THIS IS NOT SQL")
    finally:
        store.close()


def test_empty_batches_and_limits(mem: Memvara) -> None:
    from memvara import Scope
    from memvara.store import TimeQuery
    store = mem.store
    assert store.insert_claims([], None) == []
    assert isinstance(store, SQLiteStore)
    assert store.insert_episodes([], None) == []
    assert store.slot_claims(Scope(), []) == {}
    for i in range(3):
        mem.remember(f"u{i}", "likes", "x")
    tq = TimeQuery(known_at=2**62, valid_at=2**62)
    assert len(store.find_claims(Scope(), tq, {"live"}, limit=2)) == 2


def test_a_store_may_hold_claims_without_vectors(mem: Memvara) -> None:
    from .conftest import NOW
    (stored,) = mem.store.insert_claims(
        [Claim("u", "likes", "x", valid_from=NOW, recorded_at=NOW, text="u likes x",
               extractor="import", scope=Scope())], None)
    assert mem.get(stored.id) == stored
    assert mem.stats()["embeddings"] == 0
    assert mem.erase(stored.id)


def test_fts_drift_is_reported_by_the_integrity_check(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    claim = mem.remember("u", "likes", "x").added[0]
    assert store.flush_text_index() == 1
    with store._writing() as conn:
        conn.execute("DROP TRIGGER claims_fts_delete")
        conn.execute("DELETE FROM claims WHERE id = ?", (claim.id,))
    assert any("claims_fts" in p for p in store.integrity_problems())


def test_a_rolled_back_erase_keeps_the_vector(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    claim = mem.remember("u", "likes", "x").added[0]
    embed_all(mem)
    with pytest.raises(RuntimeError):
        with store.transaction():
            mem.erase(claim.id)
            raise RuntimeError("abort")
    assert mem.get(claim.id) == claim
    assert store.vectors([1]).any()


def test_an_erase_rolled_back_inside_a_savepoint_keeps_the_vector(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    kept = mem.remember("u", "likes", "x").added[0]
    gone = mem.remember("u", "likes", "y").added[0]
    embed_all(mem)
    with store.transaction():
        with pytest.raises(RuntimeError), store.transaction():
            mem.erase(kept.id)
            raise RuntimeError("abort the inner step only")
        mem.erase(gone.id)
    assert mem.get(kept.id) == kept
    assert store.vectors([1]).any() and not store.vectors([2]).any()
    assert store.integrity_problems() == []


def test_the_store_lists_its_files(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        assert store.files == [db_path, db_path + "-wal", db_path + "-shm"]
        mem.remember("u", "likes", "x")
        embed_all(mem)
        assert store.files[-1] == db_path + ".vecs"
    with Memvara(clock=clock) as memory:
        assert memory.store.files == []  # type: ignore[attr-defined]


def test_sqlite_errors_inside_a_callers_transaction_are_translated(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    with pytest.raises(StoreError, match="syntax"):
        with store.transaction():
            with store._writing() as conn:
                conn.execute("NOT SQL EITHER")


def test_a_claim_id_addresses_its_row_and_a_stale_or_forged_one_finds_nothing(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    first = mem.remember("user", "likes", "tea").added[0]
    (rowid,) = store._query("SELECT rowid FROM claims WHERE id = ?", [first.id])[0]
    assert first.id.startswith(f"c{rowid}-") and len(first.id.split("-")[1]) == 8
    assert mem.erase(first.id)
    later = mem.remember("user", "likes", "coffee").added[0]
    assert not later.id.startswith(f"c{rowid}-")  # an erased row's rowid is never reused
    assert mem.get(first.id) is None
    assert not mem.delete(first.id) and not mem.erase(first.id)
    forged = later.id.split("-")[0] + "-00000000"  # the right row, the wrong digest
    assert mem.get(forged) is None and not mem.delete(forged)
    assert mem.get(later.id) == later


@pytest.mark.parametrize("claim_id", ["c", "c1", "c1-", "cx-12345678", "c\u0661-12345678",
                                      "c01-12345678", "e1-12345678", "c1-1234567"])
def test_strings_that_are_not_claim_ids_find_nothing(mem: Memvara, claim_id: str) -> None:
    real = mem.remember("user", "likes", "tea").added[0]
    assert real.id.startswith("c1-")
    assert mem.get(claim_id) is None
    assert not mem.delete(claim_id)
    assert mem.count() == 1


def test_a_custom_embedders_vectors_are_stored_as_given(db_path: str, clock: Clock) -> None:
    class Doubled:
        """A user's own embedder: not ours, so its output is checked before it is kept."""

        dim = 16

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.asarray(HashingEmbedder(dim=8).encode(texts).repeat(2, axis=1), dtype=np.float64)

    with Memvara(db_path, embedder=Doubled(), clock=clock) as mem:  # type: ignore[arg-type]
        claim = mem.remember("user", "likes", "tea").added[0]
        embed_all(mem)
        store = mem.store
        assert isinstance(store, SQLiteStore)
        (slot,) = store._query("SELECT vec_slot FROM claims WHERE id = ?", [claim.id])[0]
        expected = Doubled().encode([claim.text]).astype(np.float32)
        np.testing.assert_array_equal(store.vectors([slot]), expected)


def test_vectors_of_another_width_are_refused_by_the_store(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    mem.remember("user", "likes", "tea")
    embed_all(mem)
    claim = Claim("u", "likes", "x", valid_from=NOW, recorded_at=NOW, text="u likes x",
                  extractor="import", scope=Scope())
    with pytest.raises(DimensionMismatchError, match="8-d"):
        store.insert_claims([claim], np.ones((1, 8), dtype=np.float32))
    episode = Episode("hello", ts=NOW, recorded_at=NOW, scope=Scope())
    with pytest.raises(DimensionMismatchError, match="8-d"):
        store.insert_episodes([episode], np.ones((1, 8), dtype=np.float32))
    assert mem.count() == 1 and store.integrity_problems() == []


def test_misplaced_or_missing_vectors_are_reported(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("user", "likes", "tea")
        embed_all(mem)
        store = mem.store
        assert isinstance(store, SQLiteStore)
        with store._writing() as conn:
            conn.execute("UPDATE claims SET vec_slot = vec_slot + 100000")
        problems = store.integrity_problems()
    assert any("another row's vector" in p for p in problems)
    assert any("sidecar holds" in p for p in problems)


def test_a_claim_without_a_vector_below_the_watermark_is_reported(mem: Memvara) -> None:
    # The backlog is read above the watermark only: a row below it that lost its
    # vector would never be embedded again.
    mem.remember("user", "likes", "tea")
    embed_all(mem)
    store = mem.store
    assert isinstance(store, SQLiteStore) and store.integrity_problems() == []
    with store._writing() as conn:
        conn.execute("UPDATE claims SET vec_slot = NULL")
    assert store.integrity_problems() == [
        "claims: 1 rows at or below the vector watermark have no vector"]


def test_write_side_reads_check_content_not_just_its_hash(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memvara.store.sqlite._episodes as backend

    mem.add("I live in Berlin")
    store = mem.store
    assert isinstance(store, SQLiteStore)
    assert store.copies_of(mem.default_scope, set()) == {}
    monkeypatch.setattr(backend, "content_hash", lambda text: "same")  # every text collides
    with store._writing() as conn:
        conn.execute("UPDATE episodes SET content_hash = 'same'")
    assert store.copies_of(mem.default_scope, {"I live in Oslo"}) == {}  # same hash, other text
    assert list(store.copies_of(mem.default_scope, {"I live in Berlin"})) == ["I live in Berlin"]


def test_write_side_reads_after_close_or_on_a_broken_file_raise_memvara_errors(db_path: str) -> None:
    store = SQLiteStore(db_path)
    with store._writing() as conn:
        conn.execute("DROP TABLE episodes")
    with pytest.raises(StoreError):
        store.recent_turns(Scope(), 4)
    store.close()
    with pytest.raises(ClosedError):
        store.claims_missing_vectors()


def test_an_empty_add_writes_nothing(mem: Memvara) -> None:
    receipt = mem.add([])
    assert receipt.added == () and receipt.skipped == () and mem.stats()["episodes"] == 0


# -- the seam: the core protocol and the optional fast paths ----------------------------
OPTIONAL_PROTOCOLS = (
    SingleWriteStore, BulkWriteStore, RankingStore, SimilarityStore, DeferredTextIndexStore)


def test_sqlite_store_offers_every_optional_fast_path() -> None:
    store = SQLiteStore()
    try:
        # Statically too: mypy checks each assignment against the protocol's signatures.
        core: Store = store
        single: SingleWriteStore = store
        bulk: BulkWriteStore = store
        ranking: RankingStore = store
        similar: SimilarityStore = store
        deferred: DeferredTextIndexStore = store
        assert all(isinstance(s, Store) for s in (core, single, bulk, ranking, similar, deferred))
        assert all(isinstance(store, protocol) for protocol in OPTIONAL_PROTOCOLS)
        names = {name for protocol in OPTIONAL_PROTOCOLS for name in vars(protocol)
                 if not name.startswith("_")}
        assert names == set(OPTIONAL)
    finally:
        store.close()


def _workload(mem: Memvara) -> list[object]:
    """Single and batch writes, a supersession, a turn, searches and a history: what each
    fast path serves, read back as plain values."""
    done: list[object] = []
    for city, start in (("Berlin", JAN), ("Lisbon", NOW)):
        receipt = mem.remember("ada", "lives_in", city, valid_from=start, sources=["e1"])
        done.append([(c.id, c.object, c.valid_to) for c in (*receipt.added, *receipt.ended)])
    batch = mem.remember_many([Claim("bob", "likes", f"tea {i}", scope=Scope(user=f"u{i % 3}"))
                               for i in range(7)])
    done.append([c.id for c in batch.added])
    done.append(mem.remember("ada", "lives_in", "Lisbon", valid_from=NOW).reinforced[0].id)
    mem.add(Episode("ada moved to Lisbon last spring", role="user"))
    for query, turns in (("where does ada live", False), ("Lisbon spring", True)):
        done.append([(r.text, r.score, r.explain) for r in
                     mem.search(query, k=5, include_episodes=turns)])
    done.append([(c.object, c.state) for c in mem.history("ada", "lives_in")])
    return done


def test_a_store_with_only_the_core_protocol_gives_the_same_answers(
    tmp_path: Path, clock: Clock,
) -> None:
    core_only = store_without()()
    try:
        assert isinstance(core_only, Store)
        assert not any(isinstance(core_only, protocol) for protocol in OPTIONAL_PROTOCOLS)
    finally:
        core_only.close()
    # Its text index lags, so it keeps flush_text_index: a store without that must find
    # a row by its text at once (test_search: the search then goes without it).
    bare = store_without(*(name for name in OPTIONAL if name != "flush_text_index"))(
        str(tmp_path / "bare.db"))
    assert isinstance(bare, Store) and isinstance(bare, DeferredTextIndexStore)
    assert not any(isinstance(bare, protocol) for protocol in OPTIONAL_PROTOCOLS[:-1])
    with Memvara(store=bare, clock=clock) as mem:
        slow = _workload(mem)
    with Memvara(str(tmp_path / "full.db"), clock=Clock()) as mem:
        assert _workload(mem) == slow
    reopened = SQLiteStore(str(tmp_path / "bare.db"))  # closed with its text indexed
    try:
        assert reopened.flush_text_index() == 0 and reopened.integrity_problems() == []
    finally:
        reopened.close()


def test_no_words_match_nothing(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea")
    mem.add(Episode("tea at noon", role="user"))
    store = mem.store
    assert isinstance(store, SQLiteStore)
    store.flush_text_index()
    tq = TimeQuery(known_at=2**62, valid_at=None)
    assert store.search_claims_text(Scope(), tq, ("live",), None, ["tea"], 5)
    assert store.search_claims_text(Scope(), tq, ("live",), None, [], 5) == []
    assert store.search_episodes_text(Scope(), tq, ["tea"], 5)
    assert store.search_episodes_text(Scope(), tq, [], 5) == []
