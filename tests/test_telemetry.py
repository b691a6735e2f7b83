"""The Recorder seam, the in-memory recorder's subset-tag reads, and the series list."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import memvara
from memvara._write.scripts import SCRIPTS
from memvara.telemetry import SERIES, MemoryRecorder, Recorder


@pytest.fixture
def rec() -> MemoryRecorder:
    return MemoryRecorder()


def test_memory_recorder_is_a_recorder(rec: MemoryRecorder) -> None:
    assert isinstance(rec, Recorder)


def test_any_object_with_record_is_a_recorder_and_others_are_not() -> None:
    class Forwarder:
        def __init__(self) -> None:
            self.seen: list[tuple[str, float, dict[str, str]]] = []

        def record(self, name: str, value: float = 1.0, **tags: str) -> None:
            self.seen.append((name, value, tags))

    forwarder = Forwarder()
    assert isinstance(forwarder, Recorder)
    assert not isinstance(object(), Recorder)
    sink: Recorder = forwarder
    sink.record("llm.calls", kind="extract")
    assert forwarder.seen == [("llm.calls", 1.0, {"kind": "extract"})]


def test_a_counter_defaults_to_one_and_values_are_floats(rec: MemoryRecorder) -> None:
    rec.record("llm.calls")
    rec.record("llm.calls", 3)
    assert rec.values("llm.calls") == [1.0, 3.0]
    assert all(type(v) is float for v in rec.values("llm.calls"))
    assert rec.total("llm.calls") == 4.0


def test_tags_filter_by_subset(rec: MemoryRecorder) -> None:
    rec.record("redact.inspected", field="content", script="latin")
    rec.record("redact.inspected", field="content", script="han")
    rec.record("redact.inspected", field="content", script="han")
    rec.record("redact.inspected", field="subject", script="han")

    assert rec.total("redact.inspected") == 4.0  # no tags: the whole series
    assert rec.total("redact.inspected", script="han") == 3.0  # one slice
    assert rec.total("redact.inspected", field="content") == 3.0
    assert rec.total("redact.inspected", field="content", script="han") == 2.0
    assert rec.total("redact.inspected", script="greek") == 0.0  # a value never seen
    assert rec.total("redact.inspected", reason="x") == 0.0  # a key no event carries


def test_values_keep_recording_order_within_a_slice(rec: MemoryRecorder) -> None:
    for value, script in [(1.2, "latin"), (0.5, "han"), (0.9, "latin")]:
        rec.record("retrieval.quality_factor", value, script=script)
    assert rec.values("retrieval.quality_factor") == [1.2, 0.5, 0.9]
    assert rec.values("retrieval.quality_factor", script="latin") == [1.2, 0.9]


def test_a_value_above_one_is_kept_unclamped(rec: MemoryRecorder) -> None:
    rec.record("retrieval.quality_factor", 1.75)
    assert rec.values("retrieval.quality_factor") == [1.75]


def test_an_event_recorded_at_zero_is_still_seen(rec: MemoryRecorder) -> None:
    rec.record("consolidate.merged", 0)
    assert rec.total("consolidate.merged") == 0.0
    assert rec.values("consolidate.merged") == [0.0]
    assert "consolidate.merged" in rec.names()


def test_an_unknown_series_is_empty(rec: MemoryRecorder) -> None:
    assert rec.total("nope") == 0.0
    assert rec.values("nope") == []
    assert rec.names() == set()


def test_names_and_clear(rec: MemoryRecorder) -> None:
    rec.record("fast.hit", script="latin")
    rec.record("gate.drop", reason="ack_only")
    assert rec.names() == {"fast.hit", "gate.drop"}
    assert repr(rec) == "MemoryRecorder(2 events in 2 series)"
    rec.clear()
    assert rec.names() == set()
    assert rec.total("fast.hit") == 0.0


def test_concurrent_records_are_all_kept(rec: MemoryRecorder) -> None:
    threads, each = 8, 2000
    start = threading.Barrier(threads)

    def work(n: int) -> None:
        start.wait()
        for i in range(each):
            rec.record("fast.miss", script=SCRIPTS[n % 2])
            if i % 100 == 0:
                rec.total("fast.miss")  # reads interleaved with writes must not fail
                rec.names()

    pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert rec.total("fast.miss") == threads * each
    assert rec.total("fast.miss", script=SCRIPTS[0]) == threads // 2 * each


def test_series_documents_every_emitted_name_once() -> None:
    names = [s.name for s in SERIES]
    assert len(names) == len(set(names))
    assert set(names) == {
        "fast.hit", "fast.miss", "gate.drop", "redact.inspected", "redact.changed",
        "llm.calls", "llm.failed", "retrieval.quality_factor", "consolidate.merged",
        "rerank.failed",
    }
    for series in SERIES:
        assert series.meaning and "\n" not in series.meaning, series.name
        assert all(tag not in ("name", "value") for tag in series.tags), series.name


def test_every_series_the_library_emits_is_listed() -> None:
    package = Path(memvara.__file__).parent
    emitted = {name for path in package.rglob("*.py")
               for name in re.findall(r'\.record\(\s*"([\w.]+)"', path.read_text("utf-8"))}
    assert "llm.failed" in emitted and emitted <= {s.name for s in SERIES}


def test_series_tags_match_the_slices_the_failure_modes_need() -> None:
    tags = {s.name: s.tags for s in SERIES}
    assert tags["fast.hit"] == tags["fast.miss"] == ("script",)
    assert tags["gate.drop"] == ("reason",)
    # The redaction pair is only readable as a ratio if both sides slice the same way.
    assert tags["redact.inspected"] == tags["redact.changed"] == ("field", "script")
