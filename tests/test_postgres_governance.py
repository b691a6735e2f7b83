"""Governance on ``PostgresStore`` where the shared suites (run on both backends in
tests/congruence/) reach into a SQLite file: the write log tampered with in the
schema's own tables, a read-only store verifying, and writes made outside memvara."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memvara import ClaimNotFoundError, Scope, StoreCorruptError, StoreError
from memvara._domain.ledger import genesis, keyed_digest, parse_anchor, record_hash
from memvara._read import audit

from .conftest import Clock
from .postgres_server import drop_schemas, fresh_schema, opened
from .postgres_server import dsn, schema  # noqa: F401 - the fixtures the tests below take

STATES3 = ("live", "ended", "retired")

if True:  # the class under test: importing it imports no driver
    from memvara.store.postgres import PostgresStore


def filled(dsn: str, schema: str, clock: Clock, writes: int = 5) -> None:
    with opened(dsn, schema, clock) as mem:
        for i in range(writes):
            mem.remember("maya", "lives_in", f"Town{i}", actor=f"w{i}")


def tamper(dsn: str, schema: str, sql: str, *params: object) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}, public")
        conn.execute(sql, params)


def test_verify_reports_a_record_edited_or_deleted_in_the_tables(
        dsn: str, schema: str, clock: Clock) -> None:
    filled(dsn, schema, clock)
    tamper(dsn, schema, "UPDATE write_log SET actor = 'mallory' WHERE seq = 3")
    with opened(dsn, schema, clock) as mem:
        report = mem.verify()
        assert not report.ok and report.broken == 3 and report.records == 2
        assert report.problem is not None and "record 3 (remember by mallory)" in report.problem
    tamper(dsn, schema, "DELETE FROM write_log WHERE seq = 2")
    with opened(dsn, schema, clock) as mem:
        report = mem.verify()
        assert (report.ok, report.broken, report.problem) == (False, 2, "record 2 is missing")


def test_an_anchor_catches_a_rewritten_and_a_rolled_back_history(
        dsn: str, schema: str, clock: Clock) -> None:
    import psycopg

    filled(dsn, schema, clock)
    with opened(dsn, schema, clock) as mem:
        kept = mem.anchor()
        assert parse_anchor(kept).seq == 5
    with psycopg.connect(dsn) as conn:  # a careful forger: edit, recompute every hash
        conn.execute(f"SET search_path TO {schema}, public")
        (store_id,) = conn.execute("SELECT store_id FROM log_keys").fetchone()  # type: ignore[misc]
        conn.execute("UPDATE write_log SET actor = 'mallory' WHERE seq = 1")
        prev = genesis(store_id)
        for seq, at, actor, action, body in conn.execute(
                "SELECT seq, at, actor, action, body FROM write_log ORDER BY seq").fetchall():
            prev = record_hash(prev, seq, at, actor, action, body)
            conn.execute("UPDATE write_log SET hash = %s WHERE seq = %s", (prev, seq))
    with opened(dsn, schema, clock) as mem:
        assert mem.verify().ok  # a whole chain, recomputed: only the anchor knows
        report = mem.verify(since=kept)
        assert not report.ok and report.broken == 5
        assert report.problem is not None and "rewritten" in report.problem
    tamper(dsn, schema, "DELETE FROM write_log WHERE seq > 3")
    with opened(dsn, schema, clock) as mem:
        report = mem.verify(since=kept)
        assert (report.ok, report.broken, report.records) == (False, 5, 3)
        assert report.problem is not None and "rolled back" in report.problem


def test_verify_walks_the_log_in_pages(
        dsn: str, schema: str, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    filled(dsn, schema, clock, writes=7)
    monkeypatch.setattr(audit, "PAGE", 3)
    tamper(dsn, schema, "UPDATE write_log SET body = '{}' WHERE seq = 6")
    with opened(dsn, schema, clock) as mem:
        assert mem.verify().broken == 6


def test_a_read_only_store_verifies_and_anchors(dsn: str, schema: str, clock: Clock) -> None:
    filled(dsn, schema, clock, writes=2)
    with opened(dsn, schema, clock, read_only=True) as mem:
        assert mem.verify().records == 2 and parse_anchor(mem.anchor()).seq == 2


def test_the_identity_and_secret_are_made_once_per_schema(
        dsn: str, schema: str, clock: Clock) -> None:
    import psycopg

    with opened(dsn, schema, clock) as first, opened(dsn, schema, clock) as second:
        assert first.anchor() == second.anchor()
        one, two = first.store, second.store
        assert isinstance(one, PostgresStore) and isinstance(two, PostgresStore)
        assert one.log_identity() == two.log_identity() and one.log_digest("x") == two.log_digest("x")
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f"SELECT store_id, secret FROM {schema}.log_keys").fetchall()
    assert len(rows) == 1 and len(rows[0][1]) == 64
    assert one.log_digest("maya") == keyed_digest(rows[0][1], "maya")
    other = fresh_schema()
    try:
        with opened(dsn, other, clock) as third:
            assert parse_anchor(third.anchor()).store != rows[0][0]
    finally:
        drop_schemas(dsn, [other])


def test_a_write_made_outside_memvara_is_logged_at_its_commit(
        dsn: str, schema: str, clock: Clock) -> None:
    """The triggers live in the schema: any connection's write is noted, and sealed
    by the next commit through a store (the log's choke point is memvara's commit)."""
    with opened(dsn, schema, clock) as mem:
        claim = mem.remember("maya", "likes", "tea").added[0]
        store = mem.store
        assert isinstance(store, PostgresStore)
        with store.transaction():
            store._writer.execute("UPDATE claims SET invalidated_at = 1 WHERE id = %s", [claim.id])
            store._writer.execute("UPDATE claims SET invalidated_at = NULL WHERE id = %s", [claim.id])
        bodies = [json.loads(r[4]) for r in store.log_records(0, 10)]
        assert bodies[-1] == {"retired": [1], "unretired": [1]} and mem.verify().ok


# -- retention ------------------------------------------------------------------------
def test_the_capacity_bound_evicts_the_least_salient_ended_claims_first(
        dsn: str, schema: str, clock: Clock) -> None:
    with opened(dsn, schema, clock) as mem:
        for town in ("A", "B", "C", "D"):
            mem.remember("maya", "lives_in", f"Town{town}")
            clock.advance(days=1)
        mem.remember("maya", "lives_in", "TownB")
        ended = mem.get_all(states=("ended",))
        tamper(dsn, schema, "UPDATE claims SET salience = 5 WHERE id = %s", ended[1].id)
        held = mem.count(states=STATES3)
        result = mem.prune(timedelta(days=365), keep_at_most=held - 2)
        assert result == {"ended": 2, "retired": 0, "evicted": 2}
        assert ended[1].id not in {c.id for c in mem.archived()}
        assert mem.prune(timedelta(days=365), keep_at_most=0)["evicted"] == held - 3
        assert mem.get_all(states=("live",)) != []


def test_a_claim_waiting_for_its_vector_is_left_for_the_next_run(
        dsn: str, schema: str, clock: Clock) -> None:
    with opened(dsn, schema, clock) as mem:
        porto = mem.remember("maya", "lives_in", "Porto").added[0]
        clock.advance(days=1)
        mem.remember("maya", "lives_in", "Lisbon")
        clock.advance(days=40)
        tamper(dsn, schema, "UPDATE claims SET emb = NULL WHERE id = %s", porto.id)
        store = mem.store
        assert isinstance(store, PostgresStore)
        now = int(clock.now.timestamp() * 1_000_000)
        assert store.archive_claims(Scope(), {"ended": now}, None, now)["ended"] == 0
        with pytest.raises(ClaimNotFoundError, match="claim_ids: .*c77-00000000"):
            store.restore_archived(Scope(), ["c77-00000000"])  # checked again in its transaction


def test_the_archive_keeps_every_column_and_the_row_comes_back_whole(
        dsn: str, schema: str, clock: Clock) -> None:
    import psycopg

    with opened(dsn, schema, clock) as mem:
        porto = mem.remember("maya", "lives_in", "Porto", sources=["e1"]).added[0]
        clock.advance(days=1)
        mem.remember("maya", "lives_in", "Lisbon")
        clock.advance(days=40)
        with psycopg.connect(dsn) as conn:
            conn.execute(f"SET search_path TO {schema}, public")
            columns = [r[0] for r in conn.execute(
                "SELECT column_name, table_name FROM information_schema.columns WHERE"
                " table_schema = %s AND table_name = 'claims' ORDER BY ordinal_position",
                [schema]).fetchall()]
            archive = [r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
                " AND table_name = 'claims_archive' ORDER BY ordinal_position",
                [schema]).fetchall()]
            assert archive == [*columns, "archived_at", "closures"]
            before = conn.execute("SELECT * FROM claims WHERE id = %s", [porto.id]).fetchone()
            terms = conn.execute("SELECT term, tf FROM claim_terms c JOIN claims ON"
                                 " claims.rowid = c.doc WHERE id = %s ORDER BY term",
                                 [porto.id]).fetchall()
        assert mem.prune(timedelta(days=30), keep_at_most=100) == {
            "ended": 1, "retired": 0, "evicted": 0}  # a bound already met takes no more
        assert mem.restore_archived([porto.id]) == [porto.id]
        with psycopg.connect(dsn) as conn:
            conn.execute(f"SET search_path TO {schema}, public")
            after = conn.execute("SELECT * FROM claims WHERE id = %s", [porto.id]).fetchone()
            assert after is not None and before is not None
            changed = [columns[i] for i, (a, b) in enumerate(zip(before, after)) if a != b]
            assert changed in ([], ["emb"])  # the vector the prune caught up, kept
            assert after[columns.index("emb")] is not None
            assert conn.execute("SELECT term, tf FROM claim_terms c JOIN claims ON"
                                " claims.rowid = c.doc WHERE id = %s ORDER BY term",
                                [porto.id]).fetchall() == terms
            assert conn.execute("SELECT source FROM claim_sources s JOIN claims ON claims.rowid"
                                " = s.claim_rowid WHERE id = %s", [porto.id]).fetchall() == [("e1",)]
        assert [r.claim.id for r in mem.search("Porto", states=STATES3) if r.claim] == [porto.id]


# -- forgetting -----------------------------------------------------------------------
def test_everything_about_the_subject_is_erased_from_every_table(
        dsn: str, schema: str, clock: Clock) -> None:
    import psycopg

    from .test_forget_subject import ALIAS, NAME, seeded

    def holding(*words: str) -> set[str]:
        with psycopg.connect(dsn) as conn:
            tables = [t for (t,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                " AND table_type = 'BASE TABLE'", [schema]).fetchall()]
            return {t for t in tables for word in words if conn.execute(
                f"SELECT count(*) FROM {schema}.{t} AS r WHERE lower(r::text) LIKE %s",
                [f"%{word.lower()}%"]).fetchone()[0]}  # type: ignore[index]

    with opened(dsn, schema, clock) as mem:
        seeded(mem, clock)
        assert holding(NAME) >= {"claims", "claims_archive", "claim_terms", "episodes",
                                 "episode_terms", "entity_aliases", "term_stats"}
        manifest = mem.forget_subject(ALIAS, reason=f"request of {NAME}", requested_by="dpo",
                                      user="u1")
        assert (manifest.claims, manifest.archived, manifest.episodes_erased,
                manifest.episodes_scrubbed, manifest.aliases) == (4, 2, 1, 1, 1)
        assert holding(NAME, ALIAS, "esperanto", "chess") == set()
        # the sibling's claim stays, and its words' counts
        assert holding("oslo") == {"claims", "claim_terms", "term_stats"}
        u = mem.scope(user="u1")
        assert [e.content for e in u.episodes()] == ["ann and [erased] went hiking"]
        assert any(r.episode is not None and "[erased]" in r.episode.content
                   for r in u.search("hiking", include_episodes=True))
        store = mem.store
        assert isinstance(store, PostgresStore)
        last = store.log_records(0, 1000)[-1]
        assert last[3] == "forget_subject" and json.loads(last[4])["notes"][0]["tombstone"][
            "archived"] == 2
        assert mem.verify().ok and mem.tombstones()[0]["reason"] == "request of [erased]"


def test_an_agent_scope_forgets_its_own_and_leaves_the_users_aliases(
        dsn: str, schema: str, clock: Clock) -> None:
    with opened(dsn, schema, clock) as mem:
        mem.alias_entity("Zorby", "Zorblatt", user="u1")
        mem.remember("Zorby", "likes", "chess", user="u1", agent="helper")
        mem.remember("Zorblatt", "likes", "tea", user="u1")
        manifest = mem.forget_subject("Zorblatt", reason="r", requested_by="q", user="u1",
                                      agent="helper")
        assert (manifest.claims, manifest.aliases) == (1, 0)
        assert [c.object for c in mem.get_all(user="u1", agent="helper")] == ["tea"]
        assert len(mem.tombstones()) == 1


def test_a_read_only_store_of_a_schema_without_the_log_is_refused_by_name(
        dsn: str, schema: str, clock: Clock) -> None:
    filled(dsn, schema, clock, writes=1)
    for table in ("write_log", "claim_log", "imported_log", "log_pending", "log_keys"):
        tamper(dsn, schema, f"DROP TABLE {table}")  # what a memvara before the log left
    tamper(dsn, schema, "DELETE FROM store_meta WHERE key LIKE 'made:%%'")  # (and no notes)
    with pytest.raises(StoreError, match="log_keys"):
        PostgresStore(dsn, schema=schema, read_only=True)
    with opened(dsn, schema, clock) as mem:  # a writable store adds the log, then logs
        assert [c.object for c in mem.get_all()] == ["Town0"] and mem.verify().records == 0
        mem.remember("maya", "lives_in", "Town1", actor="after")
        assert mem.verify().records == 1


def test_the_reviews_of_an_erased_subject_leave_no_row_in_any_table(
        dsn: str, schema: str, clock: Clock) -> None:
    """The twin of test_forget_subject's byte scan of a review: the review and its
    evidence went from their tables."""
    import psycopg

    with opened(dsn, schema, clock) as mem:
        mem.remember("Zorblatt", "lives_in", "Porto")
        mem.observe("Zorblatt", "lives_in", "Quixotown", support=["Zyxwvut-report", "crm"])
        mem.forget_subject("Zorblatt", reason="r", requested_by="q")
    with psycopg.connect(dsn) as conn:
        for table in ("reviews", "evidence"):
            rows = conn.execute(f"SELECT r::text FROM {schema}.{table} AS r").fetchall()
            assert rows == []


def test_a_schema_whose_log_noted_no_reinforcement_gets_the_current_trigger(
        dsn: str, schema: str, clock: Clock) -> None:
    """A schema made before claims' updates noted reinforcements (its trigger function
    noted ends, retirements and re-filings alone) and before log_pending named each
    row's transaction is brought up to date by a writable open, so saying a fact again
    is logged there too; a read-only open changes nothing."""
    filled(dsn, schema, clock, writes=1)
    tamper(dsn, schema, "ALTER TABLE log_pending DROP COLUMN xact")  # as it was: no column
    tamper(dsn, schema, (  # the function as it was: no 'reinforced'
        "CREATE OR REPLACE FUNCTION log_claim_change() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN INSERT INTO log_pending (op, row) SELECT 'ended', n.rowid FROM new_rows n JOIN"
        " old_rows o ON o.rowid = n.rowid WHERE n.valid_to IS DISTINCT FROM o.valid_to;"
        " RETURN NULL; END $$"))
    with opened(dsn, schema, clock, read_only=True) as mem:
        assert mem.verify().records == 1
    import psycopg

    with psycopg.connect(dsn) as conn:
        (source,) = conn.execute(  # type: ignore[misc]
            "SELECT prosrc FROM pg_proc WHERE oid = to_regproc(%s)",
            [f"{schema}.log_claim_change"]).fetchone()
        assert "'reinforced'" not in source
    with opened(dsn, schema, clock) as mem:
        assert mem.remember("maya", "lives_in", "Town0", actor="again").reinforced
        store = mem.store
        assert isinstance(store, PostgresStore)
        last = store.log_records(0, 100)[-1]
        assert (last[2], json.loads(last[4])) == ("again", {"reinforced": [1]})
        assert mem.verify().ok
        fresh = mem.remember("maya", "likes", "tea", actor="named").added[0]
        why = mem.why(fresh.id)
        assert why is not None and why.actor == "named"  # the seal finds its own rows


def test_observers_of_one_value_at_once_open_one_review(dsn: str, schema: str, clock: Clock) -> None:
    """Four memories on one schema observe the same value at once, each with the grounds
    to open a review: one review holds all eight grounds (each opened its own before the
    filing and the opening were one transaction: two or three reviews in 13-15 runs of 15)."""
    import threading

    mems = [opened(dsn, schema, clock) for _ in range(4)]
    try:
        mems[0].remember("maya", "lives_in", "Porto")
        start = threading.Barrier(len(mems))

        def observe(i: int) -> None:
            start.wait()
            mems[i].observe("maya", "lives_in", "Faro", support=[f"a{i}", f"b{i}"])

        threads = [threading.Thread(target=observe, args=(i,)) for i in range(len(mems))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r.grounds for r in mems[0].reviews()] == [8]
    finally:
        for mem in mems:
            mem.close()


def test_a_claim_inserted_outside_memvara_is_not_credited_to_the_next_writer(
        dsn: str, schema: str, clock: Clock) -> None:
    """The next commit's record names it as added (the triggers noted it); why() said
    that record's actor ("bob") wrote it."""
    with opened(dsn, schema, clock) as mem:
        first = mem.remember("xavier", "likes", "tea").added[0]
        tamper(dsn, schema, (  # a copy of the row under another id, as a script might
            "INSERT INTO claims SELECT (jsonb_populate_record(c, '{\"rowid\": 50, \"id\":"
            " \"c50-0badc0de\", \"object\": \"coffee\", \"object_key\": \"coffee\"}')).*"
            " FROM claims c WHERE id = %s"), first.id)
        mine = mem.remember("yves", "likes", "jazz", actor="bob").added[0]
        store = mem.store
        assert isinstance(store, PostgresStore)
        assert json.loads(store.log_records(0, 10)[-1][4]) == {"added": [50, 2]}
        outside, logged = mem.why("c50-0badc0de"), mem.why(mine.id)
        assert outside is not None and outside.actor == ""  # no record names its actor
        assert logged is not None and logged.actor == "bob"


