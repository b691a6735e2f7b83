"""The write log's chain: how a record is hashed, what an anchor is, and what
``verify()`` reports. Pure functions, shared by the store that appends records and the
read path that walks them.

A record is ``(seq, at, actor, action, body)``: its place in the chain (1, 2, ...), the
instant of the call that wrote it (UTC microseconds), who asked, the API verb, and a
canonical JSON object of ids, counts and keyed digests (never stored text). Its hash is
SHA-256 over the previous record's hash and the record's canonical form, so editing,
dropping or reordering any record changes every hash after it. The first record chains
from a genesis hash made of the store's identity, so a chain cannot be moved between
stores unnoticed.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from .._errors import InvalidArgumentError
from .model import Scope, fields_dict

__all__ = [
    "ANCHOR_PREFIX", "Anchor", "LogReport", "canonical_body", "canonical_ids", "default_actor", "genesis",
    "keyed_digest",
    "parse_anchor", "record_hash",
]

ANCHOR_PREFIX = "mvlog1"
"""The first field of an anchor string: the format, so a later one can be told apart."""


def canonical_body(body: Mapping[str, Any]) -> str:
    """``body`` as the one JSON text a record stores and hashes: keys sorted, no spaces.
    (A body of id lists alone, every write's, is joined by hand: ``json.dumps`` with
    sorted keys cost ~5 us of a ~110 us single write.)"""
    if all(type(v) is list and all(type(i) is int for i in v) for v in body.values()):
        return canonical_ids(body)
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical_ids(body: Mapping[str, list[int]]) -> str:
    """``canonical_body`` of a body its caller knows holds lists of ints alone under
    plain keys (rowids by op: a single write's body), without checking it (the check
    was a third of the Python a single write's record cost)."""
    if len(body) == 1:
        [(key, ids)] = body.items()
        return f'{{"{key}":[{",".join(map(str, ids))}]}}'
    parts = []  # a loop, not a generator in a join: half the time for a revising write's two keys
    for key in sorted(body):
        ids = body[key]
        parts.append(f'"{key}":[{ids[0]}]' if len(ids) == 1 else f'"{key}":[{",".join(map(str, ids))}]')
    return "{" + ",".join(parts) + "}"


class _Digest(Protocol):
    def hexdigest(self) -> str: ...


def _builtin_sha256(import_module: Callable[[str], Any] = importlib.import_module) -> Callable[[bytes], _Digest]:
    """CPython's own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before), else hashlib's.

    The same digest as ``hashlib.sha256``, which is OpenSSL's: faster in a tight loop
    (0.47 against 0.94 us for 200 bytes, ``timeit``), but slower where a record is
    hashed, once between a write's other work: 4.8-6.1 against 2.7-3.7 us inside a
    single ``remember()``, 7.8-8.5 against 3.3-3.5 inside a one-turn ``add()`` (timed
    in place). OpenSSL's digest starts cold each time."""
    for name in ("_sha2", "_sha256"):
        try:
            return cast("Callable[[bytes], _Digest]", import_module(name).sha256)
        except (ImportError, AttributeError):
            continue
    return hashlib.sha256


_SHA256 = _builtin_sha256()


def genesis(store_id: str) -> str:
    """The hash the first record of store ``store_id`` chains from."""
    return hashlib.sha256(f"memvara-log:{store_id}".encode()).hexdigest()


def record_hash(prev: str, seq: int, at: int, actor: str, action: str, body: str) -> str:
    """SHA-256 over the previous hash and this record's canonical form: the fields one
    a line, the two free texts each after its length, so no field can run into the
    next (``prev``, ``seq``, ``at`` and ``body`` hold no newline)."""
    form = f"{prev}\n{seq}\n{at}\n{len(actor)}:{actor}\n{len(action)}:{action}\n{body}"
    return _SHA256(form.encode("utf-8", "surrogatepass")).hexdigest()


def default_actor(scope: Scope) -> str:
    """Who a write names when its caller names no one: the scope's agent, else its
    user, else ``""`` (a claim's actor, unless its write named one)."""
    return scope.agent or scope.user or ""


def keyed_digest(secret: str, text: str) -> str:
    """HMAC-SHA256 of ``text`` under the store's secret: the same text always gives the
    same digest in one store, so a later question ("was this erased?") can be answered,
    while someone holding the log alone cannot confirm a guess of the text."""
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Anchor:
    """A point of one store's chain: the store's identity, a record's number and hash.
    ``str(anchor)`` is the form ``anchor()`` returns and ``verify(since=...)`` takes."""

    store: str
    seq: int
    hash: str

    def __str__(self) -> str:
        return f"{ANCHOR_PREFIX}:{self.store}:{self.seq}:{self.hash}"


def parse_anchor(text: object) -> Anchor:
    """The anchor ``text`` names; ``InvalidArgumentError`` (``since``) for anything else."""
    if not isinstance(text, str):
        raise InvalidArgumentError("since", f"expected an anchor string from anchor(), got {type(text).__name__}")
    parts = text.split(":")
    if len(parts) != 4 or parts[0] != ANCHOR_PREFIX or not (parts[2].isascii() and parts[2].isdigit()) \
            or len(parts[3]) != 64 or not parts[1]:
        raise InvalidArgumentError(
            "since", f"not an anchor from anchor(): {text!r:.80} (expected"
            f" '{ANCHOR_PREFIX}:<store>:<seq>:<hash>')")
    return Anchor(parts[1], int(parts[2]), parts[3])


@dataclass(frozen=True, slots=True)
class LogReport:
    """What ``verify()`` found.

    ``ok`` is true when every record checked chains to the one before and, with
    ``since``, the anchored record is still there unchanged. Otherwise ``broken`` is the
    number (``seq``) of the first record that fails and ``problem`` says how.
    """

    ok: bool
    records: int
    """How many records were checked."""
    head: str
    """The anchor of the last record (the genesis point, ``seq`` 0, for an empty log)."""
    broken: int | None = None
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field, in JSON's types."""
        return fields_dict(self)
