"""Erasure is real: after erase/purge/reset the text is in no file of the store.

Retirement (forget/delete) keeps rows; erasure removes the row, its FTS tokens, its
vector and the write-ahead log's copy. These tests write unique tokens, erase, close,
and scan every file the store left on disk as bytes.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memvara import Claim, Episode, Memvara, SQLiteStore
from memvara.llm import NullLLM
from memvara.store import STATES

from .conftest import NOW, Clock, embed_all


def store_bytes(db_path: str) -> bytes:
    folder = Path(db_path).parent
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def sqlite_store(mem: Memvara) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


TOKEN = "zqxvkelpmorb"


def test_erase_removes_a_claim_from_every_file(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        for i in range(300):  # enough rows that pages, segments and WAL frames all matter
            mem.remember(f"user{i}", "likes", f"filler value {i}")
        secret = mem.remember("user", "phone", f"{TOKEN} 555 0100").added[0]
        embed_all(mem)
        vector = mem.embedder.encode([secret.text])[0].tobytes()
        assert TOKEN.encode() in store_bytes(db_path)
        assert vector in store_bytes(db_path)
        assert mem.erase(secret.id)
        assert mem.get(secret.id) is None
        assert not mem.erase(secret.id)
        assert mem.count(states=STATES) == 300
    data = store_bytes(db_path)
    assert data.count(TOKEN.encode()) == 0
    assert data.count(vector) == 0
    with Memvara(db_path, clock=clock) as again:  # the survivors are intact
        assert again.count() == 300


def test_erase_with_sources_removes_turns_no_other_claim_cites(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        store = sqlite_store(mem)
        only, shared = store.insert_episodes(
            [Episode(f"my number is {TOKEN}", recorded_at=NOW),
             Episode("I like tea and my name is Ann", recorded_at=NOW)],
            mem.embedder.encode(["a", "b"]),
        )
        phone = mem.remember("user", "phone", TOKEN, sources=[only.id, shared.id]).added[0]
        mem.remember("user", "likes", "tea", sources=[shared.id])
        assert embed_all(mem) == 2
        assert mem.erase(phone.id, sources=True)
        assert store.get_episode(only.id, mem.default_scope) is None
        assert store.get_episode(shared.id, mem.default_scope) is not None
        stats = mem.stats()
        assert stats["episodes"] == 1 and stats["embeddings"] == 2
    assert store_bytes(db_path).count(TOKEN.encode()) == 0


def test_erase_without_sources_keeps_the_turns(mem: Memvara) -> None:
    store = sqlite_store(mem)
    (turn,) = store.insert_episodes([Episode("I live in Oslo", recorded_at=NOW)], None)
    claim = mem.remember("user", "lives_in", "Oslo", sources=[turn.id]).added[0]
    assert mem.erase(claim.id)
    assert store.get_episode(turn.id, mem.default_scope) is not None


def test_purge_removes_a_scope_and_reports_counts(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        store = sqlite_store(mem)
        (turn,) = store.insert_episodes(
            [Episode(f"alice says {TOKEN}", recorded_at=NOW, scope=mem.scope(user="alice").default_scope)],
            mem.embedder.encode(["x"]),
        )
        alice = mem.scope(user="alice")
        alice.remember("alice", "likes", TOKEN, sources=[turn.id])
        alice.remember("alice", "lives_in", f"{TOKEN}ville", session="s1")
        mem.remember("bob", "likes", "chess", user="bob")
        assert embed_all(mem) == 3
        counts = alice.purge()
        assert counts == {"claims": 2, "episodes": 1, "embeddings": 3, "sources": 1}
        assert mem.count(user="bob") == 1
    assert store_bytes(db_path).count(TOKEN.encode()) == 0


def test_reset_also_clears_the_persisted_schema(db_path: str, clock: Clock) -> None:
    from memvara import BUILTIN_PREDICATES, Cardinality, PredicateRegistry, PredicateSpec
    registry = PredicateRegistry(BUILTIN_PREDICATES + (PredicateSpec(TOKEN, Cardinality.ONE),))
    with Memvara(db_path, clock=clock, registry=registry) as mem:
        mem.remember("user", TOKEN, "x")
        counts = mem.reset()
        assert counts["claims"] == 1 and counts["predicates"] == 1
    assert store_bytes(db_path).count(TOKEN.encode()) == 0


def test_an_erased_vector_is_zeroed_and_its_slot_never_given_to_a_later_row(mem: Memvara) -> None:
    store = sqlite_store(mem)
    mem.remember("a", "likes", "x")
    top = mem.remember("b", "likes", "y").added[0]
    embed_all(mem)
    (slot,) = store._query("SELECT vec_slot FROM claims WHERE id = ?", [top.id])[0]
    assert np.count_nonzero(store.vectors([slot])) > 0
    assert mem.erase(top.id)
    assert np.count_nonzero(store.vectors([slot])) == 0
    later = mem.remember("c", "likes", "z").added[0]
    embed_all(mem)
    (later_slot,) = store._query("SELECT vec_slot FROM claims WHERE id = ?", [later.id])[0]
    assert later_slot > slot
    assert np.count_nonzero(store.vectors([slot])) == 0
    assert mem.stats()["embeddings"] == 2
    assert store.integrity_problems() == []


def test_wal_is_truncated_after_an_erase(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock) as mem:
        claim = mem.remember("user", "likes", TOKEN).added[0]
        mem.erase(claim.id)
        wal = db_path + "-wal"
        assert not os.path.exists(wal) or os.path.getsize(wal) == 0


@pytest.mark.parametrize("bad", [None, 3, ""])
def test_erase_rejects_a_bad_id(mem: Memvara, bad: object) -> None:
    from memvara import InvalidArgumentError
    with pytest.raises(InvalidArgumentError, match="claim_id"):
        mem.erase(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="sources"):
        mem.erase("c1", sources="yes")  # type: ignore[arg-type]


def test_erase_is_not_retirement(mem: Memvara) -> None:
    claim = mem.remember("user", "likes", "tea").added[0]
    mem.delete(claim.id)
    assert mem.get(claim.id) is not None  # retired rows stay readable
    assert mem.erase(claim.id)
    assert mem.get(claim.id) is None and mem.history("user", "likes") == []
    assert isinstance(claim, Claim)


def test_erase_with_sources_keeps_a_turn_another_claim_still_cites(mem: Memvara) -> None:
    receipt = mem.add("I live in Berlin and I work at Acme")
    lives, works = receipt.added
    assert lives.sources == works.sources
    counts = mem.store.erase_claim(lives.id, mem.default_scope, sources=True)
    assert counts["claims"] == 1 and counts["episodes"] == 0
    assert mem.store.get_episode(works.sources[0], mem.default_scope) is not None


def test_an_archived_claim_erased_leaves_no_byte_in_the_file(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "m.db"
    with Memvara(str(path), clock=clock, llm=NullLLM()) as mem:
        old = mem.remember("maya", "lives_in", "Quixotown").added[0]
        clock.advance(days=1)
        mem.remember("maya", "lives_in", "Faro")
        clock.advance(days=100)
        assert mem.prune(timedelta(days=1))["ended"] == 1
        assert b"quixotown" in b"".join(p.read_bytes() for p in tmp_path.iterdir()).lower()
        assert mem.erase(old.id)
        assert b"quixotown" not in b"".join(p.read_bytes() for p in tmp_path.iterdir()).lower()


def test_a_turn_said_again_after_its_erasure_is_kept_not_taken_for_a_copy(mem: Memvara) -> None:
    """``add()`` compares a turn with the scope's recent ones kept in memory: an erased
    turn's vector must go with it, or the same words said again are skipped as a
    "near_duplicate" (lost, and a way to test a guess of what was erased)."""
    said = f"Yesterday the {TOKEN} people showed me their new flat in town"
    mem.add(["hello there, how are you", said], user="u1")
    mem.purge(user="u1")
    again = mem.add(said, user="u1")
    assert again.skipped == () and [e.content for e in mem.episodes(user="u1")] == [said]
    cited = mem.add("I live in Porto", user="u2").added[0]
    mem.erase(cited.id, sources=True, user="u2")
    assert mem.add("I live in Porto", user="u2").skipped == ()


def test_the_log_a_reader_still_needed_is_truncated_at_a_later_commit(tmp_path: Path) -> None:
    """Another connection reading a snapshot keeps the write-ahead log's frames, the
    erased text among them, past the erasure's checkpoint: it is tried again after each
    later commit (without waiting), so the text goes once the reader lets go."""
    db = tmp_path / "m.db"
    mem = Memvara(store=SQLiteStore(str(db), busy_timeout=0.05), llm=NullLLM())
    claim = mem.remember("alice", "phone", TOKEN).added[0]
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM claims").fetchone()
    assert mem.erase(claim.id)
    assert TOKEN.encode() in (tmp_path / "m.db-wal").read_bytes()  # the reader needs it
    mem.remember("bo", "likes", "tea")  # tried again, still read: kept
    reader.rollback()
    reader.close()
    mem.remember("cy", "likes", "tea")
    assert TOKEN.encode() not in store_bytes(str(db)) and (tmp_path / "m.db-wal").stat().st_size == 0
    mem.close()


_KILLED_AFTER_COMMIT = r"""
import os, sys
from memvara import Claim, Memvara, NullLLM
from memvara.store.sqlite import _vectors

