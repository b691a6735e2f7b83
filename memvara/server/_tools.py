"""The eight tools a model may call: each one's input schema, and the library call it
makes at the server's scope.

Argument names are the library's own (``subject``, ``obj``, ``k``, ``valid_at``...); the
scope keywords are not among them, so a tool call can never read or write another scope.
Nothing here erases: ``memory_forget`` retires, which history and ``known_at`` reads still
see. ``erase``, ``purge``, ``reset`` and ``consolidate`` stay library calls, out of a
model's reach.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memvara import MEMORY_TYPES, STATES, Memvara, parse_instant

from . import _text
from ._schema import ArgumentError, Schema

__all__ = ["TOOLS", "Answer", "Tool"]

Answer = tuple[dict[str, Any], str]
"""What a tool returns: its structured content (a JSON object) and its text rendering."""

_ROLES = ["user", "assistant", "system", "tool"]
_CLOCKS = {
    "valid_at": "the world clock: what held at this instant (ISO-8601 with a UTC offset)",
    "known_at": "the belief clock: as memory believed it at this instant (ISO-8601 with a"
                " UTC offset)",
    "as_of": "both clocks at one instant; not with valid_at or known_at",
}


def _text_arg(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "description": description}


def _instant_arg(description: str) -> dict[str, Any]:
    return {"type": "string", "format": "date-time", "description": description}


def _k(default: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": 100,
            "description": f"at most this many results (default {default})"}


def _flag(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


_MIN_SCORE = {"type": "number", "minimum": 0, "maximum": 2,
              "description": "drop results scoring below this (scores run from 0 to 2)"}
_META = {"type": "object", "description": "JSON metadata stored with every claim written"}
_TIME_ARGS = {name: _instant_arg(text) for name, text in _CLOCKS.items()}


def _object(required: list[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def _at(args: Mapping[str, Any], name: str) -> datetime | None:
    """The instant ``args`` gives as ``name`` (its form checked by the schema), or ``None``."""
    return parse_instant(args[name], name) if name in args else None


def _add(mem: Memvara, args: dict[str, Any]) -> Answer:
    receipt = mem.add(args["messages"], role=args.get("role", "user"),
                      meta=args.get("meta"), ts=_at(args, "ts"))
    return receipt.to_dict(), _text.receipt(receipt)


def _remember(mem: Memvara, args: dict[str, Any]) -> Answer:
    receipt = mem.remember(
        args["subject"], args["predicate"], args["obj"], text=args.get("text"),
        confidence=args.get("confidence", 1.0), memory_type=args.get("memory_type", "semantic"),
        polarity=args.get("polarity", 1), close=args.get("close", "ended"),
        sources=args.get("sources", ()), meta=args.get("meta"),
        valid_from=_at(args, "valid_from"), valid_to=_at(args, "valid_to"),
    )
    return receipt.to_dict(), _text.receipt(receipt)


def _recall(mem: Memvara, args: dict[str, Any]) -> Answer:
    block = mem.recall(args["query"], k=args.get("k", 8), min_score=args.get("min_score", 0.0),
                       include_episodes=args.get("include_episodes", False),
                       include_history=args.get("include_history", False))
    return {"recall": block}, block or "Nothing stored matches.\n"


def _search(mem: Memvara, args: dict[str, Any]) -> Answer:
    found = mem.search(
        args["query"], k=args.get("k", 10), min_score=args.get("min_score", 0.0),
        memory_types=args.get("memory_types"), states=args.get("states"),
        include_episodes=args.get("include_episodes", False), valid_at=_at(args, "valid_at"),
        known_at=_at(args, "known_at"), as_of=_at(args, "as_of"),
    )
    return {"results": [r.to_dict() for r in found]}, _text.results(found)


def _history(mem: Memvara, args: dict[str, Any]) -> Answer:
    claims = mem.history(args["subject"], args["predicate"], valid_at=_at(args, "valid_at"),
                         known_at=_at(args, "known_at"), as_of=_at(args, "as_of"))
    return {"claims": [c.to_dict() for c in claims]}, _text.claims(claims)


def _why(mem: Memvara, args: dict[str, Any]) -> Answer:
    found = mem.why(args["claim_id"], valid_at=_at(args, "valid_at"),
                    known_at=_at(args, "known_at"), as_of=_at(args, "as_of"))
    if found is None:
        return ({"provenance": None},
                f"No claim {args['claim_id']!r} is visible here at that instant.\n")
    return {"provenance": found.to_dict()}, _text.provenance(found)


def _forget(mem: Memvara, args: dict[str, Any]) -> Answer:
    slot = [name for name in ("subject", "predicate") if name in args]
    if "claim_id" in args:
        if slot:
            raise ArgumentError(slot[0], "give claim_id, or subject and predicate, not both")
        retired = [args["claim_id"]] if mem.delete(args["claim_id"]) else []
    elif len(slot) == 2:
        retired = [c.id for c in mem.forget(args["subject"], args["predicate"])]
    else:
        missing = "predicate" if slot == ["subject"] else "subject"
        raise ArgumentError(missing if slot else "claim_id",
                            "missing; give claim_id, or subject and predicate")
    return {"retired": retired}, _text.retired(retired)


def _stats(mem: Memvara, args: dict[str, Any]) -> Answer:
    counts = mem.stats()
    return dict(counts), _text.stats(counts)


@dataclass(frozen=True)
class Tool:
    """One tool: what ``tools/list`` shows of it, and the call it makes."""

    name: str
    title: str
    description: str
    input_schema: Schema
    call: Callable[[Memvara, dict[str, Any]], Answer]
    read_only: bool = True
    destructive: bool = False

    def listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` describes it."""
        return {
            "name": self.name, "title": self.title, "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {"title": self.title, "readOnlyHint": self.read_only,
                            "destructiveHint": self.destructive, "openWorldHint": False},
        }


