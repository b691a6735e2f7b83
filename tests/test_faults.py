"""Faults: every broken environment gives a clear memvara error, and nothing is lost.

A read-only file or directory, a store locked by another writer past a short busy
timeout, a damaged page, a truncated or missing vector sidecar, and a full disk (two
ways of simulating one). For each, the promise is the same: the failing call raises a
subclass of ``MemvaraError`` -- never ``sqlite3.*``, ``OSError`` or a silent success --
and the store is unchanged by it, so every write that returned before the fault is still
there afterwards. Where the library does not keep that promise yet, the test is written
as it should behave and marked ``xfail(strict=True)`` with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from memvara import (
    Claim,
    Memvara,
    MemvaraError,
    NotAStoreError,
    ReadOnlyStoreError,
    SQLiteStore,
    StorageFullError,
    StoreCorruptError,
    StoreLockedError,
)
from memvara._write.writer import EMBED_BATCH
from memvara.store import STATES

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[1]
ROWS = 600  # enough that vectors exist (embedded in batches) and pages are many


def child_env() -> dict[str, str]:
    """This environment, with the repository first on the child's import path."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def fill(path: str, rows: int = ROWS) -> None:
    """A closed store holding ``rows`` claims, most of them with a stored vector."""
    with Memvara(path, user="a") as mem:
        for i in range(rows):
            mem.remember(f"u{i}", "likes", f"thing {i}")


def sqlite_store(mem: Memvara) -> SQLiteStore:
    assert isinstance(mem.store, SQLiteStore)
    return mem.store


def outcome(call: Callable[[], T]) -> T | MemvaraError:
    """The call's result, or the memvara error it raised; anything else fails the test."""
    try:
        return call()
    except MemvaraError as exc:
        return exc
    except Exception as exc:  # the point of these tests: nothing untyped gets out
        raise AssertionError(f"untyped {type(exc).__name__} escaped: {exc}") from exc


# -- read-only ---------------------------------------------------------------------------
@contextmanager
def unwritable(*paths: str) -> Iterator[None]:
    """Make files or directories unwritable for this process, then restore them.

    ``chmod`` where we are not root. As root ``chmod`` does not stop a write, so the
    immutable attribute (``chattr +i``) is used where the platform and filesystem have
    it. Skips, saying why, when neither bites.
    """
    if os.name != "posix":
        pytest.skip("POSIX permissions are needed to make a store read-only")
    chattr = shutil.which("chattr")
    modes = {p: os.stat(p).st_mode for p in paths}
    if os.geteuid() != 0:
        for p in paths:
            os.chmod(p, 0o555 if os.path.isdir(p) else 0o444)
    elif chattr is None or subprocess.run([chattr, "+i", *paths], capture_output=True,
                                          check=False).returncode:
        if chattr is not None:  # undo whatever part of it did take
            subprocess.run([chattr, "-i", *paths], capture_output=True, check=False)
        pytest.skip("running as root, where chmod does not stop writes, and chattr +i is"
                    " unavailable on this platform or filesystem")
    try:
        for p in paths:  # make sure it bites before testing anything through it
            if not _refuses_writes(p):
                pytest.skip(f"{p} is still writable after being made read-only")
        yield
    finally:
        if os.geteuid() != 0:
            for p, mode in modes.items():
                os.chmod(p, mode)
        else:
            assert chattr is not None
            subprocess.run([chattr, "-i", *paths], check=True)


def _refuses_writes(path: str) -> bool:
    target = os.path.join(path, ".probe") if os.path.isdir(path) else path
    try:
        with open(target, "ab"):
            pass
    except PermissionError:
        return True
    if target != path:
        os.remove(target)
    return False


