"""How the SQLite write log learns what a transaction inserted into ``claims`` and
``episodes``: the paths that insert name their rows (no trigger: any trigger on the
insert costs a statement journal), and the record's own insert checks that the rows of
each above the highest the log has seen are exactly those named, so a row no path named
is still recorded."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from memvara import Claim, Memvara, SQLiteStore
from memvara.store.base import WriteLogStore

from .conftest import Clock

SQLITE_STORE = Path(__file__).resolve().parent.parent / "memvara" / "store" / "sqlite"


def bodies(mem: Memvara) -> list[dict[str, object]]:
    store = mem.store
    assert isinstance(store, WriteLogStore)
    return [json.loads(body) for _, _, _, _, body, _ in store.log_records(0, 1_000_000)]


def rowid(claim_id: str) -> int:
    return int(claim_id[1:].split("-")[0])


def sneak_claim(store: SQLiteStore, row: int) -> None:
    """What a write path that forgot to name its rows does: a claim inserted by hand, on
    the store's own writer, inside its open transaction."""
    conn: sqlite3.Connection = getattr(store, "_writer")
    columns = [c[1] for c in conn.execute("PRAGMA main.table_info(claims)")]
    picked = ", ".join("?" if c == "rowid" else c for c in columns)
    conn.execute(f"INSERT INTO claims ({', '.join(columns)}) SELECT {picked} FROM claims"
                 " ORDER BY rowid LIMIT 1", (row,))


def sneak_turn(store: SQLiteStore, row: int) -> None:
    """``sneak_claim`` for a turn."""
    conn: sqlite3.Connection = getattr(store, "_writer")
    columns = [c[1] for c in conn.execute("PRAGMA main.table_info(episodes)")]
    picked = ", ".join("?" if c == "rowid" else "id || ?" if c == "id" else c for c in columns)
    conn.execute(f"INSERT INTO episodes ({', '.join(columns)}) SELECT {picked} FROM episodes"
                 " ORDER BY rowid LIMIT 1", (row, f"-sneaked-{row}"))


def last_turn(store: SQLiteStore) -> int:
    """The rowid of the newest turn in the file (``add()``'s receipt names none)."""
    (found,) = getattr(store, "_writer").execute("SELECT max(rowid) FROM episodes").fetchone()
    return int(found)


def add_turn(mem: Memvara, store: SQLiteStore, text: str) -> int:
    """``mem.add(text)`` (one turn, no claim), and the stored turn's rowid."""
    mem.add(text)
    return last_turn(store)


def test_no_trigger_watches_claims_or_turns_inserts_and_each_write_names_its_rows(mem: Memvara) -> None:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    triggers = [sql for (sql,) in getattr(store, "_writer").execute(
        "SELECT sql FROM temp.sqlite_master WHERE type = 'trigger'")]
    assert triggers and not [sql for sql in triggers if re.search(r"INSERT ON main\.(claims|episodes)\b", sql)]
    permanent = [sql for (sql,) in getattr(store, "_writer").execute(
        "SELECT sql FROM main.sqlite_master WHERE type = 'trigger'")]
    assert permanent and not [sql for sql in permanent if re.search(r"\bINSERT\b", sql.split(" BEGIN")[0])]
    one = mem.remember("maya", "likes", "tea").added[0]
    many = mem.remember_many([Claim("maya", "likes", "jazz"), Claim("maya", "likes", "rock")]).added
    assert bodies(mem) == [{"added": [rowid(one.id)]}, {"added": [rowid(c.id) for c in many]}]