_WRITE_TOOLS = [
    Tool("memory_add", "Add conversation turns",
         "Store conversation turns; clear first-person statements of fact (\"I live in"
         " Berlin\") become facts by rule, and every turn stays searchable.",
         _object(["messages"],
                 messages={"anyOf": [
                     {"type": "string", "minLength": 1},
                     {"type": "array", "items": {"anyOf": [
                         {"type": "string", "minLength": 1},
                         _object(["content"], role={"type": "string", "enum": _ROLES},
                                 content={"type": "string", "minLength": 1},
                                 name={"type": "string", "minLength": 1,
                                       "description": "who said it, in a shared session:"
                                                      " what it says of \"I\" is about them"}),
                     ], "description": "expected a string or a {role, content, name} object"}},
                 ], "description": "the turns: a string, a list of strings, or a list of"
                                   " {role, content, name} objects (name optional)"},
                 role={"type": "string", "enum": _ROLES,
                       "description": "the role of turns given as strings (default user)"},
                 ts=_instant_arg("when the turns were said (default: now)"),
                 meta=_META),
         _add, read_only=False),
    Tool("memory_remember", "Remember a fact",
         "Store one fact as subject, predicate, object. A single-valued fact (where someone"
         " lives) closes its previous value instead of contradicting it.",
         _object(["subject", "predicate", "obj"],
                 subject=_text_arg("who or what the fact is about (\"user\", a name)"),
                 predicate=_text_arg("the relation, such as lives_in or works_at"),
                 obj=_text_arg("the value, such as Berlin"),
                 valid_from=_instant_arg("when it became true (default: now)"),
                 valid_to=_instant_arg("when it stopped being true (default: still true)"),
                 text=_text_arg("the sentence it is shown as (default: made from the triple)"),
                 confidence={"type": "number", "minimum": 0, "maximum": 1,
                             "description": "from 0 to 1 (default 1)"},
                 memory_type={"type": "string", "enum": list(MEMORY_TYPES),
                              "description": "default semantic"},
                 polarity={"type": "integer", "enum": [1, -1],
                           "description": "-1 states that the fact does not hold"},
                 close={"type": "string", "enum": ["ended", "retired"],
                        "description": "how a replaced value closes: ended (the world"
                                       " changed, default) or retired (it was wrong)"},
                 sources={"type": "array", "items": {"type": "string", "minLength": 1},
                          "description": "ids of the turns or documents it came from"},
                 meta=_META),
         _remember, read_only=False),
    Tool("memory_forget", "Retire a fact",
         "Stop believing one fact (claim_id) or every value of one slot (subject and"
         " predicate). Recoverable: history still shows it; nothing is erased.",
         _object([], claim_id=_text_arg("the fact to retire"),
                 subject=_text_arg("with predicate: retire every value of this slot"),
                 predicate=_text_arg("with subject: retire every value of this slot")),
         _forget, read_only=False, destructive=True),
]

_READ_TOOLS = [
    Tool("memory_recall", "Recall for a prompt",
         "What is believed and true now about a query, as a block of lines to read.",
         _object(["query"], query=_text_arg("what to recall"), k=_k(8), min_score=_MIN_SCORE,
                 include_episodes=_flag("add the conversation turns that match"),
                 include_history=_flag("add the earlier values of the facts shown")),
         _recall),
    Tool("memory_search", "Search memory",
         "The best matches for a query, each with its id, state and score; valid_at,"
         " known_at and as_of search the past.",
         _object(["query"], query=_text_arg("what to look for"), k=_k(10),
                 min_score=_MIN_SCORE, **_TIME_ARGS,
                 memory_types={"type": "array", "items": {"type": "string",
                                                          "enum": list(MEMORY_TYPES)},
                               "description": "only these kinds of fact"},
                 states={"type": "array", "items": {"type": "string", "enum": list(STATES)},
                         "description": "only facts in these states (default live)"},
                 include_episodes=_flag("rank conversation turns alongside facts")),
         _search),
    Tool("memory_history", "History of a slot",
         "Every value one subject and predicate ever had, in recorded order, with both"
         " clocks.",
         _object(["subject", "predicate"], subject=_text_arg("who or what"),
                 predicate=_text_arg("the relation, such as lives_in"), **_TIME_ARGS),
         _history),
    Tool("memory_why", "Why is this believed",
         "Where a fact came from (its source turns), what it replaced and what replaced it.",
         _object(["claim_id"], claim_id=_text_arg("the fact's id, from search or history"),
                 **_TIME_ARGS),
         _why),
    Tool("memory_stats", "Memory statistics",
         "How many turns and facts this memory holds, by state.",
         _object([]), _stats),
]

_ORDER = ("memory_add", "memory_remember", "memory_recall", "memory_search", "memory_history",
          "memory_why", "memory_forget", "memory_stats")
TOOLS: dict[str, Tool] = {name: next(t for t in _WRITE_TOOLS + _READ_TOOLS if t.name == name)
                          for name in _ORDER}
"""The eight tools by name, in the order ``tools/list`` gives them."""
