"""``PostgresStore`` itself, on a real server: opening it by URL and in shared schemas,
bad input (an unreachable server, no pgvector, a newer schema, a connection dropped
mid-write), read-only stores, reads that wait for no writer, snapshots, locks, and many
writer processes racing on one single-valued slot. (Its reads and writes against
SQLite's are in test_postgres_parity.py; the behavioural suites run on it in
tests/congruence/.)"""

from __future__ import annotations

import json
import multiprocessing
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pytest

from memvara import (
    STATES,
    Claim,
    ClosedError,
    DimensionMismatchError,
    Episode,
    ExtractionPendingError,
    InvalidArgumentError,
    Memvara,
    NotAStoreError,
    NullLLM,
    ReadOnlyStoreError,
    SchemaVersionError,
    Scope,
    StoreError,
    StoreLockedError,
)
from memvara._domain.time import to_micros
from memvara.store import TimeQuery

from .conftest import Clock, FakeLLM
from .postgres_server import drop_schemas, fresh_schema
from .postgres_server import dsn, schema  # noqa: F401 - the fixtures the tests below take

if True:  # the class under test: importing it imports no driver
    from memvara.store.postgres import PostgresStore
    from memvara.store.postgres._schema import SCHEMA_VERSION
    from memvara.store.postgres._text import Tokenizer


@pytest.fixture
def store(dsn: str, schema: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(dsn, schema=schema)
    yield opened
    opened.close()


def admin(dsn: str, *statements: str) -> list[tuple[object, ...]]:
    """Run statements on a connection of the test's own; the last one's rows."""
    import psycopg

    rows: list[tuple[object, ...]] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            cur = conn.execute(statement)
            rows = cur.fetchall() if cur.description else []
    return rows


def claim(subject: str, obj: str, at: datetime, predicate: str = "lives_in") -> Claim:
    return Claim(subject, predicate, obj, valid_from=at, recorded_at=at, text=f"{subject} {obj}")


NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def test_memvara_opens_a_postgresql_url(dsn: str) -> None:
    with Memvara(dsn, llm=NullLLM()) as mem:
        assert isinstance(mem.store, PostgresStore) and mem.store.schema == "memvara"
        mem.purge()
        mem.remember("Alice", "lives_in", "Berlin")
        assert [c.object for c in mem.get_all()] == ["Berlin"]
    with Memvara(dsn, llm=NullLLM(), read_only=True) as again:
        assert [c.object for c in again.get_all()] == ["Berlin"]
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            again.remember("Alice", "lives_in", "Paris")
    drop_schemas(dsn, ["memvara"])


def test_the_cli_reads_a_postgresql_url(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    from .cli_story import run

    with Memvara(dsn, llm=NullLLM(), user="alice") as mem:
        mem.purge()
        mem.remember("Alice", "lives_in", "Berlin")
        status, out, err = run(capsys, "stats", "--db", dsn, "--user", "alice", "--json")
        assert status == 0 and err == "" and json.loads(out) == mem.stats()
    drop_schemas(dsn, ["memvara"])
    status, _, err = run(capsys, "stats", "--db", dsn)  # read-only: nothing is created
    assert status != 0 and "no memvara store in schema 'memvara'" in err


def test_the_cli_names_its_db_option_for_a_bad_url_or_a_missing_extra(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from .cli_story import run

    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    status, _, err = run(capsys, "stats", "--db", "postgresql://root:s3cret@[::1/memtest")
    assert status == 2 and err.startswith("memvara stats: --db: not a PostgreSQL connection string")
    assert "s3cret" not in err
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    status, _, err = run(capsys, "stats", "--db", "postgresql://root:x@127.0.0.1:1/memtest")
    assert (status, err) == (2, "memvara stats: PostgresStore needs psycopg and pgvector:"
                                " pip install 'memvara[postgres]'\n")


def test_the_mcp_server_serves_a_postgresql_url(
        dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from memvara.server import main

    from .test_server import _Std, line

    drop_schemas(dsn, ["memvara"])
    stdin = _Std(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "memory_add", "arguments": {"messages": "I live in Berlin"}}}))
    stdout = _Std()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "argv", ["memvara-mcp"])
    monkeypatch.setenv("MEMVARA_DB", dsn)
    monkeypatch.setenv("MEMVARA_USER", "alice")
    assert main() == 0
    with Memvara(dsn, llm=NullLLM(), user="alice") as alice:
        assert isinstance(alice.store, PostgresStore)
        assert [c.object for c in alice.get_all()] == ["Berlin"]
    drop_schemas(dsn, ["memvara"])


def test_stores_in_two_schemas_share_a_database_and_nothing_else(dsn: str, clock: Clock) -> None:
    names = [fresh_schema(), fresh_schema()]
    try:
        mems = [Memvara(store=PostgresStore(dsn, schema=n), clock=clock, llm=NullLLM())
                for n in names]
        mems[0].remember("Alice", "lives_in", "Berlin")
        mems[1].remember("Alice", "lives_in", "Paris")
        assert [[c.object for c in m.get_all()] for m in mems] == [["Berlin"], ["Paris"]]
        assert [m.search("alice")[0].text for m in mems] == ["Alice lives in Berlin",
                                                            "Alice lives in Paris"]
        for mem in mems:
            mem.close()
    finally:
        drop_schemas(dsn, names)


