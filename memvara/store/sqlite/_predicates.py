"""The learned schema: predicate specs persisted in the store, so a predicate the
registry learned is classified the same way the next time the file is opened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ...schema import Cardinality, PredicateSpec, Volatility
from ._core import StoreCore

__all__ = ["Predicates"]


class Predicates(StoreCore):
    """``load_predicates``, ``save_predicates`` and ``clear_predicates``."""

    def load_predicates(self) -> list[PredicateSpec]:
        """Every persisted predicate spec."""
        rows = self._query("SELECT name, cardinality, volatility, aliases FROM predicates ORDER BY name")
        return [
            PredicateSpec(name, Cardinality(card), Volatility(vol), tuple(json.loads(aliases)))
            for name, card, vol, aliases in rows
        ]

    def save_predicates(self, specs: Sequence[PredicateSpec]) -> None:
        """Persist predicate specs (insert or replace)."""
        if not specs:
            return
        with self._writing() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO predicates (name, cardinality, volatility, aliases)"
                " VALUES (?, ?, ?, ?)",
                [(s.name, s.cardinality.value, s.volatility.value, json.dumps(list(s.aliases)))
                 for s in specs],
            )

    def clear_predicates(self) -> int:
        """Forget every persisted predicate spec."""
        with self._writing() as conn:
            return len(conn.execute("DELETE FROM predicates RETURNING name").fetchall())
