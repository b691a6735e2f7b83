"""Counting what a test's memory reads: how many claims each of the store's claim
listings hands back, so a test can say a call reads a few claims however many are stored."""

from __future__ import annotations

from typing import Any

import pytest

from memvara import Memvara


def claims_read(memory: Memvara, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many claims each of the store's claim listings hands back, call by call (the
    list grows as the memory reads)."""
    store, counts = memory._core.store, []
    listing = store.find_claims

    def counted(*args: Any, **kwargs: Any) -> Any:
        claims = listing(*args, **kwargs)
        counts.append(len(claims))
        return claims

    monkeypatch.setattr(store, "find_claims", counted)
    return counts
