"""The PostgreSQL backend: claims, turns and vectors (pgvector) in one schema of a
PostgreSQL database, shared by every process and machine that opens it. Needs the
``postgres`` extra (psycopg 3 and pgvector), imported when a store is opened."""

from __future__ import annotations

from .store import PostgresStore

__all__ = ["PostgresStore"]
