"""LangGraph's search filter: ``{"field": value}`` for equality, or ``{"field": {"$op":
value}}`` with ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``; a nested dict
without operators matches a nested object field by field, a list matches a list item by
item. Checked whole before a search runs, so an unknown operator is an error naming the
filter rather than a search that quietly matches nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvara import InvalidArgumentError

__all__ = ["check_filter", "matches"]

_ORDER = {
    "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b,
}
OPERATORS = ("$eq", "$ne", *_ORDER)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_filter(spec: object, where: str = "filter") -> None:
    """Refuse a filter this store cannot apply, naming where in it the problem is.

    Raises:
        InvalidArgumentError: not a dict, a non-string field name, an unknown ``$``
            operator, or an ordering operator with a value that is not a number.
    """
    if spec is None:
        return
    if not isinstance(spec, Mapping):
        raise InvalidArgumentError(where, f"expected a dict of field conditions, got {type(spec).__name__}")
    for field, condition in spec.items():
        if not isinstance(field, str):
            raise InvalidArgumentError(where, f"field names must be strings, got {field!r:.40}")
        if isinstance(condition, Mapping) and any(str(k).startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in OPERATORS:
                    raise InvalidArgumentError(
                        f"{where}[{field!r}]", f"unknown operator {operator!r:.40}; use one of"
                        f" {', '.join(OPERATORS)}")
                if operator in _ORDER and not _number(operand):
                    raise InvalidArgumentError(
                        f"{where}[{field!r}]", f"{operator} compares numbers, got {operand!r:.40}")
        elif isinstance(condition, Mapping):
            check_filter(condition, f"{where}[{field!r}]")


def matches(value: Mapping[str, Any], spec: Mapping[str, Any] | None) -> bool:
    """Whether an item's value meets every condition of a checked filter."""
    return spec is None or all(_meets(value.get(field), condition) for field, condition in spec.items())


def _meets(have: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping):
        if any(str(k).startswith("$") for k in condition):
            return all(_apply(have, op, operand) for op, operand in condition.items())
        return isinstance(have, Mapping) and matches(have, condition)
    if isinstance(condition, (list, tuple)):
        return (isinstance(have, list) and len(have) == len(condition)
                and all(_meets(h, c) for h, c in zip(have, condition)))
    return _equal(have, condition)


def _equal(have: Any, want: Any) -> bool:
    """JSON equality: ``True`` is not ``1`` (Python's ``==`` says it is)."""
    return have == want and isinstance(have, bool) == isinstance(want, bool)


def _apply(have: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return _meets(have, operand)
    if operator == "$ne":
        return not _meets(have, operand)
    return _number(have) and bool(_ORDER[operator](have, operand))  # a non-number fails the test
