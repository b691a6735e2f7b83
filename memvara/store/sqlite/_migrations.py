"""Numbered schema migrations for the SQLite store.

``PRAGMA user_version`` records the version a file is at and ``PRAGMA application_id``
marks it as ours. Opening an older file applies the missing steps in one transaction;
a newer one is refused rather than misread.
"""

from __future__ import annotations

__all__ = ["APPLICATION_ID", "FOLD_FUNCTION", "MIGRATIONS", "SCHEMA_VERSION"]

APPLICATION_ID = 0x4D564152  # "MVAR"

FOLD_FUNCTION = "memvara_entity_key"
"""A SQL function the store registers while migrating: ``entity_key`` in Python, so a
step can fold stored text the way new writes do."""

_V1 = (
    # rowid is explicit so the FTS index can mirror it: deleting an FTS row is then an
    # indexed lookup, not a scan. Unset scope levels are '' (see _sql.py).
    """
    CREATE TABLE claims (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL,  -- c<rowid>-<digest>: found by rowid, so not indexed
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        s_agent TEXT NOT NULL, s_session TEXT NOT NULL,
        subject TEXT NOT NULL, subject_key TEXT NOT NULL,
        predicate TEXT NOT NULL, object TEXT NOT NULL,
        polarity INTEGER NOT NULL,
        valid_from INTEGER NOT NULL, valid_to INTEGER, valid_to_known_at INTEGER,
        recorded_at INTEGER NOT NULL, invalidated_at INTEGER, invalidated_by TEXT,
        confidence REAL NOT NULL, memory_type TEXT NOT NULL,
        text TEXT NOT NULL, extractor TEXT NOT NULL,
        meta TEXT, sources TEXT,
        observations INTEGER NOT NULL DEFAULT 1,
        revised INTEGER NOT NULL DEFAULT 0,
        vec_slot INTEGER  -- the sidecar row of its vector: its own rowid, or NULL if none
    )
    """,
    # Earlier ends of a claim whose valid_to was revised (closed again later), so a reader
    # at a belief instant between two closures still sees the end believed then.
    """
    CREATE TABLE claim_closures (
        claim_rowid INTEGER NOT NULL, known_at INTEGER NOT NULL, valid_to INTEGER NOT NULL,
        PRIMARY KEY (claim_rowid, known_at)
    ) WITHOUT ROWID
    """,
    # An end of valid time learned again later: keep the earlier one, with when it was
    # learned (the UPDATE marks the row ``revised`` so readers know to look here).
    """
    CREATE TRIGGER claims_keep_closure BEFORE UPDATE OF valid_to ON claims
    WHEN old.valid_to IS NOT NULL AND old.valid_to_known_at < new.valid_to_known_at
    BEGIN
        INSERT OR REPLACE INTO claim_closures (claim_rowid, known_at, valid_to)
            VALUES (old.rowid, old.valid_to_known_at, old.valid_to);
    END
    """,
    "CREATE INDEX claims_slot ON claims (subject_key, predicate, s_user, s_tenant, s_agent, s_session)",
    # Claims still waiting for their vector (single writes are embedded in batches): a
    # partial index, so finding them costs the size of the backlog, not of the table.
    "CREATE INDEX claims_unembedded ON claims (rowid) WHERE vec_slot IS NULL",
    "CREATE INDEX claims_scope ON claims (s_user, s_tenant, s_agent, s_session)",
    """
    CREATE TABLE episodes (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        s_agent TEXT NOT NULL, s_session TEXT NOT NULL,
        role TEXT NOT NULL, content TEXT NOT NULL,
        ts INTEGER NOT NULL, recorded_at INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        vec_slot INTEGER
    )
    """,
    "CREATE INDEX episodes_scope ON episodes (s_user, s_tenant, s_agent, s_session)",
    # The exact-duplicate check: with the scope in the key the planner takes this index
    # over episodes_scope, which would walk every turn of the user.
    "CREATE INDEX episodes_hash ON episodes (content_hash, s_user, s_tenant, s_agent, s_session)",
    # Reverse index of claim sources: which claims cite an episode (erase, provenance).
    """
    CREATE TABLE claim_sources (
        source TEXT NOT NULL, claim_rowid INTEGER NOT NULL,
        PRIMARY KEY (source, claim_rowid)
    ) WITHOUT ROWID
    """,
    # External-content FTS: the text is stored once, in the row it indexes. Inserts are
    # indexed by the store in one INSERT ... SELECT per batch (a per-row trigger costs
    # ~28 us a row against ~3 us), and may lag: FTS5 has a fixed cost per transaction
    # (~80 us here, more than the rest of a one-row write), so rows written one at a time
    # wait above the watermark ``fts_<table>`` in store_meta until enough of them do, a
    # text search needs them, or the store closes. The triggers below touch the index
    # only for rows at or below the watermark: the rest were never in it.
    """
    CREATE VIRTUAL TABLE claims_fts USING fts5 (
        text, content='claims', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE VIRTUAL TABLE episodes_fts USING fts5 (
        content, content='episodes', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER claims_fts_delete AFTER DELETE ON claims BEGIN
        INSERT INTO claims_fts (claims_fts, rowid, text) SELECT 'delete', old.rowid, old.text
            WHERE old.rowid <= (SELECT CAST(value AS INTEGER) FROM store_meta
                                WHERE key = 'fts_claims');
        DELETE FROM claim_sources WHERE claim_rowid = old.rowid AND old.sources IS NOT NULL
            AND source IN (SELECT value FROM json_each(old.sources));
        DELETE FROM claim_closures WHERE claim_rowid = old.rowid AND old.revised;
    END
    """,
    """
    CREATE TRIGGER claims_fts_update AFTER UPDATE OF text ON claims
    WHEN old.rowid <= (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_claims')
    BEGIN
        INSERT INTO claims_fts (claims_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        INSERT INTO claims_fts (rowid, text) VALUES (new.rowid, new.text);
    END
    """,
    """
    CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes
    WHEN old.rowid <= (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_episodes')
    BEGIN
        INSERT INTO episodes_fts (episodes_fts, rowid, content)
            VALUES ('delete', old.rowid, old.content);
    END
    """,
    # Learned and declared predicate specs, so a fresh process reuses them.
    """
    CREATE TABLE predicates (
        name TEXT PRIMARY KEY, cardinality TEXT NOT NULL, volatility TEXT NOT NULL,
        aliases TEXT NOT NULL
    )
    """,
    # Store-wide values: the text indexes' watermarks and the vector width.
    "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "INSERT INTO store_meta (key, value) VALUES ('fts_claims', '0'), ('fts_episodes', '0')",
)

