"""Two processes writing one store file at once: both succeed and nothing is lost.

Writer processes start together on a store file that does not exist yet (so they also
race to create and migrate it), each writes a few hundred claims -- ``add()`` with no
model, single ``remember()`` calls that close a slot's old value, ``remember_many()``
batches and a few ``erase()`` -- and prints what each acknowledged call wrote. No call
may raise ("database is locked" included: the busy timeout and the library's retry
absorb the other writer). Afterwards the store is sound, holds exactly what was
acknowledged, and every vector either process wrote reads back as its text's vector.

The in-process tests below pin the races the two-process run found, one by one.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import memvara.store.sqlite._translate as translating
from memvara import (
    Claim,
    HashingEmbedder,
    Memvara,
    NullLLM,
    SQLiteStore,
    StorageFullError,
    StoreError,
    StoreLockedError,
)
from memvara.store import STATES
from memvara.store.sqlite._migrations import SCHEMA_VERSION
from memvara.store.sqlite._rows import claim_rowid
from memvara.store.sqlite._vectors import VectorFile

REPO = Path(__file__).resolve().parents[1]
CALLS = 300

# One writer. It prints "ready" once imported, opens the store when the parent says "go"
# (so the writers race on the new file), then prints one JSON line of what it wrote.
WRITER = r"""
import json, sys
from memvara import Claim, Memvara, NullLLM

path, name, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()
added, erased, last = [], [], None
with Memvara(path, user=name, llm=NullLLM()) as mem:
    for i in range(calls):
        if i % 50 == 25:
            receipt = mem.remember_many(
                [Claim(f"{name}-b{i}", "likes", f"{name} item {i}-{j}") for j in range(40)])
        elif i % 37 == 36 and last is not None:
            assert mem.erase(last)
            erased.append(last)
            last = None
            continue
        elif i % 3 == 0:
            receipt = mem.add(f"I live in Town{name.upper()}{i}")
        else:
            receipt = mem.remember(f"{name}-s{i % 17}", "lives_in", f"{name} place {i}")
        added.extend(c.id for c in receipt.added)
        last = receipt.added[-1].id
