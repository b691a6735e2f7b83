"""``export_jsonl`` and ``import_jsonl``: a memory's rows out to a JSON Lines file and
back, lossless (the format is in ``_write/jsonl_lines.py``, its reading in ``_write/jsonl.py``,
the import in ``_write/restore.py``)."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import tempfile
from collections.abc import Iterator
from typing import IO

from .._domain.model import Scope
from .._domain.time import from_micros
from .._errors import InvalidArgumentError
from .._write import jsonl as _format
from .._write import jsonl_lines as _lines
from .._write.restore import restore_records, unsupported
from ..schema import BUILTIN_PREDICATES
from ..store.base import GovernanceTransferStore, TransferStore
from .core import Core
from .governance import check_actor, logged
from .memvara import Memvara, ScopedMemvara

__all__ = ["export_jsonl", "import_jsonl"]

_WRITE_BATCH = 1024
"""Lines joined into one ``write`` call."""


def _opened(mem: object) -> tuple[Core, Scope]:
    if not isinstance(mem, (Memvara, ScopedMemvara)):
        raise InvalidArgumentError("mem", f"expected a Memvara or ScopedMemvara (for an"
                                   f" AsyncMemvara, its .sync), got {type(mem).__name__}")
    mem.flush()  # queued add(wait=False) calls land first (and check that it is open)
    return mem._core, mem.default_scope


def export_jsonl(
    mem: Memvara | ScopedMemvara, out: str | os.PathLike[str] | IO[str], *,
    include_log: bool = False,
) -> dict[str, int]:
    """Write every claim (in every state), turn and learned alias of ``mem``'s default
    scope and every scope beneath it (``purge()``'s subtree), and the store's learned
    predicates (the schema is store-wide), as JSON Lines; ``import_jsonl`` reads it back,
    losslessly.

    The first line is a header, ``{"format": "memvara", "version": 3, "exported_at": ...,
    "scope": {...}, "counts": {...}}``; then one record a line, each an object with a
    ``type``: ``predicate``, ``alias``, ``episode`` (``Episode.to_dict()``), ``waiting``
    (a turn the model failed on, still waiting for ``retry_extraction()``: when and why,
    who said it, its call's meta) and ``claim`` (``Claim.to_dict()``, with an
    ``internal`` object where the store keeps more: the entity key it is filed under
    when that is not its subject's fold, the claim that ended it, its earlier ends, its
    storage strength). Records come in that order, each type
    oldest first, so one store exports the same bytes every time (but for
    ``exported_at``). Only rows a scope holds travel: an export below the user level
    carries no aliases (they belong to the user). The export reads one state of the
    store; writers go on meanwhile (for an in-memory store, they wait). After the claims
    come ``prune()``'s archived claims (``archived``) and ``forget_subject()``'s
    tombstones of those scopes, and with ``include_log=True`` the write log.

    Args:
        mem: the memory, or a handle on one of its scopes.
        out: a path, written whole or not at all (a temporary file beside it, renamed
            over it at the end; readable by its owner only), or a writable text stream.
        include_log: also write the store's write log and the logs it imported, each
            record as stored (from the root scope only: the log covers the whole store).
            ``import_jsonl`` checks each chain and keeps it beside the importing store's
            own. Off by default: a log is the history of one store, and a store that
            imports it writes a chain of its own.

    Returns:
        How many ``predicates``, ``aliases``, ``episodes`` and ``claims`` were written,
        and how many ``waiting`` turns, ``archived`` claims, ``tombstones`` and ``log``
        records when any were.

    Raises:
        InvalidArgumentError: ``mem`` or ``out`` is not one of those (a binary stream, a
            folder, a path in a folder that does not exist).
        StoreError: the store cannot export (it is no ``TransferStore``).
        OSError: the file cannot be written.
        BackgroundWriteError: a queued ``add(wait=False)`` failed (nothing was written).
    """
    core, scope = _opened(mem)
    if not isinstance(include_log, bool):
        raise InvalidArgumentError("include_log", f"expected True or False, got {include_log!r:.40}")
    if include_log and scope.values() != (None, None, None, None):
        raise InvalidArgumentError("include_log", "the write log covers the whole store: export"
                                   " it from a memory at the root scope")
    if isinstance(out, (str, os.PathLike)):
        return _to_path(core, scope, os.fspath(out), include_log)
    if not callable(getattr(out, "write", None)):
        raise InvalidArgumentError("out", f"expected a path or a writable text stream, got"
                                   f" {type(out).__name__}")
    if isinstance(out, (io.RawIOBase, io.BufferedIOBase)):
        raise InvalidArgumentError("out", f"expected a text stream, got a binary one"
                                   f" ({type(out).__name__}): open the file in text mode,"
                                   " encoding='utf-8'")
    return _write(core, scope, out, include_log)


def _to_path(core: Core, scope: Scope, path: str, include_log: bool) -> dict[str, int]:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):  # checked here: the temporary file's name would be the one shown
        raise InvalidArgumentError("out", f"{path} is a folder; pass the path of a file to"
                                   f" write, such as {os.path.join(path, 'memory.jsonl')}")
    if not os.path.isdir(folder):
        state = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise InvalidArgumentError("out", f"{path}: the folder {folder} {state}; create it"
                                   " first, or pass a path in a folder that exists")
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            counts = _write(core, scope, handle, include_log)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temp)
        raise
    return counts


def _write(core: Core, scope: Scope, out: IO[str], include_log: bool) -> dict[str, int]:
    store = core.store
    if not isinstance(store, TransferStore):
        raise unsupported(store)
    seeds = set(BUILTIN_PREDICATES)
    with store.snapshot():
        predicates = [spec for spec in store.load_predicates() if spec not in seeds]
        governance = _governance_lines(store, scope, include_log)
        waiting = store.dump_waiting(scope)
        counts = {"predicates": len(predicates), **store.dump_counts(scope),
                  "waiting": len(waiting),
                  **{kind: len(lines) for kind, lines in governance.items()}}
        lines: Iterator[str] = iter([
            _lines.header_line(scope, from_micros(core.writer.now()), counts),
            *map(_lines.predicate_line, predicates),
            *map(_lines.alias_line, store.dump_aliases(scope)),
        ])
        for chunk in (lines, map(_lines.episode_line, store.dump_episodes(scope)),
                      map(_lines.waiting_line, waiting),
                      map(_lines.claim_line, store.dump_claims(scope)),
                      *(iter(governance[kind]) for kind in
                        ("archived", "tombstones", "reviews", "evidence", "log"))):
            batch: list[str] = []
            for line in chunk:
                batch.append(line)
                if len(batch) == _WRITE_BATCH:
                    out.write("".join(batch))
                    batch.clear()
            out.write("".join(batch))
    return _lines.reported(counts)


def import_jsonl(
    mem: Memvara | ScopedMemvara, source: str | os.PathLike[str] | IO[str], *,
    actor: str | None = None,
) -> dict[str, int]:
    """Read a file ``export_jsonl`` wrote and put its records back into ``mem``'s store
    as they were, in one transaction: all of them or, on any error, none.

    Ids, both clocks, states, what retired or ended each claim, sources, metadata,
    observations, salience and scopes come back exactly, so exporting the same rows
    again gives the same record lines. Nothing is settled against what the store holds
    (the rows are history, not new facts), and the redactor does not run. Claims and
    turns are indexed for text search and embedded with ``mem``'s embedder (before the
    transaction opens; the vectors are held in memory, ``4 * dim`` bytes a row).

    Rows keep their own scopes, whatever ``mem``'s default scope is; each must lie in
    that scope's subtree (an export taken at the root goes back through a root memory).
    An id the store holds already is refused, never overwritten; so is a claim whose
    row (a claim id names its row) another claim holds. An alias or predicate the store
    already has, the same, is kept as it is; a different one is refused.

    Args:
        mem: the memory, or a handle on one of its scopes.
        source: a path, or a readable text stream.
        actor: who imports, named in the write log (default: the scope's agent, else
            its user). Each claim keeps the actor its line carries, for ``why()``.

    Returns:
        How many ``predicates``, ``aliases``, ``episodes`` and ``claims`` were added,
        and how many ``waiting`` turns, ``archived`` claims, ``tombstones`` and ``log``
        records when any were.

    Raises:
        InvalidExportError: the file is not a sound export this memvara reads (bad JSON,
            no header, a newer version, an unknown type, a bad or missing field, an
            instant without its offset, a repeated id, cut short); names the line.
        ImportConflictError: a record the store cannot take (above); names the line.
        InvalidArgumentError: ``mem`` or ``source`` is not one of those.
        StoreError: the store cannot import (it is no ``TransferStore``).
        OSError: the file cannot be read.
    """
    core, scope = _opened(mem)
    check_actor(actor, scope)
    if not isinstance(source, (str, os.PathLike)) and not callable(getattr(source, "read", None)):
        raise InvalidArgumentError("source", f"expected a path or a readable text stream, got"
                                   f" {type(source).__name__}")
    with _collector_paused():
        if isinstance(source, (str, os.PathLike)):
            with open(source, encoding="utf-8") as handle:
                records = _format.read_records(handle)
        else:
            records = _format.read_records(source)
        try:
            with logged(core, "import_jsonl", scope, actor):
                return restore_records(core.store, core.registry, core.embedder, scope, records)
        finally:
            core.aliases.reload()  # an alias written behind the cache, or none: read afresh


def _governance_lines(store: object, scope: Scope, include_log: bool) -> dict[str, list[str]]:
    """The archive, tombstones, reviews and evidence of ``scope``'s subtree and, when
    asked, the write logs
    (this store's chain and those imported), as lines; none from a store without them."""
    if not isinstance(store, GovernanceTransferStore):
        return {"archived": [], "tombstones": [], "reviews": [], "evidence": [], "log": []}
    reviews = store.dump_reviews(scope)
    log: list[str] = []
    if include_log:
        mine = store.log_identity()
        log = [_lines.log_line(mine, r) for r in store.log_records(0, 2**62)]
        log += [_lines.log_line(source, r) for source, r in store.foreign_logs()]
    return {
        "archived": [_lines.archived_line(r, at) for r, at in store.dump_archived(scope)],
        "tombstones": [_lines.tombstone_line(t) for t in store.tombstones()
                       if scope.holds(Scope.from_dict(t["scope"]))],
        "reviews": [_lines.review_line(r) for r in reviews if "ground" not in r],
        "evidence": [_lines.review_line(r) for r in reviews if "ground" in r],
        "log": log,
    }



@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one import: reading a file builds a few
    objects a record that all live until the end, and each full collection walks them
    all again (30% of the reading's CPU at 100,000 claims, none of it finding a cycle:
    records hold none). Reference counting still frees everything as usual."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()

