"""The PostgreSQL store's tables, in one schema of the caller's choosing.

Mirrors the SQLite store's columns (``store/sqlite/_migrations.py``) so the same row
codec serves both, with three differences: vectors live in the row (``emb``, pgvector's
``vector``, any width: the store records one in ``store_meta``), the text index is a
side table of FTS5's own tokens (``claim_terms``/``episode_terms``, see ``_text``), and
the statistics BM25 needs are kept as per-writer shards: rows and tokens per table
(``text_stats``), rows per token (``term_stats``, schema version 2: a search reads its
words' counts instead of counting them).
"""

from __future__ import annotations

__all__ = ["SCHEMA_VERSION", "TABLES", "TERM_TABLES", "ddl", "upgrade"]

SCHEMA_VERSION = 3
"""Bumped by every change to the tables; a schema recording a higher one is refused."""

TERM_TABLES = {"claims": "claim_terms", "episodes": "episode_terms"}
"""Each text table's term table (a row's tokens, for search and the word counts)."""

TABLES = (
    "claims", "claim_closures", "claim_sources", "claim_terms", "episodes", "episode_terms",
    "entity_aliases", "predicates", "extraction_backlog", "text_stats", "term_stats",
    "store_meta",
)

_TERM_STATS = (
    # Rows holding each token, per text table, in the same shards as ``text_stats``; a
    # token's count is the sum of its shards (``_plan``). Rows that sum to 0 are deleted
    # (``Connections._drop_spent``): a token of erased text leaves nothing here.
    """
    CREATE TABLE term_stats (
        tbl TEXT COLLATE "C" NOT NULL, term TEXT COLLATE "C" NOT NULL,
        shard INTEGER NOT NULL, docs BIGINT NOT NULL, PRIMARY KEY (tbl, term, shard)
    )
    """,
)


_STEPS = {
    2: (*_TERM_STATS, *(  # per-token counts, counted once from the term tables
        f"INSERT INTO term_stats (tbl, term, shard, docs) SELECT '{table}', term, 0, count(*)"
        f" FROM {terms} GROUP BY term"
        for table, terms in (("claims", "claim_terms"), ("episodes", "episode_terms")))),
    # who said a waiting turn (a message's name) and the call's meta, as SQLite's v13
    3: ('ALTER TABLE extraction_backlog ADD COLUMN IF NOT EXISTS speaker TEXT COLLATE "C"',
        'ALTER TABLE extraction_backlog ADD COLUMN IF NOT EXISTS meta TEXT COLLATE "C"'),
}
"""What each version adds to the one before it."""


def upgrade(version: int) -> tuple[str, ...]:
    """The statements that bring a schema at ``version`` to ``SCHEMA_VERSION`` (run in
    the schema, under its advisory lock, in one transaction)."""
    return (
        *(step for v in range(version + 1, SCHEMA_VERSION + 1) for step in _STEPS[v]),
        f"UPDATE store_meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version'",
    )


