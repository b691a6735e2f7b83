"""Every constant search ranks by, in one place.

``Weights`` holds the tunable ones as a frozen object (``WEIGHTS`` is the default a
``Retriever`` uses; pass another to try a setting without editing code). How each value
was chosen, with the measurements on LOCOMO's development split, is in
``docs/perf-log.md`` ("How the ranking constants were chosen").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CANDIDATES", "RRF_K", "WEIGHTS", "Weights"]

RRF_K = 60
"""Reciprocal Rank Fusion's damping constant (the usual 60)."""

CANDIDATES = 50
"""Each retriever returns at least this many candidates (and at least 4 * k)."""


@dataclass(frozen=True, slots=True)
class Weights:
    """The weights of hybrid search; every turn signal applies only to turns that the
    query's words (or their neighbours') found."""

    neighbour: float = 0.5
    """Share of a turn's BM25 score lent to the turns just before and after it (a reply
    rarely repeats the words of the question it answers)."""

    second_neighbour: float = 0.25
    """Share of a turn's BM25 score lent to the turns two before and two after it."""

    date: float = 0.6
    """Share of the best turn score added to a turn stamped on a date the query names."""

    answer_type: float = 0.5
    """Share of the best turn score added to a turn that says when, if the query asks
    when."""

    turn_length_prior: float = 0.2
    """A turn match's score is multiplied by its word count to this power, softening
    BM25's length normalization for conversational turns."""

    term_coverage: float = 0.25
    """A turn match's score is multiplied by ``1 + term_coverage * (n - 1)`` for ``n``
    distinct query words it holds."""

    speaker: float = 1.0
    """A turn spoken by someone the query names is multiplied by ``1 + speaker``."""

    semantic_vector: float = 0.5
    """The vector list's weight against BM25's in the fusion, for a semantic embedder."""

    lexical_vector: float = 0.001
    """The vector list's weight for a lexical embedder: enough to break BM25's ties,
    too little to reorder its ranks."""


WEIGHTS = Weights()
"""The weights search uses unless a ``Retriever`` is given others."""