def test_a_read_only_database_file_reads_and_refuses_writes_with_a_read_only_error(
    tmp_path: Path,
) -> None:
    """A database file that cannot be written (its directory can) opens read-only, with
    a warning: reads answer; a write raises ``ReadOnlyStoreError`` naming the file and
    changes nothing."""
    path = str(tmp_path / "memory.db")
    fill(path, 20)
    with unwritable(path):
        with pytest.warns(UserWarning, match="opened read-only"):
            mem = outcome(lambda: Memvara(path, user="a"))
        assert isinstance(mem, Memvara), mem
        with mem:
            assert mem.count() == 20
            assert [r.text for r in mem.search("thing 7", k=1)] == ["u7 likes thing 7"]
            refused = outcome(lambda: mem.remember("x", "likes", "y"))
            assert isinstance(refused, ReadOnlyStoreError) and path in str(refused), refused
            assert mem.count(states=STATES) == 20
    with Memvara(path, user="a") as again:  # writable again: intact, and it takes writes
        assert again.count(states=STATES) == 20
        again.remember("x", "likes", "y")
        assert sqlite_store(again).integrity_problems() == []


def test_a_store_in_a_read_only_directory_is_reported_as_read_only(tmp_path: Path) -> None:
    """A sound store in a folder that cannot be written (so SQLite cannot make its
    write-ahead log beside it) opens read-only, with a warning, and answers every read;
    never "not a memvara store", which would send its owner the wrong way."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = str(folder / "memory.db")
    fill(path, 20)
    files = sorted(os.listdir(folder))
    with unwritable(str(folder)):
        with pytest.warns(UserWarning, match="opened read-only"):
            mem = outcome(lambda: Memvara(path, user="a"))
        assert isinstance(mem, Memvara), repr(mem)
        with mem:
            assert mem.count() == 20
            assert [r.text for r in mem.search("thing 7", k=1)] == ["u7 likes thing 7"]
            refused = outcome(lambda: mem.remember("x", "likes", "y"))
            assert isinstance(refused, ReadOnlyStoreError) and path in str(refused), refused
        with Memvara(path, user="a", read_only=True) as asked:  # asked for: no warning
            assert asked.count() == 20
        assert sorted(os.listdir(folder)) == files  # no -wal, no -shm: nothing written
    with Memvara(path, user="a") as again:
        assert again.count(states=STATES) == 20


# -- locked --------------------------------------------------------------------------------
HOLD_LOCK = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()  # hold the write lock until the parent closes our stdin
conn.execute("ROLLBACK")
"""


@contextmanager
def write_lock_held(path: str, by: str) -> Iterator[None]:
    """Another writer holds ``BEGIN IMMEDIATE`` on the store: a connection in this
    process, or another process."""
    if by == "connection":
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, path], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield
    finally:
        holder.communicate(timeout=60)
    assert holder.returncode == 0


@pytest.mark.parametrize("by", ["connection", "process"])
def test_a_store_locked_past_the_busy_timeout_refuses_writes_and_still_reads(
    tmp_path: Path, by: str
) -> None:
    """Another writer holds the lock longer than ``busy_timeout`` (0.05 s): writes raise
    ``StoreLockedError`` after about that long, reads carry on (WAL readers do not wait),
    and once the lock is released the same memory writes again."""
    path = str(tmp_path / "memory.db")
    fill(path, 20)
    with Memvara(store=SQLiteStore(path, busy_timeout=0.05), user="a") as mem:
        with write_lock_held(path, by):
            started = time.monotonic()
            refused = outcome(lambda: mem.remember("x", "likes", "y"))
            assert isinstance(refused, StoreLockedError), refused
            assert time.monotonic() - started < 10  # the short timeout, not the default 30 s
            assert isinstance(outcome(lambda: mem.forget("u1", "likes")), StoreLockedError)
            assert mem.count() == 20  # readers do not wait for the writer
            assert [c.object for c in mem.history("u3", "likes")] == ["thing 3"]
        receipt = mem.remember("x", "likes", "y")  # the lock is gone: writes resume
        assert len(receipt.added) == 1
        assert mem.count(states=STATES) == 21
        assert sqlite_store(mem).integrity_problems() == []


