"""Salience, after Bjork & Bjork's new theory of disuse, has two parts: storage strength
(how well a claim is learned, never decays) and retrieval strength (how easily it comes
to mind now, a pure function of storage strength and the time since the last
observation).

Both the store (a re-observation reinforces a claim) and consolidation (a sweep decays
it) use these functions, so they live here, below both.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
import numpy.typing as npt

__all__ = ["FLOOR", "HALF_LIFE_US", "SPACING_GAIN", "reinforced_storage", "retrievability"]

FLOOR = 0.1
"""Retrieval strength never decays below this: a claim unseen for years is hard to
reach, not gone. Forgetting is a loss of access, not of the memory (Bjork)."""

HALF_LIFE_US = 30 * 86_400 * 1_000_000
"""A claim seen once (storage strength 1) loses half its retrieval strength above the
floor in 30 days; storage strength ``S`` stretches that to ``S * 30`` days, so what is
well learned fades slowly."""

SPACING_GAIN = 0.2
"""A re-observation adds ``SPACING_GAIN / R`` to storage strength, ``R`` being the
retrieval strength at that moment: +0.2 for a claim seen a moment ago, +2.0 for one at
the floor. Massed repetition teaches little, spaced repetition a lot."""


FloatArray = npt.NDArray[np.float64]


@overload
def retrievability(storage: float, elapsed_us: float) -> float: ...
@overload
def retrievability(storage: FloatArray, elapsed_us: FloatArray) -> FloatArray: ...
def retrievability(storage: Any, elapsed_us: Any) -> Any:
    """Retrieval strength ``elapsed_us`` (>= 0) after the last observation:
    ``FLOOR + (1 - FLOOR) * 0.5 ** (elapsed / (HALF_LIFE_US * storage))``.

    1.0 at the moment of observation, falling toward ``FLOOR`` and never below it; a
    higher storage strength stretches the half-life (the new theory of disuse).
    """
    return FLOOR + (1.0 - FLOOR) * 0.5 ** (elapsed_us / (HALF_LIFE_US * storage))


def reinforced_storage(storage: float, retrieval: float) -> float:
    """Storage strength after one more observation made while retrieval strength is
    ``retrieval``: the gain is inversely proportional to it (the spacing effect), so
    re-meeting a nearly forgotten fact teaches ten times what re-meeting a fresh one does.
    """
    return storage + SPACING_GAIN / max(retrieval, FLOOR)
