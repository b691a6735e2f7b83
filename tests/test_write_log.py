"""The tamper-evident write log: every write appends one chained record naming its verb
and actor; ``verify()`` finds the first record that does not chain, ``anchor()`` and
``verify(since=...)`` catch a rewritten or rolled-back history; the log holds no text."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from memvara import Claim, Memvara, SQLiteStore
from memvara._domain.ledger import Anchor, canonical_body, canonical_ids, genesis, keyed_digest, parse_anchor, record_hash
from memvara._errors import InvalidArgumentError, StoreError
from memvara._read import audit
from memvara.llm import NullLLM
from memvara.store.base import WriteLogStore

from .conftest import Clock, FakeLLM
from .store_without import store_without


def records(mem: Memvara) -> list[tuple[int, int, str, str, dict[str, object]]]:
    store = mem.store
    assert isinstance(store, WriteLogStore)
    return [(seq, at, actor, action, json.loads(body))
            for seq, at, actor, action, body, _ in store.log_records(0, 1_000_000)]


def test_every_write_verb_appends_one_record_naming_it_and_its_actor(mem: Memvara, clock: Clock) -> None:
    start = int(clock.now.timestamp() * 1_000_000)
    first = mem.remember("maya", "lives_in", "Porto", actor="importer").added[0]
    clock.advance(days=1)
    second = mem.remember("maya", "lives_in", "Lisbon").added[0]
    many = mem.remember_many([Claim("maya", "likes", "tea"), Claim("maya", "likes", "jazz")],
                             actor="batch")
    new = mem.supersede(second.id, Claim("maya", "lives_in", "Faro"), actor="fixer").added[0]
    assert mem.delete(new.id, actor="cleaner") is True
    assert mem.forget("maya", "likes", actor="cleaner")
    assert mem.erase(first.id, actor="dpo") is True
    mem.alias_entity("Big Blue", "IBM", actor="owner")
    mem.add("hello there, how are you today?", actor="chat")
    mem.purge(user="nobody", actor="ops")  # nothing there: no change, so no record
    log = records(mem)
    assert [(r[2], r[3]) for r in log] == [
        ("importer", "remember"), ("", "remember"), ("batch", "remember_many"),
        ("fixer", "supersede"), ("cleaner", "delete"), ("cleaner", "forget"),
        ("dpo", "erase"), ("owner", "alias_entity"), ("chat", "add"),
    ]
    assert [r[0] for r in log] == list(range(1, 10))
    rowid = int(first.id[1:].split("-")[0])
    assert log[0][4] == {"added": [rowid]}
    assert log[1][4] == {"added": [rowid + 1], "ended": [rowid]}
    assert log[2][4] == {"added": [rowid + 2, rowid + 3]}
    assert log[4][4] == {"retired": [rowid + 4]}
    assert log[6][4] == {"erased": [rowid]}
    assert log[7][4] == {"aliases_learned": 1}
    assert log[8][4] == {"turns_added": [1]}
    assert log[0][1] == start and log[1][1] == log[-1][1] == start + 86_400_000_000
    report = mem.verify()
    assert report.ok and report.records == 9 and report.broken is None
    assert report.head == mem.anchor() and report.to_dict()["records"] == 9


def test_a_reinforcing_write_and_a_consolidation_append_records(mem: Memvara, clock: Clock) -> None:
    """Saying a fact again changes its row (observations, sources) and a consolidation
    promotes and decays rows: each is a write, so each names its actor in the log
    (neither appended a record, so the log could not say who did them)."""
    first = mem.remember("maya", "likes", "chess", memory_type="episodic", actor="a1").added[0]
    rowid = int(first.id[1:].split("-")[0])
    for _ in range(5):
        clock.advance(days=1)
        assert mem.remember("maya", "likes", "chess", memory_type="episodic", actor="a2").reinforced
    log = records(mem)
    assert [(r[2], r[3], r[4]) for r in log[1:]] == [("a2", "remember", {"reinforced": [rowid]})] * 5
    clock.advance(days=90)
    assert mem.consolidate(actor="janitor") == {"decayed": 1, "merged": 0, "promoted": 1}
    last = records(mem)[-1]
    assert last[2:] == ("janitor", "consolidate", {"decayed": [rowid], "promoted": [rowid]})
    assert mem.consolidate(actor="janitor") == {"decayed": 0, "merged": 0, "promoted": 0}
    assert records(mem)[-1] == last and mem.verify().ok  # a run that changed nothing: no record


def test_an_anchor_of_the_logs_start_with_another_hash_is_reported(mem: Memvara) -> None:
    """An empty store's anchor names record 0 and the genesis hash; one naming record 0
    with another hash was never given by this store (it verified as ok)."""
    start = parse_anchor(mem.anchor())
    mem.remember("maya", "likes", "tea")
    assert mem.verify(since=str(start)).ok
    forged = Anchor(start.store, 0, "f" * 64)
    report = mem.verify(since=str(forged))
    assert (report.ok, report.broken, report.records) == (False, 0, 0)
    assert report.problem is not None and "record 0" in report.problem


def test_the_default_actor_is_the_scopes_agent_else_its_user(mem: Memvara) -> None:
    mem.scope(user="maya", agent="planner").remember("maya", "likes", "tea")
    mem.scope(user="maya").remember("maya", "likes", "jazz")
    mem.remember("maya", "likes", "chess")
    assert [r[2] for r in records(mem)] == ["planner", "maya", ""]


def test_why_names_the_actor_of_the_write_that_added_the_claim(mem: Memvara) -> None:
    claim = mem.remember("maya", "lives_in", "Porto", actor="importer").added[0]
    mem.remember("maya", "lives_in", "Porto", actor="someone else")  # reinforces, adds nothing
    why = mem.why(claim.id)
    assert why is not None and why.actor == "importer"
    assert why.to_dict()["actor"] == "importer"


def test_a_claim_written_unlogged_or_unnamed_has_its_scopes_default_actor(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memvara(store=SQLiteStore(path, write_log=False)) as mem:
        claim = mem.remember("maya", "likes", "tea", user="maya", actor="someone").added[0]
        assert records(mem) == []
        why = mem.why(claim.id, user="maya")
        assert why is not None and why.actor == "maya"  # no record names anyone
    with Memvara(path) as mem:  # opened logged again: the chain starts at the next write
        mem.remember("maya", "likes", "jazz")
        assert [r[0] for r in records(mem)] == [1] and mem.verify().ok


def test_a_claim_an_unlogged_process_wrote_is_not_credited_to_the_next_logged_writer(
        tmp_path: Path, clock: Clock) -> None:
    """The next logged record names the unlogged process's claim as added, so that it
    is in the log at all; why() credited it to that record's actor ("bob" wrote Xavier)."""
    path = str(tmp_path / "m.db")
    with Memvara(store=SQLiteStore(path), clock=clock, llm=NullLLM()) as mem, \
            Memvara(store=SQLiteStore(path, write_log=False), clock=clock, llm=NullLLM()) as ghost:
        mem.remember("seed", "likes", "tea")
        unlogged = ghost.remember("xavier", "likes", "tea", actor="ghost").added[0]
        logged_one = mem.remember("yves", "likes", "jazz", actor="bob").added[0]
        assert records(mem)[-1][2:4] == ("bob", "remember")
        assert records(mem)[-1][4] == {"added": [3, 2]}  # both named, so neither is missing
        why_unlogged, why_logged = mem.why(unlogged.id), mem.why(logged_one.id)
        assert why_unlogged is not None and why_unlogged.actor == ""  # no record names its actor
        assert why_logged is not None and why_logged.actor == "bob"


