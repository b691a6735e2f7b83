"""Turns (episodes) on the write path: inserting them, reading one back, and the
duplicate checks a write makes before it stores a turn again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ..._domain.model import Episode, Scope
from ..._domain.time import from_micros, to_micros
from . import _sql
from ._core import UNEMBEDDED_EPISODES, StoreCore
from ._rows import new_id, scope_levels, scope_of

__all__ = ["Episodes", "content_hash"]


def content_hash(text: str) -> str:
    """A stable digest of a turn's content (dedupe key; never decides an order alone)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class Episodes(StoreCore):
    """Turns in, and the write path's reads of them."""

    def insert_episodes(
        self, episodes: Sequence[Episode], vectors: npt.NDArray[np.float32] | None
    ) -> list[Episode]:
        """Insert raw turns; see ``Store.insert_episodes``."""
        if not episodes:
            return []
        with self._writing() as conn:
            last, indexed, slots = self._reserve(conn, "episodes", len(episodes), vectors)
            rows: list[tuple[object, ...]] = []
            stored: list[Episode] = []
            for offset, (episode, slot) in enumerate(zip(episodes, slots), start=1):
                rowid = last + offset
                eid = episode.id or new_id("e", rowid, episode.scope, episode.role,
                                            episode.content, episode.ts, episode.recorded_at)
                recorded = to_micros(episode.recorded_at, "recorded_at")
                ts = recorded if episode.ts is None else to_micros(episode.ts, "ts")
                rows.append((rowid, eid, *scope_levels(episode.scope),
                             episode.role, episode.content, ts, recorded,
                             content_hash(episode.content), slot))
                stored.append(replace(episode, id=eid, ts=from_micros(ts)))
            conn.executemany(
                "INSERT INTO episodes (rowid, id, s_tenant, s_user, s_agent, s_session, role,"
                " content, ts, recorded_at, content_hash, vec_slot)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._log_inserted("turns_added", range(last + 1, last + 1 + len(rows)))
            if vectors is None:  # where reads look for turns with no vector
                conn.execute(
                    "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                    " DO UPDATE SET value = min(CAST(value AS INTEGER), excluded.value)",
                    (UNEMBEDDED_EPISODES, last + 1))
            self._index_text(conn, "episodes", indexed, last + len(rows), force=False)
            return stored

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        """The episode if visible from ``scope``; see ``Store.get_episode``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(
            "SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
            f" FROM episodes WHERE id = ? AND {where}", [episode_id, *params]
        )
        if not rows:
            return None
        eid, tenant, user, agent, session, role, content, ts, recorded = rows[0]
        return Episode(content=content, role=role, ts=from_micros(ts),
                       recorded_at=from_micros(recorded),
                       scope=scope_of(tenant, user, agent, session), id=eid)

    def copies_of(
        self, scope: Scope, contents: Collection[str]
    ) -> dict[str, list[tuple[str, int]]]:
        """Turns at ``scope`` holding each content; see ``Store.copies_of``."""
        wanted = {content_hash(c): c for c in contents}
        where, params = _sql.scope_exact(scope)
        found: dict[str, list[tuple[str, int]]] = {}
        hashes = list(wanted)
        for start in range(0, len(hashes), 400):
            chunk = hashes[start : start + 400]
            for digest, content, role, ts in self._write_side_query(
                f"SELECT content_hash, content, role, ts FROM episodes WHERE content_hash IN"
                f" ({','.join('?' * len(chunk))}) AND {where}", [*chunk, *params]
            ):
                if wanted.get(digest) == content:
                    found.setdefault(content, []).append((role, int(ts)))
        return found

    def recent_turns(
        self, scope: Scope, limit: int
    ) -> tuple[list[tuple[str, int]], npt.NDArray[np.float32]]:
        """Recent turns' roles, times and vectors; see ``Store.recent_turns``."""
        where, params = _sql.scope_exact(scope)
        # Read once per scope a process writes to (the write path keeps them after). A
        # turn stored without a vector reads as zeros, which resembles nothing.
        rows = self._write_side_query(
            f"SELECT rowid, role, ts FROM episodes WHERE {where} ORDER BY rowid DESC LIMIT ?",
            [*params, limit],
        )
        stamps = [(str(role), int(ts)) for _, role, ts in rows]
        return stamps, self._vectors["episodes"].read([r[0] for r in rows])
