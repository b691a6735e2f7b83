"""A single write on PostgreSQL: how many round trips it takes, and the claim insert
that does in one statement (one claim with scalars, a batch with arrays) what the
SQLite store does: the same ids, rows, source links, vectors and word counts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from memvara import Claim, Memvara, NullLLM, Scope
from memvara._domain.time import to_micros
from memvara.store import TimeQuery

from .conftest import NOW, Clock
from .postgres_server import opened
from .postgres_server import dsn, schema  # noqa: F401 - the fixtures the tests below take
from .test_postgres_term_counts import counts


def round_trips(conn: Any, call: Callable[[], object]) -> int:
    """The times ``call`` waited on ``conn``'s server: the turns from messages sent
    (``F``) to messages read (``B``) in libpq's trace of the connection."""
    from psycopg import pq

    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            call()
        finally:
            conn.pgconn.untrace()
        trace.seek(0)
        sides = [line[:1] for line in trace.read().splitlines() if line[:1] in ("F", "B")]
    return sum(1 for a, b in zip(sides, sides[1:]) if (a, b) == ("F", "B"))


def test_a_fresh_write_waits_six_times_on_the_server_and_a_revising_one_seven(
        clock: Clock, dsn: str, schema: str) -> None:
    with opened(dsn, schema, clock) as mem:
        mem.remember("warm", "lives_in", "Oslo")  # the first write reads the store's settings
        writer = mem.store._writer  # type: ignore[attr-defined]
        # BEGIN; the slot's lock; its read; the claim (rowid, row, tokens, links); the
        # commit's two (the log's pending rows, lock and head; the record, counts, COMMIT)
        assert round_trips(writer, lambda: mem.remember("Ada", "lives_in", "Paris")) == 6
        clock.advance(days=1)
        # ... and the old value's end, whose row count is read
        assert round_trips(writer, lambda: mem.remember("Ada", "lives_in", "Rome")) == 7
        history = mem.history("Ada", "lives_in")
        assert [(c.object, c.state) for c in history] == [("Paris", "ended"), ("Rome", "live")]


def claims() -> list[Claim]:
    """One claim with every column set, and a batch of three: one with no words (no
    tokens), sources repeated within and across claims, another scope."""
    later = NOW + timedelta(days=2)
    full = Claim("Ada Lovelace", "lives_in", "London", valid_from=NOW, valid_to=later,
                 valid_to_known_at=NOW, recorded_at=NOW, invalidated_at=later,
                 invalidated_by="c9-00000000", polarity=-1, confidence=1,
                 memory_type="episodic", sources=("e1", "e2", "e1"),
                 text="Ada Lovelace lives in London, London!", extractor="test",
                 meta={"k": "v"}, scope=Scope(user="u1", agent="a1"), observations=3)
    batch = [
        Claim("Bob", "likes", "tea", valid_from=NOW, recorded_at=NOW, sources=("e1",),
              text="Bob likes green tea"),
        Claim("Bob", "likes", "…", valid_from=NOW, recorded_at=NOW, text="… !"),
        Claim("Carol", "speaks", "Portuguese", valid_from=NOW, recorded_at=NOW,
              sources=("e3", "e2"), text="Carol speaks Portuguese", scope=Scope(user="u2"),
              confidence=0.25),
    ]
    return [full, *batch]


@pytest.mark.parametrize("with_vectors", [True, False])
def test_claims_inserted_alone_or_in_a_batch_are_stored_as_sqlite_stores_them(
        clock: Clock, dsn: str, schema: str, with_vectors: bool) -> None:
    from memvara.store.postgres import PostgresStore

    lite = Memvara(clock=clock, llm=NullLLM())
    pg = PostgresStore(dsn, schema=schema)
    try:
        first, *batch = claims()
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((4, 8)).astype(np.float32) if with_vectors else None
        stored = {}
        for name, store in (("sqlite", lite.store), ("postgres", pg)):
            one = store.insert_claims([first], None if vectors is None else vectors[:1])
            many = store.insert_claims(batch, None if vectors is None else vectors[1:])
            stored[name] = [*one, *many]
        ids = [c.id for c in stored["postgres"]]
        assert ids == [c.id for c in stored["sqlite"]]
        assert len(set(ids)) == 4
        wide = Scope()
        for cid, scope in zip(ids, [c.scope for c in claims()]):
            got = pg.get_claim(cid, scope)
            assert got is not None and got == lite.store.get_claim(cid, scope)
        tq = TimeQuery(known_at=to_micros(NOW, "known_at"), valid_at=None)
        for source, expected in (("e1", [ids[1]]), ("e2", []), ("e3", [])):
            # get_claim above saw the scoped ones; a root read sees the root's claims
            assert [c.id for c in pg.claims_citing(source, wide, tq)] == expected
            assert [c.id for c in lite.store.claims_citing(source, wide, tq)] == expected
        assert [c.id for c in pg.claims_citing("e3", Scope(user="u2"), tq)] == [ids[3]]
        links = pg._query("SELECT source, claim_rowid FROM claim_sources ORDER BY 2, 1")
        assert [(s, f"c{r}") for s, r in links] == [
            (s, cid.split("-")[0]) for cid, sources in
            zip(ids, [("e1", "e2"), ("e1",), (), ("e2", "e3")]) for s in sources]
        if vectors is not None:
            got_a = pg.claim_similarities(ids, vectors[0])
            got_b = lite.store.claim_similarities(ids, vectors[0])  # type: ignore[attr-defined]
            assert sorted(got_a) == sorted(ids)
            assert [got_a[k] for k in ids] == pytest.approx([got_b[k] for k in ids], abs=1e-5)
        else:
            assert pg.claims_missing_vectors() == [(c.id, c.text) for c in stored["postgres"]]
        pg.close()
        kept = counts(dsn, schema)["claims"]  # each word's count equals its rows
        assert kept["london"] == 1 and kept["bob"] == 1 and kept["portugues"] == 1
        reader = PostgresStore(dsn, schema=schema, read_only=True)
        lengths = dict(reader._query("SELECT id, tokens FROM claims"))
        reader.close()
        assert [lengths[cid] for cid in ids] == [6, 4, 0, 3]
    finally:
        lite.close()
        pg.close()
