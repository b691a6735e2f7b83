"""What counts as a usable model reply: the one validator every backend shares.

A backend is transport and nothing more. It hands the text it got back to
``payload_from_text`` and the parsed JSON to ``claims_from_payload`` (or
``spec_from_payload``, ``match_from_payload``), so the same reply becomes the same claims
whichever model wrote it. Nothing here raises on a bad reply: an unusable item is dropped
and described in one problem string, and the rest of the reply is kept. The only errors
raised are for the caller's own arguments (turns without ids), which no reply can cause.

The extraction reply is ``{"claims": [item, ...]}``, each item::

    subject, predicate, object   strings, required; the predicate is normalized
                                 to snake_case ("Lives In" -> "lives_in")
    polarity      1 or -1 (true or false); default 1
    confidence    a finite number from 0 to 1; default DEFAULT_CONFIDENCE
    memory_type   "semantic", "episodic" or "procedural"; default "semantic"
    turn          0-based index into the turns sent; may be left out when one turn was sent
    valid_from    ISO 8601 "YYYY", "YYYY-MM", "YYYY-MM-DD" or a date and time with an
                  optional offset ("2024-03-01T09:30:00Z"); default none

``null`` is read as "left out". Keys not listed are ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import cast

from .._errors import InvalidArgumentError
from .._domain.model import MEMORY_TYPES, Claim, Episode
from ..schema import Cardinality, PredicateSpec, Volatility, normalize_predicate

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MAX_TEXT",
    "check_turns",
    "payload_problem",
    "claims_from_payload",
    "match_from_payload",
    "payload_from_text",
    "spec_from_payload",
]

DEFAULT_CONFIDENCE = 0.8
"""The confidence of a model claim that states none: below a caller's explicit 1.0."""

MAX_TEXT = 1_000
"""The longest subject, predicate or object accepted from a model, in characters."""

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_INSTANT = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?"
    r"(Z|[+-]\d{2}:?\d{2})?)?)?)?",
    re.ASCII | re.IGNORECASE,
)
_CARDINALITIES = {c.value: c for c in Cardinality}
_VOLATILITIES = {v.value: v for v in Volatility}


def check_turns(turns: object) -> tuple[Episode, ...]:
    """The turns as a tuple, each a stored ``Episode``.

    Raises:
        InvalidArgumentError: ``turns`` is not a sequence of ``Episode``, an episode has no
            id (claims cite their turn by id, so turns must be stored first), or its
            content is not valid Unicode text.
    """
    if isinstance(turns, (str, bytes)) or not isinstance(turns, Sequence):
        raise InvalidArgumentError("turns", "expected a sequence of Episode")
    batch = tuple(turns)
    for index, turn in enumerate(batch):
        where = f"turns[{index}]"
        if not isinstance(turn, Episode):
            raise InvalidArgumentError(where, f"expected an Episode, got {type(turn).__name__}")
        if not isinstance(turn.id, str) or not turn.id:
            raise InvalidArgumentError(
                where, "has no id; store the episode before extracting from it"
            )
        if not isinstance(turn.content, str) or _surrogate_at(turn.content) is not None:
            raise InvalidArgumentError(where, "content is not valid Unicode text")
    return batch


