"""``erase_subject`` on PostgreSQL: a subject erased from a scope's subtree, with what it
reached, as the SQLite store does it (``store/sqlite/_forget.py``).

One transaction finds the claims about the subject or naming it as the object, then
(repeatedly) the claims citing any of them as a source; erases them, the archived ones
too, the turns only they cited, the owner's aliases of the subject, the reviews and
evidence of its slots and of it as a value; replaces each name in every other turn and
every other claim of the subtree (``_domain/erasure.scrub``: a claim's text, metadata
and sources; a changed text's tokens and vector redone); clears other rows' references
to the erased ids; and writes the tombstone.
Once it commits, ``VACUUM`` reclaims the dead row versions that still held the text
(docs/postgres.md says what the server keeps beyond its tables).
"""

from __future__ import annotations

import json
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
from ._archive import Archive
from ._writes import content_hash, slot_lock

__all__ = ["Forgetting"]

FORGET_DDL = (
    """
    CREATE TABLE tombstones (
        rowid BIGSERIAL PRIMARY KEY, id TEXT COLLATE "C" NOT NULL UNIQUE, at BIGINT NOT NULL,
        reason TEXT NOT NULL, requested_by TEXT NOT NULL, subject_digest TEXT NOT NULL,
        scope TEXT NOT NULL, erased TEXT NOT NULL, targets TEXT NOT NULL
    )
    """,
    "CREATE INDEX tombstones_subject ON tombstones (subject_digest)",
)

_SCRUBBED = ("claims_archive", "entity_aliases", "tombstones", "reviews", "evidence")
"""Tables an erasure leaves dead versions holding the text in, besides ``Upkeep``'s."""


def _alias_subtree(scope: Scope) -> tuple[str, list[object]]:
    """Aliases are owned at ``(tenant, user)``: a scope set below the user owns none."""
    if scope.agent is not None or scope.session is not None:
        return "FALSE", []
    return _sql.scope_subtree(Scope(scope.tenant, scope.user))


