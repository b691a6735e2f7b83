"""The LlamaIndex retriever against the real llama-index-core: nodes with scores, the
same JSON-safe metadata as LangChain's documents, and both clocks."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from datetime import datetime

import pytest

pytest.importorskip("llama_index.core", reason="the llama-index extra (llama-index-core) is not installed")

from llama_index.core.callbacks import CallbackManager, CBEventType, LlamaDebugHandler  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode  # noqa: E402

from memvara import InvalidArgumentError, InvalidTimeError, Memvara  # noqa: E402
from memvara.integrations.llamaindex import MemvaraRetriever  # noqa: E402

from .conftest import JAN, JUN, MAR  # noqa: E402


@pytest.fixture
def moved(mem: Memvara) -> Memvara:
    """Ana lived in Berlin from January and in Lisbon from June (recorded then)."""
    mem.remember("Ana", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("Ana", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    return mem


def objects(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.metadata["object"] for n in nodes]


def test_the_retriever_is_a_llamaindex_retriever_returning_scored_text_nodes(moved: Memvara) -> None:
    retriever = MemvaraRetriever(memory=moved)
    assert isinstance(retriever, BaseRetriever)
    (hit,) = retriever.retrieve("where does Ana live")
    assert isinstance(hit, NodeWithScore) and isinstance(hit.node, TextNode)
    found = moved.search("where does Ana live")[0]
    assert found.claim is not None
    assert hit.node.node_id == found.id
    assert hit.node.get_content() == "Ana lives in Lisbon"
    assert hit.score == pytest.approx(found.score)
    meta = hit.node.metadata
    assert json.loads(json.dumps(meta)) == meta
    assert meta["id"] == found.id and meta["state"] == "live"
    assert meta["explain"] == found.explain.summary()
    assert datetime.fromisoformat(meta["valid_from"]) == JUN
    assert datetime.fromisoformat(meta["recorded_at"]) == JUN
    # Bookkeeping stays out of what a model or an embedder is shown.
    assert hit.node.get_content(MetadataMode.LLM) == "Ana lives in Lisbon"
    assert hit.node.get_content(MetadataMode.EMBED) == "Ana lives in Lisbon"


def test_time_keywords_states_and_episodes(moved: Memvara) -> None:
    assert objects(MemvaraRetriever(memory=moved, as_of=MAR).retrieve("Ana")) == ["Berlin"]
    assert objects(MemvaraRetriever(memory=moved, valid_at=MAR).retrieve("Ana")) == ["Berlin"]
    assert objects(MemvaraRetriever(memory=moved, known_at=MAR).retrieve("Ana")) == ["Berlin"]
    now = MemvaraRetriever(memory=moved, k=2)
    assert objects(now.retrieve("Ana")) == ["Lisbon"]
    assert objects(now.at(as_of=MAR).retrieve(QueryBundle("Ana"))) == ["Berlin"]
    assert now.at(as_of=MAR).reading.k == 2
    ended = MemvaraRetriever(memory=moved, states=["ended"]).retrieve("Ana")
    assert objects(ended) == ["Berlin"] and ended[0].node.metadata["state"] == "ended"
    moved.add("Ana asked about the weather", ts=JUN)
    nodes = MemvaraRetriever(memory=moved, include_episodes=True, k=10).retrieve("weather")
    assert [n.node.metadata["kind"] for n in nodes] == ["episode"]
    assert nodes[0].node.metadata["role"] == "user"


def test_aretrieve_answers_like_retrieve(moved: Memvara) -> None:
    nodes = asyncio.run(MemvaraRetriever(memory=moved, as_of=MAR).aretrieve("Ana"))
    assert objects(nodes) == ["Berlin"]


@pytest.mark.parametrize(("kwargs", "argument", "error"), [
    ({"valid_at": "2026-03-01"}, "valid_at", InvalidTimeError),
    ({"known_at": 3.5}, "known_at", InvalidTimeError),
    ({"as_of": MAR, "known_at": MAR}, "as_of", InvalidArgumentError),
    ({"k": -1}, "k", InvalidArgumentError),
    ({"states": ["live", "dead"]}, "states", InvalidArgumentError),
    ({"memory": None}, "memory", InvalidArgumentError),
])
def test_bad_arguments_are_named(
    moved: Memvara, kwargs: dict[str, object], argument: str, error: type[Exception]
) -> None:
    arguments: dict[str, object] = {"memory": moved, **kwargs}
    with pytest.raises(error) as caught:
        MemvaraRetriever(**arguments)  # type: ignore[arg-type]
    assert isinstance(caught.value, InvalidArgumentError)
    assert caught.value.argument == argument


def test_a_callback_manager_sees_each_retrieval_and_at_keeps_it(moved: Memvara) -> None:
    # LlamaIndex's own retrievers take callback_manager= (and verbose=); this one refused
    # them with a TypeError, so a debug handler could not watch it.
    debug = LlamaDebugHandler()
    retriever = MemvaraRetriever(moved, callback_manager=CallbackManager([debug]), verbose=True)
    assert objects(retriever.retrieve("where does Ana live")) == ["Lisbon"]
    assert objects(retriever.at(as_of=MAR).retrieve("where does Ana live")) == ["Berlin"]
    pairs = debug.get_event_pairs(CBEventType.RETRIEVE)
    assert len(pairs) == 2
    assert [len(end.payload["nodes"]) for _, end in pairs] == [1, 1]  # type: ignore[index]


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"callback_manager": [LlamaDebugHandler()]}, "callback_manager"),
    ({"verbose": "yes"}, "verbose"),
])
def test_bad_llamaindex_keywords_are_named(
    moved: Memvara, kwargs: dict[str, object], argument: str
) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        MemvaraRetriever(moved, **kwargs)  # type: ignore[arg-type]
    assert caught.value.argument == argument


def test_without_llama_index_the_import_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "memvara.integrations.llamaindex")
    monkeypatch.setitem(sys.modules, "llama_index.core.retrievers", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'memvara\[llama-index\]'"):
        importlib.import_module("memvara.integrations.llamaindex")
