"""Claims written one at a time wait for their vectors, then are embedded together.

An encode per single write costs more than the rest of the write's Python, so claims
written in batches smaller than ``EMBED_BATCH`` are stored without vectors; the write
that brings the backlog to ``EMBED_BATCH`` embeds all of it in one encode, before its
transaction opens. A failing embedder therefore fails that write and stores nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memvara import Claim, HashingEmbedder, Memvara, NullLLM, SQLiteStore
from memvara._write.writer import EMBED_BATCH
from memvara.store.sqlite._migrations import SCHEMA_VERSION

from .conftest import Clock, embed_all
from .schema_history import SCHEMA_4_INDEXES


def _store(mem: Memvara) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


def _vector_of(mem: Memvara, claim_id: str) -> np.ndarray:
    store = _store(mem)
    (slot,) = store._query("SELECT vec_slot FROM claims WHERE id = ?", [claim_id])[0]
    assert slot is not None, f"{claim_id} has no vector"
    return store.vectors([slot]).reshape(-1)


def test_single_writes_are_embedded_together_once_enough_wait(mem: Memvara) -> None:
    first = [mem.remember(f"u{i}", "likes", f"thing {i}").added[0] for i in range(EMBED_BATCH - 1)]
    assert mem.stats()["embeddings"] == 0
    assert len(_store(mem).claims_missing_vectors()) == EMBED_BATCH - 1
    last = mem.remember("someone", "likes", "the last thing").added[0]
    assert mem.stats()["embeddings"] == EMBED_BATCH
    assert _store(mem).claims_missing_vectors() == []
    for claim in (first[0], first[-1], last):
        np.testing.assert_array_equal(_vector_of(mem, claim.id), mem.embedder.encode([claim.text])[0])


def test_a_bulk_write_is_embedded_on_the_way_in_with_the_backlog(mem: Memvara) -> None:
    waiting = mem.remember("user", "likes", "tea").added[0]
    bulk = mem.remember_many([Claim(f"u{i}", "likes", "oboe") for i in range(EMBED_BATCH)])
    assert mem.stats()["embeddings"] == EMBED_BATCH + 1
    np.testing.assert_array_equal(_vector_of(mem, waiting.id), mem.embedder.encode([waiting.text])[0])
    np.testing.assert_array_equal(_vector_of(mem, bulk.added[7].id), mem.embedder.encode([bulk.added[7].text])[0])


def test_supersede_joins_the_backlog(mem: Memvara) -> None:
    old = mem.remember("user", "lives_in", "Oslo").added[0]
    new = mem.supersede(old.id, Claim("user", "lives_in", "Bergen")).added[0]
    assert mem.stats()["embeddings"] == 0
    assert embed_all(mem) == 2
    np.testing.assert_array_equal(_vector_of(mem, new.id), mem.embedder.encode([new.text])[0])
    for i in range(EMBED_BATCH - 1):
        mem.remember(f"u{i}", "likes", f"thing {i}")
    newer = mem.supersede(new.id, Claim("user", "lives_in", "Tromso")).added[0]  # the 256th
    assert mem.stats()["embeddings"] == 2 + EMBED_BATCH
    np.testing.assert_array_equal(_vector_of(mem, newer.id), mem.embedder.encode([newer.text])[0])


class _Flaky(HashingEmbedder):
    """Works until told to fail, like a hosted model that starts timing out."""

    failing = False

    def encode(self, texts):  # type: ignore[no-untyped-def]
        if self.failing:
            raise TimeoutError("the embedding service timed out")
        return super().encode(texts)


def test_a_failing_embedder_fails_the_write_that_needed_it_and_stores_nothing(clock: Clock) -> None:
    embedder = _Flaky()
    with Memvara(embedder=embedder, clock=clock) as mem:
        for i in range(EMBED_BATCH - 1):
            mem.remember(f"u{i}", "likes", f"thing {i}")
        embedder.failing = True
        with pytest.raises(TimeoutError):
            mem.remember("someone", "likes", "the last thing")
        assert mem.count() == EMBED_BATCH - 1  # the failed write left no row
        assert mem.stats()["embeddings"] == 0
        embedder.failing = False
        mem.remember("someone", "likes", "the last thing")
        assert mem.stats()["embeddings"] == EMBED_BATCH


def test_a_new_process_counts_the_backlog_it_finds(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        for i in range(EMBED_BATCH - 1):
            mem.remember(f"u{i}", "likes", f"thing {i}")
    with Memvara(db_path, clock=clock) as mem:
        assert mem.stats()["embeddings"] == 0
        mem.remember("someone", "likes", "the last thing")
        assert mem.stats()["embeddings"] == EMBED_BATCH


def test_a_waiting_claim_that_was_erased_or_embedded_meanwhile_is_skipped(mem: Memvara) -> None:
    store = _store(mem)
    gone = mem.remember("user", "likes", "tea").added[0]
    done = mem.remember("user", "likes", "coffee").added[0]
    kept = mem.remember("user", "likes", "cocoa").added[0]
    waiting = store.claims_missing_vectors()  # read before the others change them
    assert [cid for cid, _ in waiting] == [gone.id, done.id, kept.id]
    mem.erase(gone.id)
    vectors = mem.embedder.encode([text for _, text in waiting])
    with store.transaction():
        assert store.set_claim_vectors([done.id], vectors[1:2]) == 1
    with store.transaction():
        assert store.set_claim_vectors([cid for cid, _ in waiting], vectors) == 1
    np.testing.assert_array_equal(_vector_of(mem, kept.id), vectors[2])
    assert store.set_claim_vectors([], vectors[:0]) == 0
    assert store.integrity_problems() == []


def test_vectors_for_claims_already_embedded_or_unknown_write_nothing(mem: Memvara) -> None:
    store = _store(mem)
    claim = mem.remember("user", "likes", "tea").added[0]
    assert embed_all(mem) == 1
    before = _vector_of(mem, claim.id).copy()
    watermark = _watermark(mem)
    other = mem.embedder.encode(["something else", "and more"])
    with store.transaction():
        assert store.set_claim_vectors([claim.id, "c99999-00000000"], other) == 0
    np.testing.assert_array_equal(_vector_of(mem, claim.id), before)
    assert _watermark(mem) == watermark
    assert store.integrity_problems() == []


def _watermark(mem: Memvara) -> int:
    (value,) = _store(mem)._query(
        "SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims'")[0]
    return int(value)


def _top_rowid(mem: Memvara) -> int:
    return int(_store(mem)._query("SELECT coalesce(max(rowid), 0) FROM claims")[0][0])


def test_the_waiting_claims_are_the_rows_above_the_vector_watermark(mem: Memvara) -> None:
    # Claims at or below the watermark all have vectors; the waiting ones are read as
    # the table's tail above it, so the store keeps no index of them.
    mem.remember_many([Claim(f"u{i}", "likes", "oboe") for i in range(EMBED_BATCH)])
    assert _watermark(mem) == _top_rowid(mem) == EMBED_BATCH
    waiting = [mem.remember(f"w{i}", "likes", f"thing {i}").added[0] for i in range(3)]
    assert _watermark(mem) == EMBED_BATCH
    assert [cid for cid, _ in _store(mem).claims_missing_vectors()] == [c.id for c in waiting]
    assert _store(mem).has_backlog()
    assert embed_all(mem) == 3
    assert _watermark(mem) == _top_rowid(mem) == EMBED_BATCH + 3
    indexes = _store(mem)._query("SELECT name FROM sqlite_master WHERE type = 'index'")
    assert ("claims_unembedded",) not in indexes


def test_claims_written_after_the_newest_were_erased_still_get_their_vectors(
    mem: Memvara,
) -> None:
    # Erasing the newest rows must not let new rows take rowids at or below the
    # watermark, where no one would look for a missing vector.
    kept = mem.remember_many([Claim(f"u{i}", "likes", "oboe") for i in range(EMBED_BATCH)])
    for claim in kept.added[-5:]:
        assert mem.erase(claim.id)
    later = mem.remember("later", "likes", "tea").added[0]
    assert later.id.startswith(f"c{EMBED_BATCH + 1}-")  # above every rowid ever used
    assert [cid for cid, _ in _store(mem).claims_missing_vectors()] == [later.id]
    assert embed_all(mem) == 1
    np.testing.assert_array_equal(_vector_of(mem, later.id), mem.embedder.encode([later.text])[0])


def test_a_schema_3_store_finds_its_waiting_claims_after_migrating(tmp_path: Path) -> None:
    # Schema 3 listed waiting claims in a partial index; schema 4 drops it and starts
    # the watermark just below the first claim still waiting.
    path = str(tmp_path / "old.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.remember_many([Claim(f"u{i}", "likes", "oboe") for i in range(EMBED_BATCH)])
        waiting = [mem.remember(f"w{i}", "likes", f"thing {i}").added[0] for i in range(2)]
    conn = sqlite3.connect(path)
    try:  # the file as schema 3 left it
        conn.executescript(SCHEMA_4_INDEXES)
        conn.execute("CREATE INDEX claims_unembedded ON claims (rowid) WHERE vec_slot IS NULL")
        conn.execute("DELETE FROM store_meta WHERE key = 'vectors_claims'")
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")  # v13 added it
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 3")
        conn.commit()
    finally:
        conn.close()
    with Memvara(path, llm=NullLLM()) as mem:
        store = _store(mem)
        assert store._query("PRAGMA user_version")[0][0] == SCHEMA_VERSION == 13
        assert ("claims_unembedded",) not in store._query(
            "SELECT name FROM sqlite_master WHERE type = 'index'")
        assert _watermark(mem) == EMBED_BATCH
        assert [cid for cid, _ in store.claims_missing_vectors()] == [c.id for c in waiting]
        assert embed_all(mem) == 2
        assert store.integrity_problems() == []
