"""The CrewAI storage backend, against the real package: CrewAI's own ``Memory`` on it
(explicit fields and shallow recall, so no model is called), and each protocol method.

CrewAI pins ``mcp<2`` and ``pydantic<2.13``, so it has a venv of its own in CI
(``.venv-crewai``); everywhere else this file skips."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
pytest.importorskip("crewai", reason="the crewai extra is not installed (it runs in .venv-crewai)")

from crewai.memory.storage.backend import StorageBackend  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402
from crewai.memory.unified_memory import Memory  # noqa: E402

from memvara import (  # noqa: E402
    AsyncMemvara,
    DimensionMismatchError,
    HashingEmbedder,
    InvalidArgumentError,
    Memvara,
    PredicateSpec,
)
from memvara.integrations.crewai import RECORD_PREDICATE, MemvaraStorage  # noqa: E402

from memvara.schema import Cardinality  # noqa: E402

from .claim_reads import claims_read  # noqa: E402
from .conftest import Clock  # noqa: E402

_EMBEDDER = HashingEmbedder(dim=64)


def embed(texts: list[str]) -> list[list[float]]:
    """CrewAI's embedder callable: deterministic and offline."""
    return [[float(x) for x in row] for row in _EMBEDDER.encode(texts)]


def record(content: str, scope: str = "/", **fields: Any) -> MemoryRecord:
    return MemoryRecord(content=content, scope=scope, embedding=embed([content])[0], **fields)


@pytest.fixture
def storage(mem: Memvara) -> MemvaraStorage:
    return MemvaraStorage(mem)


@pytest.fixture
def crew_memory(storage: MemvaraStorage) -> Iterator[Memory]:
    memory = Memory(storage=storage, embedder=embed)
    yield memory
    memory.close()


def test_it_is_a_storage_backend_by_crewai_s_own_protocol(storage: MemvaraStorage) -> None:
    assert isinstance(storage, StorageBackend)


def test_the_record_predicate_is_declared_and_a_clash_is_refused(
    storage: MemvaraStorage, mem: Memvara, clock: Clock
) -> None:
    assert mem.registry.spec(RECORD_PREDICATE).cardinality is Cardinality.ONE
    other = Memvara(clock=clock)
    try:
        other.registry.register(PredicateSpec(RECORD_PREDICATE, Cardinality.MANY))
        with pytest.raises(InvalidArgumentError, match="crewai_memory"):
            MemvaraStorage(other)
    finally:
        other.close()


def test_crewai_memory_remembers_and_recalls_through_it(
    crew_memory: Memory, storage: MemvaraStorage, mem: Memvara
) -> None:
    saved = crew_memory.remember("Alice leads the Berlin research team", scope="/crew/research",
                                 categories=["people"], importance=0.8,
                                 metadata={"task": "t1"}, source="alice")
    crew_memory.remember("Deploys happen on Thursdays", scope="/crew/ops",
                         categories=["process"], importance=0.4)
    assert saved is not None
    matches = crew_memory.recall("who leads the Berlin research team", depth="shallow", limit=1)
    assert [m.record.id for m in matches] == [saved.id]
    found = matches[0].record
    assert (found.content, found.scope, found.categories, found.importance, found.metadata,
            found.source, found.created_at) == (
        saved.content, "/crew/research", ["people"], 0.8, {"task": "t1"}, "alice",
        saved.created_at)
    assert found.embedding == pytest.approx(saved.embedding)
    # Each record is one claim, its text the content, in the memory's own scope.
    claim = mem.get_all(subject=saved.id, predicate=RECORD_PREDICATE)[0]
    assert (claim.text, claim.object) == (saved.content, saved.content)
    assert crew_memory.list_scopes() == ["/crew"]
    assert crew_memory.list_scopes("/crew") == ["/crew/ops", "/crew/research"]
    assert crew_memory.list_categories() == {"people": 1, "process": 1}
    assert crew_memory.info("/crew").record_count == 2
    assert crew_memory.tree() == "/ (2 records)\n  /crew (2 records)\n" \
        "    /crew/ops (1 records)\n    /crew/research (1 records)"


def test_opaque_sentences_do_not_contradict_each_other(
    crew_memory: Memory, mem: Memvara
) -> None:
    # The loss the docstring states: nothing is keyed, so both stay live.
    crew_memory.remember("Alice lives in Berlin", scope="/", categories=[], importance=0.5)
    crew_memory.remember("Alice moved to Lisbon", scope="/", categories=[], importance=0.5)
    assert sorted(c.text for c in mem.get_all(predicate=RECORD_PREDICATE)) == [
        "Alice lives in Berlin", "Alice moved to Lisbon"]
    assert len(crew_memory.recall("where does Alice live", depth="shallow")) == 2


