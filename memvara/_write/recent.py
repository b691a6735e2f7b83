"""The near-duplicate check's memory: each scope's latest turns, kept in place.

``add()`` compares every new turn with the scope's last few turns by cosine. Those are
read from the store the first time a scope is seen in this process, then kept current
by this process's own adds: a ring of unit vectors per scope, written a row at a time,
so an add costs one matrix-vector product and the rows it stores, not a copy of the
scope's whole recent matrix (a ``np.concatenate`` of it was ~3% of a one-turn add).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .._domain.model import Scope
from ..store.base import Store

__all__ = ["RecentTurns"]


class _Ring:
    """A scope's latest ``size`` turns: vectors, roles and times (``ts``, microseconds),
    row ``next`` the next to overwrite. Rows not yet written are zeros, which no unit
    vector comes near, so the whole matrix is compared without slicing."""

    __slots__ = ("next", "roles", "times", "vectors")

    def __init__(self, size: int, dim: int) -> None:
        self.vectors: npt.NDArray[np.float32] = np.zeros((size, dim), dtype=np.float32)
        self.roles = [""] * size
        self.times = [0] * size
        self.next = 0

    def extend(self, roles: Sequence[str], times: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Write these turns (oldest first) over the oldest held."""
        size = len(self.roles)
        for row in range(max(0, len(roles) - size), len(roles)):  # the last ``size`` only
            i = self.next
            self.vectors[i] = vectors[row]
            self.roles[i] = roles[row]
            self.times[i] = times[row]
            self.next = (i + 1) % size


class RecentTurns:
    """Each scope's last ``turns`` turns, for the ``scopes`` scopes written most recently
    (least recently used dropped). Thread-safe: a background worker adds beside the caller."""

    def __init__(self, store: Store, *, turns: int, scopes: int, threshold: float) -> None:
        self._store = store
        self._turns = turns
        self._scopes = scopes
        self._threshold = threshold
        self._rings: OrderedDict[Scope, _Ring] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every scope (their vectors were another embedder's)."""
        with self._lock:
            self._rings.clear()

    def near(self, scope: Scope, roles: Sequence[str], times: Sequence[int],
             vectors: npt.NDArray[np.float32], window: int) -> list[bool]:
        """For each turn, whether one of the scope's recent turns of the same role, said
        within ``window`` microseconds of it, has a cosine of ``threshold`` or more."""
        ring = self._ring(scope)
        n = len(roles)
        with self._lock:  # the ring is written in place by remember()
            if ring.vectors.shape[1:] != vectors.shape[1:]:
                return [False] * n
            if n == 1:  # one turn a call: one matrix-vector product, nearly always no match
                sims = ring.vectors @ vectors[0]
                if sims.max() < self._threshold:
                    return [False]
                close = [np.flatnonzero(sims >= self._threshold)]
            else:
                hits = ring.vectors @ vectors.T >= self._threshold
                if not hits.any():
                    return [False] * n
                close = [np.flatnonzero(hits[:, i]) for i in range(n)]
            return [any(ring.roles[j] == roles[i] and abs(ring.times[j] - times[i]) <= window
                        for j in close[i]) for i in range(n)]

    def remember(self, scope: Scope, roles: Sequence[str], times: Sequence[int],
                 vectors: npt.NDArray[np.float32]) -> None:
        """After a commit: the stored turns join the scope's recent ones. A scope no
        longer held is left to be read from the store, which holds these turns now."""
        with self._lock:
            ring = self._rings.get(scope)
            if ring is None:
                return
            if ring.vectors.shape[1:] != vectors.shape[1:]:  # another embedder's vectors
                ring = self._rings[scope] = _Ring(self._turns, vectors.shape[1])
            ring.extend(roles, times, vectors)

    def _ring(self, scope: Scope) -> _Ring:
        with self._lock:
            ring = self._rings.get(scope)
            if ring is not None:
                self._rings.move_to_end(scope)
                return ring
        stamps, vectors = self._store.recent_turns(scope, self._turns)  # newest first
        ring = _Ring(self._turns, vectors.shape[1] if vectors.ndim == 2 else 0)
        ring.extend([role for role, _ in stamps[::-1]], [ts for _, ts in stamps[::-1]], vectors[::-1])
        with self._lock:
            ring = self._rings.setdefault(scope, ring)  # another thread's read may have won
            self._rings.move_to_end(scope)
            while len(self._rings) > self._scopes:
                self._rings.popitem(last=False)
        return ring