# v2: entity aliases learned for one owner (tenant + user): "big blue" is "ibm" for this
# owner only. Applied to new writes and widened reads; old rows are re-keyed only by an
# explicit backfill, which stamps what it changed.
_V2 = (
    """
    CREATE TABLE entity_aliases (
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        alias_key TEXT NOT NULL, entity_key TEXT NOT NULL,
        learned_at INTEGER NOT NULL, via TEXT NOT NULL,
        PRIMARY KEY (s_tenant, s_user, alias_key)
    ) WITHOUT ROWID
    """,
    # The slot index also carries belief and the end of valid time, so settling a write
    # against a slot with a long history reads index entries, not every old row.
    "DROP INDEX claims_slot",
    "CREATE INDEX claims_slot ON claims (subject_key, predicate, s_user, s_tenant, s_agent,"
    " s_session, invalidated_at, valid_to)",
)

# v3: the graph, provenance and consolidation.
# - ``object_key``: the object's fold, indexed, so a walk can step backwards along an
#   edge (who works at Acme?) as cheaply as forwards. Learned aliases apply at walk time.
# - ``ended_by``: the claim whose write ended this one's valid time (``invalidated_by``
#   already names what retired it); closures keep the earlier one, so ``why()`` at a
#   belief instant between two closures names the closer believed then. Both are
#   indexed only where set, for "what did this claim supersede?".
# - salience: storage strength (``salience_base``, never decays) apart from retrieval
#   strength (``salience``, decayed by consolidation), and when it was last observed.
_V3 = (
    "ALTER TABLE claims ADD COLUMN object_key TEXT",
    f"UPDATE claims SET object_key = {FOLD_FUNCTION}(object)",
    "CREATE INDEX claims_object ON claims (object_key)",
    "ALTER TABLE claims ADD COLUMN ended_by TEXT",
    "ALTER TABLE claim_closures ADD COLUMN ended_by TEXT",
    "DROP TRIGGER claims_keep_closure",
    """
    CREATE TRIGGER claims_keep_closure BEFORE UPDATE OF valid_to ON claims
    WHEN old.valid_to IS NOT NULL AND old.valid_to_known_at < new.valid_to_known_at
    BEGIN
        INSERT OR REPLACE INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)
            VALUES (old.rowid, old.valid_to_known_at, old.valid_to, old.ended_by);
    END
    """,
    "CREATE INDEX claims_invalidated_by ON claims (invalidated_by)"
    " WHERE invalidated_by IS NOT NULL",
    "CREATE INDEX claims_ended_by ON claims (ended_by) WHERE ended_by IS NOT NULL",
    "ALTER TABLE claims ADD COLUMN salience_base REAL NOT NULL DEFAULT 1.0",
    "ALTER TABLE claims ADD COLUMN salience REAL NOT NULL DEFAULT 1.0",
    "ALTER TABLE claims ADD COLUMN observed_at INTEGER",  # NULL: its recorded_at
)

