"""Consolidation: decay, merge and promote, off the write path, one window at a time.

Salience is modelled on Bjork & Bjork's new theory of disuse. A claim has a *storage strength*
(how well it is learned: ``salience_base``, which never decays) and a *retrieval
strength* (how easily it comes to mind now: ``salience``, which does). Retrieval strength
is not decremented run by run: it is a pure function of storage strength, the last
observation and the sweep's clock, so a second sweep at the same instant computes the
same numbers and writes nothing (idempotent), and a missed or repeated run never drifts.

The sweep reads the store in windows of whole slots, about ``WINDOW_ROWS`` rows each, and
writes each window in its own transaction: other writers interleave, readers never wait
(they have their own connections), and a failure rolls back only the window it hit.

Everything but ``consolidate`` is pure: numbers and a ``SweepWindow`` in, a plan out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from .._domain.salience import FLOOR, HALF_LIFE_US, SPACING_GAIN, reinforced_storage, retrievability

if TYPE_CHECKING:
    from .._domain.model import Scope
    from ..store.base import Store, SweepWindow

__all__ = [
    "FLOOR",
    "HALF_LIFE_US",
    "MERGE_COSINE",
    "PROMOTE_AFTER",
    "SALIENCE_STEP",
    "SPACING_GAIN",
    "VECTOR_SLOT_CAP",
    "WINDOW_ROWS",
    "WindowPlan",
    "consolidate",
    "plan_window",
    "reinforced_storage",
    "retrievability",
]

PROMOTE_AFTER = 5
"""An episodic claim observed this many times becomes semantic: seeing something once is
an event, seeing it five times is a pattern."""

MERGE_COSINE = 0.97
"""Two values of one slot are near-duplicates at this cosine of their stored vectors.
The vectors embed the whole claim text, subject and predicate included, so distinct
values of one slot already score high. Measured with all-MiniLM-L6-v2: ``city_3`` vs
``city_30`` 0.950, ``hiking`` vs ``hiking trips`` 0.949, ``tea`` vs ``coffee`` 0.71;
``New York`` vs ``NYC`` 0.978, ``Acme Corporation`` vs ``Acme Corp`` 0.993. With the
default ``HashingEmbedder`` only case and spacing variants reach it (1.0), and a
one-letter spelling change of a long value stays under 0.962. A wrong merge retires a
true fact, so the line sits above every distinct pair measured."""

WINDOW_ROWS = 500
"""Rows per window (one transaction). Small enough that a writer waits a few
milliseconds at most, large enough that the per-transaction cost vanishes."""

SALIENCE_STEP = 1e-4
"""A retrieval strength that moved less than this is not rewritten: a claim resting at
the floor costs no write per sweep, and no ranking can tell the difference."""

VECTOR_SLOT_CAP = 64
"""Vectors are compared only within slots of at most this many believed claims; a
larger slot is a list (everything a user likes) and comparing every pair would be
quadratic. Exact duplicates (same folded object) are found in slots of any size."""

_OPEN = np.iinfo(np.int64).max


@dataclass(slots=True)
class WindowPlan:
    """What one window's transaction writes, and what it counts."""

    retrieval: list[tuple[str, float]] = field(default_factory=list)
    memory_types: list[tuple[str, str]] = field(default_factory=list)
    folds: list[tuple[str, tuple[str, ...], int, float, int]] = field(default_factory=list)
    decayed: int = 0
    merged: int = 0
    promoted: int = 0

    @property
    def empty(self) -> bool:
        """Whether the window has nothing to write."""
        return not (self.retrieval or self.memory_types or self.folds)


def plan_window(window: SweepWindow, now: int) -> WindowPlan:
    """Decide one window: merge near-duplicates, then decay and promote what remains.

    Merging comes first so a survivor's folded observations promote it in the same
    run, and its retrieval strength is computed from the folded strengths: a second
    run at the same ``now`` finds nothing to do. Survivors take the sum of the
    observations, the greatest storage strength (the best-learned trace) and the latest
    observation.
    """
    plan = WindowPlan()
    n = len(window)
    if n == 0:
        return plan
    observations = window.observations.copy()
    storage = window.storage.copy()
    observed = window.observed_at.copy()
    alive = np.ones(n, dtype=np.bool_)
    for survivor, losers in _clusters(window):
        members = [survivor, *losers]
        observations[survivor] = observations[members].sum()
        storage[survivor] = storage[members].max()
        observed[survivor] = observed[members].max()
        alive[losers] = False
        plan.folds.append((
            window.ids[survivor], tuple(window.ids[i] for i in losers),
            int(observations[survivor]), float(storage[survivor]), int(observed[survivor]),
        ))
        plan.merged += len(losers)
    elapsed = np.maximum(now - observed, 0).astype(np.float64)
    retrieval = retrievability(storage, elapsed)
    changed = np.flatnonzero(alive & (np.abs(retrieval - window.retrieval) > SALIENCE_STEP))
    plan.retrieval = [(window.ids[i], float(retrieval[i])) for i in changed]
    plan.decayed = len(changed)
    episodic = np.fromiter((t == "episodic" for t in window.memory_types), np.bool_, n)
    promote = np.flatnonzero(alive & episodic & (observations >= PROMOTE_AFTER))
    plan.memory_types = [(window.ids[i], "semantic") for i in promote]
    plan.promoted = len(promote)
    return plan