def test_an_unreachable_server_is_named_by_host_and_port() -> None:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at 127\.0\.0\.1:1\b"):
        PostgresStore("postgresql://nobody:x@127.0.0.1:1/none")


def test_a_server_that_refuses_the_connection_is_not_called_unreachable(dsn: str) -> None:
    # A reachable server refusing the login (no such database, here) was worded
    # "cannot reach"; libpq's own reason after the host and port says which it was.
    import psycopg

    missing = psycopg.conninfo.make_conninfo(dsn, dbname="memvara_no_such_database")
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at .*:\d+: .*memvara_no_such_database"):
        PostgresStore(missing)


@pytest.mark.parametrize(("dsn_arg", "schema_arg", "named"), [
    ("", "memvara", "dsn"), (None, "memvara", "dsn"), ("host=x", "Bad-Name", "schema"),
    ("host=x", "x; DROP TABLE claims", "schema"),
])
def test_bad_arguments_are_named(dsn_arg: object, schema_arg: str, named: str) -> None:
    with pytest.raises(InvalidArgumentError, match=named):
        PostgresStore(dsn_arg, schema=schema_arg)  # type: ignore[arg-type]


@pytest.mark.parametrize("dsn_arg", [
    "not a dsn", "host=127.0.0.1 nonsense=1", "postgresql://root:s3cret@[::1/memtest",
])
def test_a_dsn_that_does_not_parse_is_named_without_its_password(dsn_arg: str) -> None:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    with pytest.raises(InvalidArgumentError, match="^dsn: not a PostgreSQL connection string") as raised:
        PostgresStore(dsn_arg)
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize(("name", "why"), [
    ("pg_team", "reserved for PostgreSQL's own schemas"),
    ("information_schema", "reserved for PostgreSQL's own schemas"),
    ("user", "a reserved SQL word"), ("select", "a reserved SQL word"),
])
def test_a_schema_name_postgresql_reserves_is_refused_by_name(
        dsn: str, name: str, why: str) -> None:
    for read_only in (False, True):
        with pytest.raises(InvalidArgumentError, match=f"^schema: '{name}' is {why}"):
            PostgresStore(dsn, schema=name, read_only=read_only)
    assert admin(dsn, "SELECT 1 FROM information_schema.tables WHERE table_name = 'store_meta'"
                      f" AND table_schema = '{name}'") == []


@pytest.mark.parametrize("version", [None, "abc"])
def test_a_store_meta_without_a_version_is_not_a_store(
        dsn: str, schema: str, version: str | None) -> None:
    # Another application's table of that name, or a damaged store: refused, not read
    # as a version and not written into.
    admin(dsn, f"CREATE SCHEMA {schema}", f"CREATE TABLE {schema}.store_meta (key TEXT, value TEXT)",
          *([f"INSERT INTO {schema}.store_meta VALUES ('schema_version', '{version}')"]
            if version else []))
    for read_only in (False, True):
        with pytest.raises(NotAStoreError, match=f"schema '{schema}'.*no memvara schema version"):
            PostgresStore(dsn, schema=schema, read_only=read_only)
    assert admin(dsn, "SELECT count(*) FROM information_schema.tables"
                      f" WHERE table_schema = '{schema}'") == [(1,)]


def test_a_schema_version_2_store_keeps_its_waiting_turns_and_marks_speakers_after(
        dsn: str, schema: str, clock: Clock) -> None:
    llm = FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso")],
                   "my dog is called Rex": [("user", "has_pet", "Rex")]})
    llm.fail = True
    with Memvara(store=PostgresStore(dsn, schema=schema), clock=clock, llm=llm, user="maya") as mem, \
            pytest.raises(ExtractionPendingError):
        mem.add({"role": "user", "name": "ana", "content": "my cat is called Miso"})
    # what the code before speakers left: version 2, marks with no speaker column
    admin(dsn, f"ALTER TABLE {schema}.extraction_backlog DROP COLUMN speaker, DROP COLUMN meta",
          f"UPDATE {schema}.store_meta SET value = '2' WHERE key = 'schema_version'")
    llm.fail = False
    with Memvara(store=PostgresStore(dsn, schema=schema), clock=clock, llm=llm, user="maya") as mem:
        assert admin(dsn, f"SELECT value FROM {schema}.store_meta WHERE key = 'schema_version'") == [
            (str(SCHEMA_VERSION),)]
        # the old mark named no one: read as the scope's user's, as before
        assert [c.text for c in mem.retry_extraction().added] == ["maya has pet Miso"]
        llm.fail = True
        with pytest.raises(ExtractionPendingError):  # a new mark keeps its speaker
            mem.add({"role": "user", "name": "ana", "content": "my dog is called Rex"})
        llm.fail = False
        assert [c.text for c in mem.retry_extraction().added] == ["ana has pet Rex"]