# v4: the claims waiting for a vector (single writes, embedded EMBED_BATCH at a time) are
# the rows above a watermark in ``store_meta`` whose ``vec_slot`` is NULL, found by a
# rowid range, not by a partial index: the index cost every single write one more page
# in the write-ahead log (~16% of the bytes a fresh write wrote). The watermark starts
# just below the first row still waiting.
_V4 = (
    "DROP INDEX claims_unembedded",
    "INSERT INTO store_meta (key, value) VALUES ('vectors_claims', coalesce("
    "(SELECT min(rowid) - 1 FROM claims WHERE vec_slot IS NULL),"
    " (SELECT coalesce(max(rowid), 0) FROM claims)))",
)

# v5: one index for slots and scopes. ``claims_scope`` held the scope columns that
# ``claims_slot`` already held after the subject, so every write inserted one more index
# entry, and with one user per scope on a page of its own. Led by the scope, one index
# serves a write's slot read (an equality on its first six columns), a scope's
# rows (its prefix), a scoped sweep (a range) and a key list (a probe per visible
# scope); and it carries the columns the state filter reads, so counting a scope reads
# no rows. Measured when it was made (2026-11-30, docs/perf-log.md "A seventh pass"): pages a
# single write appends to the write-ahead log 5.2 -> 4.0 fresh and 7.7 -> 6.8 revising
# (one user per scope, 100,000 claims); ``count()`` at the root of 100,000 claims
# 34-36 -> 17-18 ms (bench/perf.py); instructions a write within 2% either way.
_V5 = (
    "DROP INDEX claims_scope",
    "DROP INDEX claims_slot",
    (
        "CREATE INDEX claims_slot ON claims (s_user, s_tenant, s_agent, s_session, subject_key,"
        " predicate, invalidated_at, valid_to, recorded_at, valid_from, valid_to_known_at,"
        " revised)"
    ),
)

# v6: "I" is the user in scope. The cheap tier used to write what a user said of
# themselves about the subject ``user``; in a scope with a user it now writes about that
# user, and ``user`` there names the same entity. Claims filed under ``user`` in such a
# scope move to the user's key, so a slot holds them and new writes together (their
# subject text, and so what they show, is left as it was written).
_V6 = (
    f"UPDATE claims SET subject_key = {FOLD_FUNCTION}(s_user)"
    " WHERE subject_key = 'user' AND s_user != ''",
)

# v7: turns waiting for extraction. When the model fails inside add(), the call's turns
# and rule claims are stored anyway and the turns left for the model are marked here,
# by rowid, for Memvara.retry_extraction(). No text: the turn's row holds that.
_V7 = (
    """
    CREATE TABLE IF NOT EXISTS extraction_backlog (
        episode_rowid INTEGER PRIMARY KEY,
        failed_at INTEGER NOT NULL,
        reason TEXT NOT NULL
    )
    """,
)

# v8: the tamper-evident write log. One row a committed write transaction, chained by
# SHA-256 (``memvara/_domain/ledger.py``); ``claim_log`` says which record wrote a claim,
# and who (``why()``'s actor: an imported claim keeps the one it was exported with). ``log_store_id`` names the store in anchors and the genesis hash;
# ``log_secret`` keys the digests the log holds in place of text. Ids and counts only:
# the log never holds a claim's or a turn's text.
_V8 = (
    """
    CREATE TABLE IF NOT EXISTS write_log (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        body TEXT NOT NULL,
        hash TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS claim_log (
        claim_rowid INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL,
        actor TEXT NOT NULL
    )
    """,
    "INSERT OR IGNORE INTO store_meta (key, value) VALUES ('log_store_id', lower(hex(randomblob(16))))",
    "INSERT OR IGNORE INTO store_meta (key, value) VALUES ('log_secret', lower(hex(randomblob(32))))",
)