def test_queued_adds_and_retries_are_logged_on_the_thread_that_runs_them(clock: Clock) -> None:
    llm = FakeLLM({"I moved to Porto last week.": [("user", "lives_in", "Porto")],
                   "We also got a dog, Rex.": [("maya", "has_pet", "Rex")]})
    with Memvara(clock=clock, llm=llm) as mem:
        future = mem.add("I moved to Porto last week.", wait=False, actor="queue")
        mem.flush()
        assert future.result().added
        llm.fail = True
        with pytest.raises(Exception):
            mem.add("We also got a dog, Rex.", user="maya")
        llm.fail = False
        mem.retry_extraction(actor="retrier", user="maya")
        log = records(mem)
        assert [(r[2], r[3]) for r in log] == [
            ("queue", "add"), ("maya", "add"), ("retrier", "retry_extraction")]


def test_consolidate_reset_and_backfill_are_logged(mem: Memvara, clock: Clock) -> None:
    mem.remember("ibm", "located_in", "Armonk")
    mem.remember("big blue", "founded_in", "1911")
    mem.alias_entity("Big Blue", "IBM")
    assert mem.backfill_entities(dry_run=False, actor="curator")
    mem.remember_many([Claim("maya", "likes", "tea")] * 1)
    clock.advance(days=400)
    mem.consolidate(actor="nightly")
    mem.reset(actor="ops")
    actions = [(r[2], r[3]) for r in records(mem)]
    assert ("curator", "backfill_entities") in actions
    assert actions[-1] == ("ops", "reset")
    assert "erased" in records(mem)[-1][4]


