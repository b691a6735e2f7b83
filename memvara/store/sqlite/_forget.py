"""``erase_subject``: a subject erased from a scope's subtree, with what it reached.

One transaction finds the claims about the subject or naming it as the object, then
(repeatedly) the claims citing any of them as a source; erases them, the archived ones
too, the turns only they cited, the owner's aliases of the subject, the reviews and
evidence of its slots and of it as a value; replaces each name in every other turn
and every other claim of the subtree (``_domain/erasure.scrub``: text, metadata,
sources); clears other rows' references to the erased ids (an id carries a digest of
its claim's content); writes the tombstone; and, like ``erase_claim``, zeroes the vectors, merges the text indexes and
truncates the write-ahead log once it commits.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from ..._domain.erasure import Scrubber, distinct_names
from ..._domain.model import Scope
from ..._errors import StoreError
from .._governance import SubjectErasure, Tombstone
from .._review_rows import ground_echo
from .._scrubbed_claims import mended_scope, scrubbed_columns, scrubbed_scope
from .._waiting_marks import MARKS, Mark, mark_changes, spoken_by
from . import _sql
from ._episodes import content_hash
from ._erasure import Erasure
from ._log import note

__all__ = ["Forgetting"]

_PICKED = "temp.mv_forget_picked"


class Forgetting(Erasure):
    """``erase_subject`` and the tombstones."""

    def erase_subject(
        self, scope: Scope, keys: Sequence[str], names: Sequence[str], tombstone: Tombstone,
    ) -> SubjectErasure | None:
        """Erase a subject from ``scope``'s subtree; see ``ForgetStore``."""
        where, params = _sql.scope_subtree(scope)
        owned, owner_params = _alias_subtree(scope)
        marks = ",".join("?" * len(keys))
        named = f"(subject_key IN ({marks}) OR object_key IN ({marks}))"
        with self._writing() as conn:
            self._index_all(conn)  # every row under the watermarks: the triggers see them
            conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_PICKED[5:]} (rowid INTEGER PRIMARY KEY)")
            conn.execute(f"DELETE FROM {_PICKED}")
            picked = f"(SELECT rowid FROM {_PICKED})"
            grew = conn.execute(f"INSERT INTO {_PICKED} SELECT rowid FROM claims WHERE {where}"
                                f" AND {named}", [*params, *keys, *keys]).rowcount
            archived_list = [r[0] for r in conn.execute(
                f"SELECT id FROM claims_archive WHERE {where} AND {named}", [*params, *keys, *keys])]
            archived_ids = json.dumps(archived_list)
            grew = grew or len(archived_list)  # an archived claim alone has derivations too
            while grew:  # what was derived from them: claims citing an erased claim
                grew = conn.execute(
                    f"INSERT OR IGNORE INTO {_PICKED} SELECT s.claim_rowid FROM claim_sources s"
                    f" JOIN claims c ON c.rowid = s.claim_rowid WHERE {_sql_alias(where)}"
                    f" AND (s.source IN (SELECT id FROM claims WHERE rowid IN {picked})"
                    " OR s.source IN (SELECT value FROM json_each(?)))"
                    f" AND s.claim_rowid NOT IN {picked}", [*params, archived_ids]).rowcount
            found = set(names)
            for table in ("claims", "claims_archive"):
                found.update(r[0] for r in conn.execute(
                    f"SELECT subject FROM {table} WHERE {where} AND subject_key IN ({marks})"
                    f" UNION SELECT object FROM {table} WHERE {where} AND object_key IN ({marks})",
                    [*params, *keys, *params, *keys]))
            every = distinct_names(found)
            scrubber = Scrubber(every)
            claim_ids = [r[0] for r in conn.execute(
                f"SELECT id FROM claims WHERE rowid IN {picked} ORDER BY rowid")]
            cited = {r[0] for r in conn.execute(
                f"SELECT source FROM claim_sources WHERE claim_rowid IN {picked}")}
            cited.update(r[0] for r in conn.execute(
                f"SELECT s.value FROM claims_archive a, json_each(a.sources) s WHERE {where}"
                f" AND {named} AND a.sources IS NOT NULL", [*params, *keys, *keys]))
            waiting = self._marks(conn, scope)
            cited.update(spoken_by(waiting, keys))  # its words, waiting
            wanted = json.dumps(sorted(cited))
            cited -= {r[0] for r in conn.execute(  # a turn another claim still cites stays
                f"SELECT source FROM claim_sources WHERE claim_rowid NOT IN {picked}"
                " AND source IN (SELECT value FROM json_each(?))"
                " UNION SELECT s.value FROM claims_archive a, json_each(a.sources) s"
                " WHERE a.sources IS NOT NULL AND a.id NOT IN (SELECT value FROM json_each(?))"
                " AND s.value IN (SELECT value FROM json_each(?))", (wanted, archived_ids, wanted))}
            episode_ids = [r[0] for r in conn.execute(
                f"SELECT id FROM episodes WHERE {where} AND id IN (SELECT value FROM json_each(?))"
                " ORDER BY rowid", [*params, json.dumps(sorted(cited))])]
            n_turns, turn_slots = self._delete_episodes(
                conn, f"{where} AND id IN (SELECT value FROM json_each(?))",
                [*params, json.dumps(episode_ids)])
            claim_slots = [r[0] for r in conn.execute(
                f"DELETE FROM claims WHERE rowid IN {picked} RETURNING vec_slot")]
            archived = conn.execute(
                f"DELETE FROM claims_archive WHERE {where} AND {named} RETURNING vec_slot, id",
                [*params, *keys, *keys]).fetchall()
            self._drop_references(conn, [*claim_ids, *(r[1] for r in archived)])
            aliases = conn.execute(
                f"DELETE FROM entity_aliases WHERE {owned} AND (alias_key IN ({marks})"
                f" OR entity_key IN ({marks}))", [*owner_params, *keys, *keys]).rowcount
            weighed = sum(  # they hold its name, the values, the grounds
                conn.execute(f"DELETE FROM {table} WHERE {where} AND {named}",
                             [*params, *keys, *keys]).rowcount for table in ("reviews", "evidence"))
            self._scrub_grounds(conn, where, params, scrubber)
            erased_turns = set(episode_ids)
            self._scrub_marks(conn, [m for m in waiting if m[0] not in erased_turns], keys, scrubber)
            scrubbed, scrubbed_slots = self._scrub_turns(conn, where, params, scrubber)
            mentions, mention_slots = self._scrub_claims(conn, where, params, scrubber)
            erased = {
                "claims": len(claim_slots), "archived": len(archived), "episodes_erased": n_turns,
                "episodes_scrubbed": scrubbed, "claims_scrubbed": mentions, "aliases": aliases,
            }
            if not (weighed or any(erased.values())):
                return None  # nothing names it, not even a turn: nothing is written
            conn.execute(
                "INSERT INTO tombstones (id, at, reason, requested_by, subject_digest, scope,"
                " erased, targets) VALUES (?, ?, ?, ?, ?, ?, ?, '{}')",
                (tombstone.id, tombstone.at, scrubber(tombstone.reason),
                 scrubber(tombstone.requested_by), tombstone.subject_digest,
                 scrubbed_scope(scope, scrubber),
                 json.dumps(erased, sort_keys=True)))
            note(conn, "tombstone", {"id": tombstone.id, "subject": tombstone.subject_digest, **erased})
            self._zero_vectors("claims", [s for s in claim_slots if s is not None]
                               + [r[0] for r in archived if r[0] is not None] + mention_slots)
            self._zero_vectors("episodes", turn_slots + scrubbed_slots)
            self._scrub(conn, ["claims_fts", "episodes_fts"])
        return SubjectErasure(erased, tuple(claim_ids), tuple(episode_ids), every)

    def purge(self, scope: Scope) -> dict[str, int]:
        """``Erasure.purge``, and the scope's archived claims, reviews and evidence with it
        in the same transaction (they hold its text: a purge leaves nothing of the scope
        to read or restore)."""
        where, params = _sql.scope_subtree(scope)
        with self._writing() as conn:
            counts = super().purge(scope)
            slots = [r[0] for r in conn.execute(
                f"DELETE FROM claims_archive WHERE {where} RETURNING vec_slot", params).fetchall()]
            gone: dict[str, object] = {"archived": len(slots), **{table: conn.execute(
                f"DELETE FROM {table} WHERE {where}", params).rowcount for table in ("reviews", "evidence")}}
            if any(gone.values()):  # the log's triggers see the claims table alone
                note(conn, "purge", gone)
            vectors = [s for s in slots if s is not None]
            self._zero_vectors("claims", vectors)
        return {**counts, "claims": counts["claims"] + len(slots),
                "embeddings": counts["embeddings"] + len(vectors)}

    def _scrub_grounds(
        self, conn: sqlite3.Connection, where: str, params: list[object], scrubber: Scrubber,
    ) -> None:
        """Replace the subject's names in the grounds of the subtree's other evidence (a ground is any
        string naming a source: a URL or a title may hold the name); a ground that then
        equals another of its value's goes (``ground_echo``)."""
        rows = conn.execute(f"SELECT rowid, ground FROM evidence WHERE {where}", params).fetchall()
        for rowid, old in rows:
            if (new := scrubber(old)) != old:
                conn.execute(ground_echo("?"), (rowid, new))
                conn.execute("UPDATE evidence SET ground = ? WHERE rowid = ?", (new, rowid))

    @staticmethod
    def _marks(conn: sqlite3.Connection, scope: Scope) -> list[Mark]:
        """The marks of the subtree's waiting turns that hold text (``Mark``)."""
        where, params = _sql.scope_subtree(scope, "e.")
        return conn.execute(
            "SELECT e.id, b.episode_rowid, b.speaker, b.meta FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {where} AND {MARKS}", params).fetchall()

    @staticmethod
    def _scrub_marks(
        conn: sqlite3.Connection, marks: list[Mark], keys: Sequence[str], scrubber: Scrubber,
    ) -> None:
        """The marks of turns left: one the subject said goes, the others lose its names."""
        dropped, changed = mark_changes(marks, keys, scrubber)
        conn.executemany("DELETE FROM extraction_backlog WHERE episode_rowid = ?", [(r,) for r in dropped])
        conn.executemany("UPDATE extraction_backlog SET speaker = ?, meta = ? WHERE episode_rowid = ?",
                         changed)

    def _scrub_turns(
        self, conn: sqlite3.Connection, where: str, params: list[object], scrubber: Scrubber,
    ) -> tuple[int, list[int]]:
        """Replace the subject's names in every turn of the subtree that holds one: text, index
        entry and content digest; the old vector goes (it encoded the name). Every turn
        of the subtree is read: a name may be written with accents or punctuation its
        folded key lacks ("Zoë" for "zoe"), which no ``LIKE`` finds; ``scrub`` decides."""
        rows = conn.execute(
            f"SELECT rowid, content, vec_slot FROM episodes WHERE {where}", params).fetchall()
        changed = [(rowid, old, scrubber(old), slot) for rowid, old, slot in rows]
        changed = [c for c in changed if c[2] != c[1]]
        conn.executemany("INSERT INTO episodes_fts (episodes_fts, rowid, content)"
                         " VALUES ('delete', ?, ?)", [(c[0], c[1]) for c in changed])
        conn.executemany("UPDATE episodes SET content = ?, content_hash = ? WHERE rowid = ?",
                         [(c[2], content_hash(c[2]), c[0]) for c in changed])
        conn.executemany("INSERT INTO episodes_fts (rowid, content) VALUES (?, ?)",
                         [(c[0], c[2]) for c in changed])
        return len(changed), [c[3] for c in changed if c[3] is not None]

    def _scrub_claims(
        self, conn: sqlite3.Connection, where: str, params: list[object], scrubber: Scrubber,
    ) -> tuple[int, list[int]]:
        """Replace the subject's names in the text, metadata and sources of every claim of the
        subtree left, archived ones too (``scrubbed_columns``): how many changed, and the
        vector slots of those whose text did (the vector encoded it). The update trigger
        indexes a changed text again; the source index follows the sources."""
        changed, slots = 0, []
        for table in ("claims", "claims_archive"):
            rows = conn.execute(f"SELECT rowid, text, meta, sources, vec_slot FROM {table}"
                                f" WHERE {where}", params).fetchall()
            for rowid, text, meta, sources, slot in rows:
                if (new := scrubbed_columns(text, meta, sources, scrubber)) is None:
                    continue
                changed += 1
                conn.execute(f"UPDATE {table} SET text = ?, meta = ?, sources = ? WHERE rowid = ?",
                             (*new, rowid))
                if table == "claims" and new[2] != sources:
                    conn.execute("DELETE FROM claim_sources WHERE claim_rowid = ? AND source IN"
                                 " (SELECT value FROM json_each(?))", (rowid, sources))
                    conn.execute("INSERT OR IGNORE INTO claim_sources (source, claim_rowid)"
                                 " SELECT value, ? FROM json_each(?)", (rowid, new[2]))
                if new[0] != text and slot is not None:
                    slots.append(slot)
        return changed, slots

    def tombstones(self, subject_digest: str | None = None) -> list[dict[str, object]]:
        """Every tombstone (of one subject digest), oldest first; see ``ForgetStore``."""
        sql = ("SELECT id, at, reason, requested_by, subject_digest, scope, erased, targets"
               " FROM tombstones")
        rows = self._query(sql + (" WHERE subject_digest = ?" if subject_digest else "")
                           + " ORDER BY rowid", [subject_digest] if subject_digest else [])
        return [{"id": r[0], "at": r[1], "reason": r[2], "requested_by": r[3],
                 "subject_digest": r[4], "scope": mended_scope(json.loads(r[5])), "erased": json.loads(r[6]),
                 "targets": json.loads(r[7])} for r in rows]

    def confirm_targets(self, tombstone_id: str, targets: dict[str, bool]) -> None:
        """Record which outside targets confirmed; see ``ForgetStore``."""
        with self._writing() as conn:
            (held,) = conn.execute("SELECT targets FROM tombstones WHERE id = ?",
                                   (tombstone_id,)).fetchone()
            merged = {**json.loads(held), **targets}
            conn.execute("UPDATE tombstones SET targets = ? WHERE id = ?",
                         (json.dumps(merged, sort_keys=True), tombstone_id))
            note(conn, "targets", {"tombstone": tombstone_id, **{k: bool(v) for k, v in targets.items()}})


    def restore_tombstones(self, tombstones: Sequence[Mapping[str, Any]]) -> int:
        """Put exported tombstones back; see ``GovernanceTransferStore``."""
        with self._writing() as conn:
            for t in tombstones:
                held = conn.execute("SELECT 1 FROM tombstones WHERE id = ?", (t["id"],)).fetchone()
                if held is not None:
                    raise StoreError(f"tombstone {t['id']!r:.60} is in this store already")
            conn.executemany(
                "INSERT INTO tombstones (id, at, reason, requested_by, subject_digest, scope,"
                " erased, targets) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(t["id"], t["at"], t["reason"], t["requested_by"], t["subject_digest"],
                  json.dumps(t["scope"], sort_keys=True), json.dumps(t["erased"], sort_keys=True),
                  json.dumps(t["targets"], sort_keys=True)) for t in tombstones])
        return len(tombstones)


def _sql_alias(where: str) -> str:
    """``scope_subtree``'s condition on the claims table aliased ``c``."""
    for column in _sql.SCOPE_COLUMNS:
        where = where.replace(column, f"c.{column}")
    return where


def _alias_subtree(scope: Scope) -> tuple[str, list[object]]:
    """Aliases are owned at ``(tenant, user)``: a scope set below the user owns none."""
    if _sql.deepest_level(scope) > 1:
        return "0", []
    return _sql.scope_subtree(Scope(scope.tenant, scope.user))
