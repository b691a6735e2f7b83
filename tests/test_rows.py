"""Claims to rows: a bulk insert writes the values its rows share into its statement."""

from __future__ import annotations

from memvara import Claim, Memvara, Scope
from memvara.store.sqlite._rows import INSERT_SQL, SHARED_MIN_ROWS, insert_statement

from .conftest import JAN, JUN, NOW, Clock


def _rows(n: int, **shared: object) -> list[tuple[object, ...]]:
    """``n`` rows of two varying columns and the ``shared`` ones."""
    return [(i, f"id{i}", *shared.values()) for i in range(n)]


def test_a_small_batch_binds_every_value() -> None:
    rows = _rows(SHARED_MIN_ROWS - 1, user="")
    assert insert_statement(rows) == (INSERT_SQL, rows)


def test_a_single_rows_usual_nulls_are_written_in() -> None:
    # A single write's row has seven NULLs (no end, not retired, no meta, no sources,
    # no vector yet); written into the statement, they are not bound one by one.
    row = tuple(None if j in (12, 13, 15, 16, 21, 22, 24) else j for j in range(26))
    sql, kept = insert_statement([row])
    assert sql.count("NULL") == 7 and sql.count("?") == 19
    assert kept == [tuple(j for j in range(26) if row[j] is not None)]
    ended = (*row[:12], 99, *row[13:])  # a valid_to: every value bound, as usual
    assert insert_statement([ended]) == (INSERT_SQL, [ended])


def test_shared_values_are_written_in_and_dropped_from_the_rows() -> None:
    rows = _rows(SHARED_MIN_ROWS, none=None, one=1, whole=1.0, text="o'hara")
    sql, kept = insert_statement(rows)
    assert sql.endswith("VALUES (?, ?, NULL, 1, 1.0, 'o''hara')")
    assert kept == [(i, f"id{i}") for i in range(SHARED_MIN_ROWS)]


def test_values_whose_literal_could_read_back_otherwise_stay_bound() -> None:
    # A fraction (decimal parsing may round), -0.0, an int past 64 bits, non-ASCII, NUL,
    # long text: each shared by every row, each still bound.
    odd = dict(half=0.5, negzero=-0.0, huge=2**63, accent="é", nul="a\x00b", long="x" * 300)
    rows = _rows(SHARED_MIN_ROWS, **odd)
    assert insert_statement(rows) == (INSERT_SQL, rows)


def test_a_column_shared_in_value_but_not_in_type_stays_bound() -> None:
    rows: list[tuple[object, ...]] = [(i, 1 if i % 2 else 1.0) for i in range(SHARED_MIN_ROWS)]
    sql, kept = insert_statement(rows)
    assert sql == INSERT_SQL and kept == rows


def _stored(mem: Memvara) -> list[tuple[object, ...]]:
    """Every claim column with its SQLite type, in rowid order."""
    conn = mem.store._writer  # type: ignore[attr-defined]
    names = [row[1] for row in conn.execute("PRAGMA table_info(claims)")]
    typed = ", ".join(f"{name}, typeof({name})" for name in names)
    rows: list[tuple[object, ...]] = conn.execute(
        f"SELECT rowid, {typed} FROM claims ORDER BY rowid").fetchall()
    return rows


def test_a_bulk_write_stores_what_single_writes_store() -> None:
    scope = Scope(user="o'neil")
    claims = [
        Claim(f"user {i}", "likes", f"thing {i % 3}", valid_from=JAN, recorded_at=JUN,
              confidence=1.0, extractor="it's me", scope=scope)
        for i in range(SHARED_MIN_ROWS + 6)
    ]
    with Memvara(clock=Clock(NOW)) as bulk, Memvara(clock=Clock(NOW)) as single:
        bulk.remember_many(claims)
        for claim in claims:
            single.remember_many([claim])
        assert _stored(bulk) == _stored(single)
        assert len(_stored(bulk)) == len(claims)