def test_a_bad_actor_is_refused_before_anything_is_written(mem: Memvara) -> None:
    # a lone surrogate or a NUL no store can hold: a reinforcing write's record took it
    # to the log's insert (UnicodeEncodeError on SQLite)
    for bad in ("", "   ", 7, "x" * 201, "ops\ud800", "o\x00ps"):
        with pytest.raises(InvalidArgumentError, match="actor"):
            mem.remember("maya", "likes", "tea", actor=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError, match="actor"):
            mem.add("hello", wait=False, actor=bad)  # type: ignore[arg-type]
    assert mem.count() == 0 and records(mem) == []


def test_a_rolled_back_write_appends_nothing(mem: Memvara) -> None:
    mem.remember("maya", "likes", "tea")
    store = mem.store
    assert isinstance(store, WriteLogStore)
    with pytest.raises(RuntimeError):
        with store.transaction():
            mem.remember("maya", "likes", "jazz")
            store.log_note("correction", claim="c1")
            raise RuntimeError("boom")
    assert len(records(mem)) == 1 and mem.count() == 1


def test_a_step_rolled_back_inside_a_transaction_leaves_its_changes_out_of_the_record(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, WriteLogStore)
    with store.transaction():
        kept = mem.remember("maya", "likes", "tea").added[0]
        with pytest.raises(RuntimeError):
            with store.transaction():  # a savepoint: its claim, retirement and note go
                mem.remember("maya", "likes", "jazz")
                mem.delete(kept.id)
                store.log_note("correction", claim=1)
                raise RuntimeError("boom")
        later = mem.remember("maya", "likes", "rock").added[0]
    body = records(mem)[0][4]
    assert body == {"added": [int(c.id[1:].split("-")[0]) for c in (kept, later)]}
    assert mem.count() == 2 and mem.verify().ok


def test_an_unlogged_store_rolls_back_as_before(tmp_path: Path, clock: Clock) -> None:
    with Memvara(store=SQLiteStore(str(tmp_path / "off.db"), write_log=False), clock=clock) as mem:
        store = mem.store
        assert isinstance(store, WriteLogStore)
        with pytest.raises(RuntimeError):
            with store.transaction():
                mem.remember("maya", "likes", "jazz")
                raise RuntimeError("boom")
        mem.remember("maya", "likes", "tea")
        assert mem.count() == 1 and records(mem) == []


def test_a_note_rides_in_its_transactions_record_and_a_lone_note_makes_one(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, WriteLogStore)
    with store.transaction():
        mem.remember("maya", "likes", "tea")
        store.log_note("correction", claims=[1], digest=store.log_digest("maya"))
    store.log_note("review", decision="keep", review=3)
    log = records(mem)
    assert log[0][4]["notes"] == [{"correction": {"claims": [1], "digest": store.log_digest("maya")}}]
    assert log[1][4] == {"notes": [{"review": {"decision": "keep", "review": 3}}]}
    assert "maya" not in json.dumps(log)
    assert store.log_digest("maya") == keyed_digest(getattr(store, "_log_ids")[1], "maya") != store.log_digest("Maya")
    assert mem.verify().ok


def tamper(path: str, sql: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, params)
    conn.close()


def filled(path: str, clock: Clock, writes: int = 5) -> None:
    with Memvara(path, clock=clock) as mem:
        for i in range(writes):
            mem.remember("maya", "lives_in", f"Town{i}", actor=f"w{i}")