class Forgetting(Archive):
    """``erase_subject`` and the tombstones."""

    def _on_open(self, writer: Any) -> None:
        super()._on_open(writer)
        if not self._read_only:
            self._ensure_tables(writer, "tombstones", FORGET_DDL)

    def _marks(self, conn: Any, scope: Scope) -> list[Mark]:
        """The marks of the subtree's waiting turns that hold text (``Mark``)."""
        where, params = _sql.scope_subtree(scope, "e.")
        return [tuple(r) for r in self._exec(conn, (
            "SELECT e.id, b.episode_rowid, b.speaker, b.meta FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {where} AND {MARKS}"), params).fetchall()]

    def erase_subject(
        self, scope: Scope, keys: Sequence[str], names: Sequence[str], tombstone: Tombstone,
    ) -> SubjectErasure | None:
        """Erase a subject from ``scope``'s subtree; see ``ForgetStore``."""
        where, params = _sql.scope_subtree(scope)
        keys = list(keys)
        named = "(subject_key = ANY(%s) OR object_key = ANY(%s))"
        with self._writing() as conn:
            def ids(sql: str, values: Sequence[object]) -> list[Any]:
                return [r[0] for r in self._exec(conn, sql, values).fetchall()]

            # a writer settling one of these slots reads it under the slot's lock, then ends
            # or retires what it read: lock the slots first, as it does, then the rows
            self._lock_slots(conn, [slot_lock(self._schema, r[:4], r[4:]) for r in self._exec(
                conn, "SELECT DISTINCT s_tenant, s_user, s_agent, s_session, subject_key,"
                f" predicate FROM claims WHERE {where} AND {named}", [*params, keys, keys])])
            picked = ids(f"SELECT rowid FROM claims WHERE {where} AND {named} ORDER BY rowid"
                         " FOR UPDATE", [*params, keys, keys])
            archived = self._exec(conn, (
                f"SELECT rowid, id, sources FROM claims_archive WHERE {where} AND {named}"
                " ORDER BY rowid FOR UPDATE"), [*params, keys, keys]).fetchall()
            archived_ids = [r[1] for r in archived]
            frontier = ids("SELECT id FROM claims WHERE rowid = ANY(%s)", [picked]) + archived_ids
            c_where, _ = _sql.scope_subtree(scope, "c.")
            while frontier:  # what was derived from them: claims citing an erased claim
                more = ids(
                    "SELECT DISTINCT s.claim_rowid FROM claim_sources s JOIN claims c ON"
                    f" c.rowid = s.claim_rowid WHERE {c_where} AND s.source = ANY(%s)"
                    " AND NOT s.claim_rowid = ANY(%s)", [*params, frontier, picked])
                picked += more
                frontier = ids("SELECT id FROM claims WHERE rowid = ANY(%s)", [more])
            found = set(names)
            for table in ("claims", "claims_archive"):
                found.update(ids(
                    f"SELECT subject FROM {table} WHERE {where} AND subject_key = ANY(%s)"
                    f" UNION SELECT object FROM {table} WHERE {where} AND object_key = ANY(%s)",
                    [*params, keys, *params, keys]))
            every = distinct_names(found)
            scrubber = Scrubber(every)
            claim_ids = ids("SELECT id FROM claims WHERE rowid = ANY(%s) ORDER BY rowid", [picked])
            cited = set(ids("SELECT source FROM claim_sources WHERE claim_rowid = ANY(%s)",
                            [picked]))
            cited.update(s for r in archived if r[2] for s in json.loads(r[2]))
            waiting = self._marks(conn, scope)
            cited.update(spoken_by(waiting, keys))  # its words, waiting
            cited -= set(ids(  # a turn another claim still cites stays
                "SELECT source FROM claim_sources WHERE NOT claim_rowid = ANY(%s)"
                " AND source = ANY(%s) UNION SELECT s FROM claims_archive a,"
                " json_array_elements_text(a.sources::json) s WHERE a.sources IS NOT NULL"
                " AND NOT a.id = ANY(%s) AND s = ANY(%s)",
                [picked, sorted(cited), archived_ids, sorted(cited)]))
            episode_ids = ids(f"SELECT id FROM episodes WHERE {where} AND id = ANY(%s)"
                              " ORDER BY rowid", [*params, sorted(cited)])
            n_turns, _ = self._delete(conn, "episodes", f"{where} AND id = ANY(%s)",
                                      [*params, episode_ids])
            n_claims, _ = self._delete(conn, "claims", "rowid = ANY(%s)", [picked])
            self._exec(conn, "DELETE FROM claims_archive WHERE rowid = ANY(%s)",
                       [[r[0] for r in archived]])
            self._drop_references(conn, [*claim_ids, *archived_ids])
            owned, owner_params = _alias_subtree(scope)
            aliases = self._exec(conn, (
                f"DELETE FROM entity_aliases WHERE {owned} AND (alias_key = ANY(%s)"
                " OR entity_key = ANY(%s))"), [*owner_params, keys, keys]).rowcount
            weighed = sum(  # they hold its name, the values, the grounds
                self._exec(conn, f"DELETE FROM {table} WHERE {where} AND {named}",
                           [*params, keys, keys]).rowcount for table in ("reviews", "evidence"))
            self._scrub_grounds(conn, where, params, scrubber)
            erased_turns = set(episode_ids)
            dropped, changed = mark_changes([m for m in waiting if m[0] not in erased_turns], keys, scrubber)
            self._exec(conn, "DELETE FROM extraction_backlog WHERE episode_rowid = ANY(%s)", [dropped])
            for new_speaker, new_meta, rowid in changed:
                self._exec(conn, "UPDATE extraction_backlog SET speaker = %s, meta = %s"
                           " WHERE episode_rowid = %s", [new_speaker, new_meta, rowid])
            scrubbed = self._scrub_turns(conn, where, params, scrubber)
            erased = {
                "claims": n_claims, "archived": len(archived), "episodes_erased": n_turns,
                "episodes_scrubbed": scrubbed,
                "claims_scrubbed": sum(self._scrub_claims(conn, table, where, params, scrubber)
                                       for table in ("claims", "claims_archive")),
                "aliases": aliases,
            }
            if not (weighed or any(erased.values())):
                return None  # nothing names it, not even a turn: nothing is written
            self._exec(conn, (
                "INSERT INTO tombstones (id, at, reason, requested_by, subject_digest, scope,"
                " erased, targets) VALUES (%s, %s, %s, %s, %s, %s, %s, '{}')"),
                [tombstone.id, tombstone.at, scrubber(tombstone.reason),
                 scrubber(tombstone.requested_by), tombstone.subject_digest,
                 scrubbed_scope(scope, scrubber),
                 json.dumps(erased, sort_keys=True)])
            self.log_note("tombstone", id=tombstone.id, subject=tombstone.subject_digest, **erased)
            self._after_commit.append(self._vacuum_scrubbed)
        return SubjectErasure(erased, tuple(claim_ids), tuple(episode_ids), every)

    def purge(self, scope: Scope) -> dict[str, int]:
        """``Upkeep.purge``, and the scope's archived claims, reviews and evidence with it
        in the same transaction (they hold its text: a purge leaves nothing of the scope
        to read or restore)."""
        where, params = _sql.scope_subtree(scope)
        with self._writing() as conn:
            counts = super().purge(scope)
            archived = self._exec(conn, f"DELETE FROM claims_archive WHERE {where}"
                                  " RETURNING emb IS NOT NULL", params).fetchall()
            gone = {"archived": len(archived), **{table: self._exec(
                conn, f"DELETE FROM {table} WHERE {where}", params).rowcount
                for table in ("reviews", "evidence")}}
            if any(gone.values()):  # the log's triggers see the claims table alone
                self.log_note("purge", **gone)
                self._after_commit.append(self._vacuum_scrubbed)
        return {**counts, "claims": counts["claims"] + len(archived),
                "embeddings": counts["embeddings"] + sum(1 for r in archived if r[0])}

    def _scrub_grounds(self, conn: Any, where: str, params: list[object],
                       scrubber: Scrubber) -> None:
        """Replace the subject's names in the grounds of the subtree's other evidence (a ground is any
        string naming a source: a URL or a title may hold the name); a ground that then
        equals another of its value's goes (``ground_echo``)."""
        rows = self._exec(conn, f"SELECT rowid, ground FROM evidence WHERE {where}"
                          " ORDER BY rowid FOR UPDATE", params).fetchall()
        for rowid, old in rows:
            if (new := scrubber(old)) != old:
                self._exec(conn, ground_echo("%s"), [rowid, new])
                self._exec(conn, "UPDATE evidence SET ground = %s WHERE rowid = %s", [new, rowid])

    def _scrub_turns(self, conn: Any, where: str, params: list[object],
                     scrubber: Scrubber) -> int:
        """Replace the subject's names in every turn of the subtree that holds one: text, tokens and
        content digest; the old vector goes (it encoded the name). Every turn of the
        subtree is read, unlocked: a name may be written with accents or punctuation its
        folded key lacks ("Zoë" for "zoe"), which no ``ILIKE`` finds; the turns ``scrub``
        changes are then locked and read again."""
        every = self._exec(conn, f"SELECT rowid, content FROM episodes WHERE {where}",
                           params).fetchall()
        named = [rowid for rowid, old in every if scrubber(old) != old]
        rows = self._exec(conn, "SELECT rowid, content, tokens FROM episodes"
                          " WHERE rowid = ANY(%s) ORDER BY rowid FOR UPDATE",
                          [named]).fetchall() if named else []
        changed = [(rowid, scrubber(old), tokens) for rowid, old, tokens in rows
                   if scrubber(old) != old]
        rowids = [c[0] for c in changed]
        self._unindex(conn, "episodes", rowids, sum(int(c[2]) for c in changed))
        lengths = self._index(conn, "episodes", rowids, [c[1] for c in changed])
        self._many(conn, "UPDATE episodes SET content = %s, content_hash = %s, tokens = %s,"
                   " emb = NULL WHERE rowid = %s",
                   [(text, content_hash(text), length, rowid)
                    for (rowid, text, _), length in zip(changed, lengths)])
        return len(changed)

    def _scrub_claims(self, conn: Any, table: str, where: str, params: list[object],
                      scrubber: Scrubber) -> int:
        """Replace the subject's names in the text, metadata and sources of every claim of the
        subtree left in ``table`` (``scrubbed_columns``): read unlocked, then the changed
        rows locked and read again, as ``_scrub_turns`` does. A changed text gets its
        tokens redone and loses its vector (a live claim's is computed again, as any
        waiting claim's is); the source index follows the sources."""
        every = self._exec(conn, f"SELECT rowid, text, meta, sources FROM {table} WHERE {where}",
                           params).fetchall()
        named = [r[0] for r in every if scrubbed_columns(r[1], r[2], r[3], scrubber) is not None]
        rows = self._exec(conn, f"SELECT rowid, text, meta, sources, tokens FROM {table}"
                          " WHERE rowid = ANY(%s) ORDER BY rowid FOR UPDATE",
                          [named]).fetchall() if named else []
        changed = [(r, new) for r in rows
                   if (new := scrubbed_columns(r[1], r[2], r[3], scrubber)) is not None]
        texts = [(r[0], new[0], int(r[4])) for r, new in changed if new[0] != r[1]]
        if table == "claims":  # the archive's text is indexed again when it is restored
            self._unindex(conn, table, [t[0] for t in texts], sum(t[2] for t in texts))
            lengths = self._index(conn, table, [t[0] for t in texts], [t[1] for t in texts])
        else:
            lengths = [sum(found.values()) for found in self._tokenizer.counts([t[1] for t in texts])]
        tokens = {t[0]: length for t, length in zip(texts, lengths)}
        self._many(conn, f"UPDATE {table} SET text = %s, meta = %s, sources = %s, tokens = %s,"
                   " emb = CASE WHEN %s THEN NULL ELSE emb END WHERE rowid = %s",
                   [(*new, tokens.get(r[0], r[4]), r[0] in tokens, r[0]) for r, new in changed])
        moved = [r[0] for r, new in changed if new[2] != r[3]]
        if table == "claims" and moved:
            self._exec(conn, "DELETE FROM claim_sources WHERE claim_rowid = ANY(%s)", [moved])
            self._exec(conn, "INSERT INTO claim_sources (source, claim_rowid) SELECT DISTINCT s,"
                       " c.rowid FROM claims c, json_array_elements_text(c.sources::json) s"
                       " WHERE c.rowid = ANY(%s)", [moved])
        return len(changed)

    def _vacuum_scrubbed(self) -> None:
        """Reclaim the dead versions of the archive, aliases and tombstones an erasure
        left (``Upkeep._vacuum`` does the rest)."""
        with self._lock:
            for table in _SCRUBBED:
                self._exec(self._writer, f"VACUUM {table}")

    def tombstones(self, subject_digest: str | None = None) -> list[dict[str, object]]:
        """Every tombstone (of one subject digest), oldest first; see ``ForgetStore``."""
        rows = self._query(
            "SELECT id, at, reason, requested_by, subject_digest, scope, erased, targets"
            " FROM tombstones WHERE %s::text IS NULL OR subject_digest = %s ORDER BY rowid",
            [subject_digest, subject_digest])
        return [{"id": r[0], "at": int(r[1]), "reason": r[2], "requested_by": r[3],
                 "subject_digest": r[4], "scope": mended_scope(json.loads(r[5])), "erased": json.loads(r[6]),
                 "targets": json.loads(r[7])} for r in rows]

    def confirm_targets(self, tombstone_id: str, targets: dict[str, bool]) -> None:
        """Record which outside targets confirmed; see ``ForgetStore``."""
        with self._writing() as conn:
            (held,) = self._exec(conn, "SELECT targets FROM tombstones WHERE id = %s FOR UPDATE",
                                 [tombstone_id]).fetchone()
            merged = {**json.loads(held), **targets}
            self._exec(conn, "UPDATE tombstones SET targets = %s WHERE id = %s",
                       [json.dumps(merged, sort_keys=True), tombstone_id])
            self.log_note("targets", tombstone=tombstone_id,
                          **{k: bool(v) for k, v in targets.items()})

    def restore_tombstones(self, tombstones: Sequence[Mapping[str, Any]]) -> int:
        """Put exported tombstones back; see ``GovernanceTransferStore``."""
        with self._writing() as conn:
            for t in tombstones:
                if not self._exec(conn, (
                        "INSERT INTO tombstones (id, at, reason, requested_by, subject_digest,"
                        " scope, erased, targets) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT (id) DO NOTHING"),
                        [t["id"], t["at"], t["reason"], t["requested_by"], t["subject_digest"],
                         json.dumps(t["scope"], sort_keys=True),
                         json.dumps(t["erased"], sort_keys=True),
                         json.dumps(t["targets"], sort_keys=True)]).rowcount:
                    raise StoreError(f"tombstone {t['id']!r:.60} is in this store already")
        return len(tombstones)