mem = Memvara(sys.argv[1], llm=NullLLM())
first = mem.remember_many([Claim("zorblatt", "likes", f"thing {i}") for i in range(300)]).added[0]
print(first.id, flush=True)
_vectors.VectorFile.zero = lambda self, slots: os._exit(9)  # killed: committed, not zeroed
mem.erase(first.id)
"""


def test_an_erasure_killed_before_its_vectors_are_zeroed_is_finished_at_the_next_open(
    tmp_path: Path,
) -> None:
    """The erasure commits, then zeroes the erased rows' vectors in the sidecar; a process
    killed in between leaves a note in the same commit, and the next writable open zeroes
    them (a read-only one cannot, and still sees the bytes)."""
    import subprocess
    import sys

    path = str(tmp_path / "memory.db")
    child = subprocess.run([sys.executable, "-c", _KILLED_AFTER_COMMIT, path],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 9, child.stderr
    erased = child.stdout.split()[0]
    slot = int(erased[1:].split("-")[0])  # a claim's vector slot is its rowid

    seen = SQLiteStore(path, read_only=True)
    assert np.any(seen.vectors([slot]))  # the kill left the vector behind
    seen.close()
    with Memvara(path, llm=NullLLM()) as mem:
        assert mem.get(erased) is None
        store = mem.store
        assert isinstance(store, SQLiteStore)
        assert not np.any(store.vectors([slot])) and np.any(store.vectors([slot + 1]))
        assert store.integrity_problems() == []
        later = mem.remember_many([Claim("ann", "likes", f"tea {i}") for i in range(3)])
        assert mem.erase(later.added[0].id)  # the next erasure's note replaces this one
    seen = SQLiteStore(path, read_only=True)
    assert not np.any(seen.vectors([slot]))
    seen.close()


def test_erasures_from_two_handles_note_both_and_zero_both(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as one, Memvara(path, llm=NullLLM()) as two:
        added = one.remember_many([Claim("ann", "likes", f"tea {i}") for i in range(300)]).added
        assert one.erase(added[0].id) and two.erase(added[1].id)  # the second adds to the note
        for mem in (one, two):
            store = mem.store
            assert isinstance(store, SQLiteStore)
            assert not np.any(store.vectors([1, 2])) and np.any(store.vectors([3]))
    notes = "SELECT value FROM store_meta WHERE key LIKE 'zero_pending%'"
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute(notes).fetchall() == [("[1, 2]",)]
    Memvara(path, llm=NullLLM()).close()  # zeroed again and dropped at the next open
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute(notes).fetchall() == []