def test_verify_reports_a_record_edited_in_the_file(db_path: str, clock: Clock) -> None:
    filled(db_path, clock)
    tamper(db_path, "UPDATE write_log SET actor = 'mallory' WHERE seq = 3")
    with Memvara(db_path, clock=clock) as mem:
        report = mem.verify()
        assert not report.ok and report.broken == 3 and report.records == 2
        assert report.problem is not None and "record 3 (remember by mallory)" in report.problem


def test_verify_reports_a_record_deleted_from_the_middle(db_path: str, clock: Clock) -> None:
    filled(db_path, clock)
    tamper(db_path, "DELETE FROM write_log WHERE seq = 2")
    with Memvara(db_path, clock=clock) as mem:
        report = mem.verify()
        assert (report.ok, report.broken, report.problem) == (False, 2, "record 2 is missing")


def rechain(path: str, keep: int | None = None) -> None:
    """What a careful forger does: edit, drop the tail, and recompute every hash."""
    conn = sqlite3.connect(path)
    with conn:
        store_id = conn.execute("SELECT value FROM store_meta WHERE key = 'log_store_id'").fetchone()[0]
        if keep is not None:
            conn.execute("DELETE FROM write_log WHERE seq > ?", (keep,))
        conn.execute("UPDATE write_log SET actor = 'mallory' WHERE seq = 1")
        prev = genesis(store_id)
        for seq, at, actor, action, body in conn.execute(
                "SELECT seq, at, actor, action, body FROM write_log ORDER BY seq").fetchall():
            prev = record_hash(prev, seq, at, actor, action, body)
            conn.execute("UPDATE write_log SET hash = ? WHERE seq = ?", (prev, seq))
    conn.close()


def test_an_anchor_catches_a_history_rewritten_with_every_hash_recomputed(db_path: str, clock: Clock) -> None:
    filled(db_path, clock)
    with Memvara(db_path, clock=clock) as mem:
        kept = mem.anchor()
        assert parse_anchor(kept).seq == 5
    rechain(db_path)
    with Memvara(db_path, clock=clock) as mem:
        assert mem.verify().ok  # a whole chain, recomputed: only the anchor knows
        report = mem.verify(since=kept)
        assert not report.ok and report.broken == 5
        assert report.problem is not None and "rewritten" in report.problem


def test_an_anchor_catches_a_rolled_back_history(db_path: str, clock: Clock) -> None:
    filled(db_path, clock)
    with Memvara(db_path, clock=clock) as mem:
        kept = mem.anchor()
    tamper(db_path, "DELETE FROM write_log WHERE seq > 3")
    with Memvara(db_path, clock=clock) as mem:
        assert mem.verify().ok
        report = mem.verify(since=kept)
        assert (report.ok, report.broken, report.records) == (False, 5, 3)
        assert report.problem is not None and "rolled back" in report.problem


def test_an_anchor_still_verifies_after_later_writes(mem: Memvara) -> None:
    empty = mem.anchor()
    assert parse_anchor(empty) == Anchor(parse_anchor(empty).store, 0, genesis(parse_anchor(empty).store))
    mem.remember("maya", "likes", "tea")
    kept = mem.anchor()
    mem.remember("maya", "likes", "jazz")
    assert mem.verify(since=empty).ok and mem.verify(since=kept).ok
    assert str(parse_anchor(kept)) == kept


def test_an_anchor_of_another_store_or_no_anchor_is_refused(mem: Memvara) -> None:
    with Memvara() as other:
        foreign = other.anchor()
    with pytest.raises(InvalidArgumentError, match="since.*another store"):
        mem.verify(since=foreign)
    for bad in (3, "", "mvlog1:x:1", "mvlog2:a:1:" + "0" * 64, "mvlog1::1:" + "0" * 64,
                "mvlog1:a:one:" + "0" * 64, "mvlog1:a:1:abc",
                "mvlog1:a:\u00b2:" + "0" * 64, "mvlog1:a:\u0661:" + "0" * 64):  # no ASCII digits
        with pytest.raises(InvalidArgumentError, match="since"):
            mem.verify(since=bad)  # type: ignore[arg-type]


