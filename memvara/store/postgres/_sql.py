"""The read rules in PostgreSQL's dialect, compiled in exactly one place.

The same rules as ``store/sqlite/_sql.py``, fragment for fragment (scope levels stored
as ``''`` when unset; the end of valid time as believed at ``known_at``, with earlier
ends kept in ``claim_closures``), each a ``(sql, params)`` pair with ``%s`` markers.
"""

from __future__ import annotations

from collections.abc import Collection

from ..._domain.model import STATES, Scope, TimeQuery

__all__ = [
    "SCOPE_COLUMNS", "effective_closer", "effective_end", "effective_end_known", "in_force",
    "scope_exact", "scope_subtree", "scope_visible", "states_filter", "timeline", "visible",
]

Fragment = tuple[str, list[object]]

SCOPE_COLUMNS = ("s_tenant", "s_user", "s_agent", "s_session")


def scope_visible(scope: Scope, alias: str = "") -> Fragment:
    """Rows a reader at ``scope`` may see: at each level, unset or equal to the reader's."""
    parts: list[str] = []
    params: list[object] = []
    for column, value in zip(SCOPE_COLUMNS, scope.values()):
        if value is None:
            parts.append(f"{alias}{column} = ''")
        else:
            parts.append(f"{alias}{column} IN ('', %s)")
            params.append(value)
    return " AND ".join(parts), params


def scope_exact(scope: Scope, alias: str = "") -> Fragment:
    """Rows written at exactly ``scope``."""
    return (" AND ".join(f"{alias}{column} = %s" for column in SCOPE_COLUMNS),
            [value or "" for value in scope.values()])


def scope_subtree(scope: Scope, alias: str = "") -> Fragment:
    """``scope`` and every narrower scope beneath it (what a purge removes)."""
    values = scope.values()
    deepest = max((i for i, v in enumerate(values) if v is not None), default=-1)
    parts = [f"{alias}{SCOPE_COLUMNS[i]} = %s" for i in range(deepest + 1)]
    return (" AND ".join(parts) or "TRUE"), [values[i] or "" for i in range(deepest + 1)]


def _believed(tq: TimeQuery, alias: str) -> Fragment:
    return (f"{alias}recorded_at <= %s AND ({alias}invalidated_at IS NULL"
            f" OR {alias}invalidated_at > %s)", [tq.known_at, tq.known_at])


def _closure(known_at: int, alias: str, current: str, kept: str) -> Fragment:
    table = alias.rstrip(".") or "claims"
    return (
        f"(CASE WHEN {alias}valid_to_known_at <= %s THEN {alias}{current}"
        f" WHEN {alias}revised THEN (SELECT {kept} FROM claim_closures cc"
        f" WHERE cc.claim_rowid = {table}.rowid AND cc.known_at <= %s"
        f" ORDER BY cc.known_at DESC LIMIT 1) END)",
        [known_at, known_at],
    )


def effective_end(known_at: int, alias: str = "") -> Fragment:
    """The end of valid time as believed at ``known_at`` (NULL: open)."""
    return _closure(known_at, alias, "valid_to", "cc.valid_to")


def effective_end_known(known_at: int, alias: str = "") -> Fragment:
    """When the end ``effective_end`` picks was learned (NULL when it is open)."""
    return _closure(known_at, alias, "valid_to_known_at", "cc.known_at")


def effective_closer(known_at: int, alias: str = "") -> Fragment:
    """The claim whose write set the end ``effective_end`` picks (NULL: none)."""
    return _closure(known_at, alias, "ended_by", "cc.ended_by")


def in_force(tq: TimeQuery, alias: str = "") -> Fragment:
    """In force at ``valid_at`` as believed at ``known_at`` (true when it is unset)."""
    if tq.valid_at is None:
        return "TRUE", []
    end, end_params = effective_end(tq.known_at, alias)
    return (
        f"{alias}valid_from <= %s AND ({alias}valid_to IS NULL OR coalesce({end} > %s, TRUE))",
        [tq.valid_at, *end_params, tq.valid_at],
    )


def visible(tq: TimeQuery, alias: str = "") -> Fragment:
    """The visibility rule: believed at ``known_at`` and in force at ``valid_at``."""
    believed, params = _believed(tq, alias)
    force, force_params = in_force(tq, alias)
    return f"{believed} AND {force}", [*params, *force_params]


def timeline(tq: TimeQuery, alias: str = "") -> Fragment:
    """Recorded by ``known_at`` (retired rows included), in force at ``valid_at`` if set."""
    force, params = in_force(tq, alias)
    return f"{alias}recorded_at <= %s AND {force}", [tq.known_at, *params]


def _ended(tq: TimeQuery, alias: str) -> Fragment:
    believed, params = _believed(tq, alias)
    end, end_params = effective_end(tq.known_at, alias)
    if tq.valid_at is None:
        return f"{believed} AND {end} IS NOT NULL", [*params, *end_params]
    return f"{believed} AND {end} <= %s", [*params, *end_params, tq.valid_at]


def _retired(tq: TimeQuery, alias: str) -> Fragment:
    return (f"{alias}recorded_at <= %s AND {alias}invalidated_at IS NOT NULL"
            f" AND {alias}invalidated_at <= %s", [tq.known_at, tq.known_at])


def states_filter(states: Collection[str], tq: TimeQuery, alias: str = "") -> Fragment:
    """Rows in any of ``states`` as of ``tq``; all three together is the belief floor."""
    wanted = set(states)
    if wanted >= set(STATES):
        return f"{alias}recorded_at <= %s", [tq.known_at]
    builders = {"live": visible, "ended": _ended, "retired": _retired}
    parts: list[str] = []
    params: list[object] = []
    for state in STATES:
        if state in wanted:
            sql, p = builders[state](tq, alias)
            parts.append(f"({sql})")
            params.extend(p)
    return "(" + (" OR ".join(parts) or "FALSE") + ")", params
