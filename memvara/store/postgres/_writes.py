"""Writes of the PostgreSQL store: claims and their closures, vectors, turns, the
extraction backlog, aliases and predicate specs.

Settling a write against its slot is safe across machines: ``slot_claims``, which the
writer calls inside its transaction before it decides anything, first takes a
transaction-scoped advisory lock per slot (in one order, so two writers never wait on
each other in a cycle). A second writer of the same slot waits there until the first
commits, then reads what it wrote (READ COMMITTED), so a single-valued slot never ends
up with two live values.
"""

from __future__ import annotations

import hashlib
import json
import operator
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Claim, Episode, Scope
from ..._domain.salience import reinforced_storage, retrievability
from ..._domain.time import from_micros, to_micros
from ..._errors import DimensionMismatchError, StoreError
from ...schema import Cardinality, PredicateSpec, Volatility
from .._waiting_marks import MARKS
from ..sqlite._rows import INSERT_COLUMNS, claim_row, claim_rowid, decode_claim, ended, new_id, retired
from ..sqlite._rows import scope_levels, scope_of, with_id
from . import _sql
from ._connect import Connections
from ._schema import TERM_TABLES
from ._text import Tokenizer

__all__ = ["CLAIM_COLUMNS", "Writes", "content_hash", "slot_lock"]

CLAIM_COLUMNS = (
    "rowid, id, s_tenant, s_user, s_agent, s_session, subject, predicate, object, polarity,"
    " valid_from, valid_to, valid_to_known_at, recorded_at, invalidated_at, invalidated_by,"
    " confidence, memory_type, text, extractor, meta, sources, observations, NULL::int,"
    " salience"
)
"""The columns ``store.sqlite._rows.decode_claim`` reads, in its order."""

_ARRAYS = (
    ("digest", "text"), ("s_tenant", "text"), ("s_user", "text"), ("s_agent", "text"),
    ("s_session", "text"), ("subject", "text"), ("subject_key", "text"), ("predicate", "text"),
    ("object", "text"), ("polarity", "int"), ("valid_from", "bigint"), ("valid_to", "bigint"),
    ("valid_to_known_at", "bigint"), ("recorded_at", "bigint"), ("invalidated_at", "bigint"),
    ("invalidated_by", "text"), ("confidence", "float8"), ("memory_type", "text"),
    ("text", "text"), ("extractor", "text"), ("meta", "text"), ("sources", "text"),
    ("observations", "int"), ("object_key", "text"), ("tokens", "int"), ("emb", "vector"),
)
"""A new claim's columns after ``rowid`` and ``id``, with their types (``digest``: the
part of the id after its rowid)."""
_COLUMNS = ", ".join(name for name, _ in _ARRAYS[1:])
_FROM_ROW = operator.itemgetter(*(INSERT_COLUMNS.index(name) for name, _ in _ARRAYS[1:-2]))
"""``claim_row``'s values of ``_ARRAYS``' columns from ``s_tenant`` to ``object_key``
(``tokens`` and ``emb`` are PostgreSQL's own), picked by name."""
_TYPED = tuple((i, {"int": int, "float8": float}[kind]) for i, (_, kind) in enumerate(_ARRAYS[1:-2])
               if kind in ("int", "float8"))
