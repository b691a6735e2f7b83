"""The real ``mem0ai`` package, run fully offline: for bench/mem0_real.py and the tests
that build mem0 files with it.

Nothing of mem0 is reimplemented. Two of its parts that would reach the network are
swapped after construction, through the attributes mem0's own ``Memory`` calls: its
LLM (``generate_response``) becomes an oracle that answers from a table, and its
embedder (``embed``, ``embed_batch``) becomes memvara's deterministic
``HashingEmbedder``. The vector store is Qdrant in ``:memory:`` and telemetry is off
(``MEM0_TELEMETRY=False``, set before mem0 is imported; ``MEM0_DIR`` points at a
scratch folder so nothing is written under ``~``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from memvara import HashingEmbedder

__all__ = ["HashEmbedding", "NewMessagesOracle", "open_mem0"]

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-dir-"))


class HashEmbedding:
    """mem0's embedder interface over memvara's ``HashingEmbedder``: the same vectors
    for the same text in both systems, and no model."""

    def __init__(self) -> None:
        self._embedder = HashingEmbedder()
        self.dim = self._embedder.dim

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return [float(x) for x in self._embedder.encode([str(text)])[0]]

    def embed_batch(self, texts: Sequence[str], memory_action: str | None = None) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.encode([str(t) for t in texts])]


def new_messages(prompt: str) -> str:
    """The ``## New Messages`` section of mem0 2.x's additive extraction prompt.

    Only this section may be read: the prompt also carries the last ten messages and the
    existing memories, and answering for a turn found there would extract it again on
    every later call (the mistake the benchmark's first version made).
    """
    start = prompt.index("## New Messages\n") + len("## New Messages\n")
    end = prompt.index("\n## Observation Date", start)
    return prompt[start:end]


class NewMessagesOracle:
    """mem0's LLM: for each turn of ``facts`` found among the new messages, the fact
    texts it states, as the JSON (``{"memory": [{"text": ...}]}``) mem0 2.x's add path
    parses. ``calls`` counts the requests."""

    def __init__(self, facts: Mapping[str, Sequence[str]]) -> None:
        self._facts = facts
        self.calls = 0

    def generate_response(self, messages: Sequence[Mapping[str, Any]], **_: Any) -> str:
        self.calls += 1
        section = new_messages(str(messages[-1]["content"]))
        texts = [text for turn, said in self._facts.items() if turn in section for text in said]
        return json.dumps({"memory": [{"text": t} for t in texts]})


def open_mem0(history_db: str, llm: object, collection: str = "bench") -> Any:
    """A real ``mem0.Memory`` with ``llm`` as its model, ``HashEmbedding`` as its
    embedder, Qdrant in memory and its history in ``history_db``."""
    from mem0 import Memory  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from qdrant_client import QdrantClient

    embedding = HashEmbedding()
    config = {
        "vector_store": {"provider": "qdrant", "config": {
            "client": QdrantClient(location=":memory:"), "collection_name": collection,
            "embedding_model_dims": embedding.dim}},
        # Providers mem0 constructs but never calls: both are replaced below.
        "llm": {"provider": "openai", "config": {"api_key": "offline"}},
        "embedder": {"provider": "openai", "config": {
            "api_key": "offline", "embedding_dims": embedding.dim}},
        "history_db_path": history_db,
    }
    memory = Memory.from_config(config)
    memory.llm = llm
    memory.embedding_model = embedding
    return memory

