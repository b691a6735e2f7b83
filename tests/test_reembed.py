"""Re-embedding: after a model change every claim and turn is encoded again and the
vectors are swapped at once; a failure or a crash never leaves a mix."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memvara import (
    Claim,
    DimensionMismatchError,
    HashingEmbedder,
    InvalidArgumentError,
    Memvara,
    NullLLM,
    SQLiteStore,
)
from memvara._write.reembed import REEMBED_BATCH, fingerprint

from .conftest import Clock, embed_all


class Counting:
    """A ``HashingEmbedder`` of some width that counts the texts it encodes, may flip
    its vectors' sign (another model of the same width), and may fail on a chosen call."""

    def __init__(self, dim: int = 64, *, flip: bool = False, fail_on: int | None = None) -> None:
        self.inner = HashingEmbedder(dim)
        self.flip, self.fail_on = flip, fail_on
        self.calls = self.texts = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("the model server went away")
        self.texts += len(texts)
        vectors = self.inner.encode(list(texts))
        return -vectors if self.flip else vectors


def _fill(mem: Memvara, n: int = 5) -> None:
    for i in range(n):
        mem.remember("user", "likes", f"thing {i}")
    mem.add(["I live in Lisbon", "I speak Danish"])
    embed_all(mem)


def _claim_vectors(mem: Memvara) -> npt.NDArray[np.float32]:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    slots = [slot for (slot,) in store._query("SELECT vec_slot FROM claims ORDER BY rowid")]
    return store.vectors(slots)


