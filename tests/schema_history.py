"""Older schemas' shapes, so migration tests can turn a new file back into an old one."""

from __future__ import annotations

SCHEMA_4_INDEXES = """
DROP INDEX claims_slot;
CREATE INDEX claims_slot ON claims (subject_key, predicate, s_user, s_tenant, s_agent,
    s_session, invalidated_at, valid_to);
CREATE INDEX claims_scope ON claims (s_user, s_tenant, s_agent, s_session);
"""
"""Schema 4's claim indexes, from schema 5's: the slot index led by the subject, and a
scope index of its own."""