# v9: the retention archive. ``prune()`` moves claims that stopped holding long ago out
# of ``claims`` into this table, every column as it was plus when it moved and its
# earlier ends (``closures``, JSON, from ``claim_closures``, which the delete trigger
# clears); ``restore_archived()`` puts them back. Reads never look here unless asked.
# A later migration that adds a column to ``claims`` adds it here too (a test holds
# the two tables to the same columns).
_V9 = (
    """
    CREATE TABLE IF NOT EXISTS claims_archive (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        s_agent TEXT NOT NULL, s_session TEXT NOT NULL,
        subject TEXT NOT NULL, subject_key TEXT NOT NULL,
        predicate TEXT NOT NULL, object TEXT NOT NULL,
        polarity INTEGER NOT NULL,
        valid_from INTEGER NOT NULL, valid_to INTEGER, valid_to_known_at INTEGER,
        recorded_at INTEGER NOT NULL, invalidated_at INTEGER, invalidated_by TEXT,
        confidence REAL NOT NULL, memory_type TEXT NOT NULL,
        text TEXT NOT NULL, extractor TEXT NOT NULL,
        meta TEXT, sources TEXT,
        observations INTEGER NOT NULL,
        revised INTEGER NOT NULL,
        vec_slot INTEGER,
        object_key TEXT, ended_by TEXT,
        salience_base REAL NOT NULL, salience REAL NOT NULL, observed_at INTEGER,
        archived_at INTEGER NOT NULL,
        closures TEXT
    )
    """,
    "CREATE INDEX IF NOT EXISTS claims_archive_slot ON claims_archive"
    " (s_user, s_tenant, s_agent, s_session, subject_key, predicate)",
)

# v10: tombstones. ``forget_subject()`` erases a subject everywhere and leaves one row
# here: when, why, who asked, the subject's digest keyed by ``log_secret`` (never its
# name), the counts and rowids removed, and which outside targets confirmed.
_V10 = (
    """
    CREATE TABLE IF NOT EXISTS tombstones (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        at INTEGER NOT NULL,
        reason TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        subject_digest TEXT NOT NULL,
        scope TEXT NOT NULL,
        erased TEXT NOT NULL,
        targets TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS tombstones_subject ON tombstones (subject_digest)",
)

# v11: write logs of other stores, brought in by ``import_jsonl`` (each chain checked
# from its own genesis when it came in): kept apart from this store's own chain, and
# exported again with it, so a store's history travels on with its rows.
_V11 = (
    """
    CREATE TABLE IF NOT EXISTS imported_log (
        source TEXT NOT NULL, seq INTEGER NOT NULL,
        at INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
        body TEXT NOT NULL, hash TEXT NOT NULL,
        PRIMARY KEY (source, seq)
    ) WITHOUT ROWID
    """,
)

# v12: the review queue. ``observe()`` files evidence against what a slot holds, one row
# a distinct ground (the same ground again is an echo: the key refuses it); enough
# grounds open a review of that value, which ``resolve()`` closes, keeping the slot or
# accepting the value (then ``claim`` names the claim it wrote).
_V12 = (
    """
    CREATE TABLE IF NOT EXISTS evidence (
        rowid INTEGER PRIMARY KEY,
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        s_agent TEXT NOT NULL, s_session TEXT NOT NULL,
        subject_key TEXT NOT NULL, predicate TEXT NOT NULL,
        object_key TEXT NOT NULL, polarity INTEGER NOT NULL,
        ground TEXT NOT NULL, observed_at INTEGER NOT NULL, actor TEXT NOT NULL,
        review INTEGER,
        UNIQUE (s_user, s_tenant, s_agent, s_session, subject_key, predicate, object_key,
                polarity, ground)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS reviews (
        rowid INTEGER PRIMARY KEY,
        s_tenant TEXT NOT NULL, s_user TEXT NOT NULL,
        s_agent TEXT NOT NULL, s_session TEXT NOT NULL,
        subject TEXT NOT NULL, subject_key TEXT NOT NULL, predicate TEXT NOT NULL,
        object TEXT NOT NULL, object_key TEXT NOT NULL, polarity INTEGER NOT NULL,
        held TEXT NOT NULL,
        opened_at INTEGER NOT NULL,
        status TEXT NOT NULL,
        closed_at INTEGER, decided_by TEXT, claim TEXT
    )
    """,
    "CREATE INDEX IF NOT EXISTS reviews_status ON reviews (status, s_user, s_tenant)",
)

# v13: what a retry must know of the call that left a turn waiting: who said it (a
# message's ``name`` is the subject of what it says; NULL: the scope's user) and the
# call's ``meta`` (JSON, added to every claim the call writes). ``forget_subject`` erases
# the turns whose mark names the subject and scrubs its names from the other marks.
_V13 = ("ALTER TABLE extraction_backlog ADD COLUMN speaker TEXT",
        "ALTER TABLE extraction_backlog ADD COLUMN meta TEXT")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    _V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11, _V12, _V13)
"""Step ``i`` takes a file from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