def payload_from_text(text: str) -> tuple[object, str | None]:
    """Parse a model's reply as JSON: ``(payload, None)``, or ``(None, problem)``.

    A fenced block (```` ```json ... ``` ````) is read from inside its fence, and prose
    around a bare object is cut away at the outermost braces.
    """
    body = text.strip()
    if not body:
        return None, "reply: empty"
    fenced = _FENCE.search(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    elif not body.startswith(("{", "[")):
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end:
            body = body[start : end + 1]
    try:
        return json.loads(body), None
    except (ValueError, RecursionError) as exc:
        return None, f"reply: not JSON ({type(exc).__name__}): {text!r:.120}"


def payload_problem(payload: object) -> str | None:
    """Why an extraction reply is not ``{"claims": [...]}`` at all, or ``None`` if it is."""
    if not isinstance(payload, Mapping):
        return f"payload: expected a JSON object, got {_kind(payload)}"
    items = payload.get("claims")
    if items is None:
        return "payload.claims: missing"
    if not isinstance(items, list):
        return f"payload.claims: expected a list, got {_kind(items)}"
    return None


def claims_from_payload(
    payload: object, turns: Sequence[Episode], *, extractor: str
) -> tuple[list[Claim], list[str]]:
    """The claims in an extraction reply, and one problem string per item dropped.

    Args:
        payload: the parsed JSON reply, ``{"claims": [...]}`` (see the module docstring).
        turns: the stored episodes the reply was asked about, in the order sent; a
            claim's ``sources`` is the id of the turn it cites.
        extractor: recorded on every claim, naming what produced it.

    Returns:
        ``(claims, problems)``. Claims carry the triple, polarity, confidence, memory type,
        ``valid_from`` (aware UTC, or ``None``), ``sources`` and ``extractor``; every other
        field is left at its default for the write path to fill. A problem reads like
        ``"claims[3].object: empty"``; a payload that is not ``{"claims": [...]}`` gives
        no claims and one problem.

    Raises:
        InvalidArgumentError: ``turns`` are not stored episodes (see ``check_turns``).
    """
    batch = check_turns(turns)
    problem = payload_problem(payload)
    if problem is not None:
        return [], [problem]
    items = cast("list[object]", cast("Mapping[str, object]", payload)["claims"])  # (checked)
    claims: list[Claim] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        claim, item_problems = _claim(item, f"claims[{index}]", batch, extractor)
        if claim is None:
            problems.append("; ".join(item_problems))
        else:
            claims.append(claim)
    return claims, problems


def spec_from_payload(payload: object, name: str) -> PredicateSpec | None:
    """The spec in a classification reply, or ``None`` if the reply is malformed.

    Args:
        payload: ``{"cardinality": "one"|"many", "volatility": "static"|"slow"|"fast"}``.
        name: the predicate asked about.

    Raises:
        InvalidArgumentError: ``name`` is not a usable predicate name.
    """
    name = normalize_predicate(name)
    if not isinstance(payload, Mapping):
        return None
    cardinality = _CARDINALITIES.get(_word(payload.get("cardinality")))
    volatility = _VOLATILITIES.get(_word(payload.get("volatility")))
    if cardinality is None or volatility is None:
        return None
    return PredicateSpec(name, cardinality, volatility)


def match_from_payload(payload: object, candidates: Sequence[str]) -> str | None:
    """The candidate an entity-resolution reply names, or ``None``.

    ``payload`` is ``{"match": "<candidate>"}`` or ``{"match": null}``. Only a string that
    equals one of ``candidates`` (after trimming whitespace) counts; the candidate is
    returned as given, so a model cannot introduce a new spelling.
    """
    if not isinstance(payload, Mapping):
        return None
    match = payload.get("match")
    if not isinstance(match, str):
        return None
    match = match.strip()
    for candidate in candidates:
        if candidate.strip() == match:
            return candidate
    return None


def _claim(
    item: object, where: str, turns: tuple[Episode, ...], extractor: str
) -> tuple[Claim | None, list[str]]:
    if not isinstance(item, Mapping):
        return None, [f"{where}: expected an object, got {_kind(item)}"]
    problems: list[str] = []

    def check(field: str, problem: str | None) -> None:
        if problem is not None:
            problems.append(f"{where}.{field}: {problem}")

    subject, problem = _text(item.get("subject"))
    check("subject", problem)
    raw_predicate, problem = _text(item.get("predicate"))
    check("predicate", problem)
    predicate = ""
    if raw_predicate:
        try:
            predicate = normalize_predicate(raw_predicate)
        except InvalidArgumentError:
            check("predicate", f"{raw_predicate!r:.60} is not a usable predicate name")
    obj, problem = _text(item.get("object"))
    check("object", problem)
    polarity, problem = _polarity(item.get("polarity"))
    check("polarity", problem)
    confidence, problem = _confidence(item.get("confidence"))
    check("confidence", problem)
    memory_type, problem = _memory_type(item.get("memory_type"))
    check("memory_type", problem)
    turn, problem = _turn(item.get("turn"), len(turns))
    check("turn", problem)
    valid_from, problem = _valid_from(item.get("valid_from"))
    check("valid_from", problem)
    if problems:
        return None, problems
    return Claim(
        subject=subject,
        predicate=predicate,
        object=obj,
        valid_from=valid_from,
        polarity=polarity,
        confidence=confidence,
        memory_type=memory_type,
        sources=(turns[turn].id,),
        extractor=extractor,
    ), problems


def _text(value: object) -> tuple[str, str | None]:
    if value is None:
        return "", "missing"
    if not isinstance(value, str):
        return "", f"expected a string, got {_kind(value)}"
    text = value.strip()
    if not text:
        return "", "empty"
    if len(text) > MAX_TEXT:
        return "", f"longer than {MAX_TEXT} characters ({len(text)})"
    problem = _unicode_problem(text)
    return (text, None) if problem is None else ("", problem)


def _unicode_problem(text: str) -> str | None:
    if "\x00" in text:
        return "holds a NUL character"
    at = _surrogate_at(text)
    return None if at is None else f"holds a lone surrogate at index {at}"


def _surrogate_at(text: str) -> int | None:
    """Where ``text`` stops being encodable as UTF-8, if it does."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _polarity(value: object) -> tuple[int, str | None]:
    if value is None or value is True:
        return 1, None
    if value is False:
        return -1, None
    if isinstance(value, int) and value in (1, -1):
        return value, None
    return 1, f"must be 1 or -1 (or true/false), got {value!r:.60}"


def _confidence(value: object) -> tuple[float, str | None]:
    if value is None:
        return DEFAULT_CONFIDENCE, None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0, f"expected a number, got {_kind(value)}"
    number = float(value)
    if not math.isfinite(number):
        return 0.0, f"must be finite, got {value!r}"
    if not 0.0 <= number <= 1.0:
        return 0.0, f"must be from 0 to 1, got {value!r}"
    return number, None


def _memory_type(value: object) -> tuple[str, str | None]:
    if value is None:
        return "semantic", None
    if not isinstance(value, str):
        return "", f"expected a string, got {_kind(value)}"
    word = value.strip().casefold()
    if word not in MEMORY_TYPES:
        return "", f"must be one of {', '.join(MEMORY_TYPES)}; got {value!r:.60}"
    return word, None


def _turn(value: object, count: int) -> tuple[int, str | None]:
    if value is None:
        if count == 1:
            return 0, None
        return 0, "missing (it may be left out only when one turn is sent)"
    if isinstance(value, bool) or not isinstance(value, int):
        return 0, f"expected a turn index (an integer), got {value!r:.60}"
    if not 0 <= value < count:
        return 0, f"{value} is out of range for {count} turn{'s' if count != 1 else ''}"
    return value, None


def _valid_from(value: object) -> tuple[datetime | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, f"expected an ISO 8601 date string, got {_kind(value)}"
    instant = _instant(value.strip())
    if instant is None:
        return None, f"not an ISO 8601 date or date and time: {value!r:.60}"
    return instant, None


def _instant(text: str) -> datetime | None:
    """Parse the ISO 8601 subset the prompt asks for; the same on every Python version
    (``datetime.fromisoformat`` accepts more forms on 3.11 than on 3.10)."""
    match = _INSTANT.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    try:
        tz = timezone.utc if offset is None or offset in ("Z", "z") else _offset(offset)
        value = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
            tzinfo=tz,
        )
        return value.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None


def _offset(text: str) -> timezone:
    digits = text[1:].replace(":", "")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return timezone(-delta if text[0] == "-" else delta)


def _word(value: object) -> str:
    return value.strip().casefold() if isinstance(value, str) else ""


def _kind(value: object) -> str:
    """The JSON name of a parsed value's type, for problem strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__
