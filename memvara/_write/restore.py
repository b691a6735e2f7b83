"""Import: an export file's records put back into a store, as they were, in one
transaction.

Nothing is settled: the rows are history, so a claim comes back with the clocks, the
state and the closer it had, not as a new fact a write would weigh against its slot.
Every check runs before the encoding (and again inside the transaction, where nothing
can change under it): the records' scopes, the predicates against this memory's
registry and store, and the ids against the store.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .._domain.model import Scope
from .._errors import ImportConflictError, InvalidArgumentError, StoreError
from ..embed import Embedder
from ..schema import BUILTIN_PREDICATES, PredicateRegistry, PredicateSpec
from ..store.base import Conflict, Store, TransferStore
from .jsonl import Records
from .jsonl_lines import reported
from .restore_governance import check_governance, restore_governance
from .encode import encode_checked

__all__ = ["ENCODE_BATCH", "restore_records", "unsupported"]

ENCODE_BATCH = 2048
"""Texts embedded per ``encode`` call."""

_SEEDS = frozenset(BUILTIN_PREDICATES)


def unsupported(store: object) -> StoreError:
    """The error for a store that cannot export or import."""
    return StoreError(f"{type(store).__name__} cannot export or import: it does not implement"
                      " memvara.store.base.TransferStore")


def _within(scope: Scope, row: Scope) -> bool:
    """Whether ``row`` lies in ``scope``'s subtree (``purge()``'s rule)."""
    levels = scope.values()
    deepest = max((i for i, v in enumerate(levels) if v is not None), default=-1)
    return row.values()[: deepest + 1] == levels[: deepest + 1]


def _check_scope(records: Records, scope: Scope) -> None:
    inside: dict[Scope, bool] = {}  # a file holds few scopes, each on many rows
    for kind, rows in (("alias", [a.owner for a in records.aliases]),
                       ("episode", [e.scope for e in records.episodes]),
                       ("claim", [c.claim.scope for c in records.claims])):
        for i, row in enumerate(rows):
            ok = inside.get(row)
            if ok is None:
                ok = inside[row] = _within(scope, row)
            if not ok:
                raise ImportConflictError(
                    records.lines[kind][i], f"the {kind} is in scope {row}, outside this"
                    f" memory's scope {scope}: import through a memory whose scope holds it")


def _conflict(records: Records, conflicts: Sequence[Conflict]) -> ImportConflictError:
    """The conflict on the earliest line, as the error to raise (a claim past the file's
    claims is one of its archived claims, which are restored with them)."""
    n = len(records.claims)

    def line(c: Conflict) -> int:
        if c.kind == "claim" and c.index >= n:
            return records.lines["archived"][c.index - n]
        return records.lines[c.kind][c.index]

    first = min(conflicts, key=line)
    return ImportConflictError(line(first), first.problem)


def _new_predicates(
    records: Records, store: Store, registry: PredicateRegistry
) -> list[PredicateSpec]:
    """The file's predicates that the store does not hold yet. One the store or the
    registry holds otherwise, or whose alias another predicate has, is a conflict."""
    persisted = {spec.name: spec for spec in store.load_predicates()}
    trial = PredicateRegistry(list(registry))
    new: list[PredicateSpec] = []
    for spec, line in zip(records.predicates, records.lines["predicate"]):
        held = persisted.get(spec.name)
        if held is not None and held != spec:
            raise ImportConflictError(line, f"predicate {spec.name!r} is {held} in this"
                                      f" store, not {spec}")
        try:
            trial.register(spec)
        except InvalidArgumentError as exc:
            raise ImportConflictError(line, f"predicate {spec.name!r}: {exc.problem}") from None
        if held is None and spec not in _SEEDS:
            new.append(spec)
    return new


def _encode(embedder: Embedder, texts: list[str]) -> npt.NDArray[np.float32]:
    """``texts`` embedded ``ENCODE_BATCH`` at a time, into one array."""
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), ENCODE_BATCH):
        out[start : start + ENCODE_BATCH] = encode_checked(
            embedder, texts[start : start + ENCODE_BATCH])
    return out


def restore_records(
    store: Store, registry: PredicateRegistry, embedder: Embedder, scope: Scope,
    records: Records,
) -> dict[str, int]:
    """Put ``records`` back into ``store`` in one transaction, as they were; every
    record must lie in ``scope``'s subtree. Embeds before the transaction opens, and
    registers the new predicates in ``registry`` once it has committed.

    Returns:
        ``predicates``, ``aliases``, ``episodes`` and ``claims`` written, and the
        ``waiting`` turns, ``archived`` claims, ``tombstones`` and ``log`` records (other
        stores') when any.

    Raises:
        ImportConflictError: the conflicting record on the earliest line; nothing is
            written.
        StoreError: the store is no ``TransferStore``.
    """
    if not isinstance(store, TransferStore):
        raise unsupported(store)
    _check_scope(records, scope)
    _new_predicates(records, store, registry)
    check_governance(store, records, scope)
    claims = [*records.claims, *(record for record, _ in records.archived)]
    found = store.restore_conflicts(claims, records.episodes, records.aliases)
    if found:  # before the encoding, which may be the slow part
        raise _conflict(records, found)
    claim_vectors = _encode(embedder, [r.claim.text for r in claims])
    episode_vectors = _encode(embedder, [e.content for e in records.episodes])
    with store.transaction():
        new = _new_predicates(records, store, registry)
        found = store.restore_conflicts(claims, records.episodes, records.aliases)
        if found:
            raise _conflict(records, found)
        store.save_predicates(new)
        counts = store.restore(claims, claim_vectors, records.episodes,
                               episode_vectors, records.aliases)
        for mark in records.waiting:
            store.mark_unextracted([mark.episode_id], mark.failed_at, mark.reason,
                                   {mark.episode_id: mark.speaker} if mark.speaker else None,
                                   mark.meta)
        counts["waiting"] = len(records.waiting)
        counts.update(restore_governance(store, records), claims=len(records.claims))
    for spec in new:
        registry.register(spec)
    counts["predicates"] = len(new)
    return reported(counts)