print(json.dumps({"added": added, "erased": erased}), flush=True)
"""


def child_env() -> dict[str, str]:
    """This environment, with the repository first on the child's import path."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def run_writers(path: str, names: list[str], calls: int) -> dict[str, dict[str, list[str]]]:
    """Start one writer per name, release them together, and return what each wrote."""
    children = {
        name: subprocess.Popen(
            [sys.executable, "-c", WRITER, path, name, str(calls)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(),
        )
        for name in names
    }
    try:
        for child in children.values():
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children.values():
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        results = {name: child.communicate(timeout=120) for name, child in children.items()}
    finally:
        for child in children.values():
            if child.poll() is None:  # pragma: no cover - only when an assertion above failed
                child.kill()
                child.wait()
    for name, child in children.items():
        out, err = results[name]
        assert child.returncode == 0, f"writer {name} failed:\n{err}"
        assert "locked" not in err and "Traceback" not in err, err
    return {name: json.loads(out) for name, (out, _) in results.items()}


def test_two_processes_writing_one_new_file_both_succeed_and_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    written = run_writers(path, ["a", "b"], CALLS)

    with Memvara(path, llm=NullLLM()) as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        assert store.integrity_problems() == []
        for name, wrote in written.items():
            erased = set(wrote["erased"])
            kept = set(wrote["added"]) - erased
            assert len(wrote["added"]) > CALLS  # the batches add 40 at a time
            assert erased and erased <= set(wrote["added"])
            found = {c.id for c in mem.get_all(states=STATES, user=name)}
            assert found == kept, f"writer {name}: lost {kept - found}, extra {found - kept}"
            assert mem.count(states=STATES, user=name) == len(kept)
            assert all(mem.get(cid, user=name) is None for cid in erased)
            # One slot per subject: the closures of both writers never crossed.
            live = [c.subject for c in mem.get_all(user=name) if c.predicate == "lives_in"]
            assert len(live) == len(set(live))

        # Every vector either process wrote is its text's vector, wherever it landed.
        for table, column in (("claims", "text"), ("episodes", "content")):
            rows = store._query(
                f"SELECT {column}, vec_slot, s_user FROM {table} WHERE vec_slot IS NOT NULL", []
            )
            assert {user for _, _, user in rows} == {"a", "b"}, table
            stored = store.vectors([slot for _, slot, _ in rows], table)
            np.testing.assert_array_equal(stored, mem.embedder.encode([t for t, _, _ in rows]))
        for name in written:  # found by both retrievers, whoever wrote the slot
            hit = mem.search(f"{name}-b25 likes {name} item 25-7", k=1, user=name)[0]
            assert hit.text == f"{name}-b25 likes {name} item 25-7"
            assert hit.explain.vector_rank == 1 and hit.explain.bm25_rank == 1


# -- the races, pinned in one process ----------------------------------------------------
def test_a_store_that_waited_for_another_to_migrate_a_new_file_does_not_migrate_it_again(
    tmp_path: Path,
) -> None:
    """Two openers of one new file both read version 0; the one that gets the lock
    second must find the file migrated, not run the steps again ("table claims already
    exists"). The tracer lets a second store migrate at exactly that moment."""
    path = str(tmp_path / "new.db")
    others: list[SQLiteStore] = []

    def migrate_first(sql: str, params: object) -> None:
        if sql == "BEGIN IMMEDIATE" and not others:
            others.append(SQLiteStore(path))

    store = SQLiteStore(path, tracer=migrate_first)
    try:
        assert len(others) == 1
        assert store._query("PRAGMA user_version", [])[0][0] == SCHEMA_VERSION
        assert store.integrity_problems() == []
    finally:
        store.close()
        others[0].close()


def test_a_busy_answer_is_retried_with_backoff_until_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Switching a new file to WAL can get SQLITE_BUSY at once, without SQLite's busy
    handler, when another process switches it at the same moment."""
    pauses: list[float] = []
    monkeypatch.setattr(translating, "_sleep", pauses.append)
    answers = [sqlite3.OperationalError("database is locked")] * 7

    def step() -> None:
        if answers:
            raise answers.pop()

    translating.retry_busy(step, timeout=60)
    assert pauses == [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.05]

    def broken() -> None:
        raise sqlite3.OperationalError("no such table: x")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        translating.retry_busy(broken, timeout=60)  # only "locked" is retried

    def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        translating.retry_busy(locked, timeout=0)
    assert len(pauses) == 7


def test_a_new_file_held_past_the_busy_timeout_is_reported_locked_not_foreign(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "held.db")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # rollback-journal mode: no one else may read
        with pytest.raises(StoreLockedError, match="locked"):
            SQLiteStore(path, busy_timeout=0.05)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    SQLiteStore(path).close()  # let go of, it opens


def test_a_store_sees_vectors_another_store_on_the_same_file_wrote_after_it_opened(
    tmp_path: Path,
) -> None:
    """Two stores on one file stand for two processes: each has its own sidecar
    mapping. The second opened before any vector existed, and before the first grew
    the sidecar past its mapping; it reads, searches and erases the first's vectors."""
    path = str(tmp_path / "two.db")
    with Memvara(path, llm=NullLLM(), user="u") as late, \
            Memvara(path, llm=NullLLM(), user="u") as early:
        assert early.store.dim is None
        late.remember_many([Claim(f"s{i}", "likes", f"thing {i}") for i in range(300)])
        late.add("I live in Lisbon")

        assert early.store.dim == late.embedder.dim  # the sidecars it never opened
        hit = early.search("thing 7", k=1)[0]
        assert hit.text == "s7 likes thing 7" and hit.explain.vector_rank is not None
        assert early.store.vectors([300], "claims").any()

        victim = late.remember_many(
            [Claim(f"t{i}", "likes", f"other {i}") for i in range(600)]
        ).added[-1]
        slot = claim_rowid(victim.id)  # a row's vector sits at its rowid
        assert late.store.vectors([slot]).any()
        assert early.erase(victim.id)  # the slot lies past early's mapping of the sidecar
        assert not late.store.vectors([slot]).any()  # zeroed in the file itself
        store = late.store
        assert isinstance(store, SQLiteStore)
        assert store.integrity_problems() == []


def test_a_store_opening_while_another_writes_its_first_vectors_opens_their_sidecar(
    tmp_path: Path,
) -> None:
    """The opener read "no vectors yet", then found rows with vectors when it checked
    the sidecars against them: the other process had created the file in between."""
    path = str(tmp_path / "racing.db")
    with Memvara(path, llm=NullLLM()) as other:
        def write_now(sql: str, params: object) -> None:
            if sql.startswith("SELECT max(rowid) FROM claims WHERE vec_slot") and not other.count():
                other.remember_many([Claim(f"s{i}", "likes", f"x {i}") for i in range(300)])

        store = SQLiteStore(path, tracer=write_now)
        try:
            assert other.count() == 300
            assert store.dim == other.embedder.dim
            assert store.vectors([1]).any()
        finally:
            store.close()


def test_a_sidecar_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    """It is written aside and renamed into place: another process opening the store
    meanwhile never finds a file without its header (it used to, and refused the store
    as corrupt)."""
    path = str(tmp_path / "v.vecs")
    sidecar = VectorFile(path, None)
    sidecar.write([0], np.ones((1, 4), dtype=np.float32))
    assert os.listdir(tmp_path) == ["v.vecs"]
    assert VectorFile(path, None).read([0]).tolist() == [[1.0, 1.0, 1.0, 1.0]]
    sidecar.close()


def test_zeroing_slots_of_a_sidecar_with_no_rows_does_nothing() -> None:
    sidecar = VectorFile(None, 4)
    sidecar.zero([3])
    assert sidecar.capacity == 0


def test_a_sidecar_in_a_missing_folder_is_a_store_error(tmp_path: Path) -> None:
    sidecar = VectorFile(str(tmp_path / "gone" / "v.vecs"), None)
    with pytest.raises(StoreError, match="cannot create the vector sidecar"):
        sidecar.write([0], np.ones((1, 4), dtype=np.float32))


@pytest.mark.parametrize(("code", "error"), [(errno.ENOSPC, StorageFullError),
                                             (errno.EACCES, StoreError)])
def test_a_sidecar_that_cannot_be_created_is_a_store_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, error: type[StoreError],
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", refuse)
    sidecar = VectorFile(str(tmp_path / "v.vecs"), None)
    with pytest.raises(error, match="create the vector sidecar"):
        sidecar.write([0], np.ones((1, 4), dtype=np.float32))
    assert os.listdir(tmp_path) == []
    assert sidecar.dim is None


def test_a_reader_keeps_its_vectors_when_another_store_re_embeds_at_another_width(
    tmp_path: Path,
) -> None:
    """The re-embedding store renames its new sidecar over the live one and grows it.
    A store that only reads keeps its mapping of the old file: it mapped the new file
    as rows of the old width once it grew past that mapping, and read its bytes as
    vectors (of twice the length, pointing elsewhere)."""
    path = str(tmp_path / "two.db")
    with Memvara(path, llm=NullLLM(), embedder=HashingEmbedder(64)) as first:
        first.remember_many([Claim(f"s{i}", "likes", f"thing {i}") for i in range(256)])
    with Memvara(path, llm=NullLLM(), embedder=HashingEmbedder(64), read_only=True) as reader, \
            Memvara(path, llm=NullLLM(), embedder=HashingEmbedder(64)) as writer:
        store = reader.store
        assert isinstance(store, SQLiteStore)
        before = store.vectors([1, 256])
        writer.reembed(HashingEmbedder(8))
        writer.remember_many([Claim(f"t{i}", "likes", f"other {i}") for i in range(2100)])
        after = store.vectors([1, 256, 2300])
        np.testing.assert_array_equal(after[:2], before)
        assert not after[2].any()  # a row of the new generation: not this mapping's