def test_update_supersedes_and_the_old_version_stays_in_history(
    crew_memory: Memory, storage: MemvaraStorage, mem: Memvara, clock: Clock
) -> None:
    saved = crew_memory.remember("The launch is in May", scope="/", categories=["plan"],
                                 importance=0.5)
    assert saved is not None
    clock.advance(days=1)
    crew_memory.update(saved.id, content="The launch is in June")
    current = storage.get_record(saved.id)
    assert current is not None and current.content == "The launch is in June"
    assert storage.count() == 1
    history = mem.history(saved.id, RECORD_PREDICATE)
    assert [(c.text, c.state) for c in history] == [
        ("The launch is in May", "ended"), ("The launch is in June", "live")]
    # A record not stored yet is saved by update().
    fresh = record("A new note")
    storage.update(fresh)
    assert storage.get_record(fresh.id) is not None


def test_delete_retires_and_an_earlier_read_still_sees_it(
    storage: MemvaraStorage, mem: Memvara, clock: Clock
) -> None:
    old = record("an old note", "/a", categories=["x"],
                 created_at=datetime(2026, 1, 1), metadata={"k": 1})
    new = record("a new note", "/a/b", categories=["y"],
                 created_at=datetime(2026, 9, 1), metadata={"k": 2})
    other = record("elsewhere", "/ab", categories=["x", "y"], created_at=datetime(2026, 9, 2))
    storage.save([old, new, other])
    storage.save([])
    before = clock.now
    clock.advance(seconds=1)
    assert storage.delete(older_than=datetime(2026, 6, 1, tzinfo=timezone.utc)) == 1
    assert storage.get_record(old.id) is None
    assert [c.text for c in mem.get_all(known_at=before, predicate=RECORD_PREDICATE)
            if c.text == old.content] == [old.content]
    assert storage.delete(metadata_filter={"k": 2}) == 1
    assert storage.delete(record_ids=["not there"]) == 0
    assert storage.delete(categories=["x"], scope_prefix="/ab") == 1
    assert storage.count() == 0


def test_scope_prefixes_match_whole_segments(storage: MemvaraStorage) -> None:
    storage.save([record("one", "/a"), record("two", "/a/b/"), record("three", "/ab"),
                  record("four", "/")])
    assert storage.count("/a") == 2
    assert storage.count("a/") == 2
    assert storage.count("/") == storage.count() == 4
    assert storage.list_scopes("/") == ["/a", "/ab"]
    assert storage.list_scopes("/a") == ["/a/b"]
    info = storage.get_scope_info("/a/b")
    assert (info.path, info.record_count, info.child_scopes) == ("/a/b", 1, [])
    empty = storage.get_scope_info("/nowhere")
    assert (empty.record_count, empty.oldest_record, empty.newest_record) == (0, None, None)


def test_scope_info_dates_and_listing_order(storage: MemvaraStorage) -> None:
    first = record("first", "/s", created_at=datetime(2026, 1, 1), categories=["b", "a"])
    second = record("second", "/s", created_at=datetime(2026, 2, 1, tzinfo=timezone.utc))
    third = record("third", "/s", created_at=datetime(2026, 3, 1))
    storage.save([first, second, third])
    info = storage.get_scope_info("/s")
    assert (info.oldest_record, info.newest_record) == (first.created_at, third.created_at)
    assert info.categories == ["a", "b"]
    assert [r.content for r in storage.list_records("/s")] == ["third", "second", "first"]
    assert [r.content for r in storage.list_records(limit=1, offset=1)] == ["second"]
    assert storage.list_categories("/s") == {"a": 1, "b": 1}


def test_search_ranks_by_cosine_and_filters(storage: MemvaraStorage) -> None:
    berlin = record("the office is in Berlin", "/work", categories=["place"],
                    metadata={"team": "core"})
    lisbon = record("the office is in Lisbon", "/work", categories=["place"],
                    metadata={"team": "edge"})
    blank = MemoryRecord(content="a record saved without an embedding")
    storage.save([berlin, lisbon, blank])
    query = embed(["office Berlin"])[0]
    hits = storage.search(query)
    assert [r.id for r, _ in hits] == [berlin.id, lisbon.id]
    assert 1 >= hits[0][1] > hits[1][1] > 0
    assert storage.search(query, limit=1)[0][0].id == berlin.id
    assert [r.id for r, _ in storage.search(query, metadata_filter={"team": "edge"})] == [
        lisbon.id]
    assert storage.search(query, categories=["other"]) == []
    assert storage.search(query, scope_prefix="/home") == []
    assert storage.search(query, min_score=1.01) == []
    assert [score for _, score in storage.search([0.0] * 64)] == [0.0, 0.0]
    opposite = [-x for x in embed(["the office is in Berlin"])[0]]
    assert storage.search(opposite, min_score=0.0)[0][1] == 0.0


