"""The PostgreSQL server the tests run against: ``MEMVARA_TEST_PG_DSN`` names it
(``.ci/postgres-up`` starts one and prints it). Without it, or without the ``postgres``
extra, a test that asks for it skips, saying why. Tests never mock the server.

The ``dsn`` and ``schema`` fixtures are shared by importing them into a test module
(``from .postgres_server import dsn, schema``), as ``tests/cli_story.py``'s ``story`` is.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from memvara import Memvara, NullLLM

if TYPE_CHECKING:
    from .conftest import Clock

DSN_VARIABLE = "MEMVARA_TEST_PG_DSN"
NO_SERVER = (f"{DSN_VARIABLE} is not set: no PostgreSQL server to test against"
             " (.ci/postgres-up starts one and prints its DSN)")
_numbers = itertools.count()


def pg_dsn() -> str:
    """The test server's DSN; skips the test (with the reason) when there is none."""
    dsn = os.environ.get(DSN_VARIABLE)
    if not dsn:
        pytest.skip(NO_SERVER)
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    pytest.importorskip("pgvector", reason="the postgres extra (pgvector) is not installed")
    return dsn


def fresh_schema() -> str:
    """A schema name no other test of this run, or of a run beside it, uses."""
    return f"t{os.getpid()}_{next(_numbers)}"


def opened(dsn: str, schema: str, clock: Clock, **kwargs: bool) -> Memvara:
    """A memory on a ``PostgresStore`` in ``schema`` (``kwargs``: the store's flags)."""
    from memvara.store.postgres import PostgresStore

    return Memvara(store=PostgresStore(dsn, schema=schema, **kwargs), clock=clock, llm=NullLLM())


def drop_schemas(dsn: str, schemas: list[str]) -> None:
    """Drop test schemas and everything in them."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def dsn() -> str:
    """The test server's DSN; the test skips, saying why, when there is none."""
    return pg_dsn()


@pytest.fixture
def schema(dsn: str) -> Iterator[str]:
    """A schema of the test's own, dropped with everything in it afterwards."""
    name = fresh_schema()
    yield name
    drop_schemas(dsn, [name])
