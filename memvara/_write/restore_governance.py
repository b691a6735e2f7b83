"""Import of what governance keeps: ``prune()``'s archive, ``forget_subject()``'s
tombstones and the write logs, checked before anything is written and restored inside
the import's transaction (``restore.py`` calls both halves).

An archived claim comes back through the same path as a claim (same conflicts, same
vectors) and is then moved to the archive at the instant it was archived. Another
store's write log cannot join this store's chain (each chain starts from its own
store's genesis), so it is kept beside it, whole, after its chain is checked here.
"""

from __future__ import annotations

from .._domain.ledger import genesis, record_hash
from .._domain.model import Scope
from .._errors import ImportConflictError, InvalidExportError, StoreError
from ..store.base import GovernanceTransferStore, Store
from .jsonl import Records

__all__ = ["check_governance", "restore_governance"]


def _within(scope: Scope, row: Scope) -> bool:
    levels = scope.values()
    deepest = max((i for i, v in enumerate(levels) if v is not None), default=-1)
    return row.values()[: deepest + 1] == levels[: deepest + 1]


def _row(claim_id: str) -> str:
    return claim_id.partition("-")[0]


def check_governance(store: Store, records: Records, scope: Scope) -> None:
    """Refuse, before anything is written: governance records a store cannot keep, ones
    outside ``scope``'s subtree, a log chain that does not hold, and ids held already
    (a claim or an archived claim whose row the store's archive holds)."""
    if isinstance(store, GovernanceTransferStore):
        held_rows = {_row(r.claim.id) for r, _ in store.dump_archived(Scope())}
        for kind, ids in (("claim", [r.claim.id for r in records.claims]),
                          ("archived", [r.claim.id for r, _ in records.archived])):
            for i, claim_id in enumerate(ids):
                if _row(claim_id) in held_rows:
                    raise ImportConflictError(records.lines[kind][i], f"claim {claim_id!r:.40}:"
                                              " its row is in this store's archive")
    if not (records.archived or records.tombstones or records.reviews or records.evidence
            or records.log):
        return
    if not isinstance(store, GovernanceTransferStore):
        raise StoreError(f"{type(store).__name__} cannot keep the file's archive, tombstones"
                         " or write log (it is no GovernanceTransferStore)")
    for i, (archived, _) in enumerate(records.archived):
        if not _within(scope, archived.claim.scope):
            raise ImportConflictError(records.lines["archived"][i], f"the archived claim is in"
                                      f" scope {archived.claim.scope}, outside {scope}")
    held = {t["id"] for t in store.tombstones()}
    for i, tomb in enumerate(records.tombstones):
        if not _within(scope, Scope.from_dict(tomb["scope"])):
            raise ImportConflictError(records.lines["tombstone"][i], f"the tombstone's scope"
                                      f" {tomb['scope']} is outside {scope}")
        if tomb["id"] in held:
            raise ImportConflictError(records.lines["tombstone"][i],
                                      f"tombstone {tomb['id']!r:.40} is in this store already")
    reviewed = {r.id for r in store.reviews(Scope(), open_only=False)}
    for kind, rows in (("review", records.reviews), ("evidence", records.evidence)):
        for i, row in enumerate(rows):
            if not _within(scope, Scope.from_dict(row["scope"])):
                raise ImportConflictError(records.lines[kind][i], f"the {kind} is in scope"
                                          f" {row['scope']}, outside {scope}")
            if kind == "review" and row["id"] in reviewed:
                raise ImportConflictError(records.lines[kind][i],
                                          f"review {row['id']!r:.20} is in this store already")
    if records.log and scope.values() != (None, None, None, None):
        raise ImportConflictError(records.lines["log"][0], "a write log goes into a memory at"
                                  " the root scope only (it covers the whole store)")
    kept = {(source, record[0]) for source, record in store.foreign_logs()}
    heads: dict[str, tuple[int, str]] = {}
    for (source, record), line in zip(records.log, records.lines["log"]):
        seq, at, actor, action, body, digest = record
        last, prev = heads.get(source, (0, genesis(source)))
        if seq != last + 1 or record_hash(prev, seq, at, actor, action, body) != digest:
            raise InvalidExportError(line, f"log record {seq} of store {source} does not chain"
                                     f" to record {last}: the log was edited")
        if (source, seq) in kept:
            raise ImportConflictError(line, f"log record {seq} of store {source} is here already")
        heads[source] = (seq, digest)


def restore_governance(store: Store, records: Records) -> dict[str, int]:
    """Inside the import's transaction, after the claims: archive, tombstones, logs."""
    if not isinstance(store, GovernanceTransferStore):
        return {"archived": 0, "tombstones": 0, "reviews": 0, "evidence": 0, "log": 0}
    if records.reviews or records.evidence:
        store.restore_reviews([*records.reviews, *records.evidence])
    return {
        "archived": store.archive_restored([(r.claim.id, at) for r, at in records.archived]),
        "tombstones": store.restore_tombstones(records.tombstones) if records.tombstones else 0,
        "reviews": len(records.reviews), "evidence": len(records.evidence),
        "log": store.restore_logs(records.log) if records.log else 0,
    }