def test_an_empty_category_list_is_no_filter_for_a_search_as_crewai_reads_it(
    crew_memory: Memory, storage: MemvaraStorage
) -> None:
    # CrewAI's deep recall turns categories=[] into None and its LanceDB backend skips an
    # empty list; a shallow recall hands [] straight to the storage, which found nothing.
    saved = record("Alice leads the Berlin team", "/crew", categories=["people"])
    storage.save([saved])
    matches = crew_memory.recall("Berlin team", categories=[], depth="shallow")
    assert [m.record.id for m in matches] == [saved.id]
    assert [r.id for r, _ in storage.search(embed(["Berlin team"])[0], categories=[])] == [saved.id]
    assert storage.delete(categories=[]) == 0  # a delete with an empty list retires nothing
    assert storage.count() == 1


def test_a_query_of_another_width_is_refused(storage: MemvaraStorage) -> None:
    storage.save([record("hello there")])
    with pytest.raises(DimensionMismatchError, match="^query_embedding: 3 values"):
        storage.search([1.0, 0.0, 0.0])


def test_reset_retires_a_scope_or_everything(crew_memory: Memory, storage: MemvaraStorage,
                                             mem: Memvara) -> None:
    storage.save([record("one", "/a"), record("two", "/b"), record("three", "/b/c")])
    crew_memory.reset("/b")
    assert [r.content for r in storage.list_records()] == ["one"]
    crew_memory.reset_all()
    assert storage.count() == 0
    assert mem.count(predicate=RECORD_PREDICATE, states=["retired"]) == 3


def test_the_async_methods(storage: MemvaraStorage) -> None:
    note = record("an async note", "/q")

    async def go() -> tuple[list[Any], int]:
        await storage.asave([note])
        hits = await storage.asearch(embed(["async note"])[0], scope_prefix="/q")
        return hits, await storage.adelete(record_ids=[note.id])

    hits, deleted = asyncio.run(go())
    assert [r.id for r, _ in hits] == [note.id] and deleted == 1


def test_records_stay_in_the_memvara_scope_of_their_handle(mem: Memvara) -> None:
    alice = MemvaraStorage(AsyncMemvara(mem).scope(user="alice"))
    bob = MemvaraStorage(mem.scope(user="bob"))
    root = MemvaraStorage(mem)
    alice.save([record("alice's note")])
    root.save([record("a shared note")])
    assert alice.count() == 1 and bob.count() == 0
    assert root.count() == 1  # the root does not see a user's rows
    # Nor does a user's storage touch the root's: its reset retires its own records only.
    alice.reset()
    assert (alice.count(), root.count()) == (0, 1)