def test_a_claim_no_path_named_is_recorded_by_its_transactions_record(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        mem.remember("maya", "likes", "tea")
        with store.transaction():
            named = rowid(mem.remember("maya", "likes", "jazz").added[0].id)
            sneak_claim(store, named + 1)
        assert bodies(mem)[-1] == {"added": [named, named + 1]}
        # alone in its transaction it has no record of its own: the next record names it
        with store.transaction():
            sneak_claim(store, named + 2)
        assert len(bodies(mem)) == 2
        later = rowid(mem.remember("maya", "likes", "rock").added[0].id)
        assert bodies(mem)[-1] == {"added": [later, named + 2]}
        assert mem.verify().ok


def test_another_connections_claims_are_left_to_its_own_records(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as first, Memvara(db_path, clock=clock) as second:
        a = rowid(first.remember("ada", "lives_in", "Paris").added[0].id)
        b = rowid(second.remember("bob", "lives_in", "Oslo").added[0].id)
        c = rowid(first.remember("cy", "lives_in", "Rome").added[0].id)
        second.forget("ada", "lives_in")  # a record with no claim inserted
        d = rowid(second.remember("di", "lives_in", "Nice").added[0].id)
        assert bodies(first) == [{"added": [a]}, {"added": [b]}, {"added": [c]}, {"retired": [a]},
                                 {"added": [d]}]
        assert first.verify().ok


def test_a_logged_connection_names_the_claims_an_unlogged_one_inserted_meanwhile(
        db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as logged:
        logged.remember("ada", "lives_in", "Paris")
        with Memvara(store=SQLiteStore(db_path, write_log=False), clock=clock) as unlogged:
            quiet = rowid(unlogged.remember("bob", "lives_in", "Oslo").added[0].id)
        loud = rowid(logged.remember("cy", "lives_in", "Rome").added[0].id)
        assert bodies(logged)[-1] == {"added": [loud, quiet]} and len(bodies(logged)) == 2


def test_a_tampered_record_of_another_connection_does_not_stop_a_write(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as first, Memvara(db_path, clock=clock) as second:
        first.remember("ada", "lives_in", "Paris")
        b = rowid(second.remember("bob", "lives_in", "Oslo").added[0].id)
        conn = sqlite3.connect(db_path)
        with conn:
            conn.execute("UPDATE write_log SET body = 'not json' WHERE seq = 2")
        conn.close()
        # no record it can read names bob's claim any more, so this one does
        c = rowid(first.remember("cy", "lives_in", "Rome").added[0].id)
        store = first.store
        assert isinstance(store, WriteLogStore)
        assert json.loads(store.log_records(2, 10)[0][4]) == {"added": [c, b]}
        report = first.verify()
        assert not report.ok and report.broken == 2


def test_a_turn_no_path_named_is_recorded_by_its_transactions_record(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        mem.add("hello there, how are you today?")
        with store.transaction():
            mem.add("what time is the meeting tomorrow?")
            named = last_turn(store)
            sneak_turn(store, named + 1)
        assert bodies(mem)[-1] == {"turns_added": [named, named + 1]}
        with store.transaction():
            sneak_turn(store, named + 2)
        assert len(bodies(mem)) == 2
        later = add_turn(mem, store, "and where do we meet after that?")
        assert bodies(mem)[-1] == {"turns_added": [later, named + 2]}
        assert mem.verify().ok


def test_a_turn_added_and_erased_in_one_transaction_is_not_looked_for(db_path: str, clock: Clock) -> None:
    traced: list[str] = []
    store = SQLiteStore(db_path, tracer=lambda sql, params: traced.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        with store.transaction():
            mem.scope(user="kim").add("what time is it now?")
            gone = last_turn(store)
            mem.scope(user="lee").add("is it raining outside?")
            kept = last_turn(store)
            assert mem.purge(user="kim")["episodes"] == 1
        body = bodies(mem)[-1]
        assert body["turns_added"] == [gone, kept] and body["turns_erased"] == [gone]
        # the record's check counted the one turn left: nothing was looked for
        assert traced and not [sql for sql in traced if "json_each(w.body" in sql]
        later = add_turn(mem, store, "shall we go for a walk later?")
        assert bodies(mem)[-1] == {"turns_added": [later]}
        assert mem.verify().ok


def test_another_connections_turns_are_left_to_its_own_records(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as first, Memvara(db_path, clock=clock) as second:
        s1, s2 = first.store, second.store
        assert isinstance(s1, SQLiteStore) and isinstance(s2, SQLiteStore)
        a = add_turn(first, s1, "what time is the meeting?")
        b = add_turn(second, s2, "where is the meeting held?")
        c = add_turn(first, s1, "who else is coming along?")
        assert bodies(first) == [{"turns_added": [a]}, {"turns_added": [b]}, {"turns_added": [c]}]
        assert first.verify().ok


def test_a_logged_connection_names_the_turns_an_unlogged_one_inserted_meanwhile(
        db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as logged:
        store = logged.store
        assert isinstance(store, SQLiteStore)
        logged.add("what time is the meeting?")
        with Memvara(store=SQLiteStore(db_path, write_log=False), clock=clock) as unlogged:
            unlogged.add("where is the meeting held?")
        quiet = last_turn(store)
        loud = add_turn(logged, store, "who else is coming along?")
        assert bodies(logged)[-1] == {"turns_added": [loud, quiet]}
        assert len(bodies(logged)) == 2 and logged.verify().ok


def test_every_statement_inserting_claims_or_turns_is_on_a_path_that_names_its_rows() -> None:
    """A tripwire for write paths added later: the log sees an insert below the highest
    row it has seen only if its path calls ``_log_inserted``."""
    turns = re.compile(r"INTO\s+(?:main\.)?episodes\b")
    texts = {p.name: p.read_text(encoding="utf-8") for p in SQLITE_STORE.glob("*.py")}
    assert {name for name, text in texts.items() if turns.search(text)} == {"_episodes.py", "_transfer.py"}, (
        "a new statement inserts turns: call self._log_inserted('turns_added', rowids) after it and add it here")
    assert texts["_episodes.py"].count('self._log_inserted("turns_added"') == 1  # insert_episodes
    assert texts["_transfer.py"].count('self._log_inserted("turns_added"') == 1  # an import's turns
    literal = re.compile(r"INTO\s+(?:main\.)?claims\b")
    statements = re.compile(r"\b(?:INSERT_SQL|insert_statement|single_insert)\b")
    assert {name for name, text in texts.items() if literal.search(text)} == {"_rows.py", "_archive.py"}, (
        "a new statement inserts claims: call self._log_inserted(op, rowids) after it and add it here")
    users = {name for name, text in texts.items() if statements.search(text)} - {"_rows.py", "__init__.py"}
    assert users == {"_writes.py", "_transfer.py"}
    assert texts["_writes.py"].count("self._log_inserted(") == 2  # insert_claims, write_claim
    assert texts["_transfer.py"].count('self._log_inserted("added"') == 1  # an import's claims
    assert texts["_archive.py"].count("self._log_inserted(") == 1  # restore_archived
