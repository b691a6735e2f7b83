"""One parametrized fixture runs the behavioural suites on both backends.

``backend`` is autouse and parametrized ``sqlite`` / ``postgres``: with ``postgres``,
every store ``Memvara()`` opens from a path (``":memory:"`` or a file) is a
``PostgresStore`` in a fresh schema of the server ``MEMVARA_TEST_PG_DSN`` names (the
same path opened again is the same schema, as a file is the same file), dropped after
the test. The server is real (``.ci/postgres-up`` starts one); without a DSN both halves
skip, saying why (the SQLite half would only repeat the suites' own modules). The modules beside this one import the tests of the
suites they name, so those tests run here once per backend, unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from memvara._facade import core

from ..postgres_server import DSN_VARIABLE, drop_schemas, fresh_schema, pg_dsn

SQLITE_INTERNALS = {
    "test_claims_written_one_at_a_time_are_searchable_at_once":
        "asserts SQLiteStore's deferred text index (has_backlog); PostgresStore indexes"
        " every write in its own transaction",
    "test_a_search_over_rows_still_waiting_does_not_wait_for_a_writer":
        "asserts SQLiteStore's deferred text index (has_backlog); reads waiting on no"
        " writer are tested for PostgreSQL in test_postgres.py",
    "test_a_stale_claim_id_gets_no_cosine_from_the_row_its_rowid_names":
        "asserts on SQLiteStore's vector sidecar; the same case for PostgreSQL is in"
        " test_postgres_parity.py",
    "test_claim_similarities_are_the_cosines_of_the_claims_asked":
        "reads SQLiteStore.vectors() (the sidecar); the same cosines for PostgreSQL are"
        " compared in test_postgres_parity.py",
    "test_every_turn_the_text_list_holds_gets_a_vector_rank":
        "ends with asserts on SQLiteStore.episode_similarities; compared across backends"
        " in test_postgres_parity.py",
    "test_duplicates_merge_into_the_oldest_which_folds_in_sources_and_counts":
        "ends with SQLiteStore.integrity_problems(), a check of SQLite's own indexes",
    "test_a_backfill_of_many_aliases_binds_within_sqlites_limit":
        "lowers SQLite's bound-value limit on SQLiteStore's connection",
    "test_a_store_written_before_keeps_answering":
        "opens a SQLite file of an older schema, written byte for byte",
    "test_single_writes_settle_as_with_a_store_of_the_bare_protocol":
        "compares SQLiteStore's single-write fast path with the bare protocol, which is"
        " all PostgresStore offers",
    **dict.fromkeys((
        "test_verify_reports_a_record_edited_in_the_file",
        "test_verify_reports_a_record_deleted_from_the_middle",
        "test_an_anchor_catches_a_history_rewritten_with_every_hash_recomputed",
        "test_an_anchor_catches_a_rolled_back_history",
        "test_verify_walks_the_log_in_pages",
        "test_a_read_only_store_verifies_and_anchors",
    ), "tampers with the write log in a SQLite file (or opens one read-only); the same"
       " cases for PostgreSQL are in test_postgres_governance.py"),
    **dict.fromkeys((
        "test_the_capacity_bound_evicts_the_least_salient_ended_claims_first",
        "test_a_claim_waiting_for_its_vector_is_left_for_the_next_run",
        "test_the_archive_has_every_column_of_the_claims_table",
    ), "sets or reads SQLiteStore's own columns (salience, vec_slot) in SQLite's SQL; the"
       " same cases for PostgreSQL are in test_postgres_governance.py"),
    "test_a_claim_column_the_archive_lacks_is_named":
        "adds a column to a SQLite file's claims table",
    "test_everything_about_the_subject_is_erased_from_every_file":
        "reads a SQLite store's files as bytes; the same erasure is checked in every table"
        " of a PostgreSQL schema in test_postgres_governance.py",
    "test_the_reviews_of_an_erased_subject_leave_no_byte_in_the_file":
        "reads a SQLite store's files as bytes; the same erasure is checked in every table"
        " of a PostgreSQL schema in test_postgres_governance.py",
    "test_a_schema_7_store_opens_and_starts_its_log":
        "opens a SQLite file of an older schema, written byte for byte",
    "test_a_schema_12_store_s_waiting_turns_are_read_after_migrating":
        "opens a SQLite file of an older schema; the PostgreSQL upgrade of the same marks"
        " is in test_postgres.py",
    "test_a_tombstone_an_older_erasure_left_with_a_level_s_key_scrubbed_reads":
        "edits a tombstone in a SQLite file; the same mend on PostgreSQL is in"
        " test_postgres_governance.py",
    "test_a_waiting_turn_the_subject_said_leaves_no_byte_in_the_file":
        "reads a SQLite store's files as bytes; on PostgreSQL the same erasure is checked"
        " through the API in test_forget_subject.py's speaker test",
    **dict.fromkeys((
        "test_close_waits_for_a_read_running_on_another_thread",
        "test_close_inside_a_snapshot_of_its_own_thread_does_not_wait_for_itself",
        "test_close_does_not_wait_for_another_connection_reading_an_older_snapshot",
    ), "closes a SQLiteStore under its own reader connections or another connection's"
       " read of the file (the write-ahead log's checkpoint)"),
}
"""Tests of the suites that reach into ``SQLiteStore`` itself, with why they skip on
PostgreSQL (and where the same behaviour is tested there)."""


@pytest.fixture(params=["sqlite", "postgres"], autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Which backend the test's memories open (see the module docstring)."""
    if request.param == "sqlite":
        if not os.environ.get(DSN_VARIABLE):  # the suites' own modules ran these already
            pytest.skip(f"{DSN_VARIABLE} is not set: no PostgreSQL half to run the SQLite"
                        " half beside (the suite's own module runs these tests on SQLite)")
        yield "sqlite"
        return
    dsn = pg_dsn()
    reason = SQLITE_INTERNALS.get(request.node.originalname)
    if reason is not None:
        pytest.skip(reason)
    from memvara.store.postgres import PostgresStore

    schemas: dict[str, str] = {}
    made: list[str] = []

    def open_store(path: str | os.PathLike[str], read_only: bool) -> PostgresStore:
        key = os.fspath(path)
        if key == ":memory:" or key not in schemas:
            made.append(fresh_schema())
            if key != ":memory:":
                schemas[key] = made[-1]
        return PostgresStore(dsn, schema=made[-1] if key == ":memory:" else schemas[key],
                             read_only=read_only)

    monkeypatch.setattr(core, "open_store", open_store)
    yield "postgres"
    drop_schemas(dsn, made)