# -- a damaged page ------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["header", "second page", "middle page", "last page"])
def test_a_damaged_page_is_reported_as_corruption_and_never_read_as_less_data(
    tmp_path: Path, where: str
) -> None:
    """Overwrite one page of a closed store with garbage. Opening may refuse
    (``StoreCorruptError``, or ``NotAStoreError`` once the header is gone); a read may
    raise ``StoreCorruptError``; but a read that answers answers in full, and the
    integrity check always notices."""
    path = str(tmp_path / "memory.db")
    fill(path)
    page = 4096
    pages = os.path.getsize(path) // page
    offset = {"header": 0, "second page": page, "middle page": pages // 2 * page,
              "last page": (pages - 1) * page}[where]
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes((i * 151 + 7) % 256 for i in range(page)))  # fixed garbage

    mem = outcome(lambda: Memvara(path, user="a"))
    if not isinstance(mem, Memvara):
        assert isinstance(mem, (StoreCorruptError, NotAStoreError)), repr(mem)
        return
    with mem:
        for read in (lambda: mem.count(states=STATES), lambda: len(mem.get_all(states=STATES)),
                     lambda: mem.stats()["claims"]):
            got = outcome(read)
            assert got == ROWS or isinstance(got, StoreCorruptError), got
        problems = outcome(sqlite_store(mem).integrity_problems)
        assert problems != [], "the integrity check passed a store with a damaged page"
        assert isinstance(problems, (list, StoreCorruptError)), problems


@pytest.mark.parametrize("drop", ["DROP TABLE write_log", "DROP TABLE tombstones"])
def test_a_schema_changed_outside_memvara_is_reported_as_damage(tmp_path: Path, drop: str) -> None:
    """A table or column dropped with ``sqlite3`` (the write log, say, to hide what was
    written) is ``StoreCorruptError`` naming it, not a bare ``no such table``."""
    path = str(tmp_path / "memory.db")
    fill(path)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(drop)
        conn.commit()

    with Memvara(path, user="a") as mem:
        for call in (mem.verify, mem.tombstones, lambda: mem.remember("a", "likes", "tea")):
            got = outcome(call)
            if isinstance(got, StoreCorruptError):
                assert drop.split()[-1] in str(got) and "changed outside memvara" in str(got)
                break
        else:
            pytest.fail(f"no call noticed {drop!r}")


