"""A LlamaIndex retriever over ``search()``.

Install with ``pip install 'memvara[llama-index]'`` (``llama-index-core``).

What it keeps of memvara: everything a search has. A retriever is "query in, nodes
out", which is what ``search()`` already is, so the ranking, the claim states, the
episodes and both clocks (``valid_at``/``known_at``/``as_of``) pass through untouched,
and each node's metadata carries the claim id, its state, its four instants as ISO
strings, the score and the explanation's one-line summary.

What it loses: LlamaIndex's ``retrieve()`` takes only the query, so the instants are
fixed when the retriever is built (``at()`` makes a copy for other instants); and the
metadata is kept out of the text LlamaIndex hands a model or an embedder (it is
bookkeeping, not content), so a prompt sees the claim's text alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "memvara.integrations.llamaindex needs llama-index-core:"
        " pip install 'memvara[llama-index]'"
    ) from exc

from memvara import InvalidArgumentError, Memvara, ScopedMemvara

from ._retrieval import MemoryHandle, check_memory, metadata, reading

__all__ = ["MemvaraRetriever"]


class MemvaraRetriever(BaseRetriever):
    """A LlamaIndex retriever that answers with ``memory.search()``.

    ``retrieve(query)`` returns up to ``k`` ``NodeWithScore``s, best first, each holding
    a ``TextNode`` whose text is the claim's (or the turn's), whose id is its id, and
    whose metadata is JSON-safe (``kind``, ``id``, ``score``, ``explain``,
    ``subject``/``predicate``/``object``, ``state``, ``valid_from``/``valid_to``,
    ``recorded_at``/``invalidated_at``...). ``aretrieve()`` runs the search on a worker
    thread, so an event loop is not blocked.

    Args:
        memory: a ``Memvara`` or a ``ScopedMemvara`` (whose scope every search uses), or
            an async twin of one (its ``.sync`` is used).
        k: at most this many nodes (1 to 1,000,000).
        valid_at, known_at, as_of: the instants searched at, as in ``search()``.
        states: the claim states admitted (default live only).
        include_episodes: rank raw conversation turns alongside claims.
        callback_manager, verbose: LlamaIndex's own, as its retrievers take them (the
            manager's handlers see each retrieval).

    Raises:
        InvalidTimeError: a time keyword that is not a datetime.
        InvalidArgumentError: any other bad argument, named.
    """

    def __init__(
        self,
        memory: MemoryHandle,
        k: int = 4,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
        states: Sequence[str] | None = None,
        include_episodes: bool = False,
        *,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.memory = check_memory(memory)
        self.reading = reading(k, valid_at, known_at, as_of, states, include_episodes)
        if callback_manager is not None and not isinstance(callback_manager, CallbackManager):
            raise InvalidArgumentError("callback_manager", f"expected a CallbackManager or None,"
                                                           f" got {type(callback_manager).__name__}")
        if not isinstance(verbose, bool):
            raise InvalidArgumentError("verbose", f"expected True or False, got {verbose!r:.40}")
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def at(
        self,
        *,
        valid_at: datetime | None = None,
        known_at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> MemvaraRetriever:
        """A copy of this retriever that searches at other instants (all three are
        replaced: the ones not passed are the defaults), with the same callbacks."""
        now = self.reading
        return MemvaraRetriever(self.memory, now.k, valid_at, known_at, as_of, now.states,
                                now.include_episodes, callback_manager=self.callback_manager,
                                verbose=self._verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for found in self.reading.search(self.memory, query_bundle.query_str):
            about = metadata(found)
            node = TextNode(text=found.text, id_=found.id, metadata=about,
                            excluded_embed_metadata_keys=list(about),
                            excluded_llm_metadata_keys=list(about))
            nodes.append(NodeWithScore(node=node, score=found.score))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
