"""The read rules, compiled to SQL in exactly one place.

Every read in the SQLite backend is built from these pure functions, each returning
``(sql, params)`` so it can be tested as text. Nothing else in the package writes a
visibility, state or scope predicate.

Scope levels are stored as ``''`` when unset (never NULL), so ``col IN ('', ?)`` stays
an indexable equality instead of an ``OR ... IS NULL`` the planner cannot use.
"""

from __future__ import annotations

from collections.abc import Collection

from ..._domain.model import STATES, Scope, TimeQuery

__all__ = [
    "SCOPE_COLUMNS",
    "deepest_level",
    "effective_closer",
    "effective_end",
    "effective_end_known",
    "in_force",
    "scope_exact",
    "scope_subtree",
    "scope_visible",
    "states_filter",
    "timeline",
    "visible",
]

Fragment = tuple[str, list[object]]

SCOPE_COLUMNS = ("s_tenant", "s_user", "s_agent", "s_session")


def scope_visible(scope: Scope, alias: str = "") -> Fragment:
    """Rows a reader at ``scope`` may see: at each level, unset or equal to the reader's.

    A reader inherits broader memory and never sees a narrower scope's rows: where the
    reader's level is unset, only rows that leave it unset qualify.
    """
    parts: list[str] = []
    params: list[object] = []
    for column, value in zip(SCOPE_COLUMNS, scope.values()):
        if value is None:
            parts.append(f"{alias}{column} = ''")
        else:
            parts.append(f"{alias}{column} IN ('', ?)")
            params.append(value)
    return " AND ".join(parts), params


def scope_exact(scope: Scope, alias: str = "") -> Fragment:
    """Rows written at exactly ``scope``: the rows a write at ``scope`` may change."""
    parts = [f"{alias}{column} = ?" for column in SCOPE_COLUMNS]
    return " AND ".join(parts), [value or "" for value in scope.values()]


def deepest_level(scope: Scope) -> int:
    """The index in ``SCOPE_COLUMNS`` of the deepest level ``scope`` sets; -1 at the
    root. ``scope_subtree`` holds the levels down to it equal."""
    return max((i for i, v in enumerate(scope.values()) if v is not None), default=-1)


def scope_subtree(scope: Scope, alias: str = "") -> Fragment:
    """``scope`` and every narrower scope beneath it: what a purge removes.

    Levels down to the deepest one the scope sets must match exactly (unset matching
    unset); levels below it match anything, so a user's subtree holds that user's agents
    and sessions as well. The root scope's subtree is the whole store.
    """
    values = scope.values()
    deepest = deepest_level(scope)
    parts = [f"{alias}{SCOPE_COLUMNS[i]} = ?" for i in range(deepest + 1)]
    params: list[object] = [values[i] or "" for i in range(deepest + 1)]
    return (" AND ".join(parts) or "1"), params


def _believed(tq: TimeQuery, alias: str) -> Fragment:
    return (
        f"{alias}recorded_at <= ? AND ({alias}invalidated_at IS NULL OR {alias}invalidated_at > ?)",
        [tq.known_at, tq.known_at],
    )


def effective_end(known_at: int, alias: str = "") -> Fragment:
    """The end of valid time as believed at ``known_at`` (NULL: open).

    The stored ``valid_to`` counts once it was learned (``valid_to_known_at <= K``).
    Before that, a claim whose end was revised falls back to the latest earlier end
    already learned at ``K`` (kept in ``claim_closures``); otherwise it is open.
    """
    table = alias.rstrip(".") or "claims"
    return (
        f"(CASE WHEN {alias}valid_to_known_at <= ? THEN {alias}valid_to"
        f" WHEN {alias}revised THEN (SELECT cc.valid_to FROM claim_closures cc"
        f" WHERE cc.claim_rowid = {table}.rowid AND cc.known_at <= ?"
        f" ORDER BY cc.known_at DESC LIMIT 1) END)",
        [known_at, known_at],
    )