"""Where those values are numbers, and of which Python type: a parameter's type is part
of the statement psycopg prepares, so ``1`` for a confidence would plan it again."""
_INSERT_ONE = (
    # One claim, one statement (one round trip): its rowid, its row, its tokens and its
    # source links. The id is ``c<rowid>-<digest>`` (``new_claim_id``), the digest
    # computed here from the content alone. Scalars, not arrays, for the row: a
    # statement whose rows the planner cannot count from its parameters is planned
    # anew at every call (a custom plan), and this one is planned once.
    "WITH r AS (SELECT nextval('claims_rowid') AS rowid),"
    f" c AS (INSERT INTO claims (rowid, id, {_COLUMNS}) SELECT r.rowid, 'c' || r.rowid || '-' || %s, "
    + ", ".join(f"%s::{kind}" for _, kind in _ARRAYS[1:]) + " FROM r),"
    " t AS (INSERT INTO claim_terms (term, doc, tf) SELECT u.term, r.rowid, u.tf"
    " FROM r, unnest(%s::text[], %s::int[]) AS u(term, tf)),"
    " s AS (INSERT INTO claim_sources (source, claim_rowid) SELECT u.source, r.rowid"
    " FROM r, unnest(%s::text[]) AS u(source) ON CONFLICT DO NOTHING)"
    " SELECT rowid FROM r"
)
_INSERT_MANY = (
    # A batch in one statement: each column an array, the rowids taken in order.
    "WITH r AS (SELECT nextval('claims_rowid') AS rowid, i FROM generate_series(1, %s) AS i),"
    f" c AS (INSERT INTO claims (rowid, id, {_COLUMNS})"
    f" SELECT r.rowid, 'c' || r.rowid || '-' || d.digest, {_COLUMNS}"
    # vectors in binary (%b): psycopg would write a list of them as text, 30x slower
    " FROM unnest("
    + ", ".join(("%b" if kind == "vector" else "%s") + f"::{kind}[]" for _, kind in _ARRAYS) + ")"
    f" WITH ORDINALITY AS d({', '.join(name for name, _ in _ARRAYS)}, i)"
    " JOIN r USING (i) ORDER BY r.rowid),"
    " t AS (INSERT INTO claim_terms (term, doc, tf) SELECT u.term, r.rowid, u.tf"
    " FROM unnest(%s::int[], %s::text[], %s::int[]) AS u(i, term, tf) JOIN r USING (i)),"
    " s AS (INSERT INTO claim_sources (source, claim_rowid) SELECT u.source, r.rowid"
    " FROM unnest(%s::int[], %s::text[]) AS u(i, source) JOIN r USING (i)"
    " ON CONFLICT DO NOTHING)"
    " SELECT rowid FROM r ORDER BY i"
)
_LINK = "INSERT INTO claim_sources (source, claim_rowid) VALUES (%s, %s) ON CONFLICT DO NOTHING"
_EPISODE_COLUMNS = "id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"


