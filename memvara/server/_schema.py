"""The small part of JSON Schema the tools' input schemas use, checked in Python.

The schemas a client reads in ``tools/list`` are the ones arguments are checked against,
so the two cannot drift apart. Only the keywords those schemas use are understood:
``type``, ``enum``, ``minimum``, ``maximum``, ``minLength``, ``items``, ``properties``,
``required``, ``additionalProperties`` (false), ``anyOf`` and ``format: date-time``
(an ISO-8601 instant with a UTC offset, read by ``memvara.parse_instant``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvara import InvalidTimeError, parse_instant

__all__ = ["ArgumentError", "check"]

Schema = Mapping[str, Any]

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


class ArgumentError(Exception):
    """A tool's argument does not fit its schema; ``field`` names it (``messages[2].role``)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


def _type_name(value: object) -> str:
    """The JSON type of a value ``json.loads`` made."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: True is an int to Python
        return "boolean"
    return {int: "integer", float: "number", str: "string", dict: "object",
            list: "array"}[type(value)]


def _fits_type(value: object, wanted: str) -> bool:
    if isinstance(value, bool):
        return wanted == "boolean"
    if wanted == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, _TYPES[wanted])


def check(value: Any, schema: Schema, field: str) -> Any:
    """``value`` checked against ``schema``; an integral float comes back an ``int``.

    Raises:
        ArgumentError: the first thing that does not fit, naming its field.
    """
    if "anyOf" in schema:
        for option in schema["anyOf"]:  # the options differ in type: the one that fits
            if _fits_type(value, option["type"]):
                return check(value, option, field)
        raise ArgumentError(field, f"{schema['description']}; got {_type_name(value)}")
    wanted = schema["type"]
    if not _fits_type(value, wanted):
        raise ArgumentError(field, f"expected {wanted}, got {_type_name(value)}")
    if wanted == "integer":
        value = int(value)
    if "enum" in schema and value not in schema["enum"]:
        raise ArgumentError(field, f"must be one of {', '.join(map(str, schema['enum']))};"
                                   f" got {value!r:.60}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ArgumentError(field, f"must be at least {schema['minimum']}, got {value}")
    if "maximum" in schema and value > schema["maximum"]:
        raise ArgumentError(field, f"must be at most {schema['maximum']}, got {value}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise ArgumentError(field, "must not be empty")
    if schema.get("format") == "date-time":
        try:
            parse_instant(value, field)
        except InvalidTimeError as exc:
            raise ArgumentError(field, exc.problem) from None
    if wanted == "array":
        return [check(item, schema["items"], f"{field}[{i}]") for i, item in enumerate(value)]
    if wanted == "object":
        return _check_object(value, schema, field)
    return value


def _check_object(value: dict[str, Any], schema: Schema, field: str) -> dict[str, Any]:
    properties: Mapping[str, Schema] = schema.get("properties", {})
    prefix = f"{field}." if field else ""
    for name in schema.get("required", ()):
        if name not in value:
            raise ArgumentError(prefix + name, "missing; it is required")
    checked: dict[str, Any] = {}
    for name, item in value.items():
        if name in properties:
            checked[name] = check(item, properties[name], prefix + name)
        elif schema.get("additionalProperties", True) is False:
            known = f"the arguments are {', '.join(properties)}" if properties else "there are none"
            raise ArgumentError(prefix + name, f"unknown argument; {known}")
        else:
            checked[name] = item
    return checked