def test_a_stored_record_is_decoded_once(storage: MemvaraStorage,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    storage.save([record("cached")])
    assert storage.count() == 1
    calls: list[str] = []
    original = MemoryRecord.model_validate

    def counting(data: Any, **kwargs: Any) -> MemoryRecord:
        calls.append("decode")
        return original(data, **kwargs)

    monkeypatch.setattr(MemoryRecord, "model_validate", counting)
    assert storage.count() == 1 and storage.list_records()[0].content == "cached"
    assert calls == []


@pytest.mark.parametrize(("call", "argument"), [
    (lambda s: s.save("x"), "records"),
    (lambda s: s.save(["x"]), "records[0]"),
    (lambda s: s.save([MemoryRecord(content=" ")]), "records[0].content"),
    (lambda s: s.update("x"), "record"),
    (lambda s: s.update(MemoryRecord(content="")), "record.content"),
    # These were named by the store's own claim fields (claims[1].object, claims[0].meta):
    (lambda s: s.save([record("fine"), MemoryRecord(content="a\ud800b")]), "records[1]"),
    (lambda s: s.save([MemoryRecord(content="ok", metadata={"x": "\udfff"})]), "records[0]"),
    (lambda s: s.update(MemoryRecord(content="ok", scope="/\ud800")), "record"),
    # and these were stored, a NaN scoring every later search 0:
    (lambda s: s.save([MemoryRecord(content="ok", embedding=[float("nan")] * 64)]),
     "records[0].embedding"),
    (lambda s: s.update(MemoryRecord(content="ok", embedding=[float("inf")] * 64)),
     "record.embedding"),
    (lambda s: s.search("abc"), "query_embedding"),
    (lambda s: s.search(["a", "b"]), "query_embedding"),
    (lambda s: s.search([]), "query_embedding"),
    (lambda s: s.search([[1.0], [2.0]]), "query_embedding"),
    (lambda s: s.search([float("nan")]), "query_embedding"),
    (lambda s: s.search([1.0], limit=-1), "limit"),
    (lambda s: s.search([1.0], min_score="0"), "min_score"),
    (lambda s: s.search([1.0], min_score=float("nan")), "min_score"),
    (lambda s: s.search([1.0], min_score=True), "min_score"),
    (lambda s: s.search([1.0], scope_prefix=5), "scope_prefix"),
    (lambda s: s.search([1.0], categories="people"), "categories"),
    (lambda s: s.search([1.0], categories=[1]), "categories"),
    (lambda s: s.search([1.0], metadata_filter=[("k", 1)]), "metadata_filter"),
    (lambda s: s.delete(record_ids="abc"), "record_ids"),
    (lambda s: s.delete(older_than="2026-01-01"), "older_than"),
    (lambda s: s.get_record(""), "record_id"),
    (lambda s: s.list_records(offset=-1), "offset"),
    (lambda s: s.list_records(limit=True), "limit"),
    (lambda s: s.get_scope_info(5), "scope"),
    (lambda s: s.list_scopes(None), "parent"),
])
def test_bad_input_is_a_memvara_error_naming_the_argument(
    storage: MemvaraStorage, call: Any, argument: str
) -> None:
    storage.save([record("kept")])
    with pytest.raises(InvalidArgumentError) as caught:
        call(storage)
    assert caught.value.argument == argument
    assert [r.content for r in storage.list_records()] == ["kept"]


def test_an_embedding_of_another_width_is_refused_at_save_and_search_keeps_working(
    storage: MemvaraStorage,
) -> None:
    # CrewAI's LanceDB backend refuses it at save; stored, one such record made every
    # later search a DimensionMismatchError until it was deleted.
    kept = record("kept")
    storage.save([kept])
    narrow = MemoryRecord(content="narrow", embedding=[1.0, 0.0])
    with pytest.raises(DimensionMismatchError, match=r"^records\[1\]\.embedding: 2 values"):
        storage.save([record("fine"), narrow])
    with pytest.raises(DimensionMismatchError, match=r"^record\.embedding: 2 values"):
        storage.update(narrow)
    assert [r.content for r in storage.list_records()] == ["kept"]
    assert [r.id for r, _ in storage.search(embed(["kept"])[0])] == [kept.id]
    # A record replaced by a new width is not counted against it, nor is a record
    # saved without an embedding.
    storage.update(kept.model_copy(update={"embedding": [1.0, 0.0]}))
    storage.save([MemoryRecord(content="no vector"), MemoryRecord(content="b", embedding=[0.0, 1.0])])
    assert [r.content for r, _ in storage.search([1.0, 0.0])] == ["kept", "b"]


def test_the_width_check_reads_a_few_records_however_many_are_stored(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # save() and update() read every stored record to learn the embeddings' width, so
    # each save cost more than the one before. Every stored embedding has one width (the
    # check keeps it so), so one live record says it: a storage reads the newest few
    # once, then looks up the record that said it, by its slot, on each save.
    MemvaraStorage(mem).save([record(f"note {i}") for i in range(300)])
    MemvaraStorage(mem.scope(user="alice")).save([record("a narrower scope's")])
    read = claims_read(mem, monkeypatch)
    storage = MemvaraStorage(mem)
    storage.save([record("one more")])
    for i in range(5):
        storage.save([record(f"and {i} more")])
    later = record("later")
    storage.update(later)
    storage.update(later.model_copy(update={"content": "later, revised"}))
    assert read[0] == 16 and sum(read[1:]) <= 9, read
    with pytest.raises(DimensionMismatchError, match=r"^records\[0\]\.embedding: 2 values"):
        storage.save([MemoryRecord(content="narrow", embedding=[1.0, 0.0])])
    assert storage.count() == 307
    # Once every record of that width is gone, the record that said it says nothing,
    # and another width may start.
    storage.reset()
    storage.save([MemoryRecord(content="narrow now", embedding=[1.0, 0.0])])
    assert [r.content for r, _ in storage.search([1.0, 0.0])] == ["narrow now"]


def test_a_bad_memory_is_named() -> None:
    with pytest.raises(InvalidArgumentError, match="^memory: "):
        MemvaraStorage("memory.db")  # type: ignore[arg-type]


def test_older_than_compares_naive_and_aware_instants(storage: MemvaraStorage) -> None:
    naive = record("naive", created_at=datetime(2026, 5, 1, 12))
    storage.save([naive])
    just_after = datetime(2026, 5, 1, 14, tzinfo=timezone(timedelta(hours=2)))  # 12:00 UTC
    assert storage.delete(older_than=just_after) == 0
    assert storage.delete(older_than=just_after + timedelta(seconds=1)) == 1
