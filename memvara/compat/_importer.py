"""``import_mem0``: replay mem0's ``history.db`` into a bitemporal memory, with no model.

mem0 logs every change to a memory but can only answer with its latest text. Replayed
here, each mem0 memory becomes a single-valued slot of its own (subject: its memory id,
predicate ``mem0_memory``): every ``ADD`` and ``UPDATE`` is a claim dated by mem0's own
timestamp on both clocks, so an update ends the old text at that instant, and a
``DELETE`` retires the last one then. ``search(as_of=...)``, ``history()`` and ``why()``
then answer what mem0 believed at any moment.

Phase 1 (always) costs no model call and loses nothing. Phase 2 (``extract=True``)
reads the surviving texts with the memory's rules and model into ordinary claims, and
the receipt lists each slot that ends up with two or more live values.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .. import (
    Cardinality,
    Claim,
    Episode,
    InvalidArgumentError,
    Memvara,
    PredicateSpec,
    Scope,
    ScopedMemvara,
)
from ._history_db import Mem0Event, read_history
from ._memory import Memory

__all__ = ["MEM0_PREDICATE", "Conflict", "Mem0ImportReceipt", "import_mem0"]

MEM0_PREDICATE = "mem0_memory"
"""The predicate each imported mem0 memory's texts are filed under (single-valued)."""

_SPEC = PredicateSpec(MEM0_PREDICATE, Cardinality.ONE)
_EXTRACTOR = "mem0_import"


@dataclass(frozen=True, slots=True)
class Conflict:
    """A slot holding more than one live value after extraction."""

    subject: str
    predicate: str
    values: tuple[str, ...]
    declared: bool  # whether the predicate's cardinality is declared in the registry


@dataclass(frozen=True, slots=True)
class Mem0ImportReceipt:
    """What ``import_mem0`` replayed. ``unchanged`` counts rows already imported by an
    earlier run and updates that repeat the memory's text (mem0 logs a metadata-only
    update as an ``UPDATE``)."""

    rows: int
    memories: int
    added: int
    updated: int
    deleted: int
    unchanged: int
    llm_calls: int = 0
    extracted: int = 0
    conflicts: tuple[Conflict, ...] = ()


def _target(mem: object, scope: object) -> tuple[Memvara, Scope]:
    if isinstance(mem, Memory):
        mem, default = mem.memvara, mem.default_scope
    elif isinstance(mem, Memvara):
        default = mem.default_scope
    else:
        raise InvalidArgumentError("mem", f"expected a Memvara or a compat Memory, got {type(mem).__name__}")
    if scope is None:
        return mem, default
    if not isinstance(scope, Scope):
        raise InvalidArgumentError("scope", f"expected a Scope, got {type(scope).__name__}")
    return mem, scope


