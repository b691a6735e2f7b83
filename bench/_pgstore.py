"""PostgreSQL plumbing for the benchmarks: a fresh schema per store, its size, its drop.

psycopg is imported inside each function, so a benchmark run on SQLite alone needs no
``postgres`` extra."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvara.store.postgres import PostgresStore

__all__ = ["DSN_VARIABLE", "default_dsn", "drop_schema", "open_store", "schema_bytes",
           "server_versions"]

DSN_VARIABLE = "MEMVARA_TEST_PG_DSN"


def default_dsn() -> str | None:
    """The server ``$MEMVARA_TEST_PG_DSN`` names (what ``.ci/postgres-up`` prints)."""
    return os.environ.get(DSN_VARIABLE) or None


def drop_schema(dsn: str, schema: str) -> None:
    """Drop ``schema`` and everything in it, if it exists (before a run, so the store
    opened there starts empty, and after it)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def open_store(dsn: str, schema: str) -> PostgresStore:
    """A ``PostgresStore`` on ``schema`` (made on first use)."""
    from memvara.store.postgres import PostgresStore

    return PostgresStore(dsn, schema=schema)


def schema_bytes(dsn: str, schema: str) -> int:
    """Bytes the schema's tables take on disk: ``pg_total_relation_size`` (heap, TOAST,
    indexes, free-space and visibility maps) summed over its tables and sequences. The
    server's write-ahead log is shared by the whole cluster and not counted."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'm', 'S')",
            (schema,),
        ).fetchone()
    return int(row[0]) if row else 0


def server_versions(dsn: str) -> str:
    """``PostgreSQL <version>, pgvector <version>`` of the server, for the run's header."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT current_setting('server_version'),"
            " (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        ).fetchone()
    version, vector = row if row else ("?", None)
    return f"PostgreSQL {version}, pgvector {vector or 'not installed'}"
