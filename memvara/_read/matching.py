"""Which search candidates match the query at all, rather than merely rank somewhere.

A candidate the text list found shares a word with the query (or is a turn beside one
that does). One only the vector list found matches when its cosine reaches the
embedder's ``similarity_floor``; for a lexical embedder that can tell
(``memvara.embed.lexical_similarities``), its unhashed cosine must reach the floor too.
Hashed into 512 buckets, a short query's few features land on buckets an unrelated
text's use, at cosines of 0.1 to 0.3: "Kiwi" found six facts about Bruno, "2024" ten
facts with no digit. The exact cosine is computed only for those few candidates, never
for every row. A semantic embedder's cosine is its judgement of meaning, not a
collision, and is taken as it is.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from ..embed import lexical_similarities, similarity_floor

__all__ = ["Candidate", "matching"]


class _Lists(Protocol):
    @property
    def bm25_rank(self) -> int | None: ...

    @property
    def vector_score(self) -> float | None: ...


class Candidate(Protocol):
    """A scored candidate: its text and where each list placed it."""

    @property
    def text(self) -> str: ...

    @property
    def hit(self) -> _Lists: ...


_C = TypeVar("_C", bound=Candidate)


def matching(query: str, embedder: object, candidates: list[_C]) -> list[_C]:
    """The ``candidates`` that match ``query``, in their order: each the text list found,
    and each the vector list alone found whose cosine reaches ``embedder``'s floor (for
    a lexical embedder, hashed and exact alike)."""
    floor = similarity_floor(embedder)
    kept = [c for c in candidates if c.hit.bm25_rank is not None
            or (c.hit.vector_score is not None and c.hit.vector_score >= floor)]
    exact = lexical_similarities(embedder)
    vector_only = [c for c in kept if c.hit.bm25_rank is None]
    if exact is None or not vector_only:
        return kept
    cosines = exact(query, [c.text for c in vector_only])
    unmatched = {id(c) for c, cosine in zip(vector_only, cosines) if cosine < floor}
    return [c for c in kept if id(c) not in unmatched]