def import_mem0(
    mem: Memvara | Memory,
    *,
    history_db: str,
    scope: Scope | None = None,
    extract: bool = False,
) -> Mem0ImportReceipt:
    """Replay mem0's ``history.db`` into ``mem``, at ``scope`` (default: ``mem``'s own;
    the file records none).

    The whole file is read and checked before anything is written. The claims are
    written round by round (every memory's first new text, then every second one...),
    a transaction each, and the deletes after them; importing the same file again
    changes nothing, so an interrupted import is finished by running it again, and a
    file that has grown since adds only its new rows.

    Args:
        mem: a ``Memvara``, or a ``memvara.compat.Memory`` (its memory and default scope).
        history_db: the path of mem0's history database (``~`` is expanded).
        scope: where the memories go.
        extract: phase 2: also read the texts written by this import that are still
            live into ordinary claims, with ``mem``'s rules and model (``add()``), and
            name the slots left holding more than one live value.

    Returns:
        A ``Mem0ImportReceipt``.

    Raises:
        InvalidArgumentError: the file is missing or not a mem0 history database
            (named, with the row at fault), or a bad argument; nothing is written.
    """
    mem, scope = _target(mem, scope)
    if not isinstance(extract, bool):
        raise InvalidArgumentError("extract", f"expected True or False, got {extract!r:.40}")
    _, events = read_history(history_db)
    at = mem.scope(tenant=scope.tenant, user=scope.user, agent=scope.agent, session=scope.session)
    mem.registry.register(_SPEC)  # refuses a registry that gives the name another meaning
    mem.store.save_predicates([_SPEC])

    done: set[object] = set()
    latest: dict[str, Claim] = {}  # memory id -> its newest claim already stored
    for claim in at.get_all(predicate=MEM0_PREDICATE, states=("live", "ended", "retired")):
        if claim.extractor == _EXTRACTOR and claim.scope == scope:
            done.add(claim.meta.get("mem0_history_id"))
            latest.setdefault(claim.subject, claim)  # get_all lists newest recorded first

    text: dict[str, str] = {}  # memory id -> its text as replayed so far
    claims: list[Claim] = []
    deletes: list[Mem0Event] = []
    counts = {"ADD": 0, "UPDATE": 0, "DELETE": 0, "unchanged": 0}
    for e in events:
        if e.event == "DELETE":
            deletes.append(e)
            continue
        repeated = text.get(e.memory_id) == e.text
        text[e.memory_id] = e.text
        if repeated or e.row_id in done:
            counts["unchanged"] += 1
            continue
        counts[e.event] += 1
        claims.append(Claim(
            e.memory_id, MEM0_PREDICATE, e.text, valid_from=e.at, recorded_at=e.at,
            text=e.text, extractor=_EXTRACTOR,
            meta={"mem0_history_id": e.row_id, "mem0_event": e.event}))

    added: list[Claim] = []
    for batch in _rounds(claims):
        added += at.remember_many(batch).added
    for claim in added:
        latest[claim.subject] = claim
    for e in deletes:
        if at.delete(latest[e.memory_id].id, at=e.at):
            counts["DELETE"] += 1
        else:
            counts["unchanged"] += 1

    extracted = llm_calls = 0
    conflicts: tuple[Conflict, ...] = ()
    if extract:
        deleted = {e.memory_id for e in deletes}
        survivors = [c for c in added if c.id == latest[c.subject].id and c.subject not in deleted]
        if survivors:
            turns = [Episode(c.object, ts=c.valid_from) for c in survivors]
            phase2 = at.add(turns)
            extracted, llm_calls = len(phase2.added), phase2.llm_calls
        conflicts = _conflicts(mem, at)
    return Mem0ImportReceipt(
        rows=len(events), memories=len({e.memory_id for e in events}), added=counts["ADD"],
        updated=counts["UPDATE"], deleted=counts["DELETE"], unchanged=counts["unchanged"],
        llm_calls=llm_calls, extracted=extracted, conflicts=conflicts)


def _rounds(claims: list[Claim]) -> list[list[Claim]]:
    """The claims in rounds: the first new text of every memory, then the second, and so
    on, each round in time order. A round writes each slot once, so ``remember_many``
    settles it in bulk (a slot written twice in one call is settled claim by claim)."""
    rounds: list[list[Claim]] = []
    seen: dict[str, int] = {}
    for claim in claims:
        k = seen.get(claim.subject, 0)
        seen[claim.subject] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(claim)
    return rounds


def _conflicts(mem: Memvara, at: ScopedMemvara) -> tuple[Conflict, ...]:
    """Every slot visible at ``at`` holding two or more live values; predicates nobody
    declared come first."""
    values: dict[tuple[str, str], list[str]] = defaultdict(list)
    for claim in at.get_all():
        if claim.predicate != MEM0_PREDICATE:
            values[(claim.subject, claim.predicate)].append(claim.object)
    found = [Conflict(s, p, tuple(v), mem.registry.is_known(p))
             for (s, p), v in values.items() if len(v) > 1]
    found.sort(key=lambda c: (c.declared, c.predicate, c.subject))
    return tuple(found)
