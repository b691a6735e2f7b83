"""import_mem0: mem0's history.db replayed into a bitemporal memory, with no model.

The history files of the replay tests are written by the real ``mem0ai`` package
(offline: an oracle for its LLM, memvara's HashingEmbedder, Qdrant in memory), in the
test session; they skip where mem0ai is not installed. The bad-input tests write their
files with sqlite3 in mem0 2.x's schema (or not) and need only memvara.
"""

from __future__ import annotations

import sqlite3
import sys
import types
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memvara import (
    Cardinality,
    Claim,
    Episode,
    InvalidArgumentError,
    Memvara,
    NullLLM,
    PredicateSpec,
    Scope,
)
from memvara.compat import MEM0_PREDICATE, Memory, import_mem0

from .conftest import Clock

ROOT = Path(__file__).resolve().parents[1]

HISTORY_DDL = """CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT,
    new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME,
    is_deleted INTEGER, actor_id TEXT, role TEXT)"""


def offline_mem0() -> types.ModuleType:
    """bench/_mem0_offline.py (telemetry off before mem0 is imported); skips without mem0ai."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import _mem0_offline
    finally:
        sys.path.remove(str(ROOT / "bench"))
    pytest.importorskip("mem0", reason="mem0ai (the bench extra) is not installed")
    return _mem0_offline


@dataclass
class Mem0File:
    path: Path
    ids: dict[str, str]  # name -> mem0 memory id
    rows: list[dict[str, Any]]  # the history table, as mem0 wrote it


LATER = datetime(2100, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> Clock:
    """A clock after every timestamp mem0 writes in this session (the real time)."""
    return Clock(LATER)


@pytest.fixture
def mem(clock: Clock) -> Iterator[Memvara]:
    memory = Memvara(clock=clock, llm=NullLLM())
    yield memory
    memory.close()


def read_rows(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM history ORDER BY rowid")]
    conn.close()
    return rows


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def mem0_file(tmp_path: Path) -> Iterator[Mem0File]:
    """A history.db written by the real mem0: three memories added, one updated twice
    (once with its own text again, a metadata-only update), one deleted."""
    offline = offline_mem0()
    facts = {"I live in Berlin": ["I live in Berlin"], "I work at Kovac Labs": ["I work at Kovac Labs"],
             "I like tea": ["I like tea"]}
    path = tmp_path / "history.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Qdrant's local-mode notice
        m0 = offline.open_mem0(str(path), offline.NewMessagesOracle(facts))
        ids = {}
        for turn, name in (("I live in Berlin", "home"), ("I work at Kovac Labs", "job"),
                           ("I like tea", "tea")):
            ids[name] = m0.add(turn, user_id="alice")["results"][0]["id"]
        m0.update(ids["home"], text="I live in Lisbon")
        m0.update(ids["tea"], text="I like tea", metadata={"checked": True})
        m0.delete(ids["job"])
        m0.close()
    yield Mem0File(path, ids, read_rows(path))


def test_each_memory_becomes_a_single_valued_slot_queryable_at_any_moment(
        mem0_file: Mem0File, mem: Memvara) -> None:
    receipt = import_mem0(mem, history_db=str(mem0_file.path))
    assert (receipt.rows, receipt.memories, receipt.added, receipt.updated, receipt.deleted,
            receipt.unchanged, receipt.llm_calls) == (6, 3, 3, 1, 1, 1, 0)
    assert mem.registry.spec(MEM0_PREDICATE).cardinality is Cardinality.ONE
    live = {c.subject: c.object for c in mem.get_all()}
    assert live == {mem0_file.ids["home"]: "I live in Lisbon", mem0_file.ids["tea"]: "I like tea"}
    rows = {(r["memory_id"], r["event"]): r for r in mem0_file.rows}
    added = at(rows[(mem0_file.ids["home"], "ADD")]["created_at"])
    updated = at(rows[(mem0_file.ids["home"], "UPDATE")]["updated_at"])
    deleted = at(rows[(mem0_file.ids["job"], "DELETE")]["updated_at"])
    home = mem.history(mem0_file.ids["home"], MEM0_PREDICATE)
    assert [(c.object, c.recorded_at, c.valid_from, c.valid_to) for c in home] == [
        ("I live in Berlin", added, added, updated), ("I live in Lisbon", updated, updated, None)]
    before = updated - timedelta(microseconds=1)
    assert [r.text for r in mem.search("live", as_of=before)] == ["I live in Berlin"]
    assert [c.object for c in mem.get_all(as_of=before, subject=mem0_file.ids["home"])] == \
        ["I live in Berlin"]
    job = mem.history(mem0_file.ids["job"], MEM0_PREDICATE)
    assert job[0].invalidated_at == deleted and job[0].state == "retired"
    assert [c.object for c in mem.get_all(known_at=deleted - timedelta(microseconds=1),
                                          subject=mem0_file.ids["job"])] == ["I work at Kovac Labs"]
    assert job[0].meta["mem0_event"] == "ADD" and job[0].text == "I work at Kovac Labs"


def test_importing_the_same_file_again_changes_nothing(mem0_file: Mem0File, mem: Memvara) -> None:
    import_mem0(mem, history_db=str(mem0_file.path))
    before = [c.to_dict() for c in mem.get_all(states=["live", "ended", "retired"])]
    again = import_mem0(mem, history_db=str(mem0_file.path))
    assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 6)
    assert [c.to_dict() for c in mem.get_all(states=["live", "ended", "retired"])] == before


def test_a_grown_file_adds_only_its_new_rows(mem0_file: Mem0File, mem: Memvara) -> None:
    import_mem0(mem, history_db=str(mem0_file.path))
    offline = offline_mem0()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m0 = offline.open_mem0(str(mem0_file.path), offline.NewMessagesOracle({}))
        m0.vector_store.insert(  # the memory mem0 still holds, so update() finds it
            vectors=[offline.HashEmbedding().embed("I live in Lisbon")],
            ids=[mem0_file.ids["home"]], payloads=[{"data": "I live in Lisbon", "user_id": "alice"}])
        m0.update(mem0_file.ids["home"], text="I live in Porto")
        m0.delete(mem0_file.ids["home"])
        m0.close()
    grown = import_mem0(mem, history_db=str(mem0_file.path))
    assert (grown.rows, grown.updated, grown.deleted, grown.unchanged) == (8, 1, 1, 6)
    assert [c.object for c in mem.history(mem0_file.ids["home"], MEM0_PREDICATE)] == \
        ["I live in Berlin", "I live in Lisbon", "I live in Porto"]
    assert mem.get_all(subject=mem0_file.ids["home"]) == []


def test_the_scope_is_the_callers(mem0_file: Mem0File, clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), user="alice") as alices:
        import_mem0(alices, history_db=str(mem0_file.path))
        assert {c.scope for c in alices.get_all()} == {Scope(user="alice")}
        assert alices.get_all(user="bob") == []
        import_mem0(alices, history_db=str(mem0_file.path), scope=Scope(user="alice", agent="bot"))
        assert {c.scope for c in alices.get_all(agent="bot")} == {
            Scope(user="alice"), Scope(user="alice", agent="bot")}
    shim = Memory(memory=Memvara(clock=clock, llm=NullLLM()), user_id="carol")
    import_mem0(shim, history_db=str(mem0_file.path))
    assert len(shim.get_all()["results"]) == 2
    assert shim.search("Lisbon")["results"][0]["memory"] == "I live in Lisbon"
    shim.memvara.close()


class _Reader:
    """A memvara LLM for phase 2 (memvara's own protocol; mem0 is not involved)."""

    is_null = False

    def __init__(self, facts: dict[str, list[tuple[str, str]]]) -> None:
        self.facts = facts

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        return [Claim("alice", p, o, sources=(t.id,)) for t in turns
                for p, o in self.facts.get(t.content, [])]

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        return None


def test_phase_two_reads_the_texts_and_names_slots_with_many_live_values(
        tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "history.db"
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    write_history(path, [
        ("h1", "m1", None, "Favourite colour: teal", "ADD", t0, None),
        ("h2", "m2", None, "Favourite colour: amber", "ADD", t0 + timedelta(days=1), None),
        ("h3", "m3", None, "I like tea", "ADD", t0 + timedelta(days=2), None),
        ("h4", "m4", None, "I like chess", "ADD", t0 + timedelta(days=3), None),
        ("h5", "m5", None, "Temporary note", "ADD", t0 + timedelta(days=4), None),
        ("h6", "m5", "Temporary note", None, "DELETE", t0 + timedelta(days=4), t0 + timedelta(days=5)),
    ])
    reader = _Reader({"Favourite colour: teal": [("favourite_colour", "teal")],
                      "Favourite colour: amber": [("favourite_colour", "amber")],
                      "Temporary note": [("note", "temporary")]})
    with Memvara(clock=clock, llm=reader) as mem:
        plain = import_mem0(mem, history_db=str(path))
        assert plain.conflicts == () and plain.extracted == 0
    with Memvara(clock=clock, llm=reader) as mem:
        receipt = import_mem0(mem, history_db=str(path), extract=True)
        assert receipt.extracted == 4 and receipt.llm_calls == 1
        assert [(c.predicate, sorted(c.values), c.declared) for c in receipt.conflicts] == [
            ("favourite_colour", ["amber", "teal"], False), ("likes", ["chess", "tea"], True)]
        assert mem.get_all(predicate="note") == []  # a deleted memory is not read
        again = import_mem0(mem, history_db=str(path), extract=True)
        assert again.extracted == 0 and again.llm_calls == 0 and len(again.conflicts) == 2


# -- bad input -----------------------------------------------------------------------------


Row = tuple[str, str, "str | None", "str | None", str, "datetime | str | None", "datetime | str | None"]


def write_history(path: Path, rows: Sequence[Row], ddl: str = HISTORY_DDL) -> None:
    conn = sqlite3.connect(path)
    conn.execute(ddl)
    conn.executemany(
        "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at,"
        " updated_at, is_deleted) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
        [tuple(v.isoformat() if isinstance(v, datetime) else v for v in row) for row in rows])
    conn.commit()
    conn.close()


T = "2026-02-01T10:00:00+01:00"
U = "2026-02-02T10:00:00+01:00"


def test_timestamps_keep_their_offsets_and_naive_ones_are_utc(tmp_path: Path, mem: Memvara) -> None:
    path = tmp_path / "h.db"
    write_history(path, [("h1", "m1", None, "I like tea", "ADD", T, None),
                         ("h2", "m2", None, "I like chess", "ADD", "2026-02-01 12:00:00", None),
                         ("h3", "m1", "I like tea", "I like green tea", "UPDATE", T, U)])
    import_mem0(mem, history_db=str(path))
    [tea, green] = mem.history("m1", MEM0_PREDICATE)
    assert tea.recorded_at == datetime(2026, 2, 1, 9, tzinfo=timezone.utc)
    assert green.valid_from == tea.valid_to == datetime(2026, 2, 2, 9, tzinfo=timezone.utc)
    assert mem.history("m2", MEM0_PREDICATE)[0].recorded_at == datetime(2026, 2, 1, 12, tzinfo=timezone.utc)


def test_an_empty_history_imports_nothing(tmp_path: Path, mem: Memvara) -> None:
    write_history(tmp_path / "h.db", [])
    receipt = import_mem0(mem, history_db=str(tmp_path / "h.db"), extract=True)
    assert (receipt.rows, receipt.added, receipt.conflicts) == (0, 0, ())


BAD_ROWS: list[tuple[list[Row], str]] = [
    ([("h1", "m1", None, "x", "NONE", T, None)], "row 1: unknown event 'NONE'"),
    ([("h1", " ", None, "x", "ADD", T, None)], "row 1: memory_id is ' '"),
    ([("h1", "m1", None, None, "ADD", T, None)], "row 1: ADD without a new_memory text"),
    ([("h1", "m1", None, "x", "ADD", None, None)], "row 1: created_at is None"),
    ([("h1", "m1", None, "x", "ADD", "last tuesday", None)], "row 1: created_at 'last tuesday'"),
    ([("h1", "m1", "x", "y", "UPDATE", T, "soon")], "row 1: updated_at 'soon'"),
    ([("h1", "m1", None, "x", "ADD", T, None), ("h2", "m1", None, "y", "ADD", U, None)],
     "row 2: a second ADD of memory 'm1'"),
    ([("h1", "m1", "x", "y", "UPDATE", T, U)], "row 1: UPDATE of memory 'm1', which is never added"),
    ([("h1", "m1", None, "x", "ADD", T, None), ("h2", "m1", "x", None, "DELETE", T, T),
      ("h3", "m1", "x", "z", "UPDATE", T, U)], "row 3: UPDATE of memory 'm1', which is deleted"),
]


@pytest.mark.parametrize("rows, message", BAD_ROWS)
def test_a_row_that_makes_no_sense_refuses_the_whole_file(
        tmp_path: Path, mem: Memvara, rows: list[Row], message: str) -> None:
    path = tmp_path / "h.db"
    write_history(path, [("h0", "m0", None, "I like tea", "ADD", T, None), *[
        (h, m, o, n, e, c, u) for h, m, o, n, e, c, u in rows]])
    with pytest.raises(InvalidArgumentError, match="not a mem0 history database") as caught:
        import_mem0(mem, history_db=str(path))
    assert str(path) in str(caught.value)
    assert message.replace("row ", "row ", 1).split(": ", 1)[1] in str(caught.value)
    assert mem.stats()["claims"] == 0  # nothing written


def test_files_that_are_not_mem0_history_databases_are_refused(tmp_path: Path, mem: Memvara) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all" * 100)
    empty_db = tmp_path / "other.db"
    sqlite3.connect(empty_db).execute("CREATE TABLE t (x)").connection.close()
    old = tmp_path / "mem0-1x.db"
    write_history(old, [], ddl=HISTORY_DDL.replace("role TEXT)", "role TEXT, prev_value TEXT)"))
    truncated = tmp_path / "truncated.db"
    write_history(truncated, [(f"h{i}", f"m{i}", None, "I like tea " * 50, "ADD", T, None)
                              for i in range(400)])
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    cases = [(text, "cannot be read"), (empty_db, "no history table"),
             (old, "extra: prev_value; missing: none"), (truncated, "cannot be read")]
    for path, problem in cases:
        with pytest.raises(InvalidArgumentError, match=problem) as caught:
            import_mem0(mem, history_db=str(path))
        assert f"{path}: not a mem0 history database" in str(caught.value)
    with pytest.raises(InvalidArgumentError, match="no such file"):
        import_mem0(mem, history_db=str(tmp_path / "missing.db"))
    with pytest.raises(InvalidArgumentError) as caught:
        import_mem0(mem, history_db=str(tmp_path))
    assert str(caught.value) == (f"history_db: {tmp_path}: a folder, not a file; pass the path of"
                                 f" mem0's history.db inside it ({tmp_path / 'history.db'})")
    with pytest.raises(InvalidArgumentError) as caught:
        import_mem0(mem, history_db="")  # was read as ".", and called "no such file"
    assert str(caught.value) == ("history_db: must not be empty: pass the path of mem0's"
                                 " history.db (by default ~/.mem0/history.db)")
    assert mem.stats()["claims"] == 0


def test_bad_arguments_are_named(tmp_path: Path, mem: Memvara) -> None:
    write_history(tmp_path / "h.db", [])
    good = str(tmp_path / "h.db")
    with pytest.raises(InvalidArgumentError, match="history_db: expected a file path"):
        import_mem0(mem, history_db=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="mem: expected a Memvara"):
        import_mem0("mem", history_db=good)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="scope: expected a Scope"):
        import_mem0(mem, history_db=good, scope="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="extract: expected True or False"):
        import_mem0(mem, history_db=good, extract="yes")  # type: ignore[arg-type]
    mem.registry.register(PredicateSpec(MEM0_PREDICATE, Cardinality.MANY))
    with pytest.raises(InvalidArgumentError, match="already registered"):
        import_mem0(mem, history_db=good)