def effective_end_known(known_at: int, alias: str = "") -> Fragment:
    """When the end ``effective_end`` picks was learned (NULL when it is open)."""
    table = alias.rstrip(".") or "claims"
    return (
        f"(CASE WHEN {alias}valid_to_known_at <= ? THEN {alias}valid_to_known_at"
        f" WHEN {alias}revised THEN (SELECT max(cc.known_at) FROM claim_closures cc"
        f" WHERE cc.claim_rowid = {table}.rowid AND cc.known_at <= ?) END)",
        [known_at, known_at],
    )


def effective_closer(known_at: int, alias: str = "") -> Fragment:
    """The claim whose write set the end ``effective_end`` picks (NULL: none known, or
    an end written without one), read the same way: the current closer once its end was
    learned, else the closer of the latest earlier end kept in ``claim_closures``."""
    table = alias.rstrip(".") or "claims"
    return (
        f"(CASE WHEN {alias}valid_to_known_at <= ? THEN {alias}ended_by"
        f" WHEN {alias}revised THEN (SELECT cc.ended_by FROM claim_closures cc"
        f" WHERE cc.claim_rowid = {table}.rowid AND cc.known_at <= ?"
        f" ORDER BY cc.known_at DESC LIMIT 1) END)",
        [known_at, known_at],
    )


def in_force(tq: TimeQuery, alias: str = "") -> Fragment:
    """In force at ``valid_at`` as believed at ``known_at``: ``valid_from <= V < end``.

    Always true when ``valid_at`` is unset.
    """
    if tq.valid_at is None:
        return "1", []
    end, end_params = effective_end(tq.known_at, alias)
    return (
        f"{alias}valid_from <= ? AND ({alias}valid_to IS NULL OR coalesce({end} > ?, 1))",
        [tq.valid_at, *end_params, tq.valid_at],
    )


def visible(tq: TimeQuery, alias: str = "") -> Fragment:
    """The visibility rule: believed at ``known_at`` and in force at ``valid_at``.

    ``recorded_at <= K < invalidated_at`` and ``valid_from <= V < valid_to``, where the
    end is the one believed at ``K`` (an end learned later is still open to this reader).
    With ``valid_at`` unset only the belief half applies.
    """
    believed, params = _believed(tq, alias)
    force, force_params = in_force(tq, alias)
    return f"{believed} AND {force}", [*params, *force_params]


def timeline(tq: TimeQuery, alias: str = "") -> Fragment:
    """A slot's history at ``tq``: recorded by ``known_at`` (retired rows included), and
    in force at ``valid_at`` when one is given."""
    force, params = in_force(tq, alias)
    return f"{alias}recorded_at <= ? AND {force}", [tq.known_at, *params]


def _ended(tq: TimeQuery, alias: str) -> Fragment:
    believed, params = _believed(tq, alias)
    end, end_params = effective_end(tq.known_at, alias)
    if tq.valid_at is None:
        return f"{believed} AND {end} IS NOT NULL", [*params, *end_params]
    return f"{believed} AND {end} <= ?", [*params, *end_params, tq.valid_at]


def _retired(tq: TimeQuery, alias: str) -> Fragment:
    return (
        f"{alias}recorded_at <= ? AND {alias}invalidated_at IS NOT NULL"
        f" AND {alias}invalidated_at <= ?",
        [tq.known_at, tq.known_at],
    )


def states_filter(states: Collection[str], tq: TimeQuery, alias: str = "") -> Fragment:
    """Rows in any of ``states`` as of ``tq``.

    ``live`` is the visibility rule; ``ended`` is believed with an end (already learned)
    at or before ``valid_at``; ``retired`` is belief withdrawn by ``known_at``. All three
    together is not their union but the belief floor alone (``recorded_at <= K``): the
    audit view, which also admits a claim scheduled to start after ``valid_at``.
    """
    wanted = set(states)
    if wanted >= set(STATES):
        return f"{alias}recorded_at <= ?", [tq.known_at]
    builders = {"live": visible, "ended": _ended, "retired": _retired}
    parts: list[str] = []
    params: list[object] = []
    for state in STATES:
        if state in wanted:
            sql, p = builders[state](tq, alias)
            parts.append(f"({sql})")
            params.extend(p)
    return "(" + " OR ".join(parts) + ")", params