def test_verify_walks_the_log_in_pages(mem: Memvara, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(7):
        mem.remember("maya", "likes", f"thing{i}")
    monkeypatch.setattr(audit, "PAGE", 3)
    assert mem.verify().records == 7
    tamper_in_memory = mem.store
    assert isinstance(tamper_in_memory, SQLiteStore)
    with tamper_in_memory.transaction():
        tamper_in_memory._writer.execute("UPDATE write_log SET body = '{}' WHERE seq = 6")
    assert mem.verify().broken == 6
    assert len(records(mem)) == 7  # an edit of the log itself is no change the log records


def test_a_store_without_a_log_says_so(clock: Clock) -> None:
    bare = store_without("logged", "log_head")
    with Memvara(store=bare(), clock=clock) as mem:
        mem.remember("maya", "likes", "tea", actor="x")  # the actor is checked, then unused
        with pytest.raises(StoreError, match="keeps no write log"):
            mem.verify()
        with pytest.raises(StoreError, match="keeps no write log"):
            mem.anchor()
        why = mem.why(mem.get_all()[0].id)
        assert why is not None and why.actor is None


def test_write_log_must_be_a_bool() -> None:
    with pytest.raises(InvalidArgumentError, match="write_log"):
        SQLiteStore(write_log="yes")  # type: ignore[arg-type]


def test_a_read_only_store_verifies_and_anchors(db_path: str, clock: Clock) -> None:
    filled(db_path, clock, writes=2)
    with Memvara(store=SQLiteStore(db_path, read_only=True), llm=NullLLM()) as mem:
        assert mem.verify().records == 2 and parse_anchor(mem.anchor()).seq == 2


def test_a_schema_7_store_opens_and_starts_its_log(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock, store=None) as mem:
        mem.remember("maya", "likes", "tea")
    conn = sqlite3.connect(db_path)
    with conn:  # what the code before governance left on disk: schema 7, none of it
        for table in ("write_log", "claim_log", "claims_archive", "tombstones", "imported_log",
                      "evidence", "reviews"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM store_meta WHERE key IN ('log_store_id', 'log_secret')")
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")  # v13 added it
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    with Memvara(db_path, clock=clock) as mem:
        assert [c.object for c in mem.get_all()] == ["tea"]
        assert [r.claim.object for r in mem.search("tea") if r.claim] == ["tea"]
        mem.remember("maya", "likes", "jazz", actor="after")
        assert mem.verify().records == 1 and records(mem)[0][2] == "after"
        clock.advance(days=1)
        assert mem.forget_subject("maya", reason="r", requested_by="q").claims == 2
        assert mem.prune(timedelta(0)) == {"ended": 0, "retired": 0, "evicted": 0}
        assert mem.reviews() == [] and len(mem.tombstones()) == 1


def test_the_canonical_forms_are_stable() -> None:
    assert canonical_body({"b": [2], "a": 1}) == '{"a":1,"b":[2]}'
    for ids in ({"added": [3]}, {"added": [], "ended": [1, 2]}, {"z": [10, 2], "a": [7]}, {}):
        # the joined-by-hand forms are json.dumps's, byte for byte
        want = json.dumps(ids, sort_keys=True, separators=(",", ":"))
        assert canonical_ids(ids) == canonical_body(ids) == want
    assert record_hash("0" * 64, 1, 2, "a", "b", "{}") == record_hash("0" * 64, 1, 2, "a", "b", "{}")
    assert record_hash("0" * 64, 1, 2, "a", "b", "{}") != record_hash("0" * 64, 1, 2, "ab", "", "{}")


def test_a_note_on_an_unlogged_store_is_dropped(mem: Memvara) -> None:
    store = SQLiteStore(write_log=False)
    try:
        store.log_note("review", decision="keep")
        assert store.log_records(0, 10) == [] and store.log_head().seq == 0
    finally:
        store.close()


def test_a_record_that_cannot_be_appended_rolls_its_write_back(
        mem: Memvara, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.remember("maya", "likes", "tea")
    store = mem.store
    assert isinstance(store, WriteLogStore)

    def fail(*args: object) -> None:
        raise StoreError("the disk is full")

    monkeypatch.setattr(store, "_append", fail)
    with pytest.raises(StoreError, match="disk is full"):
        mem.remember("maya", "likes", "jazz")
    monkeypatch.undo()
    assert [c.object for c in mem.get_all()] == ["tea"] and len(records(mem)) == 1
    mem.remember("maya", "likes", "jazz")  # the connection is usable, the chain whole
    assert mem.verify().records == 2


def test_one_write_adds_one_statement_at_its_commit(db_path: str, clock: Clock) -> None:
    seen: list[str] = []
    store = SQLiteStore(db_path, tracer=lambda sql, params: seen.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        mem.remember("ada", "lives_in", "Paris")
        seen.clear()
        mem.remember("bob", "lives_in", "Oslo")
        # the change capture is a Python call from the triggers: no statement of its own
        tail = seen[seen.index("COMMIT") - 2:seen.index("COMMIT")]
        assert [" ".join(sql.split()[:3]) for sql in tail] == [
            "INSERT INTO claims", "INSERT INTO write_log"]
        seen.clear()
        mem.remember("cy", "lives_in", "Rome", actor="named")  # a named actor: one row more
        tail = seen[seen.index("COMMIT") - 3:seen.index("COMMIT")]
        assert [" ".join(sql.split()[:3]) for sql in tail] == [
            "INSERT INTO claims", "INSERT INTO write_log", "INSERT OR REPLACE"]


def test_a_logged_write_runs_one_statement_more_than_an_unlogged_one(tmp_path: Path, clock: Clock) -> None:
    counts = []
    for logged in (True, False):
        seen: list[str] = []
        store = SQLiteStore(str(tmp_path / f"{logged}.db"), write_log=logged,
                            tracer=lambda sql, params: seen.append(sql))
        with Memvara(store=store, clock=clock) as mem:
            mem.remember("ada", "lives_in", "Paris")
            seen.clear()
            mem.remember("bob", "lives_in", "Oslo")
            counts.append(len([sql for sql in seen if not sql.startswith("INSERT INTO claims")]))
    assert counts[0] == counts[1] + 1


def test_a_second_store_on_the_file_chains_after_the_first(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as first, Memvara(db_path, clock=clock) as second:
        first.remember("ada", "lives_in", "Paris")
        second.remember("bob", "lives_in", "Oslo")
        first.remember("cy", "lives_in", "Rome")  # its cached head is stale: it re-reads
        second.remember("di", "lives_in", "Nice")
        assert [r[0] for r in records(first)] == [1, 2, 3, 4] and first.verify().ok


def test_an_export_carries_each_claims_actor_and_the_import_is_logged(tmp_path: Path, clock: Clock) -> None:
    from memvara import export_jsonl, import_jsonl
    path = tmp_path / "out.jsonl"
    with Memvara(clock=clock) as source:
        kept = source.remember("maya", "likes", "tea", actor="importer").added[0]
        export_jsonl(source, str(path))
    text = path.read_text()
    assert '"actor":"importer"' in text
    with Memvara(clock=clock) as target:
        import_jsonl(target, str(path), actor="migrator")
        why = target.why(kept.id)
        assert why is not None and why.actor == "importer"
        assert [(r[2], r[3]) for r in records(target)] == [("migrator", "import_jsonl")]
        with pytest.raises(InvalidArgumentError, match="actor"):
            import_jsonl(target, str(path), actor="")
    old = text.replace('"version":3', '"version":1', 1).replace(',"internal":{"actor":"importer"}', "")
    assert old != text and '"actor"' not in old
    with Memvara(clock=clock) as target:  # a version 1 file: the importer wrote them
        import_jsonl(target, __import__("io").StringIO(old), actor="migrator")
        why = target.why(kept.id)
        assert why is not None and why.actor == "migrator"
    bad = text.replace('"actor":"importer"', '"actor":5')
    with Memvara(clock=clock) as target:
        with pytest.raises(InvalidArgumentError, match="claim.internal.actor: expected a string"):
            import_jsonl(target, __import__("io").StringIO(bad))


def test_a_claim_no_record_names_exports_without_an_actor(tmp_path: Path) -> None:
    from memvara import export_jsonl
    path = tmp_path / "out.jsonl"
    with Memvara(store=SQLiteStore(str(tmp_path / "m.db"), write_log=False)) as source:
        source.remember("maya", "likes", "tea")
        export_jsonl(source, str(path))
    assert '"internal"' not in path.read_text()


def test_a_revert_names_its_actor(mem: Memvara, clock: Clock) -> None:
    mem.remember("bo", "works_at", "Acme")
    clock.advance(days=1)
    wrong = mem.remember("bo", "works_at", "Globex").added[0]
    mem.revert(wrong.id, actor="fixer")
    assert [(r[2], r[3]) for r in records(mem)][-1] == ("fixer", "revert")