def _clusters(window: SweepWindow) -> list[tuple[int, list[int]]]:
    """Near-duplicate clusters as ``(survivor, losers)`` row indices.

    Like a re-observation at write time: same slot, same polarity, overlapping valid
    time, and the same folded object (or vectors at ``MERGE_COSINE``). Rows are taken in
    rowid order and each joins the first earlier survivor it duplicates, so the survivor
    is the oldest row, whatever order the store returned them in.
    """
    n = len(window)
    slots = window.slots
    starts = [0, *(i for i in range(1, n) if slots[i] != slots[i - 1])]
    if len(starts) == n:  # every slot holds one claim: nothing to merge
        return []
    group = np.zeros(n, dtype=np.int64)
    group[starts[1:]] = 1
    group = np.cumsum(group)
    sizes = np.diff([*starts, n])
    # Rows sharing slot, polarity and folded object, found in numpy: a window is read
    # inside a transaction, beside reader threads waiting for the GIL.
    objects = np.unique(np.asarray(window.object_keys), return_inverse=True)[1].reshape(-1)
    same = (group * 2 + (window.polarity > 0)) * (int(objects.max()) + 1) + objects
    _, inverse, counts = np.unique(same, return_inverse=True, return_counts=True)
    group_of = group.tolist()
    candidates: dict[int, set[int]] = {}
    for i in np.flatnonzero(counts[inverse.reshape(-1)] > 1).tolist():
        candidates.setdefault(group_of[i], set()).add(i)
    near = _near_pairs(window, group, sizes)
    for i, j in near:
        candidates.setdefault(group_of[i], set()).update((i, j))
    clusters: list[tuple[int, list[int]]] = []
    for g in sorted(candidates):
        survivors: dict[int, list[int]] = {}
        for m in sorted(candidates[g], key=lambda i: int(window.rowids[i])):
            for s in survivors:
                if _duplicates(window, s, m, near):
                    survivors[s].append(m)
                    break
            else:
                survivors[m] = []
        clusters.extend((s, losers) for s, losers in survivors.items() if losers)
    return clusters


def _near_pairs(
    window: SweepWindow, group: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64]
) -> set[tuple[int, int]]:
    """Pairs of rows in one small slot whose vectors are at ``MERGE_COSINE`` or more."""
    small = (sizes[group] > 1) & (sizes[group] <= VECTOR_SLOT_CAP) & window.has_vector
    rows = np.flatnonzero(small)
    if len(rows) < 2 or window.vectors.shape[1] == 0:
        return set()
    vectors = window.vectors[rows]
    norms = np.linalg.norm(vectors, axis=1)
    found: set[tuple[int, int]] = set()
    for d in range(1, min(len(rows), VECTOR_SLOT_CAP)):
        same = np.flatnonzero(group[rows[:-d]] == group[rows[d:]])
        if not len(same):
            break  # rows of a slot are adjacent: no pair this far apart, none farther
        a, b = same, same + d
        dots = np.einsum("ij,ij->i", vectors[a], vectors[b])
        close = dots >= MERGE_COSINE * norms[a] * norms[b]
        found.update(zip(rows[a[close]].tolist(), rows[b[close]].tolist()))
    return found


def _duplicates(window: SweepWindow, s: int, m: int, near: set[tuple[int, int]]) -> bool:
    """Whether row ``m`` re-observes survivor ``s`` (same slot already given)."""
    if window.polarity[s] != window.polarity[m]:
        return False
    if not (window.valid_from[s] < window.valid_to[m] and window.valid_from[m] < window.valid_to[s]):
        return False
    return window.object_keys[s] == window.object_keys[m] or (min(s, m), max(s, m)) in near


def consolidate(
    store: Store, scope: Scope, now: int, *, window: int | None = None
) -> dict[str, int]:
    """Decay, merge and promote the still-believed claims of ``scope`` and every scope
    beneath it, as of ``now``; how many claims each step changed.

    Each window is read and written in one transaction of its own. A failure rolls back
    the window it happened in and propagates; the windows before it stay committed, and
    a re-run (idempotent) finishes the job. ``window`` defaults to ``WINDOW_ROWS``.
    """
    limit = WINDOW_ROWS if window is None else window
    counts = {"decayed": 0, "merged": 0, "promoted": 0}
    after: tuple[str, ...] | None = None
    while True:
        with store.transaction():
            rows = store.sweep_claims(scope, after, limit)
            plan = plan_window(rows, now)
            if not plan.empty:
                store.apply_sweep(plan.retrieval, plan.memory_types, plan.folds, now)
        counts["decayed"] += plan.decayed
        counts["merged"] += plan.merged
        counts["promoted"] += plan.promoted
        if rows.next is None:
            return counts
        after = rows.next
