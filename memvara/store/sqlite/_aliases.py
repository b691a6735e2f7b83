"""Learned entity aliases: recording them, reading them back, and re-filing an owner's
claims under the entity an alias names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._domain.model import Claim, Scope
from ._core import StoreCore
from ._rows import CLAIM_COLUMNS, decode_claim

__all__ = ["Aliases"]

_REKEY_CHUNK = 400
"""Aliases re-filed by one statement in ``rekey_subjects`` (2,003 bound values)."""


class _DryRun(Exception):
    """Raised inside a transaction to roll back a change that was only being tried."""


class Aliases(StoreCore):
    """``learn_alias``, ``aliases``, ``alias_owners``, ``rekey_subjects`` and
    ``entity_surfaces``."""

    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record an alias for ``owner``; see ``Store.learn_alias``."""
        with self._writing() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO entity_aliases"
                " (s_tenant, s_user, alias_key, entity_key, learned_at, via)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (owner.tenant or "", owner.user or "", alias_key, entity_key, at, via),
            )

    def aliases(self, owner: Scope) -> dict[str, str]:
        """The aliases learned for ``owner``; see ``Store.aliases``."""
        return dict(self._query(
            "SELECT alias_key, entity_key FROM entity_aliases WHERE s_tenant = ? AND s_user = ?",
            [owner.tenant or "", owner.user or ""],
        ))

    def alias_owners(self) -> set[tuple[str | None, str | None]]:
        """Who has learned aliases; see ``Store.alias_owners``."""
        return {(tenant or None, user or None) for tenant, user in self._query(
            "SELECT DISTINCT s_tenant, s_user FROM entity_aliases"
        )}

    def rekey_subjects(
        self, owner: Scope, mapping: Mapping[str, str], at: int, *, dry_run: bool
    ) -> list[Claim]:
        """Re-file claims under learned entities; see ``Store.rekey_subjects``.

        One statement for each ``_REKEY_CHUNK`` aliases of the mapping, so the owner's
        entries in ``claims_slot`` are walked once a chunk: since schema 5 the index is
        led by the scope, and a subject key without its agent and session is no prefix
        of it. A chunk binds five values an alias, within SQLite's default limit on
        bound values (32,766). The claims come back in the mapping's order, then by rowid.
        """
        if not mapping:
            return []
        olds = list(mapping)
        rows: list[Any] = []
        try:
            with self.transaction(), self._writing() as conn:
                for start in range(0, len(olds), _REKEY_CHUNK):
                    chunk = olds[start : start + _REKEY_CHUNK]
                    case = f"CASE subject_key {' '.join(['WHEN ? THEN ?'] * len(chunk))} END"
                    pairs = [value for old in chunk for value in (old, mapping[old])]
                    rows.extend(conn.execute(
                        f"UPDATE claims SET subject_key = {case}, meta = json_set("
                        "coalesce(meta, '{}'), '$.entity_backfill',"
                        f" json_object('from', subject_key, 'to', {case}, 'at', ?))"
                        f" WHERE s_user = ? AND s_tenant = ? AND subject_key IN"
                        f" ({','.join('?' * len(chunk))}) RETURNING {CLAIM_COLUMNS},"
                        " json_extract(meta, '$.entity_backfill.from')",
                        (*pairs, *pairs, at, owner.user or "", owner.tenant or "", *chunk),
                    ).fetchall())
                if dry_run:
                    raise _DryRun
        except _DryRun:
            pass
        place = {old: i for i, old in enumerate(olds)}
        rows.sort(key=lambda row: (place[row[-1]], row[0]))
        return [decode_claim(row[:-1], None) for row in rows]

    def entity_surfaces(self, owner: Scope, limit: int) -> list[str]:
        """Recent subjects and objects of ``owner``; see ``Store.entity_surfaces``."""
        rows = self._write_side_query(
            "SELECT subject, object FROM claims WHERE s_tenant = ? AND s_user = ?"
            " ORDER BY rowid DESC LIMIT ?", [owner.tenant or "", owner.user or "", limit],
        )
        return list(dict.fromkeys(surface for pair in rows for surface in pair))[:limit]