def note_advisory_locks(dsn: str, schema: str, event: str) -> None:
    """A trigger that notes, in table ``held``, how many advisory (slot) locks the
    writing connection holds at each ``event`` statement on the claims table: the
    lock order read off the server, not timed from a race."""
    admin(dsn, f"CREATE TABLE {schema}.held (locks BIGINT)",
          f"CREATE FUNCTION {schema}.note_locks() RETURNS trigger LANGUAGE plpgsql AS $$"
          f" BEGIN INSERT INTO {schema}.held SELECT count(*) FROM pg_locks WHERE"
          " locktype = 'advisory' AND pid = pg_backend_pid(); RETURN NULL; END $$",
          f"CREATE TRIGGER note_locks BEFORE {event} ON {schema}.claims"
          f" FOR EACH STATEMENT EXECUTE FUNCTION {schema}.note_locks()")


def test_a_server_without_pgvector_says_how_to_install_it(dsn: str, schema: str) -> None:
    # A role that may not create the extension, in a database that does not have it:
    # the server's answer, not a mock of it. Named after the test's schema, so two runs
    # on one server do not share them.
    role, database = f"{schema}_plain", f"{schema}_novector"
    admin(dsn, f"DROP DATABASE IF EXISTS {database}", f"DROP ROLE IF EXISTS {role}",
          f"CREATE ROLE {role} LOGIN PASSWORD 'plain' NOSUPERUSER",
          f"CREATE DATABASE {database} OWNER {role}")
    import psycopg

    plain = psycopg.conninfo.make_conninfo(dsn, user=role, password="plain", dbname=database)
    try:
        with pytest.raises(StoreError, match="no pgvector.*CREATE EXTENSION vector"):
            PostgresStore(plain)
    finally:
        admin(dsn, f"DROP DATABASE {database}", f"DROP ROLE {role}")


