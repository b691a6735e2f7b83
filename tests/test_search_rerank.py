"""A reranker reorders search's fused top results; if it fails, the fused order stands."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memvara import InvalidArgumentError, MemoryRecorder, Memvara
from memvara.rerank import CoverageReranker

from .conftest import Clock


class Backwards:
    """Prefers whatever fusion liked least: makes a reorder impossible to miss."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.seen.append(len(texts))
        return [float(i) for i in range(len(texts))]


class Broken:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def _fill(mem: Memvara) -> None:
    for drink in ("green tea", "black tea", "mint tea", "iced tea", "tea"):
        mem.remember("user", "likes", drink)


def test_the_reranker_orders_the_top_n_and_says_so(clock: Clock) -> None:
    plain = Memvara(clock=clock)
    _fill(plain)
    fused = [r.text for r in plain.search("tea", k=5)]
    plain.close()
    backwards = Backwards()
    with Memvara(clock=clock, read_reranker=backwards, read_rerank_top_n=3) as mem:
        _fill(mem)
        found = mem.search("tea", k=5)
    assert [r.text for r in found] == fused[:3][::-1] + fused[3:]
    assert backwards.seen == [3]
    assert found[0].explain.rerank == 2.0 and found[4].explain.rerank is None
    assert found[0].explain.summary().endswith("rerank=2.000")


def test_the_coverage_reranker_prefers_the_text_with_more_of_the_query(clock: Clock) -> None:
    with Memvara(clock=clock, read_reranker=CoverageReranker()) as mem:
        mem.remember("user", "likes", "jasmine green tea")
        mem.remember("user", "likes", "coffee")
        mem.remember("user", "drinks", "green smoothies")
        assert mem.search("green tea", k=1)[0].text == "user likes jasmine green tea"


@pytest.mark.parametrize("answer", [RuntimeError("model crashed"), [1.0], [float("nan")] * 5, None])
def test_a_failing_reranker_leaves_the_fused_order_and_is_counted(clock: Clock, answer: object) -> None:
    rec = MemoryRecorder()
    with Memvara(clock=clock) as plain:
        _fill(plain)
        fused = [r.text for r in plain.search("tea")]
    with Memvara(clock=clock, read_reranker=Broken(answer), telemetry=rec) as mem:
        _fill(mem)
        assert [r.text for r in mem.search("tea")] == fused
    assert rec.total("rerank.failed") == 1


def test_a_failing_reranker_without_telemetry_still_answers(clock: Clock) -> None:
    with Memvara(clock=clock, read_reranker=Broken(RuntimeError("x"))) as mem:
        _fill(mem)
        assert len(mem.search("tea")) == 5


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"read_reranker": object()}, "read_reranker"), ({"read_rerank_top_n": 0}, "read_rerank_top_n"),
    ({"read_rerank_top_n": 1001}, "read_rerank_top_n"), ({"read_rerank_top_n": True}, "read_rerank_top_n"),
])
def test_bad_reranker_arguments_are_refused(clock: Clock, kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        Memvara(clock=clock, **kwargs)  # type: ignore[arg-type]
    assert caught.value.argument == argument