def content_hash(text: str) -> str:
    """The SQLite store's digest of a turn's content (the duplicate check's key)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _columns(rows: Sequence[tuple[object, ...]], width: int) -> list[list[object]]:
    """``rows`` (each ``width`` long) as column lists, to send as arrays."""
    return [[row[k] for row in rows] for k in range(width)]


def episode_of(row: Sequence[Any]) -> Episode:
    """An ``Episode`` from an ``_EPISODE_COLUMNS`` row."""
    eid, tenant, user, agent, session, role, content, ts, recorded = row
    return Episode(content=content, role=role, ts=from_micros(ts),
                   recorded_at=from_micros(recorded),
                   scope=scope_of(tenant, user, agent, session), id=eid)


def slot_lock(schema: str, levels: Sequence[str], slot: Sequence[str]) -> str:
    """The key of a slot's advisory lock: its schema, scope levels, subject key and
    predicate (the lock every writer settling the slot takes, in their sorted order)."""
    return "\x1f".join((schema, *levels, *slot))


class Writes(Connections):
    """The write side of ``Store`` (see ``memvara.store.base``)."""

    def _lock_slots(self, conn: Any, locks: Collection[str]) -> None:
        """Take these slots' locks (``slot_lock`` keys) until the transaction ends, in
        sorted order: the order every writer takes them in, so none waits on another."""
        self._exec(conn, "SELECT pg_advisory_xact_lock(hashtextextended(k, 0))"
                   " FROM unnest(%s::text[]) AS k ORDER BY k", [sorted(locks)])

    def _lock_claim_slot(self, conn: Any, claim_id: str, where: str, params: Sequence[object]) -> None:
        """Inside a write: lock the slot of claim ``claim_id`` (when ``where`` sees it)
        before reading it to change it, as a writer settling that slot locks it first."""
        slot = self._exec(conn, "SELECT s_tenant, s_user, s_agent, s_session, subject_key,"
                          f" predicate FROM claims WHERE rowid = %s AND id = %s AND {where}",
                          [claim_rowid(claim_id), claim_id, *params]).fetchone()
        if slot is not None:
            self._lock_slots(conn, [slot_lock(self._schema, slot[:4], slot[4:])])

    _tokenizer: Tokenizer

    @property
    def dim(self) -> int | None:
        """The vector width this store holds, or ``None`` before the first vector."""
        if self._dim is None:
            rows = self._query("SELECT value FROM store_meta WHERE key = 'vector_dim'")
            self._dim = int(rows[0][0]) if rows else None
        return self._dim

    def _check_width(self, conn: Any, vectors: npt.NDArray[np.float32]) -> None:
        """Refuse vectors of another width than the store's; the first fixes it."""
        width = int(vectors.shape[1])
        if self.dim is None:
            self._exec(conn, "INSERT INTO store_meta (key, value) VALUES ('vector_dim', %s)"
                       " ON CONFLICT (key) DO NOTHING", [str(width)])
            self._dim = int(self._exec(
                conn, "SELECT value FROM store_meta WHERE key = 'vector_dim'").fetchone()[0])
        if width != self._dim:
            raise DimensionMismatchError(
                f"vectors are {width}-d but this store holds {self._dim}-d vectors")

    def _rowids(self, conn: Any, table: str, n: int) -> list[int]:
        return [int(r[0]) for r in self._exec(
            conn, f"SELECT nextval('{table}_rowid') FROM generate_series(1, %s)", [n]).fetchall()]

    def _index(self, conn: Any, table: str, rowids: Sequence[int], texts: Sequence[str]) -> list[int]:
        """Write the rows' tokens (one statement); each row's length, for its ``tokens``
        column."""
        counts = self._counted(table, texts)
        self._exec(conn, f"INSERT INTO {TERM_TABLES[table]} (term, doc, tf)"
                   " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::int[])", _columns(
                       [(term, rowid, tf) for rowid, found in zip(rowids, counts)
                        for term, tf in found.items()], 3))
        return [sum(found.values()) for found in counts]

    def _counted(self, table: str, texts: Sequence[str]) -> list[dict[str, int]]:
        """Each text's tokens and their counts, noted for ``table``'s counts at commit."""
        counts = self._tokenizer.counts(texts)
        held: dict[str, int] = {}
        for found in counts:
            for term in found:
                held[term] = held.get(term, 0) + 1
        self._stats.append((table, len(texts), sum(sum(found.values()) for found in counts), held))
        return counts

    def _unindex(self, conn: Any, table: str, rowids: Sequence[int], tokens: int) -> None:
        """Delete the rows' tokens (``tokens`` in all) and take them off the counts."""
        gone = self._exec(conn, (
            f"WITH gone AS (DELETE FROM {TERM_TABLES[table]} WHERE doc = ANY(%s) RETURNING term)"
            " SELECT term, count(*) FROM gone GROUP BY term"), [list(rowids)]).fetchall()
        self._stats.append((table, -len(rowids), -tokens, {str(t): -int(n) for t, n in gone}))

    # -- claims -------------------------------------------------------------------
    def insert_claims(
        self, claims: Sequence[Claim], vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[Claim]:
        """Insert new claims; see ``Store.insert_claims``."""
        if not claims:
            return []
        with self._writing() as conn:
            if vectors is not None:
                self._check_width(conn, vectors)
            counts = self._counted("claims", [c.text for c in claims])
            rows: list[tuple[object, ...]] = []
            for i, (claim, found) in enumerate(zip(claims, counts)):
                key = None if subject_keys is None else subject_keys[i]
                cid, row = claim_row(claim, 0, None, key)
                values = list(_FROM_ROW(row))
                for k, kind in _TYPED:
                    values[k] = kind(values[k])
                rows.append((cid.partition("-")[2], *values, sum(found.values()),
                             None if vectors is None else np.asarray(vectors[i], dtype=np.float32)))
            if len(claims) == 1:
                sources = list(dict.fromkeys(claims[0].sources))
                rowids = self._exec(conn, _INSERT_ONE, [
                    *rows[0], list(counts[0]), list(counts[0].values()), sources]).fetchall()
            else:
                terms = [(i, term, tf) for i, found in enumerate(counts, 1) for term, tf in found.items()]
                links = [(i, source) for i, claim in enumerate(claims, 1)
                         for source in dict.fromkeys(claim.sources)]
                rowids = self._exec(conn, _INSERT_MANY, [
                    len(claims), *_columns(rows, len(_ARRAYS)), *_columns(terms, 3), *_columns(links, 2)
                ]).fetchall()
            return [with_id(claim, f"c{rowid}-{row[0]}")
                    for claim, (rowid,), row in zip(claims, rowids, rows)]

    def claims_missing_vectors(self) -> list[tuple[str, str]]:
        """Claims stored without a vector; see ``Store.claims_missing_vectors``."""
        return [(str(cid), str(text)) for cid, text in self._query(
            "SELECT id, text FROM claims WHERE emb IS NULL ORDER BY rowid")]

    def set_claim_vectors(self, claim_ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> int:
        """Store claims' vectors; see ``Store.set_claim_vectors``. A claim another
        writer holds at that moment is skipped, not waited for (it stays waiting for its
        vector): these rows span many slots whose locks this write does not hold, and a
        writer holding one of them may be waiting for a row this write has set."""
        if not claim_ids:
            return 0
        with self._writing() as conn:
            self._check_width(conn, vectors)
            # one executemany: psycopg pipelines it, one round trip for a backlog of 256
            return self._many(
                conn, "UPDATE claims SET emb = %s WHERE rowid = (SELECT rowid FROM claims"
                " WHERE rowid = %s AND id = %s AND emb IS NULL FOR UPDATE SKIP LOCKED)",
                [(np.asarray(vector, dtype=np.float32), claim_rowid(cid), cid)
                 for cid, vector in zip(claim_ids, vectors)])

    def slot_claims(
        self, scope: Scope, slots: Collection[tuple[str, str]], *,
        ending_after: int | None = None,
    ) -> dict[tuple[str, str], list[Claim]]:
        """Still-believed claims per slot at exactly ``scope``; inside this thread's write
        each slot is locked first (the module docstring). See ``Store.slot_claims``."""
        found: dict[tuple[str, str], list[Claim]] = {slot: [] for slot in slots}
        if not found:
            return found
        levels = scope_levels(scope)
        where, params = _sql.scope_exact(scope)
        if ending_after is not None:
            where += " AND (valid_to IS NULL OR valid_to > %s)"
            params.append(ending_after)
        if self._owner == threading.get_ident():  # a write's settling: lock the slots first
            self._lock_slots(self._writer, [slot_lock(self._schema, levels, slot) for slot in found])
        keys = list(found)  # outside a write (a preview): a plain read, no lock
        slot_params: list[object]
        if len(keys) == 1:  # a single write's: planned once (see _INSERT_ONE), not per call
            match, slot_params = "subject_key = %s AND predicate = %s", [*keys[0]]
        else:
            match = "(subject_key, predicate) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
            slot_params = [[k for k, _ in keys], [p for _, p in keys]]
        for row in self._query(
                f"SELECT {CLAIM_COLUMNS}, subject_key FROM claims WHERE {match}"
                f" AND {where} AND invalidated_at IS NULL ORDER BY valid_from, rowid",
                [*slot_params, *params]):
            found[(row[-1], row[7])].append(decode_claim(row[:-1], None))
        return found

    def end_claims(self, ends: Sequence[tuple[Claim, int, int, str | None]]) -> list[Claim]:
        """End each claim's valid time, keeping an earlier end; see ``Store.end_claims``."""
        if not ends:
            return []
        with self._writing() as conn:
            # one statement a claim, in order, sent together (executemany pipelines them):
            # the closure is read from the row before the same statement's update
            self._update_each(conn, (
                "WITH kept AS (INSERT INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)"
                " SELECT rowid, valid_to_known_at, valid_to, ended_by FROM claims"
                " WHERE rowid = %s AND id = %s AND valid_to IS NOT NULL"
                " AND valid_to_known_at < %s ON CONFLICT (claim_rowid, known_at) DO UPDATE"
                " SET valid_to = excluded.valid_to, ended_by = excluded.ended_by)"
                " UPDATE claims SET valid_to = %s, valid_to_known_at = %s, ended_by = %s,"
                " revised = revised OR (valid_to IS NOT NULL AND valid_to_known_at < %s)"
                " WHERE rowid = %s AND id = %s"),
                [(claim_rowid(claim.id), claim.id, at, valid_to, at, by, at, claim_rowid(claim.id), claim.id)
                 for claim, valid_to, at, by in ends], [claim.id for claim, *_ in ends])
        return [ended(claim, valid_to, at) for claim, valid_to, at, _ in ends]

    def retire_claims(self, retires: Sequence[tuple[Claim, int, str | None]]) -> list[Claim]:
        """Withdraw belief in each claim; see ``Store.retire_claims``."""
        if not retires:
            return []
        with self._writing() as conn:
            self._update_each(conn, "UPDATE claims SET invalidated_at = %s, invalidated_by = %s"
                              " WHERE rowid = %s AND id = %s",
                              [(at, by, claim_rowid(claim.id), claim.id) for claim, at, by in retires],
                              [claim.id for claim, *_ in retires])
        return [retired(claim, at, by) for claim, at, by in retires]

    def _update_each(self, conn: Any, sql: str, rows: list[tuple[object, ...]], claim_ids: list[str]) -> None:
        """Run ``sql`` once a row, each updating the claim named at the same place in
        ``claim_ids``; a claim not in the store is named (``StoreError``), and the
        caller's transaction undoes the rest."""
        if self._many(conn, sql, rows) != len(claim_ids):
            held = {str(r[0]) for r in self._exec(
                conn, "SELECT id FROM claims WHERE id = ANY(%s)", [claim_ids]).fetchall()}
            missing = next((cid for cid in claim_ids if cid not in held), claim_ids[0])
            raise StoreError(f"claim {missing!r} is not in the store")

    def reinforce_claim(self, claim_id: str, sources: Sequence[str], at: int) -> Claim:
        """Count another observation and merge ``sources``; see ``Store.reinforce_claim``."""
        with self._writing() as conn:
            row = self._exec(conn, (
                "SELECT rowid, sources, salience_base, coalesce(observed_at, recorded_at)"
                " FROM claims WHERE rowid = %s AND id = %s FOR UPDATE"),
                [claim_rowid(claim_id), claim_id]).fetchone()
            if row is None:
                raise StoreError(f"claim {claim_id!r} is not in the store")
            rowid, old, storage, observed = row
            merged = list(dict.fromkeys([*(json.loads(old) if old else []), *sources]))
            self._many(conn, _LINK, [(s, rowid) for s in dict.fromkeys(sources)])
            strength = reinforced_storage(storage, retrievability(storage, max(0, at - observed)))
            updated = self._exec(conn, (
                "UPDATE claims SET observations = observations + 1, sources = %s,"
                " salience_base = %s, salience = 1.0, observed_at = %s"
                f" WHERE rowid = %s RETURNING {CLAIM_COLUMNS}"),
                [json.dumps(merged, ensure_ascii=False) if merged else None, strength,
                 max(observed, at), rowid]).fetchone()
            return decode_claim(updated, None)

    # -- turns --------------------------------------------------------------------
    def insert_episodes(
        self, episodes: Sequence[Episode], vectors: npt.NDArray[np.float32] | None
    ) -> list[Episode]:
        """Insert raw turns; see ``Store.insert_episodes``."""
        if not episodes:
            return []
        with self._writing() as conn:
            if vectors is not None:
                self._check_width(conn, vectors)
            rowids = self._rowids(conn, "episodes", len(episodes))
            lengths = self._index(conn, "episodes", rowids, [e.content for e in episodes])
            rows: list[tuple[object, ...]] = []
            stored: list[Episode] = []
            for i, (episode, rowid) in enumerate(zip(episodes, rowids)):
                eid = episode.id or new_id("e", rowid, episode.scope, episode.role,
                                            episode.content, episode.ts, episode.recorded_at)
                recorded = to_micros(episode.recorded_at, "recorded_at")
                ts = recorded if episode.ts is None else to_micros(episode.ts, "ts")
                rows.append((rowid, eid, *scope_levels(episode.scope), episode.role,
                             episode.content, ts, recorded, content_hash(episode.content),
                             lengths[i],
                             None if vectors is None else np.asarray(vectors[i], dtype=np.float32)))
                stored.append(replace(episode, id=eid, ts=from_micros(ts)))
            self._many(conn, (
                "INSERT INTO episodes (rowid, id, s_tenant, s_user, s_agent, s_session, role,"
                " content, ts, recorded_at, content_hash, tokens, emb)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"), rows)
            return stored

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        """The turn if visible from ``scope``; see ``Store.get_episode``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id = %s AND {where}",
                           [episode_id, *params])
        return episode_of(rows[0]) if rows else None

    def copies_of(self, scope: Scope, contents: Collection[str]) -> dict[str, list[tuple[str, int]]]:
        """Turns at exactly ``scope`` holding each content; see ``Store.copies_of``."""
        wanted = {content_hash(c): c for c in contents}
        where, params = _sql.scope_exact(scope)
        found: dict[str, list[tuple[str, int]]] = {}
        for content, role, ts in self._query(  # a 128-bit digest: equal digest, equal text
                "SELECT content, role, ts FROM episodes"
                f" WHERE content_hash = ANY(%s) AND {where} ORDER BY rowid",
                [list(wanted), *params]):
            found.setdefault(content, []).append((role, int(ts)))
        return found

    def recent_turns(self, scope: Scope, limit: int) -> tuple[list[tuple[str, int]], npt.NDArray[np.float32]]:
        """Recent turns' roles, times and vectors; see ``Store.recent_turns``."""
        where, params = _sql.scope_exact(scope)
        rows = self._query(f"SELECT role, ts, emb::real[] FROM episodes WHERE {where}"
                           " ORDER BY rowid DESC LIMIT %s", [*params, limit])
        dim = self.dim or 0
        matrix = np.zeros((len(rows), dim), dtype=np.float32)
        for i, (_, _, emb) in enumerate(rows):
            if emb is not None:
                matrix[i] = emb
        return [(str(role), int(ts)) for role, ts, _ in rows], matrix

    def mark_unextracted(
        self, episode_ids: Sequence[str], at: int, reason: str,
        speakers: Mapping[str, str] | None = None, meta: str | None = None,
    ) -> None:
        """Mark turns as waiting for extraction; see ``Store.mark_unextracted``."""
        ids = list(episode_ids)
        named = [(speakers or {}).get(eid) for eid in ids]
        with self._writing() as conn:
            self._exec(conn, (
                "INSERT INTO extraction_backlog (episode_rowid, failed_at, reason, speaker, meta)"
                " SELECT e.rowid, %s, %s, m.speaker, %s FROM unnest(%s::text[], %s::text[])"
                " AS m (id, speaker) JOIN episodes e ON e.id = m.id"
                " ON CONFLICT (episode_rowid) DO UPDATE SET failed_at = excluded.failed_at,"
                " reason = excluded.reason, speaker = excluded.speaker, meta = excluded.meta"),
                [at, reason, meta, ids, named])

    def unextracted_marks(self, episode_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """Who said these waiting turns, and their call's meta; see ``Store.unextracted_marks``."""
        return {str(eid): (speaker, meta) for eid, speaker, meta in self._query(
            "SELECT e.id, b.speaker, b.meta FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {MARKS}"
            " AND e.id = ANY(%s)", [list(episode_ids)])}

    def unextracted_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        """Marked turns of ``scope``'s subtree; see ``Store.unextracted_episodes``."""
        where, params = _sql.scope_subtree(scope, "e.")
        return [episode_of(row) for row in self._query(
            "SELECT e.id, e.s_tenant, e.s_user, e.s_agent, e.s_session, e.role, e.content,"
            " e.ts, e.recorded_at FROM extraction_backlog b JOIN episodes e"
            f" ON e.rowid = b.episode_rowid WHERE {where} ORDER BY e.rowid LIMIT %s",
            [*params, limit])]

    def clear_unextracted(self, episode_ids: Sequence[str]) -> None:
        """Unmark turns read again; see ``Store.clear_unextracted``."""
        with self._writing() as conn:
            self._exec(conn, "DELETE FROM extraction_backlog WHERE episode_rowid IN"
                       " (SELECT rowid FROM episodes WHERE id = ANY(%s))", [list(episode_ids)])

    # -- aliases and the learned schema ---------------------------------------------
    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record an alias for ``owner``; see ``Store.learn_alias``."""
        with self._writing() as conn:
            self._exec(conn, (
                "INSERT INTO entity_aliases (s_tenant, s_user, alias_key, entity_key,"
                " learned_at, via) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (s_tenant, s_user, alias_key) DO UPDATE SET"
                " entity_key = excluded.entity_key, learned_at = excluded.learned_at,"
                " via = excluded.via"),
                [owner.tenant or "", owner.user or "", alias_key, entity_key, at, via])

    def aliases(self, owner: Scope) -> dict[str, str]:
        """The aliases learned for ``owner``; see ``Store.aliases``."""
        return {str(a): str(e) for a, e in self._query(
            "SELECT alias_key, entity_key FROM entity_aliases WHERE s_tenant = %s AND s_user = %s",
            [owner.tenant or "", owner.user or ""])}

    def alias_owners(self) -> set[tuple[str | None, str | None]]:
        """Who has learned aliases; see ``Store.alias_owners``."""
        return {(tenant or None, user or None) for tenant, user in self._query(
            "SELECT DISTINCT s_tenant, s_user FROM entity_aliases")}

    def load_predicates(self) -> list[PredicateSpec]:
        """Every persisted predicate spec, by name."""
        return [PredicateSpec(name, Cardinality(card), Volatility(vol), tuple(json.loads(aliases)))
                for name, card, vol, aliases in self._query(
                    "SELECT name, cardinality, volatility, aliases FROM predicates ORDER BY name")]

    def save_predicates(self, specs: Sequence[PredicateSpec]) -> None:
        """Persist predicate specs, replacing any of the same name."""
        if not specs:
            return
        with self._writing() as conn:
            self._many(conn, (
                "INSERT INTO predicates (name, cardinality, volatility, aliases)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET"
                " cardinality = excluded.cardinality, volatility = excluded.volatility,"
                " aliases = excluded.aliases"),
                [(s.name, s.cardinality.value, s.volatility.value, json.dumps(list(s.aliases)))
                 for s in specs])

    def clear_predicates(self) -> int:
        """Forget every persisted predicate spec; how many there were."""
        with self._writing() as conn:
            return int(self._exec(conn, "DELETE FROM predicates").rowcount)
