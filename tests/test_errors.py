"""memvara's exceptions: a stable code each, and whole after a trip through pickle (a
process pool or a queue hands a worker's error back that way)."""

from __future__ import annotations

import pickle

import pytest

import memvara
from memvara import (
    BackgroundWriteError,
    ClaimNotFoundError,
    ExtractionPendingError,
    ImportConflictError,
    InvalidArgumentError,
    InvalidExportError,
    InvalidTimeError,
    Memvara,
    MemvaraError,
    NullLLM,
    StoreCorruptError,
)


def round_trip(error: MemvaraError) -> MemvaraError:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and back.args == error.args
    assert back.code == error.code
    return back


@pytest.mark.parametrize("error", [
    InvalidArgumentError("k", "expected an int"),
    InvalidTimeError("recorded_at", "is before ..."),
    InvalidExportError(3, "not JSON"),
    ImportConflictError(2, "id held already"),
    ClaimNotFoundError("c9-deadbeef", argument="old_claim_id"),
    StoreCorruptError("the store's file is damaged"),
    BackgroundWriteError([InvalidArgumentError("messages", "empty"), StoreCorruptError("x")]),
], ids=lambda error: type(error).__name__)
def test_every_error_survives_pickle_with_its_attributes(error: MemvaraError) -> None:
    back = round_trip(error)
    assert vars(back).keys() == vars(error).keys()
    for name, value in vars(error).items():
        if name != "errors":
            assert getattr(back, name) == value, name
    if isinstance(error, BackgroundWriteError):
        assert isinstance(back, BackgroundWriteError)
        assert [str(e) for e in back.errors] == [str(e) for e in error.errors]


def test_a_pending_extraction_error_keeps_its_receipt(tmp_path: object) -> None:
    class Failing(NullLLM):
        is_null = False

        def extract(self, turns: object) -> list[memvara.Claim]:
            raise memvara.LLMError("the model is down")

    with Memvara(llm=Failing()) as mem, pytest.raises(ExtractionPendingError) as caught:
        mem.add("My sister Ada lives in Quito")
    back = round_trip(caught.value)
    assert isinstance(back, ExtractionPendingError)
    assert back.pending == caught.value.pending and len(back.pending) == 1