def test_a_table_dropped_outside_memvara_is_reported_as_damage(
        dsn: str, schema: str, clock: Clock) -> None:
    filled(dsn, schema, clock, writes=1)
    tamper(dsn, schema, "DROP TABLE episodes CASCADE")
    with opened(dsn, schema, clock) as mem:
        with pytest.raises(StoreCorruptError, match="episodes.*changed outside memvara"):
            mem.add("I live in Porto")
        assert [c.object for c in mem.get_all()] == ["Town0"]


@pytest.mark.parametrize("table", ["write_log", "tombstones", "reviews", "claims_archive"])
def test_a_governance_table_dropped_outside_memvara_is_not_made_again_empty(
        dsn: str, schema: str, clock: Clock, table: str) -> None:
    filled(dsn, schema, clock, writes=1)
    tamper(dsn, schema, f"DROP TABLE {table} CASCADE")
    with pytest.raises(StoreCorruptError, match=f"lacks its table '{table}'.*changed outside"):
        opened(dsn, schema, clock)


def test_a_tombstone_an_older_erasure_left_with_a_level_s_key_scrubbed_reads(
        dsn: str, schema: str, clock: Clock) -> None:
    with opened(dsn, schema, clock) as mem:
        mem.remember("zed", "likes", "tea", user="u1")
        mem.forget_subject("zed", reason="r", requested_by="q", user="u1")
    tamper(dsn, schema, "UPDATE tombstones SET scope = %s", json.dumps(
        {"agent": None, "session": None, "tenant": None, "[erased]": "u1"}))
    with opened(dsn, schema, clock) as mem:
        assert [t["scope"] for t in mem.tombstones(user="u1")] == [
            {"agent": None, "session": None, "tenant": None, "user": "u1"}]
