"""The values the store seam passes besides claims and episodes: what ``search()``
ranks a claim by, what one write does to its slot, and a window of consolidation.

Public through ``memvara.store.base``, which re-exports every name here; they live apart
only to keep the contract's module readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .._domain.model import Claim

__all__ = ["NO_SETTLEMENT", "RankFields", "Settlement", "SweepWindow", "Written"]


class RankFields(NamedTuple):
    """What ``search()`` reads of a claim to rank it, without building the ``Claim``.

    A ``RankingStore`` gives these fields as ``claims_at`` would (``valid_from`` in
    microseconds, like every instant at this seam); search then builds whole claims only
    for the results it returns. Without one, search ranks the candidates from
    ``claims_at``.
    """

    text: str
    predicate: str
    valid_from: int | None
    confidence: float
    observations: int
    salience: float


NO_SETTLEMENT = "settle() named no claim to insert or to reinforce"
"""The ``StoreError`` message for a ``Settlement`` that names neither."""


class Settlement(NamedTuple):
    """What one new claim does to its slot: the writer's answer to a
    ``SingleWriteStore``'s ``write_claim``.

    Either ``insert`` is the claim to store (it may end earlier than the one written:
    a later value already holds the slot) and ``reinforce`` is ``None``, or ``insert``
    is ``None`` and the write is another observation of the believed ``reinforce``.
    ``end`` holds ``(claim, valid_to, at)`` and ``retire`` ``(claim, at)``: the closures
    the inserted claim causes, each naming it as the claim that closed them.
    ``bounded_by`` is the id of the later value that ``insert`` ends at, when one does:
    stored as what ended it (``why()``'s ``closed_by``).
    """

    insert: Claim | None
    reinforce: Claim | None
    end: Sequence[tuple[Claim, int, int]]
    retire: Sequence[tuple[Claim, int]]
    bounded_by: str | None = None


Written = tuple[Claim | None, Claim | None, list[Claim], list[Claim]]
"""What ``write_claim`` did: ``(added, reinforced, ended, retired)``, ``None`` for the
one of the first two not written."""


@dataclass(frozen=True, slots=True)
class SweepWindow:
    """One window of still-believed claims handed to consolidation, column by column
    (a row object per claim would cost more than the sweep's arithmetic).

    Rows of one slot (``slots[i]``: tenant, user, agent, session, subject key,
    predicate) are adjacent and never split across windows. Instants are integer
    microseconds; an open ``valid_to`` is ``2**63 - 1``. ``storage`` is the storage
    strength (never decays), ``retrieval`` the retrieval strength as last stored, and
    ``observed_at`` the last observation (the claim's ``recorded_at`` until a
    re-observation). ``vectors`` has a zero row where ``has_vector`` is false (and no
    columns while the store holds no vector at all).
    ``next`` is what to pass as ``after`` for the following window; ``None`` after the
    last one.
    """

    ids: tuple[str, ...]
    rowids: npt.NDArray[np.int64]
    slots: tuple[tuple[str, ...], ...]
    polarity: npt.NDArray[np.int64]
    object_keys: tuple[str, ...]
    valid_from: npt.NDArray[np.int64]
    valid_to: npt.NDArray[np.int64]
    memory_types: tuple[str, ...]
    observations: npt.NDArray[np.int64]
    storage: npt.NDArray[np.float64]
    retrieval: npt.NDArray[np.float64]
    observed_at: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    has_vector: npt.NDArray[np.bool_]
    next: tuple[str, ...] | None

    def __len__(self) -> int:
        return len(self.ids)