def ddl() -> tuple[str, ...]:
    """The statements that create a fresh schema (run in the schema, on the search path)."""
    return (
        # One per table, as SQLite's rowids are: the ids a fresh store gives match.
        "CREATE SEQUENCE claims_rowid",
        "CREATE SEQUENCE episodes_rowid",
        """
        CREATE TABLE claims (
            rowid BIGINT PRIMARY KEY,
            id TEXT COLLATE "C" NOT NULL,
            s_tenant TEXT COLLATE "C" NOT NULL, s_user TEXT COLLATE "C" NOT NULL,
            s_agent TEXT COLLATE "C" NOT NULL, s_session TEXT COLLATE "C" NOT NULL,
            subject TEXT COLLATE "C" NOT NULL, subject_key TEXT COLLATE "C" NOT NULL,
            predicate TEXT COLLATE "C" NOT NULL, object TEXT COLLATE "C" NOT NULL,
            polarity INTEGER NOT NULL,
            valid_from BIGINT NOT NULL, valid_to BIGINT, valid_to_known_at BIGINT,
            recorded_at BIGINT NOT NULL, invalidated_at BIGINT, invalidated_by TEXT COLLATE "C",
            confidence DOUBLE PRECISION NOT NULL, memory_type TEXT COLLATE "C" NOT NULL,
            text TEXT COLLATE "C" NOT NULL, extractor TEXT COLLATE "C" NOT NULL,
            meta TEXT COLLATE "C", sources TEXT COLLATE "C",
            observations INTEGER NOT NULL DEFAULT 1,
            revised BOOLEAN NOT NULL DEFAULT FALSE,
            object_key TEXT COLLATE "C", ended_by TEXT COLLATE "C",
            salience_base DOUBLE PRECISION NOT NULL DEFAULT 1.0,
            salience DOUBLE PRECISION NOT NULL DEFAULT 1.0,
            observed_at BIGINT,
            tokens INTEGER NOT NULL DEFAULT 0,
            emb vector
        )
        """,
        # Vectors stay in the row (MAIN, not the default EXTENDED): a 512-d vector is 2 KB,
        # past the TOAST threshold, and an exact scan would fetch each one from the TOAST
        # table (~20x slower at 8,000 claims, bench/search.py).
        "ALTER TABLE claims ALTER COLUMN emb SET STORAGE MAIN",
        "CREATE INDEX claims_slot ON claims (s_user, s_tenant, s_agent, s_session, subject_key,"
        " predicate, invalidated_at, valid_to)",
        "CREATE INDEX claims_subject ON claims (subject_key, predicate)",
        "CREATE INDEX claims_object ON claims (object_key)",
        "CREATE INDEX claims_invalidated_by ON claims (invalidated_by)"
        " WHERE invalidated_by IS NOT NULL",
        "CREATE INDEX claims_ended_by ON claims (ended_by) WHERE ended_by IS NOT NULL",
        "CREATE INDEX claims_unembedded ON claims (rowid) WHERE emb IS NULL",
        """
        CREATE TABLE claim_closures (
            claim_rowid BIGINT NOT NULL, known_at BIGINT NOT NULL, valid_to BIGINT NOT NULL,
            ended_by TEXT COLLATE "C", PRIMARY KEY (claim_rowid, known_at)
        )
        """,
        "CREATE INDEX claim_closures_ended_by ON claim_closures (ended_by)",
        """
        CREATE TABLE claim_sources (
            source TEXT COLLATE "C" NOT NULL, claim_rowid BIGINT NOT NULL,
            PRIMARY KEY (source, claim_rowid)
        )
        """,
        "CREATE INDEX claim_sources_claim ON claim_sources (claim_rowid)",
        """
        CREATE TABLE claim_terms (
            term TEXT COLLATE "C" NOT NULL, doc BIGINT NOT NULL, tf INTEGER NOT NULL,
            PRIMARY KEY (term, doc)
        )
        """,
        "CREATE INDEX claim_terms_doc ON claim_terms (doc)",
        """
        CREATE TABLE episodes (
            rowid BIGINT PRIMARY KEY,
            id TEXT COLLATE "C" NOT NULL UNIQUE,
            s_tenant TEXT COLLATE "C" NOT NULL, s_user TEXT COLLATE "C" NOT NULL,
            s_agent TEXT COLLATE "C" NOT NULL, s_session TEXT COLLATE "C" NOT NULL,
            role TEXT COLLATE "C" NOT NULL, content TEXT COLLATE "C" NOT NULL,
            ts BIGINT NOT NULL, recorded_at BIGINT NOT NULL,
            content_hash TEXT COLLATE "C" NOT NULL,
            tokens INTEGER NOT NULL DEFAULT 0,
            emb vector
        )
        """,
        "ALTER TABLE episodes ALTER COLUMN emb SET STORAGE MAIN",
        "CREATE INDEX episodes_scope ON episodes (s_user, s_tenant, s_agent, s_session, rowid)",
        "CREATE INDEX episodes_hash ON episodes (content_hash, s_user, s_tenant, s_agent,"
        " s_session)",
        """
        CREATE TABLE episode_terms (
            term TEXT COLLATE "C" NOT NULL, doc BIGINT NOT NULL, tf INTEGER NOT NULL,
            PRIMARY KEY (term, doc)
        )
        """,
        "CREATE INDEX episode_terms_doc ON episode_terms (doc)",
        """
        CREATE TABLE entity_aliases (
            s_tenant TEXT COLLATE "C" NOT NULL, s_user TEXT COLLATE "C" NOT NULL,
            alias_key TEXT COLLATE "C" NOT NULL, entity_key TEXT COLLATE "C" NOT NULL,
            learned_at BIGINT NOT NULL, via TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (s_tenant, s_user, alias_key)
        )
        """,
        """
        CREATE TABLE predicates (
            name TEXT COLLATE "C" PRIMARY KEY, cardinality TEXT COLLATE "C" NOT NULL, volatility TEXT COLLATE "C" NOT NULL,
            aliases TEXT COLLATE "C" NOT NULL
        )
        """,
        """
        CREATE TABLE extraction_backlog (
            episode_rowid BIGINT PRIMARY KEY, failed_at BIGINT NOT NULL, reason TEXT COLLATE "C" NOT NULL,
            speaker TEXT COLLATE "C", meta TEXT COLLATE "C"
        )
        """,
        # Rows and tokens per text table, in shards so concurrent writers rarely meet on
        # one row; BM25 reads their sums.
        """
        CREATE TABLE text_stats (
            tbl TEXT COLLATE "C" NOT NULL, shard INTEGER NOT NULL,
            docs BIGINT NOT NULL, tokens BIGINT NOT NULL, PRIMARY KEY (tbl, shard)
        )
        """,
        *_TERM_STATS,
        'CREATE TABLE store_meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL)',
        f"INSERT INTO store_meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}')",
    )