# -- the vector sidecar ----------------------------------------------------------------------
def damage_sidecar(path: str, how: str) -> None:
    sidecar = path + ".vecs"
    if how == "missing":
        os.remove(sidecar)
    elif how == "empty":
        os.truncate(sidecar, 0)
    elif how == "header only":
        os.truncate(sidecar, 64)
    elif how == "half":
        os.truncate(sidecar, os.path.getsize(sidecar) // 2)
    else:
        assert how == "bad magic"
        with open(sidecar, "r+b") as handle:
            handle.write(b"garbage!")


@pytest.mark.parametrize("how", ["empty", "bad magic", "header only", "half", "missing"])
def test_a_damaged_vector_sidecar_is_corruption_not_silent_loss(tmp_path: Path, how: str) -> None:
    """The sidecar holds the only copy of each vector. If it is missing, truncated or not
    ours, the store either refuses to open (``StoreCorruptError``) or keeps reporting the
    damage -- before and after later writes -- and never raises anything untyped."""
    path = str(tmp_path / "memory.db")
    fill(path)
    damage_sidecar(path, how)

    mem = outcome(lambda: Memvara(path, user="a"))
    if not isinstance(mem, Memvara):
        assert isinstance(mem, StoreCorruptError), repr(mem)
        assert ".vecs" in str(mem)  # it names the file that is damaged
        return
    with mem:
        assert mem.count() == ROWS  # the rows themselves are intact
        store = sqlite_store(mem)
        before = outcome(store.integrity_problems)
        assert before != [], "a damaged sidecar passed the integrity check"
        write = outcome(lambda: mem.remember_many(
            [Claim(f"later{i}", "likes", "more") for i in range(EMBED_BATCH)]))
        assert not isinstance(write, MemvaraError) or isinstance(write, StoreCorruptError), write
        after = outcome(store.integrity_problems)
        assert after != [], "a later write papered over the lost vectors"
        assert isinstance(after, (list, StoreCorruptError)), after


# -- a full disk -----------------------------------------------------------------------------
def test_a_full_database_refuses_the_write_whole_and_recovers_when_space_returns(
    tmp_path: Path,
) -> None:
    """Simulated with SQLite's ``PRAGMA max_page_count``, set through the store's writer
    connection (a private attribute: there is no public knob, and no way to fill a disk
    without root): SQLite then fails writes with ``SQLITE_FULL``, exactly as on a full
    disk."""
    path = str(tmp_path / "memory.db")
    fill(path, 100)
    with Memvara(path, user="a") as mem:
        writer = sqlite_store(mem)._writer
        (pages,) = writer.execute("PRAGMA page_count").fetchone()
        writer.execute(f"PRAGMA max_page_count = {pages}")
        big = outcome(lambda: mem.remember("x", "likes", "y" * 100_000))
        assert isinstance(big, StorageFullError), big
        bulk = outcome(lambda: mem.remember_many(
            [Claim(f"b{i}", "likes", "z" * 1000) for i in range(EMBED_BATCH + 44)]))
        assert isinstance(bulk, StorageFullError), bulk
        assert mem.count(states=STATES) == 100  # both refused whole, nothing half-written
        assert sqlite_store(mem).integrity_problems() == []
        writer.execute("PRAGMA max_page_count = 1073741823")
        assert len(mem.remember("x", "likes", "y" * 100_000).added) == 1
    with Memvara(path, user="a") as mem:
        assert mem.count(states=STATES) == 101
        assert sqlite_store(mem).integrity_problems() == []


FILE_SIZE_LIMIT = r"""
import json, resource, signal, sys
from memvara import Claim, Memvara, MemvaraError
from memvara.store import STATES

path, limit, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mem = Memvara(path, user="a")
mem.remember("keep", "likes", "this")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    mem.remember_many([Claim(f"b{j}", "likes", f"bulk {j}") for j in range(rows)])
    result = {"error": None}
except Exception as exc:
    result = {"error": type(exc).__name__, "memvara": isinstance(exc, MemvaraError),
              "message": str(exc)}
result["count"] = mem.count(states=STATES)
mem.close()
print(json.dumps(result))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE")
def test_a_file_size_limit_hit_by_the_vector_sidecar_is_a_storage_full_error(
    tmp_path: Path,
) -> None:
    """Simulated with ``RLIMIT_FSIZE`` in a child process (the limit would bind pytest's
    own files too): 1.5 MB lets the database grow but not the sidecar to hold 1,000 more
    vectors. ``StorageFullError`` documents "a size limit on the file" as one of its
    causes; the bulk write must fail whole, with a memvara error."""
    path = str(tmp_path / "memory.db")
    run = subprocess.run(
        [sys.executable, "-c", FILE_SIZE_LIMIT, path, str(1536 * 1024), "1000"],
        capture_output=True, text=True, env=child_env(), timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["count"] == 1  # refused whole: the store is as it was
    with Memvara(path, user="a") as mem:
        assert mem.count(states=STATES) == 1
        assert sqlite_store(mem).integrity_problems() == []
    assert result["error"] == "StorageFullError", result


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE")
def test_a_file_size_limit_hit_by_sqlite_is_a_store_error_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The same limit, hit by SQLite's own files first (the write-ahead log of a bulk
    write of long texts). SQLite reports ``EFBIG`` as a generic I/O error, which memvara
    cannot tell from a failing disk, so the promise here is the base one: a
    ``StoreError`` and a store unchanged by the failed call."""
    path = str(tmp_path / "memory.db")
    child = FILE_SIZE_LIMIT.replace('f"bulk {j}"', '"w" * 8000 + str(j)')
    run = subprocess.run([sys.executable, "-c", child, path, str(1536 * 1024), "300"],
                         capture_output=True, text=True, env=child_env(), timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["memvara"] is True, result
    assert result["error"] in ("StoreError", "StorageFullError"), result
    assert result["count"] == 1
    with Memvara(path, user="a") as mem:
        assert mem.count(states=STATES) == 1
        assert sqlite_store(mem).integrity_problems() == []
