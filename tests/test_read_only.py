"""Read-only stores, and the errors opening a store gives.

``Memvara(path, read_only=True)`` (and ``SQLiteStore(path, read_only=True)``) opens an
existing store without writing anything: no migration, no schema sync, no settling of
an interrupted re-embedding. Every read answers as it would on the writable store, and
every write raises ``ReadOnlyStoreError`` naming the path. A file or folder the process
cannot write is opened read-only by itself, with a warning.

These tests run as root, where ``chmod`` does not stop a write, so "cannot be written"
is simulated: by SQLite's own ``mode=ro`` (``read_only=True``), by patching
``os.access`` (what the store asks before it opens), or by making SQLite refuse the way
it does in a read-only folder. ``test_faults.py`` has the real thing where ``chattr +i``
works. Every open error names the path and what to do.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvara import (
    Claim,
    Episode,
    InvalidArgumentError,
    Memvara,
    NotAStoreError,
    NullLLM,
    ReadOnlyStoreError,
    SQLiteStore,
    StoreError,
)
from memvara._domain.model import Scope, TimeQuery
from memvara.store import STATES
from memvara.store.sqlite import _connections
from memvara.store.sqlite._migrations import SCHEMA_VERSION
from memvara.store.sqlite._vectors import VectorFile

from .conftest import Clock, FakeLLM, has_backlog
from .schema_history import SCHEMA_4_INDEXES

WRITE_WORDS = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER",
               "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "PRAGMA JOURNAL_MODE", "VACUUM")


def filled(path: str, clock: Clock) -> tuple[Memvara, dict[str, str]]:
    """An open store with claims in every state, turns and provenance, whose rows all
    wait for the text index and most for their vectors (written a few at a time, as an
    agent writes); some named ids."""
    llm = FakeLLM({"I moved to Lisbon last spring": [("user", "lives_in", "Lisbon")]})
    mem = Memvara(path, clock=clock, llm=llm)
    berlin = mem.remember("user", "lives_in", "Berlin").added[0]
    clock.advance(days=30)
    receipt = mem.add("I moved to Lisbon last spring")
    lisbon = receipt.added[0]
    mem.remember("user", "works_at", "Acme")
    mem.remember("acme", "located_in", "Porto")
    mem.remember_many([Claim(f"u{i}", "likes", f"thing {i}") for i in range(40)])
    clock.advance(days=1)
    return mem, {"berlin": berlin.id, "lisbon": lisbon.id, "turn": lisbon.sources[0]}


def fill(path: str, clock: Clock) -> dict[str, str]:
    """``filled``, closed (which indexes the text; the vectors still wait)."""
    mem, ids = filled(path, clock)
    mem.close()
    return ids


def every_read(mem: Memvara, ids: dict[str, str]) -> list[object]:
    """Every read of the public API, as comparable values."""
    return [
        mem.get(ids["lisbon"]),
        mem.get_all(),
        mem.get_all(states=STATES),
        mem.count(),
        mem.count(states=STATES),
        [(r.text, r.score) for r in mem.search("where does the user live", k=5)],
        [(r.text, r.score) for r in mem.search("thing 7 lisbon", k=5, include_episodes=True)],
        mem.recall("where does the user live"),
        mem.episodes(),
        mem.history("user", "lives_in"),
        mem.why(ids["lisbon"]),
        mem.why(ids["berlin"]),
        mem.produced(ids["turn"]),
        [p.render() for p in mem.neighborhood("user")],
        [p.render() for p in mem.paths_between("user", "porto")],
        mem.stats(),
    ]


def file_bytes(path: str) -> dict[str, str]:
    """A digest of the database, its write-ahead log and its sidecars. (A reader's
    SQLite may leave an empty -wal beside a closed store: its lock files, not data.)"""
    names = [path + suffix for suffix in ("", "-wal", ".vecs", ".episodes.vecs")]
    return {name: hashlib.sha256(Path(name).read_bytes()).hexdigest()
            for name in names if os.path.exists(name) and os.path.getsize(name)}


def refused(call: Callable[[], object], path: str) -> None:
    with pytest.raises(ReadOnlyStoreError) as caught:
        call()
    assert path in str(caught.value), caught.value


def every_write(mem: Memvara, ids: dict[str, str], path: str) -> None:
    """Each write raises ``ReadOnlyStoreError`` naming the path."""
    writes: list[Callable[[], object]] = [
        lambda: mem.remember("user", "likes", "tea"),
        lambda: mem.remember_many([Claim(f"x{i}", "likes", "y") for i in range(300)]),
        lambda: mem.add("I live in Paris now"),
        lambda: mem.supersede(ids["lisbon"], Claim("user", "lives_in", "Rome")),
        lambda: mem.forget("user", "works_at"),
        lambda: mem.delete(ids["lisbon"]),
        lambda: mem.erase(ids["lisbon"]),
        lambda: mem.purge(user="nobody"),
        lambda: mem.consolidate(),
        lambda: mem.alias_entity("big blue", "ibm"),
        lambda: mem.reembed(),
    ]
    for write in writes:
        refused(write, path)


@pytest.mark.parametrize("writer", ["open", "closed"])
def test_read_only_answers_every_read_as_the_writable_store_does_and_writes_nothing(
    tmp_path: Path, writer: str,
) -> None:
    # Beside a writer that keeps the store open (its single writes wait above the text
    # index's watermark and for vectors), or after it closed (the text was indexed, the
    # vectors still wait).
    path = str(tmp_path / "memory.db")
    clock = Clock()
    owner, ids = filled(path, clock)
    if writer == "closed":
        owner.close()
        owner = Memvara(path, clock=clock, llm=NullLLM())
    try:
        assert has_backlog(owner)
        expected = every_read(owner, ids)
        before = file_bytes(path)
        statements: list[str] = []
        store = SQLiteStore(path, read_only=True, tracer=lambda sql, _: statements.append(sql))
        assert store.read_only
        with Memvara(store=store, clock=clock, llm=NullLLM()) as mem:
            assert every_read(mem, ids) == expected
            every_write(mem, ids, path)
            assert every_read(mem, ids) == expected  # nothing a refused write began stayed
        wrote = [s for s in statements if s.lstrip().upper().startswith(WRITE_WORDS)]
        assert wrote == []
        assert file_bytes(path) == before
        assert every_read(owner, ids) == expected
    finally:
        owner.close()


def test_memvara_read_only_opens_without_a_schema_sync_or_a_store_of_its_own(
    tmp_path: Path, clock: Clock,
) -> None:
    from memvara import PredicateRegistry, PredicateSpec
    from memvara.schema import Cardinality, Volatility

    path = str(tmp_path / "memory.db")
    ids = fill(path, clock)
    before = file_bytes(path)
    registry = PredicateRegistry()
    registry.register(PredicateSpec("mentors", Cardinality.MANY, Volatility.SLOW))
    with Memvara(path, read_only=True, registry=registry, llm=NullLLM()) as mem:
        assert mem.store.read_only  # type: ignore[attr-defined]
        assert mem.get(ids["lisbon"]) is not None
        assert mem.store.load_predicates() == []  # declared here, never persisted
        every_write(mem, ids, path)
    assert file_bytes(path) == before
    store = SQLiteStore(path)
    with pytest.raises(InvalidArgumentError, match="read_only"):
        Memvara(store=store, read_only=True)
    store.close()  # a store handed in stays the caller's to close
    with pytest.raises(InvalidArgumentError, match="read_only"):
        Memvara(path, read_only="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="read_only"):
        SQLiteStore(path, read_only=1)  # type: ignore[arg-type]


def test_read_only_needs_a_store_that_exists_and_is_current(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.db")
    with pytest.raises(StoreError, match="no such store") as caught:
        SQLiteStore(missing, read_only=True)
    assert missing in str(caught.value) and not os.path.exists(missing)
    with pytest.raises(InvalidArgumentError, match="in-memory"):
        SQLiteStore(":memory:", read_only=True)

    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(NotAStoreError, match="empty file") as not_yet:
        SQLiteStore(str(empty), read_only=True)
    assert str(empty) in str(not_yet.value)

    old = str(tmp_path / "old.db")
    SQLiteStore(old).close()
    conn = sqlite3.connect(old)
    try:  # the file as schema 4 left it: opening it would migrate it
        conn.executescript(SCHEMA_4_INDEXES)
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")  # v13 added it
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 4")
        conn.commit()
    finally:
        conn.close()
    with pytest.raises(ReadOnlyStoreError, match=f"schema 4.*schema {SCHEMA_VERSION}") as stale:
        SQLiteStore(old, read_only=True)
    assert old in str(stale.value) and "writable" in str(stale.value)
    SQLiteStore(old).close()  # writable, it migrates; then read-only opens it
    SQLiteStore(old, read_only=True).close()


def test_read_only_refuses_to_settle_an_interrupted_re_embedding(tmp_path: Path) -> None:
    # A rebuild committed its new generation, then stopped before renaming the new
    # sidecar over the live one: settling renames files, so read-only refuses.
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.remember_many([Claim(f"u{i}", "likes", "tea") for i in range(300)])
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT OR REPLACE INTO store_meta (key, value)"
                     " VALUES ('vectors_generation', '1')")
        conn.commit()
    finally:
        conn.close()
    with pytest.raises(ReadOnlyStoreError, match="re-embedding was interrupted"):
        SQLiteStore(path, read_only=True)
    Path(path + ".vecs.new").write_bytes(b"not committed to")  # a leftover beside it
    with pytest.raises(ReadOnlyStoreError, match="re-embedding was interrupted"):
        SQLiteStore(path, read_only=True)


def test_a_leftover_new_sidecar_is_left_alone_read_only(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.remember("user", "likes", "tea")
    leftover = Path(path + ".vecs.new")
    leftover.write_bytes(b"a rebuild that never committed")
    with Memvara(path, read_only=True, llm=NullLLM()) as mem:
        assert mem.count() == 1
    assert leftover.exists()  # a writable open removes it; a read-only one may not
    with Memvara(path, llm=NullLLM()) as mem:
        assert mem.count() == 1
    assert not leftover.exists()


def test_a_read_only_vector_file_refuses_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.remember_many([Claim(f"u{i}", "likes", "tea") for i in range(300)])
    sidecar = VectorFile(path + ".vecs", None, read_only=True)
    try:
        assert sidecar.read([0]).shape == (1, sidecar.dim)
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            sidecar.write([0], sidecar.read([0]))
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            sidecar.zero([0])
        sidecar.zero([])  # nothing to do: nothing refused
    finally:
        sidecar.close()


def test_a_read_only_store_checks_its_own_integrity(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    fill(path, Clock())
    store = SQLiteStore(path, read_only=True)
    try:
        assert store.integrity_problems() == []
    finally:
        store.close()


# -- a store this process cannot write ----------------------------------------------------
def deny_writes(monkeypatch: pytest.MonkeyPatch, *paths: str) -> None:
    """``os.access`` says ``paths`` cannot be written (as it would to a user who may
    not; we are root here, where every file can be)."""
    denied = {os.path.abspath(p) for p in paths}
    real = os.access

    def access(path: str, mode: int, **kwargs: Any) -> bool:
        if mode & os.W_OK and os.path.abspath(path) in denied:
            return False
        return real(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_a_file_that_cannot_be_written_opens_read_only_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(tmp_path / "memory.db")
    ids = fill(path, Clock())
    with Memvara(path, clock=Clock(), llm=NullLLM()) as writable:
        expected = every_read(writable, ids)
    before = file_bytes(path)
    deny_writes(monkeypatch, path)
    with pytest.warns(UserWarning, match="opened read-only, as the file cannot be written") as caught:
        mem = Memvara(path, clock=Clock(), llm=NullLLM())
    assert caught[0].filename == __file__  # the caller's line, not one inside memvara
    with mem:
        assert mem.store.read_only  # type: ignore[attr-defined]
        assert every_read(mem, ids) == expected
        every_write(mem, ids, path)
    assert file_bytes(path) == before


def test_a_read_only_folder_without_a_write_ahead_log_opens_immutable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In a folder that cannot be written, with no -shm beside the file, SQLite cannot
    # open even mode=ro ("unable to open database file"); the store opens the file
    # immutable then. Simulated: os.access denies the folder, and SQLite's mode=ro
    # refuses as it would there.
    path = str(tmp_path / "memory.db")
    ids = fill(path, Clock())
    assert not os.path.exists(path + "-wal") and not os.path.exists(path + "-shm")
    with Memvara(path, clock=Clock(), llm=NullLLM()) as writable:
        expected = every_read(writable, ids)
    deny_writes(monkeypatch, str(tmp_path))
    real_connect = sqlite3.connect

    def connect(target: str, *args: Any, **kwargs: Any) -> Any:
        if "mode=ro" in str(target) and "immutable=1" not in str(target):
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(target, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.warns(UserWarning, match="folder .* cannot be written"):
        mem = Memvara(path, clock=Clock(), llm=NullLLM())
    with mem:
        assert "immutable=1" in str(mem.store._uri)  # type: ignore[attr-defined]
        assert every_read(mem, ids) == expected
        refused(lambda: mem.remember("user", "likes", "tea"), path)
    assert not os.path.exists(path + "-wal")
    # With a -wal file beside it another process may be writing: never immutable then.
    Path(path + "-wal").write_bytes(b"")
    with pytest.raises(ReadOnlyStoreError, match="SQLite cannot open it") as caught:
        SQLiteStore(path, read_only=True)
    assert path in str(caught.value)


def test_a_folder_that_cannot_be_written_keeps_a_writable_log_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SQLite can still write where the -wal and -shm files it needs already exist.
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as other:  # holds the log open beside the file
        other.remember("user", "likes", "tea")
        deny_writes(monkeypatch, str(tmp_path))
        with Memvara(path, llm=NullLLM()) as mem:
            assert not mem.store.read_only  # type: ignore[attr-defined]
            mem.remember("user", "likes", "coffee")
        assert other.count() == 2


def test_sqlite_refusing_to_write_opens_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # os.access may say yes where SQLite cannot write (a read-only mount, an immutable
    # file): what SQLite says decides.
    path = str(tmp_path / "memory.db")
    fill(path, Clock())

    def readonly(step: Callable[[], object], timeout: float) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(_connections, "retry_busy", readonly)
    with pytest.warns(UserWarning, match="SQLite cannot write it"):
        store = SQLiteStore(path)
    try:
        assert store.read_only and store.count_claims(Scope(), TimeQuery(2**62, None), STATES)
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            store.clear_predicates()
    finally:
        store.close()
    fresh = str(tmp_path / "fresh.db")  # a new file: nothing to read, so no fallback
    with pytest.raises(ReadOnlyStoreError, match="SQLite cannot open it"):
        SQLiteStore(fresh)


# -- what opening a path can meet ------------------------------------------------------------
def test_a_tilde_in_the_path_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with Memvara("~/memory.db", llm=NullLLM()) as mem:
        mem.remember("user", "likes", "tea")
        assert mem.store.path == str(tmp_path / "memory.db")  # type: ignore[attr-defined]
    assert (tmp_path / "memory.db").exists()
    assert not Path("~").exists()


def test_a_missing_folder_is_named_with_the_fix(tmp_path: Path) -> None:
    path = str(tmp_path / "nowhere" / "memory.db")
    with pytest.raises(StoreError) as caught:
        Memvara(path, llm=NullLLM())
    message = str(caught.value)
    assert path in message and str(tmp_path / "nowhere") in message
    assert "does not exist" in message and "create it" in message
    under_a_file = tmp_path / "file.txt"
    under_a_file.write_text("hello")
    with pytest.raises(StoreError, match="is not a folder"):
        SQLiteStore(str(under_a_file / "memory.db"))


@pytest.mark.parametrize("read_only", [False, True])
def test_a_folder_given_as_the_path_is_named_with_the_fix(tmp_path: Path, read_only: bool) -> None:
    with pytest.raises(NotAStoreError) as caught:
        Memvara(str(tmp_path), llm=NullLLM(), read_only=read_only)
    assert str(tmp_path) in str(caught.value) and "a folder, not a store file" in str(caught.value)
    assert os.path.join(str(tmp_path), "memory.db") in str(caught.value)
    with pytest.raises(StoreError, match="does not exist"):
        SQLiteStore(str(tmp_path / "nowhere" / "m.db"), read_only=read_only)


def test_an_empty_path_or_one_of_another_type_is_refused_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    empty = "path: must not be empty: pass a file path, or ':memory:' for a store in RAM"
    for opened in (lambda: Memvara("", llm=NullLLM()), lambda: SQLiteStore(""),
                   lambda: SQLiteStore("", read_only=True)):
        with pytest.raises(InvalidArgumentError) as caught:
            opened()
        assert str(caught.value) == empty
    with pytest.raises(InvalidArgumentError, match="^path: expected a file path or ':memory:', got 5$"):
        SQLiteStore(5)  # type: ignore[arg-type]
    for path in ("file::memory:", "file:m.db?mode=ro", "a\x00b.db"):  # in-memory per thread; ValueError
        with pytest.raises(InvalidArgumentError) as caught:
            SQLiteStore(path)
        assert str(caught.value) == (f"path: expected a file path or ':memory:', got {path!r}"
                                     " (a SQLite URI or a NUL character is not taken)")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("read_only", [False, True])
def test_a_device_given_as_the_path_is_not_a_store(read_only: bool) -> None:
    with pytest.raises(NotAStoreError) as caught:  # was "StoreError: OperationalError: disk I/O error"
        Memvara(os.devnull, llm=NullLLM(), read_only=read_only)
    assert str(caught.value) == (f"{os.devnull}: not a regular file (a device, a pipe or a"
                                 " socket); pass the path of a store file")


@pytest.mark.parametrize("wait", [-1, "30", True, float("nan"), 10**6])
def test_a_busy_timeout_that_is_not_seconds_is_refused_by_name(wait: object) -> None:
    with pytest.raises(InvalidArgumentError, match="^busy_timeout: expected seconds from 0 to"):
        SQLiteStore(busy_timeout=wait)  # type: ignore[arg-type]  # "30": sqlite3's TypeError


def test_a_tracer_that_cannot_be_called_is_refused_not_ignored() -> None:
    with pytest.raises(InvalidArgumentError, match="^tracer: expected a callable taking"):
        SQLiteStore(tracer=5)  # type: ignore[arg-type]  # was taken, and never called


@pytest.mark.parametrize("content", [b"just some text, not a database\n" * 40, b"\x00" * 512])
def test_a_file_that_is_not_a_store_is_named_with_the_fix(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    for read_only in (False, True):
        with pytest.raises(NotAStoreError) as caught:
            SQLiteStore(str(path), read_only=read_only)
        assert str(path) in str(caught.value) and "not a memvara store" in str(caught.value)
    assert path.read_bytes() == content  # untouched


def test_another_applications_database_is_named_with_the_fix(tmp_path: Path) -> None:
    path = str(tmp_path / "other.db")
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    finally:
        conn.close()
    for read_only in (False, True):
        with pytest.raises(NotAStoreError, match="another application") as caught:
            SQLiteStore(path, read_only=read_only)
        assert path in str(caught.value)


def test_a_new_store_in_a_folder_that_cannot_be_written_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    deny_writes(monkeypatch, str(tmp_path))
    path = str(tmp_path / "memory.db")
    with pytest.raises(ReadOnlyStoreError) as caught:
        Memvara(path, llm=NullLLM())
    assert path in str(caught.value) and "cannot be written" in str(caught.value)
    assert not os.path.exists(path)


def test_other_open_errors_name_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "memory.db")
    SQLiteStore(path).close()

    def fails(message: str) -> Callable[..., sqlite3.Connection]:
        def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
            raise sqlite3.OperationalError(message)
        return connect

    monkeypatch.setattr(sqlite3, "connect", fails("disk I/O error"))
    with pytest.raises(StoreError, match="disk I/O error") as caught:
        SQLiteStore(path)
    assert path in str(caught.value)
    from memvara import StoreLockedError

    monkeypatch.setattr(sqlite3, "connect", fails("database is locked"))
    with pytest.raises(StoreLockedError):
        SQLiteStore(path)


def test_a_store_that_checks_out_writable_after_a_fallback_stays_read_only_until_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: Clock,
) -> None:
    path = str(tmp_path / "memory.db")
    fill(path, clock)
    with monkeypatch.context() as patch:
        deny_writes(patch, path)
        with pytest.warns(UserWarning):
            store = SQLiteStore(path)
    try:  # the file became writable meanwhile: this store still refuses, by its word
        with pytest.raises(ReadOnlyStoreError):
            with store.transaction():
                pass
    finally:
        store.close()
    with Memvara(path, clock=clock, llm=NullLLM()) as mem:  # reopened: writable
        mem.remember("user", "likes", "tea")


def test_episodes_are_listed_read_only(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    with Memvara(path, llm=NullLLM()) as mem:
        mem.add([Episode("hello there", role="user"), Episode("hi", role="assistant")])
    with Memvara(path, read_only=True, llm=NullLLM()) as mem:
        assert [e.content for e in mem.episodes()] == ["hello there", "hi"]
