"""The per-token row counts a PostgreSQL search reads (``term_stats``) stay exact.

Every path that adds or removes text (writes, turns, erase, purge, forget_subject and
its scrub of turns, prune's archive and its restore, import) must leave, for each
token, the sum of its shards equal to the rows of the term table holding it, with no
row left for a token no row holds (an erased name leaves nothing), also when several
writers share the store. A schema an older memvara made (version 1, no counts) is
upgraded on opening, and answers the same searches before and after.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from memvara import STATES, Claim, Memvara, NullLLM, Scope, export_jsonl, import_jsonl
from memvara._domain.time import to_micros
from memvara.store import TimeQuery
from memvara.store.sqlite._bm25 import PLAN_MIN_ROWS

from .conftest import Clock
from .postgres_server import drop_schemas, fresh_schema, opened
from .postgres_server import dsn  # noqa: F401 - the fixture the tests below take
from .test_forget_subject import ALIAS, NAME, seeded

if True:  # the class under test: importing it imports no driver
    from memvara.store.postgres import PostgresStore
    from memvara.store.postgres._schema import SCHEMA_VERSION


@pytest.fixture
def schemas(dsn: str) -> Iterator[list[str]]:
    names = [fresh_schema(), fresh_schema()]
    yield names
    drop_schemas(dsn, names)


def counts(dsn: str, schema: str) -> dict[str, dict[str, int]]:
    """Each text table's tokens and their kept counts, after checking them against the
    term tables (and the row and token totals against the tables)."""
    import psycopg

    found: dict[str, dict[str, int]] = {}
    with psycopg.connect(dsn) as conn:
        conn.execute(f"SET search_path TO {schema}, public")
        for table, terms in (("claims", "claim_terms"), ("episodes", "episode_terms")):
            kept = {str(t): int(n) for t, n in conn.execute(
                "SELECT term, sum(docs) FROM term_stats WHERE tbl = %s GROUP BY term",
                [table]).fetchall()}
            counted = {str(t): int(n) for t, n in conn.execute(
                f"SELECT term, count(*) FROM {terms} GROUP BY term").fetchall()}
            assert kept == counted, table
            assert conn.execute(
                "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM text_stats"
                " WHERE tbl = %s", [table]).fetchone() == conn.execute(
                f"SELECT count(*), coalesce(sum(tokens), 0) FROM {table}").fetchone(), table
            found[table] = kept
    return found


def test_counts_follow_every_path_that_adds_or_removes_text(
        dsn: str, schemas: list[str], clock: Clock) -> None:
    schema, other = schemas
    name = NAME.lower()
    with opened(dsn, schema, clock) as mem:
        ids = seeded(mem, clock)  # writes, turns, an alias, prune to the archive
        held = counts(dsn, schema)
        assert held["claims"][name] == 2 and held["episodes"][name] == 2
        u = mem.scope(user="u1")
        assert u.restore_archived([ids["old"]]) == [ids["old"]]
        assert counts(dsn, schema)["claims"]["esperanto"] == 1
        assert u.erase(ids["old"])
        assert "esperanto" not in counts(dsn, schema)["claims"]
        dump = io.StringIO()
        export_jsonl(mem, dump)
        with opened(dsn, other, clock) as copy:
            dump.seek(0)
            import_jsonl(copy, dump)
            assert counts(dsn, other) == counts(dsn, schema)
        mem.forget_subject(ALIAS, reason="asked", requested_by="dpo", user="u1")
        held = counts(dsn, schema)  # claims erased, the shared turn scrubbed
        assert name not in held["claims"] and name not in held["episodes"]
        assert held["episodes"]["eras"] == 1  # "ann and [erased] went hiking"
        assert u.purge()["claims"] == 1  # "ann likes tea"
        held = counts(dsn, schema)
        assert set(held["claims"]) == {"bob", "live", "in", "oslo"}
        assert held["episodes"] == {}
        mem.purge()
        assert counts(dsn, schema) == {"claims": {}, "episodes": {}}


def test_counts_stay_exact_with_writers_racing_on_the_same_words(
        dsn: str, schemas: list[str], clock: Clock) -> None:
    schema = schemas[0]
    opened(dsn, schema, clock).close()  # made once, before the race
    writers = 4
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def write(w: int) -> None:
        try:
            with opened(dsn, schema, clock) as mem:
                start.wait()
                for round_ in range(5):
                    stored = mem.remember_many([
                        Claim(f"w{w}_user_{i}", "likes", f"shared words{round_} item{i}")
                        for i in range(20)]).added
                    for claim in stored[::3]:  # take some off again, in this writer's shard
                        assert mem.erase(claim.id)
                    mem.add(f"writer {w} turn {round_} shared")
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    held = counts(dsn, schema)
    kept_rows = 20 - len(range(0, 20, 3))
    assert held["claims"]["share"] == writers * 5 * kept_rows
    assert held["episodes"]["share"] == writers * 5
    # One writer's rows, taken off by another: the token's shards sum to 0 and go.
    with opened(dsn, schema, clock) as first, opened(dsn, schema, clock) as second:
        claim = first.remember("ann", "knows", "Quixotic").added[0]
        assert counts(dsn, schema)["claims"]["quixot"] == 1
        assert second.erase(claim.id)
    assert "quixot" not in counts(dsn, schema)["claims"]


def _tq(clock: Clock) -> TimeQuery:
    now = to_micros(clock(), "now")
    return TimeQuery(known_at=now, valid_at=now)


QUESTIONS = (["user_5", "lives"], ["green", "user"], ["user", "lives-in"])


def _answers(store: PostgresStore, clock: Clock) -> list[object]:
    tq = _tq(clock)
    return [store.search_claims_text(Scope(), tq, STATES, None, terms, 7) for terms in QUESTIONS]


def test_a_schema_version_1_store_is_upgraded_on_opening_and_answers_the_same(
        dsn: str, schemas: list[str], clock: Clock) -> None:
    import psycopg

    schema = schemas[0]
    subjects = PLAN_MIN_ROWS // 4 + 25  # past PLAN_MIN_ROWS: searches are planned
    with opened(dsn, schema, clock) as mem:
        mem.remember_many([
            Claim(f"user_{s}", p, f"{'green ' if s % 2 else ''}{o}{s % 13}")
            for s in range(subjects)
            for p, o in (("lives_in", "city_"), ("likes", "thing_"), ("speaks", "lang_"),
                         ("works_at", "org_"))])
        store = mem.store
        assert isinstance(store, PostgresStore)
        before = _answers(store, clock)
        assert all(before)
        held = counts(dsn, schema)
    # What memvara wrote before per-token counts: the same tables but term_stats.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.term_stats")
        conn.execute(f"UPDATE {schema}.store_meta SET value = '1' WHERE key = 'schema_version'")
    old = PostgresStore(dsn, schema=schema, read_only=True)  # not upgraded: it counts
    try:
        assert old._version == 1
        assert _answers(old, clock) == before
    finally:
        old.close()
    upgraded = PostgresStore(dsn, schema=schema)
    try:
        assert upgraded._version == SCHEMA_VERSION
        assert _answers(upgraded, clock) == before
    finally:
        upgraded.close()
    assert counts(dsn, schema) == held
    with psycopg.connect(dsn) as conn:
        assert conn.execute(f"SELECT value FROM {schema}.store_meta WHERE key ="
                            " 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    with opened(dsn, schema, clock) as again:  # a second opening changes nothing
        again.remember("user_1", "likes", "green tea")
        assert counts(dsn, schema)["claims"]["tea"] == 1


def test_a_search_inside_a_write_counts_the_rows_it_wrote(
        dsn: str, schemas: list[str], clock: Clock) -> None:
    from memvara.store.postgres._text import bm25_sql

    schema = schemas[0]
    with opened(dsn, schema, clock) as mem:
        store = mem.store
        assert isinstance(store, PostgresStore)
        tq = _tq(clock)

        def both() -> tuple[object, object]:  # planned, and the exact query
            planned = store.search_claims_text(Scope(), tq, ["live"], None,
                                               ["quimper", "user"], 3)
            where, params = store._filtered(Scope(), tq, ["live"])
            sql, head = bm25_sql("claims", [["quimper"]], where, store._pending("claims")[:2])
            return planned, [(k, float(v)) for k, v in store._query(sql, [*head, *params, 3])]

        with store.transaction():  # the first rows: nothing counted at all yet
            mem.remember_many([Claim(f"user_{s}", "likes", f"thing_{s % 9}")
                               for s in range(PLAN_MIN_ROWS + 10)])
            mem.remember("user_3", "lives_in", "Quimper")
            mem.add("a turn in Quimper")  # the open write's turns: not the claims' counts
            inside = both()
        # What the commit counts, the open write counted already: the same scores.
        assert both() == inside
        planned, exact = inside
        assert isinstance(planned, list) and planned[0] == exact[0]  # type: ignore[index]
        assert counts(dsn, schema)["claims"]["quimper"] == 1


def test_an_erase_whose_sweep_is_held_off_still_succeeds_and_is_swept_later(
        dsn: str, schemas: list[str], clock: Clock) -> None:
    """Another session holding a token's count row past ``lock_timeout`` cannot fail an
    erase that has committed: the erase returns, the token's zero count stays until this
    store's next commit (or its close) sweeps it."""
    import psycopg

    schema = schemas[0]

    def zero_rows(token: str) -> int:
        with psycopg.connect(dsn) as conn:
            (n,) = conn.execute(f"SELECT count(*) FROM {schema}.term_stats WHERE term = %s",
                                [token]).fetchone() or (0,)
            return int(n)

    def erase_while_held(mem: Memvara, token: str) -> None:
        (claim,) = mem.remember("ann", "speaks", token).added
        with psycopg.connect(dsn, autocommit=True) as holder:
            # another writer's shard of the token, at 0 (it changes no sum), held locked
            holder.execute(
                f"INSERT INTO {schema}.term_stats (tbl, term, shard, docs) SELECT 'claims', %s,"
                f" (max(shard) + 1) %% 64, 0 FROM {schema}.term_stats WHERE term = %s",
                [token, token])
            with holder.transaction():
                holder.execute(f"SELECT 1 FROM {schema}.term_stats WHERE term = %s"
                               f" AND docs = 0 FOR UPDATE", [token])
                assert mem.erase(claim.id)  # committed; its sweep timed out on the held row
                assert zero_rows(token) == 2

    with Memvara(store=PostgresStore(dsn, schema=schema, lock_timeout=0.05),
                 clock=clock, llm=NullLLM()) as mem:
        erase_while_held(mem, "esperanto")
        mem.remember("bob", "likes", "tea")  # the next commit sweeps it
        assert zero_rows("esperanto") == 0
        erase_while_held(mem, "volapuk")
    assert zero_rows("volapuk") == 0  # swept by close()
    held = counts(dsn, schema)["claims"]  # and every count still matches its rows
    assert "volapuk" not in held and "esperanto" not in held and held["tea"] == 1