def test_a_role_that_may_only_read_is_told_to_open_read_only(dsn: str, schema: str) -> None:
    import psycopg

    role = f"{schema}_reader"  # of this test alone, as its schema is
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        mem.remember("alice", "likes", "tea")
    admin(dsn, f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD 'r'",
          f"GRANT USAGE ON SCHEMA {schema} TO {role}",
          f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    reader = psycopg.conninfo.make_conninfo(dsn, user=role, password="r")
    try:
        with pytest.raises(StoreError, match="permission denied.*read_only=True"):
            PostgresStore(reader, schema=schema)
        with Memvara(store=PostgresStore(reader, schema=schema, read_only=True), llm=NullLLM()) as mem:
            assert [c.object for c in mem.get_all()] == ["tea"] and mem.verify().ok
            assert [r.text for r in mem.search("tea")] == ["alice likes tea"]
    finally:
        admin(dsn, f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
              f"REVOKE ALL ON SCHEMA {schema} FROM {role}", f"DROP ROLE {role}")


def test_a_schema_from_a_newer_memvara_is_refused(dsn: str, schema: str) -> None:
    PostgresStore(dsn, schema=schema).close()
    admin(dsn, f"UPDATE {schema}.store_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SchemaVersionError, match="newer memvara.*99"):
        PostgresStore(dsn, schema=schema)
    with pytest.raises(SchemaVersionError):
        PostgresStore(dsn, schema=schema, read_only=True)


def test_read_only_creates_nothing_and_refuses_writes(dsn: str, schema: str) -> None:
    with pytest.raises(NotAStoreError, match="no memvara store"):
        PostgresStore(dsn, schema=schema, read_only=True)
    assert admin(dsn, f"SELECT 1 FROM pg_namespace WHERE nspname = '{schema}'") == []
    writer = PostgresStore(dsn, schema=schema)
    writer.insert_claims([claim("Alice", "Berlin", NOW)], None)
    reader = PostgresStore(dsn, schema=schema, read_only=True)
    assert reader.read_only and not writer.read_only
    assert [c.object for c in reader.find_claims(Scope(), TimeQuery(known_at=2**62, valid_at=None), STATES)] == [
        "Berlin"]
    with pytest.raises(ReadOnlyStoreError):
        reader.insert_claims([claim("Bob", "Paris", NOW)], None)
    reader.close()
    writer.close()


@pytest.mark.parametrize(("dropped", "read_only", "refused", "connections"), [
    # read-only, a schema from before the log: refused once the reader asks for its keys
    (("write_log", "claim_log", "imported_log", "log_pending", "log_keys"), True,
     "log_keys", 2),
    (("write_log",), False, "lacks its table 'write_log'", 1),  # the log's part fails
    (("reviews",), False, "lacks its table 'reviews'", 2),  # the last part fails
])
def test_an_open_that_fails_closes_every_connection_it_opened(
        dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch, dropped: tuple[str, ...],
        read_only: bool, refused: str, connections: int) -> None:
    import psycopg

    PostgresStore(dsn, schema=schema).close()
    admin(dsn, *(f"DROP TABLE {schema}.{table}" for table in dropped))
    opened: list[psycopg.Connection[Any]] = []
    connect = psycopg.connect

    def recorded(*args: Any, **kwargs: Any) -> psycopg.Connection[Any]:
        conn = connect(*args, **kwargs)  # the real connection, only noted
        opened.append(conn)
        return conn

    monkeypatch.setattr(psycopg, "connect", recorded)
    with pytest.raises(StoreError, match=refused):
        PostgresStore(dsn, schema=schema, read_only=read_only)
    assert len(opened) == connections and all(conn.closed for conn in opened)


def test_a_connection_dropped_mid_write_writes_nothing(dsn: str, store: PostgresStore) -> None:
    tq = TimeQuery(known_at=2**62, valid_at=None)
    for dropped_before in ("a statement", "the commit"):
        with pytest.raises(StoreError, match="lost the connection"):
            with store.transaction():
                store.insert_claims([claim("Alice", "Berlin", NOW)], None)
                store.insert_episodes([], None)
                pid = store._writer.info.backend_pid
                admin(dsn, f"SELECT pg_terminate_backend({pid})")
                if dropped_before == "a statement":
                    store.insert_claims([claim("Bob", "Paris", NOW)], None)
        assert store.find_claims(Scope(), tq, STATES) == []  # all or nothing: nothing
    assert store.search_claims_text(Scope(), tq, STATES, None, ["alice"], 5) == []
    store.insert_claims([claim("Carol", "Lisbon", NOW)], None)  # a fresh connection
    assert [c.object for c in store.find_claims(Scope(), tq, STATES)] == ["Lisbon"]
    assert [k for k, _ in store.search_claims_text(Scope(), tq, STATES, None, ["carol"], 5)] == [
        store.find_claims(Scope(), tq, STATES)[0].id]


def test_a_writer_dropped_while_idle_is_replaced_by_the_next_write(
        dsn: str, store: PostgresStore) -> None:
    tq = TimeQuery(known_at=2**62, valid_at=None)
    store.insert_claims([claim("Alice", "Berlin", NOW)], None)
    admin(dsn, f"SELECT pg_terminate_backend({store._writer.info.backend_pid})")
    store.insert_claims([claim("Bob", "Paris", NOW)], None)  # nothing was lost: no error
    assert sorted(c.object for c in store.find_claims(Scope(), tq, STATES)) == ["Berlin", "Paris"]


def test_a_dropped_reader_is_replaced_at_the_next_read(dsn: str, store: PostgresStore) -> None:
    # Dropped while idle (a server restart, an idle timeout, pg_terminate_backend): the
    # next read runs on a fresh connection instead of failing once.
    tq = TimeQuery(known_at=2**62, valid_at=None)
    assert store.count_claims(Scope(), tq, STATES) == 0
    dropped = store._reader()
    admin(dsn, f"SELECT pg_terminate_backend({dropped.info.backend_pid})")
    assert store.count_claims(Scope(), tq, STATES) == 0
    assert dropped.closed and store._reader() is not dropped
    admin(dsn, f"SELECT pg_terminate_backend({store._reader().info.backend_pid})")
    with store.snapshot():  # a snapshot opened on a dropped reader: on a fresh one too
        assert store.count_claims(Scope(), tq, STATES) == 0
    with pytest.raises(StoreError, match="lost the connection"):
        with store.snapshot():  # dropped inside a snapshot: it ends without a COMMIT
            admin(dsn, f"SELECT pg_terminate_backend({store._reader().info.backend_pid})")
            store.count_claims(Scope(), tq, STATES)
    assert store.count_claims(Scope(), tq, STATES) == 0


def test_a_thread_that_ended_leaves_no_connection_open(store: PostgresStore) -> None:
    # A process that reads from a thread per request (a threading server) must not hold
    # one server connection per thread it ever ran: the server's connections are the
    # whole team's. An ended thread's reader is closed when the next one is opened.
    import threading

    tq = TimeQuery(known_at=2**62, valid_at=None)
    assert store.count_claims(Scope(), tq, STATES) == 0
    mine = store._reader()  # this thread's, alive throughout: kept
    opened: list[Any] = []

    def read() -> None:
        store.count_claims(Scope(), tq, STATES)
        opened.append(store._reader())

    for _ in range(5):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    assert [conn.closed for conn in opened] == [True, True, True, True, False]
    assert not mine.closed and store._reader() is mine
    store.close()
    assert mine.closed and all(conn.closed for conn in opened)


def test_a_value_too_long_for_an_index_is_said_so_and_writes_nothing(dsn: str, schema: str) -> None:
    # PostgreSQL's btree takes at most 2,704 bytes a row: a longer subject or object
    # (that does not compress) is refused by the server, which is not a lost connection.
    import base64
    import random

    long = base64.b64encode(random.Random(3).randbytes(2_400)).decode()
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        for subject, obj in (("alice", long), (long, "tea")):
            with pytest.raises(StoreError, match="too long for PostgreSQL's index") as raised:
                mem.remember(subject, "notes", obj)
            assert "lost the connection" not in str(raised.value)
        assert mem.count(states=STATES) == 0
        mem.remember("alice", "notes", long[:2_000])  # the connection is fine
        assert mem.count() == 1


def test_a_statement_the_server_refuses_is_a_store_error(store: PostgresStore) -> None:
    turn = Episode(content="hello", role="user", recorded_at=NOW, id="e-given")
    store.insert_episodes([turn], np.ones((1, 3), np.float32))
    with pytest.raises(StoreError, match="duplicate key"):
        store.insert_episodes([replace(turn, content="again")], None)
    tq = TimeQuery(known_at=2**62, valid_at=None)
    assert [e.content for e in store.list_episodes(Scope(), tq)] == ["hello"]
    store.insert_episodes([replace(turn, id="e-other", content="no vector")], None)
    roles, vectors = store.recent_turns(Scope(), 5)
    assert roles == [("user", to_micros(NOW, "ts"))] * 2
    assert vectors.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert store.search_episodes_text(Scope(), tq, [], 5) == []
    assert [k for k, _ in store.search_episodes_text(Scope(), tq, ["vector"], 5)] == ["e-other"]


def test_reads_wait_for_no_writer_and_a_snapshot_holds_still(dsn: str, schema: str) -> None:
    writer, reader = PostgresStore(dsn, schema=schema), PostgresStore(dsn, schema=schema)
    tq = TimeQuery(known_at=2**62, valid_at=None)
    writer.insert_claims([claim("Alice", "Berlin", NOW)], None)
    with writer.transaction():  # holds the slot's lock and an uncommitted row
        found = writer.slot_claims(Scope(), [("alice", "lives_in")])
        assert [c.object for c in found[("alice", "lives_in")]] == ["Berlin"]
        writer.insert_claims([claim("Alice", "Paris", NOW)], None)
        with writer.snapshot():  # inside a write: a no-op, the write's own view
            assert writer.count_claims(Scope(), tq, STATES) == 2
        assert reader.count_claims(Scope(), tq, STATES) == 1  # answered, not waited
        assert [k for k, _ in reader.search_claims_text(
            Scope(), tq, STATES, None, ["paris"], 5)] == []
    with reader.snapshot():
        assert reader.count_claims(Scope(), tq, STATES) == 2
        writer.insert_claims([claim("Bob", "Rome", NOW)], None)
        with reader.snapshot():  # nested: the same snapshot
            assert reader.count_claims(Scope(), tq, STATES) == 2
    assert reader.count_claims(Scope(), tq, STATES) == 3
    writer.close()
    reader.close()


def test_a_row_held_past_the_lock_timeout_raises_store_locked(dsn: str, schema: str) -> None:
    first = PostgresStore(dsn, schema=schema)
    second = PostgresStore(dsn, schema=schema, lock_timeout=0.05)
    (held,) = first.insert_claims([claim("Alice", "Berlin", NOW)], None)
    with first.transaction():
        first.reinforce_claim(held.id, ["e1"], to_micros(NOW, "at"))
        with pytest.raises(StoreLockedError):
            second.reinforce_claim(held.id, ["e2"], to_micros(NOW, "at"))
    assert second.reinforce_claim(held.id, ["e2"], to_micros(NOW, "at")).observations == 3
    first.close()
    second.close()


def test_bad_writes_raise_and_change_nothing(store: PostgresStore) -> None:
    (kept,) = store.insert_claims([claim("Alice", "Berlin", NOW)], np.ones((1, 4), np.float32))
    assert store.dim == 4
    with pytest.raises(DimensionMismatchError, match="8-d but this store holds 4-d"):
        store.insert_claims([claim("Bob", "Paris", NOW)], np.ones((1, 8), np.float32))
    missing = Claim("Nobody", "lives_in", "Nowhere", id="c999-00000000")
    at = to_micros(NOW, "at")
    with pytest.raises(StoreError, match="not in the store"):
        store.end_claims([(missing, at, at, None)])
    with pytest.raises(StoreError, match="not in the store"):
        store.retire_claims([(missing, at, None)])
    with pytest.raises(StoreError, match=f"claim '{missing.id}' is not in the store"):
        store.end_claims([(kept, at, at, None), (missing, at, at, None)])  # kept is not ended
    with pytest.raises(StoreError, match="not in the store"):
        store.reinforce_claim(missing.id, [], at)
    with pytest.raises(StoreError, match="merged is not in the store"):
        store.apply_sweep([], [], [(kept.id, [missing.id], 2, 1.0, at)], at)
    assert store.set_claim_vectors([], np.ones((0, 4), np.float32)) == 0
    assert store.insert_claims([], None) == [] and store.insert_episodes([], None) == []
    assert store.end_claims([]) == [] and store.retire_claims([]) == []
    assert store.slot_claims(Scope(), []) == {}
    assert store.rekey_subjects(Scope(), {}, at, dry_run=False) == []
    store.save_predicates([])
    assert [(c.id, c.valid_to) for c in store.find_claims(
        Scope(), TimeQuery(known_at=2**62, valid_at=None), STATES)] == [(kept.id, None)]


def test_rebuilding_vectors_replaces_all_or_none(store: PostgresStore) -> None:
    first = store.insert_claims([claim(f"P{i}", "Berlin", NOW) for i in range(3)],
                                np.ones((3, 4), np.float32))
    turns = store.insert_episodes([], None)
    assert turns == [] and store.embedder_label is None
    with pytest.raises(DimensionMismatchError):
        with store.rebuild_vectors(2, "two") as put:
            put("claims", [1], np.ones((1, 3), np.float32))
    assert store.dim == 4 and store.embedder_label is None
    pages = store.vector_texts("claims", 0, 2)
    assert [t for _, t in pages] == ["P0 Berlin", "P1 Berlin"]
    with store.rebuild_vectors(2, "two") as put:
        put("claims", [p for p, _ in pages], np.ones((2, 2), np.float32))
    assert store.dim == 2 and store.embedder_label == "two"
    assert store.claims_missing_vectors() == [(first[2].id, "P2 Berlin")]  # never put
    assert store.vector_texts("episodes", 0, 5) == []


def test_erasure_leaves_the_text_in_no_table(dsn: str, schema: str) -> None:
    token = "zqxvkelpmorb"
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        for i in range(30):
            mem.remember(f"user{i}", "likes", f"filler value {i}")
        mem.add([f"my code word is {token}"])
        (turn,) = [e for e in mem.episodes() if token in e.content]
        secret = mem.remember("user", "code_word", token, sources=[turn.id]).added[0]
        mem.remember("user", "likes", f"the word {token} too")
        tables = [str(t) for (t,) in admin(
            dsn, f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{schema}'"
            " AND table_type = 'BASE TABLE'")]

        def holding() -> list[str]:
            return [t for t in tables if admin(
                dsn, f"SELECT count(*) FROM {schema}.{t} AS r WHERE r::text LIKE '%{token}%'"
            )[0][0]]

        assert set(holding()) >= {"claims", "claim_terms", "episodes", "episode_terms"}
        for claim in mem.get_all(subject="user"):
            assert mem.erase(claim.id, sources=True)
        assert not mem.erase(secret.id, sources=True)  # gone already
        assert holding() == []
        assert mem.search(token) == []


def test_close_is_idempotent_and_final(store: PostgresStore) -> None:
    store.close()
    store.close()
    assert store.closed
    with pytest.raises(ClosedError):
        store.count_claims(Scope(), TimeQuery(known_at=0, valid_at=None), STATES)
    with pytest.raises(ClosedError):
        store.insert_claims([claim("Alice", "Berlin", NOW)], None)



def test_the_tokenizer_closed_under_a_running_read_raises_closed_error() -> None:
    """A search or write that passed the store's open check before another thread's
    ``close()`` meets the in-memory tokenizer after it: that raised a raw
    ``sqlite3.ProgrammingError`` ('Cannot operate on a closed database')."""
    tokenizer = Tokenizer()
    assert tokenizer.phrases(["teas"]) == [["tea"]]
    tokenizer.close()
    with pytest.raises(ClosedError):
        tokenizer.phrases(["teas"])
    with pytest.raises(ClosedError):
        tokenizer.counts(["green teas"])

# -- many writers ---------------------------------------------------------------------
def write_slot(dsn: str, schema: str, worker: int, writes: int, acked: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """One writer process: claims of one single-valued slot everyone writes, and of its
    own; every id a write returned is reported (acknowledged)."""
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        ids: list[str] = []
        for i in range(writes):
            ids += [c.id for c in mem.remember("Alice", "lives_in", f"Town {worker} {i}").added]
            ids += [c.id for c in mem.remember(f"Writer {worker}", "likes", f"tea {i}").added]
        acked.put(ids)


@pytest.mark.parametrize("writers", [1, 2, 4])
def test_many_writer_processes_keep_every_write_and_one_live_value(
    dsn: str, schema: str, writers: int
) -> None:
    PostgresStore(dsn, schema=schema).close()  # made once, before the race
    context = multiprocessing.get_context("spawn")
    acked: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    processes = [context.Process(target=write_slot, args=(dsn, schema, w, 12, acked))
                 for w in range(writers)]
    for process in processes:
        process.start()
    ids = [cid for _ in processes for cid in acked.get(timeout=120)]
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        every = {c.id: c for c in mem.get_all(states=STATES)}
        assert len(ids) == writers * 24 and set(ids) <= set(every)
        slot = [c for c in every.values() if c.predicate == "lives_in"]
        assert len(slot) == writers * 12
        assert len(mem.get_all(subject="Alice", predicate="lives_in")) == 1
        # and at every instant a write was recorded, as believed then: one value at most
        for known in sorted({c.recorded_at for c in slot if c.recorded_at is not None}):
            live = mem.get_all(subject="Alice", predicate="lives_in", known_at=known,
                               valid_at=known)
            assert len(live) == 1, known


def test_a_batch_locks_every_slot_it_writes_before_it_writes_any(dsn: str, schema: str) -> None:
    # A batch writes a slot it holds twice one claim at a time, after the rest: if it
    # locked that slot only then, two batches over the same slots in another order
    # would each hold one lock and wait for the other's (deadlock detected, a failed
    # write). A trigger notes how many advisory locks the writer held when the batch's
    # first claim row went in: all of them, across scopes too.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        note_advisory_locks(dsn, schema, "INSERT")
        u1, u2 = Scope(user="u1"), Scope(user="u2")
        mem.remember_many([Claim("y", "lives_in", "Oslo", scope=u2), Claim("x", "lives_in", "Rome", scope=u1),
                           Claim("x", "lives_in", "Bonn", scope=u1), Claim("z", "lives_in", "Kyiv", scope=u2)])
        assert admin(dsn, f"SELECT locks FROM {schema}.held")[0] == (3,)  # x, y and z
        assert [c.object for c in mem.get_all(user="u1")] == ["Bonn"]


def test_an_erase_waits_for_a_writer_settling_the_claims_slot(dsn: str, schema: str) -> None:
    # A writer reads a slot under its lock and then ends or retires what it read; an
    # erase deleting one of those rows in between failed that write ("claim ... is not
    # in the store"). The erase takes the slot's lock first: a trigger notes the
    # advisory locks it held as it deleted the row.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        cid = mem.remember("alice", "lives_in", "Oslo", user="u1").added[0].id
        note_advisory_locks(dsn, schema, "DELETE")
        assert mem.erase(cid, user="u1") and not mem.erase(cid, user="u1")
        assert admin(dsn, f"SELECT locks FROM {schema}.held") == [(1,)]
        assert mem.count(states=STATES, user="u1") == 0


def test_forget_subject_locks_the_slots_before_it_deletes_their_rows(dsn: str, schema: str) -> None:
    # A batch settling a slot that names the subject read it under the slot's lock, then
    # ended what it read; forget_subject() deleting that row in between failed the batch
    # ("claim ... is not in the store", 32 of 145 batches in a two-process race). It
    # takes every such slot's lock first: the trigger notes them held at the delete.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        mem.remember("Zorblatt", "lives_in", "Oslo", user="u1")
        mem.remember("Zorblatt", "likes", "tuba", user="u1")
        mem.remember("ann", "knows", "Zorblatt", user="u1")
        note_advisory_locks(dsn, schema, "DELETE")
        assert mem.forget_subject("Zorblatt", reason="r", requested_by="q", user="u1").claims == 3
        assert admin(dsn, f"SELECT max(locks) FROM {schema}.held") == [(3,)]


def test_a_revert_locks_the_slots_before_it_retires_the_mistake(dsn: str, schema: str) -> None:
    # A revert retired the mistake's row, then locked the slot to restore what it
    # closed: the reverse of an erase or a writer (slot, then row), so the two could
    # deadlock. A trigger notes the advisory locks held at each update of a claim row.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        mem.remember("alice", "lives_in", "Oslo")
        mistake = mem.remember("alice", "lives_in", "Rome").added[0]
        note_advisory_locks(dsn, schema, "UPDATE")
        assert [c.object for c in mem.revert(mistake.id).added] == ["Oslo"]
        held = admin(dsn, f"SELECT locks FROM {schema}.held")
        assert held and all(n == (1,) for n in held), held
        assert [c.object for c in mem.get_all()] == ["Oslo"]


def test_a_consolidation_locks_the_slots_it_changes_first(dsn: str, schema: str, clock: Clock) -> None:
    # consolidate() updated rows of many slots without their locks: beside a writer of
    # those slots, or another consolidation, each could hold a row the other waited for.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM(), clock=clock) as mem:
        for who in ("alice", "bob"):
            mem.remember(who, "likes", "tea")
            clock.advance(days=1)
            mem.remember(who, "likes", "Tea")  # a duplicate to merge
        note_advisory_locks(dsn, schema, "UPDATE OF salience, memory_type")
        clock.advance(days=30)
        assert mem.consolidate()["decayed"] > 0
        held = admin(dsn, f"SELECT locks FROM {schema}.held")
        assert held and all(n == (2,) for n in held), held  # alice's slot and bob's


def test_delete_and_supersede_lock_the_claims_slot_before_they_read_it(dsn: str, schema: str) -> None:
    # They read the claim, then retired or ended it: an erase committed in between left
    # them "claim ... is not in the store". Inside a write, get_claim takes the claim's
    # slot lock first (as an erase does), so the read and the change see one state.
    with Memvara(store=PostgresStore(dsn, schema=schema), llm=NullLLM()) as mem:
        tea = mem.remember("alice", "likes", "tea").added[0]
        oslo = mem.remember("alice", "lives_in", "Oslo").added[0]
        note_advisory_locks(dsn, schema, "UPDATE")
        assert mem.delete(tea.id) and not mem.delete("c999-00000000")
        mem.supersede(oslo.id, Claim("alice", "lives_in", "Rome"))
        assert admin(dsn, f"SELECT locks FROM {schema}.held") == [(1,), (1,)]
        assert mem.get(tea.id) is not None and [c.object for c in mem.get_all()] == ["Rome"]


def test_setting_vectors_skips_a_claim_another_writer_holds(dsn: str, schema: str) -> None:
    # The vector backlog is set on many claims of many slots at once, outside their
    # slot locks: waiting there for a row a writer holds (which may wait for a row of
    # the backlog) was a deadlock. A claim held is skipped and stays in the backlog.
    import psycopg

    with Memvara(store=PostgresStore(dsn, schema=schema, lock_timeout=0.5), llm=NullLLM()) as mem:
        held, free = (mem.remember(who, "likes", "tea").added[0] for who in ("alice", "bob"))
        with psycopg.connect(dsn) as other:  # a writer of another process, mid-change
            other.execute(f"SELECT 1 FROM {schema}.claims WHERE id = %s FOR UPDATE", [held.id])
            mem.consolidate()  # embeds the backlog first
            assert [cid for cid, _ in mem.store.claims_missing_vectors()] == [held.id]
        mem.consolidate()
        assert mem.store.claims_missing_vectors() == [] and mem.get(free.id) is not None


def planned_rows(dsn: str, schema: str, table: str) -> float:
    """What the planner believes ``table`` holds (``-1``: it has no statistics yet)."""
    ((rows,),) = admin(dsn, f"SELECT reltuples FROM pg_class WHERE oid = '{schema}.{table}'::regclass")
    return float(rows)  # type: ignore[arg-type]


def test_a_table_grown_by_a_fifth_takes_fresh_statistics_at_once(
    dsn: str, store: PostgresStore, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without them the planner takes a bulk-filled table for empty until autovacuum's
    next nap, and reads a slot through every row of its scope."""
    import memvara.store.postgres._connect as connect

    monkeypatch.setattr(connect, "ANALYZE_MIN_ROWS", 50)

    def write(n: int, tag: str) -> None:
        store.insert_claims([claim(f"{tag}{i}", "Berlin", NOW) for i in range(n)], None)

    write(49, "a")  # under the floor: nothing asked
    assert planned_rows(dsn, schema, "claims") == -1
    write(251, "b")  # 300 rows grown from nothing known
    assert planned_rows(dsn, schema, "claims") == 300
    assert planned_rows(dsn, schema, "claim_terms") > 0
    second = PostgresStore(dsn, schema=schema)  # another process: it reads what is known
    second.insert_claims([claim(f"s{i}", "Berlin", NOW) for i in range(55)], None)
    second.close()
    assert planned_rows(dsn, schema, "claims") == 300  # 55 rows: under a fifth of 300
    write(55, "c")
    assert planned_rows(dsn, schema, "claims") == 300
    write(10, "d")  # 65 since this store took them: past a fifth
    assert planned_rows(dsn, schema, "claims") == 420


def test_statistics_another_session_is_taking_are_not_waited_for(
    dsn: str, store: PostgresStore, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    import memvara.store.postgres._connect as connect

    monkeypatch.setattr(connect, "ANALYZE_MIN_ROWS", 50)
    with psycopg.connect(dsn) as other:  # holds the lock ANALYZE takes, as autovacuum would
        other.execute(f"LOCK TABLE {schema}.claims IN SHARE UPDATE EXCLUSIVE MODE")
        store.insert_claims([claim(f"a{i}", "Berlin", NOW) for i in range(60)], None)
        assert planned_rows(dsn, schema, "claims") == -1  # skipped, and the write stands
        other.rollback()
    tq = TimeQuery(known_at=2**62, valid_at=None)
    assert store.count_claims(Scope(), tq, STATES) == 60
    store.insert_claims([claim("b", "Berlin", NOW)], None)  # the next commit takes them
    assert planned_rows(dsn, schema, "claims") == 61


def test_a_backlog_of_vectors_is_set_at_once_and_counted(
    dsn: str, schema: str, store: PostgresStore
) -> None:
    """Only claims still waiting take a vector; the count says how many did."""
    a, b, c = store.insert_claims([claim(n, "Berlin", NOW) for n in ("A", "B", "C")], None)
    assert store.set_claim_vectors([a.id], np.ones((1, 4), np.float32)) == 1
    unknown = "c99999-00000000"
    assert store.set_claim_vectors([a.id, b.id, unknown, c.id], np.full((4, 4), 2.0, np.float32)) == 2
    assert store.claims_missing_vectors() == []
    assert admin(dsn, f"SELECT id, (emb::real[])[1] FROM {schema}.claims ORDER BY rowid") == [
        (a.id, 1.0), (b.id, 2.0), (c.id, 2.0)]  # the first vector kept
