"""Every exception memvara raises, in one tree.

::

    MemvaraError
    ├── InvalidArgumentError (also ValueError)   a public call got a value it cannot use
    │   ├── InvalidTimeError                      an instant or interval that is not usable
    │   └── InvalidExportError                    import_jsonl() cannot read the file
    ├── ImportConflictError                       a record the target memory cannot take
    ├── ClaimNotFoundError (also LookupError)     an id names no claim visible in this scope
    ├── ClosedError                               the object was used after close()
    ├── BackgroundWriteError                      queued add(wait=False) calls failed
    ├── LLMError (in memvara.llm)                 the model call failed
    │   └── ExtractionPendingError                ... inside add(); its turns wait, stored
    └── StoreError                                the storage layer failed
        ├── NotAStoreError                        the file is not a memvara store
        ├── SchemaVersionError                    the file was written by a newer memvara
        ├── DimensionMismatchError                vectors of another width than the store's
        ├── StoreLockedError                      another writer held the store too long
        ├── ReadOnlyStoreError                    the store cannot be written
        ├── StorageFullError                      the disk or the file size limit is full
        └── StoreCorruptError                     the file failed to read back

Each class carries a stable ``code`` string, suitable for machine-readable error payloads.
Backend exceptions (``sqlite3.*``) are translated at the store seam and chained with
``raise ... from exc``; none reaches a caller untranslated.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BackgroundWriteError",
    "ClaimNotFoundError",
    "ClosedError",
    "DimensionMismatchError",
    "ImportConflictError",
    "InvalidArgumentError",
    "InvalidExportError",
    "InvalidTimeError",
    "MemvaraError",
    "NotAStoreError",
    "ReadOnlyStoreError",
    "SchemaVersionError",
    "StorageFullError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
]


class MemvaraError(Exception):
    """Base of every error memvara raises on purpose."""

    code = "memvara_error"

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its message and attributes, so an error crosses a process boundary
        (a pool, a queue) whole; the subclasses' own ``__init__`` takes other arguments."""
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


def _rebuilt(
    cls: type[MemvaraError], args: tuple[object, ...], state: dict[str, object]
) -> MemvaraError:
    error = cls.__new__(cls, *args)  # BaseException.__new__ keeps the args
    error.__dict__.update(state)
    return error


class InvalidArgumentError(MemvaraError, ValueError):
    """A public call received an argument it cannot use; the message names it."""

    code = "invalid_argument"

    def __init__(self, argument: str, problem: str) -> None:
        self.argument = argument
        self.problem = problem
        super().__init__(f"{argument}: {problem}")


class InvalidTimeError(InvalidArgumentError):
    """An instant is not a datetime, or an interval ends before it starts."""

    code = "invalid_time"


class InvalidExportError(InvalidArgumentError):
    """A file ``import_jsonl()`` cannot read: not JSON Lines, not a memvara export, from
    a newer memvara, cut short, or holding a bad or repeated record; ``line`` names where
    (1 is the header)."""

    code = "invalid_export"

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        super().__init__("source", f"line {line}: {problem}")


class ImportConflictError(MemvaraError):
    """A record of a sound export that the target memory cannot take as it is: its id
    (or its row) is held already, it differs from the memory's own alias or predicate, or
    it lies outside the memory's scope; ``line`` names it. Nothing was imported."""

    code = "import_conflict"

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"source: line {line}: {problem}")


class ClaimNotFoundError(MemvaraError, LookupError):
    """No claim with this id is visible from the caller's scope."""

    code = "claim_not_found"

    def __init__(self, claim_id: str, problem: str = "", *, argument: str = "claim_id") -> None:
        self.claim_id = claim_id
        self.argument = argument
        super().__init__(f"{argument}: {problem or f'no claim {claim_id!r} is visible in this scope'}")


class ClosedError(MemvaraError):
    """The memory (or its store) was used after close()."""

    code = "closed"


class BackgroundWriteError(MemvaraError):
    """Calls queued with ``add(..., wait=False)`` failed; ``errors`` holds each one's
    exception (also in its ``Future``), the first chained as the cause."""

    code = "background_write_failed"

    def __init__(self, errors: Sequence[BaseException]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(
            f"{len(self.errors)} queued write(s) failed; the first:"
            f" {type(first).__name__}: {first}{more}"
        )


class StoreError(MemvaraError):
    """The storage layer failed; the store is unchanged by the failed call."""

    code = "store_error"


class NotAStoreError(StoreError):
    """The file exists but is not a memvara store (or not a database at all)."""

    code = "not_a_store"


class SchemaVersionError(StoreError):
    """The store was written by a newer memvara whose schema this version does not know."""

    code = "schema_too_new"


class DimensionMismatchError(StoreError):
    """An embedder's vectors do not have the width the store was created with."""

    code = "dimension_mismatch"


class StoreLockedError(StoreError):
    """Another connection held the write lock past the busy timeout."""

    code = "store_locked"


class ReadOnlyStoreError(StoreError):
    """The store's file or directory cannot be written."""

    code = "read_only"


class StorageFullError(StoreError):
    """The disk, or a size limit on the file, is full; the write was rolled back."""

    code = "storage_full"


class StoreCorruptError(StoreError):
    """The store's file failed to read back (a damaged page, a truncated sidecar)."""

    code = "store_corrupt"
