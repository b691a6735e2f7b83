"""The full-text index may lag single writes, and is never wrong about what it holds.

Rows written one at a time wait above a watermark until ``TEXT_INDEX_BATCH`` of them do,
then one FTS5 insert indexes them all; ``flush_text_index()`` and ``close()`` index the
rest. Deleting or editing a row touches the index only if the row is in it.
"""

from __future__ import annotations

import pytest

from memvara import Claim, Memvara, SQLiteStore
from memvara.store.sqlite import TEXT_INDEX_BATCH

from .conftest import Clock


def _store(mem: Memvara) -> SQLiteStore:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    return store


def _matches(store: SQLiteStore, term: str) -> list[str]:
    rows = store._query(
        "SELECT c.id FROM claims_fts f JOIN claims c ON c.rowid = f.rowid"
        " WHERE claims_fts MATCH ? ORDER BY c.rowid", [term]
    )
    return [r[0] for r in rows]


def _watermark(store: SQLiteStore, table: str = "claims") -> int:
    return int(store._query("SELECT value FROM store_meta WHERE key = ?", [f"fts_{table}"])[0][0])


def test_single_writes_wait_then_are_indexed_together(mem: Memvara) -> None:
    store = _store(mem)
    first = [mem.remember(f"u{i}", "plays", "the saxophone").added[0] for i in range(TEXT_INDEX_BATCH - 1)]
    assert _matches(store, "saxophone") == []
    assert _watermark(store) == 0
    last = mem.remember("someone", "plays", "the saxophone").added[0]
    assert _matches(store, "saxophone") == [c.id for c in [*first, last]]
    assert _watermark(store) == TEXT_INDEX_BATCH
    assert store.integrity_problems() == []


def test_a_bulk_write_is_indexed_at_once(mem: Memvara) -> None:
    store = _store(mem)
    claims = [Claim(f"u{i}", "plays", "oboe") for i in range(TEXT_INDEX_BATCH)]
    receipt = mem.remember_many(claims)
    assert _matches(store, "oboe") == [c.id for c in receipt.added]


def test_flush_indexes_the_waiting_rows_and_reports_how_many(mem: Memvara) -> None:
    store = _store(mem)
    claim = mem.remember("user", "plays", "the cello").added[0]
    assert _matches(store, "cello") == []
    assert store.flush_text_index() == 1
    assert _matches(store, "cello") == [claim.id]
    assert store.flush_text_index() == 0
    assert store.integrity_problems() == []


def test_close_indexes_the_waiting_rows(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        claim = mem.remember("user", "plays", "the harp").added[0]
    with Memvara(db_path, clock=clock) as mem:
        assert _matches(_store(mem), "harp") == [claim.id]


@pytest.mark.parametrize("indexed_first", [True, False])
def test_erasing_a_row_keeps_the_index_in_step(mem: Memvara, indexed_first: bool) -> None:
    store = _store(mem)
    kept = mem.remember("user", "likes", "saxophones").added[0]
    gone = mem.remember("user", "likes", "saxophone quartets").added[0]
    if indexed_first:
        store.flush_text_index()
    mem.erase(gone.id)
    store.flush_text_index()
    assert _matches(store, "saxophone") == [kept.id]
    assert store.integrity_problems() == []


def test_a_rowid_under_the_watermark_is_never_reused(mem: Memvara) -> None:
    store = _store(mem)
    mem.remember("user", "likes", "tea")
    top = mem.remember("user", "likes", "coffee").added[0]
    store.flush_text_index()
    mem.erase(top.id)  # the highest row is gone, but the index has seen its rowid
    fresh = mem.remember("user", "likes", "cocoa").added[0]
    assert store.integrity_problems() == []
    store.flush_text_index()
    assert _matches(store, "cocoa") == [fresh.id]
    assert store.integrity_problems() == []


@pytest.mark.parametrize("indexed_first", [True, False])
def test_editing_a_rows_text_keeps_the_index_in_step(mem: Memvara, indexed_first: bool) -> None:
    store = _store(mem)
    claim = mem.remember("user", "plays", "the violin").added[0]
    if indexed_first:
        store.flush_text_index()
    with store._writing() as conn:
        conn.execute("UPDATE claims SET text = 'user plays the viola' WHERE id = ?", (claim.id,))
    store.flush_text_index()
    assert _matches(store, "violin") == []
    assert _matches(store, "viola") == [claim.id]
    assert store.integrity_problems() == []