def test_reembed_replaces_every_vector_even_at_another_width(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        _fill(mem)
        claims, turns = mem.count(), mem.stats()["episodes"]
        wider = Counting(96)
        assert mem.reembed(wider) == claims + turns
        assert mem.store.dim == 96 and mem.embedder is wider
        assert _claim_vectors(mem).shape == (claims, 96)
        np.testing.assert_array_equal(
            _claim_vectors(mem), wider.inner.encode([c.text for c in sorted(
                mem.get_all(), key=lambda c: int(c.id[1:].split("-")[0]))])
        )
        assert mem.search("Lisbon", k=1)[0].text == "user lives in Lisbon"
        mem.remember("user", "likes", "more things")  # new writes use the new embedder
        embed_all(mem)
        assert _claim_vectors(mem).shape == (claims + 1, 96)
    with pytest.raises(DimensionMismatchError):
        Memvara(db_path, llm=NullLLM())  # the old width no longer fits
    with Memvara(db_path, embedder=Counting(96), llm=NullLLM()) as again:
        assert again.search("Danish", k=1)[0].text == "user speaks Danish"
    leftovers = [p for p in os.listdir(Path(db_path).parent) if p.endswith(".new")]
    assert leftovers == []


def test_reembed_without_an_argument_reencodes_with_the_current_embedder(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea")
    embed_all(mem)
    before = _claim_vectors(mem)
    assert mem.reembed() == 1
    np.testing.assert_array_equal(_claim_vectors(mem), before)


def test_opening_with_reembed_true_reencodes_only_when_the_model_changed(db_path: str) -> None:
    with Memvara(db_path, embedder=Counting(64), llm=NullLLM()) as mem:
        _fill(mem)
    same_width_other_model = Counting(64, flip=True)
    assert fingerprint(same_width_other_model) != fingerprint(Counting(64))
    with Memvara(db_path, embedder=same_width_other_model, llm=NullLLM(), reembed=True) as mem:
        assert same_width_other_model.texts >= mem.count()
        assert mem.store.embedder_label == fingerprint(same_width_other_model)
    unchanged = Counting(64, flip=True)
    with Memvara(db_path, embedder=unchanged, llm=NullLLM(), reembed=True):
        assert unchanged.texts <= 2 + 1 + len(["probe", "probe"])  # checks and fingerprint
    wider = Counting(128)
    with Memvara(db_path, embedder=wider, llm=NullLLM(), reembed=True) as mem:
        assert mem.store.dim == 128


def test_a_failing_encode_leaves_the_old_vectors_in_place(db_path: str) -> None:
    with Memvara(db_path, llm=NullLLM()) as mem:
        for i in range(REEMBED_BATCH + 3):  # two pages of claims
            mem.remember(f"user {i}", "likes", "tea")
        embed_all(mem)
        before = _claim_vectors(mem)
        # the argument check, the fingerprint, page one (written aside), then page two
        flaky = Counting(64, fail_on=4)
        with pytest.raises(RuntimeError, match="went away"):
            mem.reembed(flaky)
        assert mem.store.dim == 512 and mem.embedder is not flaky
        np.testing.assert_array_equal(_claim_vectors(mem), before)
        assert not [p for p in os.listdir(Path(db_path).parent) if p.endswith(".new")]
        assert mem.search("user 7 tea", k=1)[0].claim is not None


def test_rows_written_during_a_reembed_are_embedded_again(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea")
    mem.add("I speak Danish")
    embed_all(mem)

    class WritesMidway(Counting):
        def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            if self.calls == 3:  # encoding the turns: the claims were all read
                mem.remember("user", "likes", "coffee")
            return super().encode(texts)

    mem.reembed(WritesMidway(32))
    assert mem.count() == 3
    assert embed_all(mem) == 1  # the midway row, missed by the pages, is embedded anew
    assert _claim_vectors(mem).shape == (3, 32)


def test_a_crash_between_commit_and_rename_is_finished_on_open(
    db_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memvara(db_path, llm=NullLLM()) as mem:
        _fill(mem)
        monkeypatch.setattr(SQLiteStore, "_settle_sidecars", lambda self: None)
        monkeypatch.setattr(SQLiteStore, "_open_sidecars", lambda self: self._vectors)
        mem.reembed(Counting(48))  # committed; the .new files never took the live names
        monkeypatch.undo()
    assert os.path.exists(db_path + ".vecs.new")
    with Memvara(db_path, embedder=Counting(48), llm=NullLLM()) as mem:
        assert mem.store.dim == 48 and _claim_vectors(mem).shape[1] == 48
        assert mem.search("Lisbon", k=1)[0].text == "user lives in Lisbon"
    assert not os.path.exists(db_path + ".vecs.new")


def test_a_rebuild_that_never_committed_is_dropped_on_open(db_path: str) -> None:
    with Memvara(db_path, llm=NullLLM()) as mem:
        _fill(mem)
        before = _claim_vectors(mem)
    Path(db_path + ".vecs.new").write_bytes(b"half a rebuild")
    with Memvara(db_path, llm=NullLLM()) as mem:
        np.testing.assert_array_equal(_claim_vectors(mem), before)
    assert not os.path.exists(db_path + ".vecs.new")


def test_a_store_opened_while_another_re_embeds_leaves_its_new_files_alone(db_path: str) -> None:
    """Opening settles what an interrupted rebuild left, but a ``.new`` file stamped with
    a generation still to come may be another process's rebuild, running: opening
    deleted it, the rebuild then committed, and its settling removed the live sidecar
    (the store then refused to open: 'the vectors of stored claims are lost')."""
    with Memvara(db_path, llm=NullLLM()) as mem:
        _fill(mem)

        class OpenedMidway(Counting):
            def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
                if self.calls == 3:  # the claims' page is written aside; now the turns'
                    assert os.path.exists(db_path + ".vecs.new")
                    Memvara(db_path, llm=NullLLM()).close()  # another process starting
                return super().encode(texts)

        mem.reembed(OpenedMidway(48))
        after = _claim_vectors(mem)
    with Memvara(db_path, embedder=Counting(48), llm=NullLLM()) as again:
        np.testing.assert_array_equal(_claim_vectors(again), after)
        assert after.shape == (7, 48) and again.search("Lisbon", k=1)[0].text == "user lives in Lisbon"


def test_another_handle_follows_the_new_vectors_at_its_next_write(db_path: str) -> None:
    first = Memvara(db_path, embedder=Counting(64), llm=NullLLM())
    second = Memvara(db_path, embedder=Counting(64, flip=True), llm=NullLLM())
    try:
        _fill(first)
        first.reembed(Counting(64, flip=True))
        second.remember_many([Claim("user", "likes", "figs")])
        assert embed_all(second) == 1  # its first vector write since the swap
        vectors = _claim_vectors(first)
        expected = -HashingEmbedder(64).encode([c.text for c in sorted(
            first.get_all(), key=lambda c: int(c.id[1:].split("-")[0]))])
        np.testing.assert_array_equal(vectors, expected)
    finally:
        second.close()
        first.close()


def test_bad_arguments_raise_and_change_nothing(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea")
    embed_all(mem)
    with pytest.raises(InvalidArgumentError, match="embedder"):
        mem.reembed("minilm")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="reembed"):
        Memvara(reembed="yes")  # type: ignore[arg-type]
    assert mem.store.dim == 512 and mem.count() == 1


def test_a_table_left_without_rows_keeps_no_stale_vectors(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        said = mem.add("I speak Danish").added[0]
        assert mem.erase(said.id, sources=True)  # the only turn goes with its claim
        mem.remember("user", "likes", "tea")
        embed_all(mem)
        assert os.path.exists(db_path + ".episodes.vecs")
        mem.reembed(Counting(32))
        assert not os.path.exists(db_path + ".episodes.vecs")
    with Memvara(db_path, embedder=Counting(32), llm=NullLLM()) as mem:
        assert mem.add("I live in Oslo").added  # turns get 32-d vectors from here on


def test_the_store_refuses_vectors_of_the_wrong_width_and_stale_files(db_path: str) -> None:
    store = SQLiteStore(db_path)
    try:
        Path(db_path + ".vecs.new").write_bytes(b"left by a rebuild that died")
        with pytest.raises(DimensionMismatchError):
            with store.rebuild_vectors(8, "test") as put:
                put("claims", [1], np.zeros((1, 8), dtype=np.float32))
                put("claims", [2], np.zeros((1, 9), dtype=np.float32))
        assert store.dim is None and store.embedder_label is None
        with store.rebuild_vectors(8, "test") as put:
            put("claims", [], np.zeros((0, 8), dtype=np.float32))
        assert store.embedder_label == "test"
    finally:
        store.close()


def test_a_store_whose_claims_had_no_vector_file_yet_reopens_after_a_reembed(db_path: str) -> None:
    """Single writes are embedded in batches, so a fresh store's claims may have no
    sidecar yet: the rebuild's new file is then the only one, and settling it on commit
    must rename it into place, not drop it as a rebuild that never committed (the store
    then refused to open: "the vectors of stored claims are lost")."""
    with Memvara(db_path, llm=NullLLM()) as mem:
        mem.remember("ann", "likes", "tea")
        assert not os.path.exists(db_path + ".vecs")
        assert mem.reembed(Counting(96)) == 1
    with Memvara(db_path, embedder=Counting(96), llm=NullLLM()) as again:
        assert again.search("tea", k=1)[0].text == "ann likes tea"
        assert _claim_vectors(again).shape == (1, 96)
