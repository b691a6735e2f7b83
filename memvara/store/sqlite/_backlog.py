"""Turns waiting for extraction: the model failed on them, so ``add()`` stored them (and
whatever the rules read) and marked them here, to be read again later.

A mark holds the turn's rowid, when the model failed, the error's class name, the call's
``meta`` and, for a message that had one, its ``name`` (the speaker, whom what it says
is about): erasing a turn deletes its mark, a mark whose turn is gone is never read, and
``forget_subject`` erases the turns whose mark names the subject and scrubs the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..._domain.model import Episode, Scope
from ..._domain.time import from_micros
from .._waiting_marks import MARKS
from . import _sql
from ._core import StoreCore
from ._rows import scope_of

__all__ = ["Backlog"]


class Backlog(StoreCore):
    """``mark_unextracted``, ``unextracted_episodes``, ``clear_unextracted``."""

    def mark_unextracted(
        self, episode_ids: Sequence[str], at: int, reason: str,
        speakers: Mapping[str, str] | None = None, meta: str | None = None,
    ) -> None:
        """Mark stored turns as waiting for extraction; see ``Store.mark_unextracted``."""
        with self._writing() as conn:
            for start in range(0, len(episode_ids), 400):
                chunk = list(episode_ids[start : start + 400])
                conn.execute(
                    "INSERT OR REPLACE INTO extraction_backlog (episode_rowid, failed_at, reason, meta)"
                    f" SELECT rowid, ?, ?, ? FROM episodes WHERE id IN ({','.join('?' * len(chunk))})",
                    [at, reason, meta, *chunk],
                )
            if speakers:
                marked = set(episode_ids)
                conn.executemany(
                    "UPDATE extraction_backlog SET speaker = ? WHERE episode_rowid ="
                    " (SELECT rowid FROM episodes WHERE id = ?)",
                    [(name, eid) for eid, name in speakers.items() if eid in marked])

    def unextracted_marks(self, episode_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """Who said these waiting turns, and their call's meta; see ``Store.unextracted_marks``."""
        rows = self._write_side_query(
            "SELECT e.id, b.speaker, b.meta FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {MARKS}"
            " AND e.id IN (SELECT value FROM json_each(?))", [json.dumps(list(episode_ids))])
        return {str(eid): (speaker, meta) for eid, speaker, meta in rows}

    def unextracted_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        """The waiting turns of ``scope``'s subtree; see ``Store.unextracted_episodes``."""
        where, params = _sql.scope_subtree(scope, "e.")
        rows = self._write_side_query(
            "SELECT e.id, e.s_tenant, e.s_user, e.s_agent, e.s_session, e.role, e.content,"
            " e.ts, e.recorded_at FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {where} ORDER BY e.rowid LIMIT ?",
            [*params, limit],
        )
        return [Episode(content=content, role=role, ts=from_micros(ts),
                        recorded_at=from_micros(recorded),
                        scope=scope_of(tenant, user, agent, session), id=eid)
                for eid, tenant, user, agent, session, role, content, ts, recorded in rows]

    def clear_unextracted(self, episode_ids: Sequence[str]) -> None:
        """Unmark turns read again; see ``Store.clear_unextracted``."""
        with self._writing() as conn:
            for start in range(0, len(episode_ids), 400):
                chunk = list(episode_ids[start : start + 400])
                conn.execute(
                    "DELETE FROM extraction_backlog WHERE episode_rowid IN (SELECT rowid FROM"
                    f" episodes WHERE id IN ({','.join('?' * len(chunk))}))", chunk,
                )
