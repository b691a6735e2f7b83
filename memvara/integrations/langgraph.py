"""A LangGraph ``BaseStore`` kept in memvara, one claim per field.

Install with ``pip install 'memvara[langgraph]'`` (``langgraph-checkpoint``).

What it keeps of memvara, which is the most any adapter keeps: ``put(namespace, key,
value)`` hands over all three parts of a triple, so each field is stored as a claim about
the item, in a slot of its own that holds one value. Changing ``city`` ends exactly the
old ``city`` (on both clocks, with its history kept: ``memory.history()``), a field
left out of a later ``put`` is retired, ``delete`` retires the item, and
``search(prefix, query=...)`` ranks with memvara's own search (BM25 and vectors, fused
and explained) and keeps the hits that are this store's, under the prefix (an empty or
blank query lists, as LangGraph's own stores do with ``query=""``). A ``put``
settles its new and changed values in one transaction (one ``remember_many()``), then
retires the fields it left out (one ``delete()`` each): a crash between the two leaves
those fields live but out of the item, whose record lists its fields.

What it loses: the predicate registry. A field is a predicate of this store's own
(``langgraph_field_<hash of its name>``), so a ``home_city`` field and a ``lives_in``
learned from conversation are separate slots that never end each other, and the
extractor's facts never show up in an item. Also:
LangGraph has no time keywords, so reads are always "now" (the history is there through
the memory itself); ``index=`` is accepted and ignored (every field is indexed, as text
and as a vector); TTLs are not supported; ``updated_at`` moves when a ``put`` changes the
value, not when it repeats it (a repeat is a reinforcement); and values are JSON (a
tuple comes back a list). Search filters memvara's ranking after the fact: it looks at
most ``16 * max(16, 4 * (offset + limit))`` hits deep (three searches, each four times
deeper), so in a memory where other claims outrank an item's beyond that depth, the item
is missed (``memory.search()`` with a larger ``k`` still finds its claims).

Keying: namespaces and keys are hashed into the claim's subject, and field names into
its predicate, because memvara folds entity names (case and punctuation) and
predicate names (case, ``-`` and ``_``): ``("Users",)`` and ``("users",)``, ``"a-b"``
and ``"a_b"`` stay distinct items and fields. Values are stored as written (in the
claim's ``meta``), and the claim's object is a hash of the value's JSON, so ``1``,
``1.0``, ``True`` and ``"1"`` are four different values. Items belong to the exact scope
of the memory handle the store was built on: a store on ``mem.scope(user="ana")`` sees
ana's items and not the broader memory's (a key holds one value). The store declares
its predicates single-valued in the memory's registry when it is built and as it meets
new field names; the declaration lives in this process (the writes are what persist), so
write to these slots through a ``MemvaraStore``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "memvara.integrations.langgraph needs langgraph-checkpoint: pip install 'memvara[langgraph]'"
    ) from exc

from memvara import (
    Cardinality,
    Claim,
    InvalidArgumentError,
    Memvara,
    PredicateSpec,
    ScopedMemvara,
    Volatility,
)

from ._locks import item_lock
from ._retrieval import MemoryHandle, check_memory
from ._langgraph_filter import check_filter, matches

__all__ = ["MemvaraStore", "NamespaceLabelError"]

ITEM = "langgraph_item"
"""The predicate of an item's own record: its namespace, key, field order and creation."""
FIELD = "langgraph_field_"
"""The prefix of a field's predicate; the rest is a hash of the field's name."""
_MAX_K = 1_000_000
_LOOKS = 3
"""How many searches one ``search(query=...)`` makes at most, each four times deeper."""
class NamespaceLabelError(InvalidArgumentError, InvalidNamespaceError):
    """A namespace LangGraph forbids (a label with a ``.``, empty, not a string...): both
    memvara's ``InvalidArgumentError`` and LangGraph's ``InvalidNamespaceError``."""

    code = "invalid_namespace"


def _digest(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()


def _subject(namespace: tuple[str, ...], key: str) -> str:
    """One letter-digit word per item, which the entity fold leaves as it is."""
    return "lg" + _digest(json.dumps([list(namespace), key], ensure_ascii=False), 20)


def _predicate(field: str) -> str:
    return FIELD + _digest(field, 12)


class MemvaraStore(BaseStore):
    """A LangGraph store whose items are memvara claims (see the module docstring).

    Args:
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async twin); items live at its
            scope.

    Raises:
        InvalidArgumentError: ``memory`` is not a memory handle; from ``batch()``, a bad
            operation, named (``value``, ``filter``, ``ttl``...).
        NamespaceLabelError: a namespace label LangGraph forbids, given straight to
            ``batch()`` (the ``put``/``get``/... methods raise LangGraph's own
            ``InvalidNamespaceError`` for it first).
    """

    def __init__(self, memory: MemoryHandle) -> None:
        self.memory = check_memory(memory)
        self._declared: set[str] = set()
        self._declare(ITEM)

    def _declare(self, predicate: str) -> None:
        """Make ``predicate`` single-valued in the memory's registry (once per name)."""
        if predicate not in self._declared:
            self.memory.registry.register(
                PredicateSpec(predicate, Cardinality.ONE, Volatility.STATIC))
            self._declared.add(predicate)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, each answered in its place; every op is checked before
        the first one runs, so a bad one changes nothing."""
        todo = list(ops)
        for op in todo:
            _check_op(op)
        return [self._run(op) for op in todo]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch()`` on a worker thread (memvara's store is synchronous)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            with item_lock(_subject(op.namespace, op.key)):  # a read, then a rewrite
                if op.value is None:
                    self._delete(op.namespace, op.key)
                else:
                    self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        return self._list_namespaces(op)  # _check_op let no other kind through

    # -- items ---------------------------------------------------------------------

    def _claims(self, subject: str) -> list[Claim]:
        """The item's live claims at this store's exact scope: its record and fields."""
        own = self.memory.default_scope
        return [c for c in self.memory.get_all(subject=subject) if c.scope == own]

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        return self._item(self._claims(_subject(namespace, key)))

    @staticmethod
    def _item(claims: list[Claim]) -> Item | None:
        """The item these claims make up, or ``None`` without a live record (never put,
        deleted, or its record retired through the memory itself)."""
        record = next((c for c in claims if c.predicate == ITEM), None)
        if record is None:
            return None
        about = _about(record)
        fields = {c.predicate: c for c in claims if c.predicate != ITEM}
        value: dict[str, Any] = {}
        for name in about["fields"]:
            found = fields.get(_predicate(name))
            if found is not None:  # a field retired through the memory itself is gone
                value[name] = _about(found)["value"]
        created, updated = _stamps(record)
        return Item(value=value, key=about["key"], namespace=tuple(about["namespace"]),
                    created_at=created, updated_at=updated)

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> None:
        subject = _subject(namespace, key)
        current = self._claims(subject)
        old = next((c for c in current if c.predicate == ITEM), None)
        created = None if old is None else _stamps(old)[0].isoformat()
        whole = json.dumps(value, ensure_ascii=False)  # checked JSON by _check_op
        claims = [Claim(
            subject, ITEM, "v" + _digest(whole, 16), text=subject,
            meta={"langgraph": {"namespace": list(namespace), "key": key,
                                "fields": list(value), "created_at": created}},
        )]
        for name, field_value in value.items():
            predicate = _predicate(name)
            self._declare(predicate)
            encoded = json.dumps(field_value, ensure_ascii=False)
            shown = field_value if isinstance(field_value, str) else encoded
            claims.append(Claim(
                subject, predicate, "v" + _digest(encoded, 16), text=f"{name}: {shown}",
                meta={"langgraph": {"field": name, "value": field_value}},
            ))
        self.memory.remember_many(claims)  # one transaction; a changed field ends its old value
        kept = {c.predicate for c in claims}
        for claim in current:
            if claim.predicate not in kept:  # left out of this put: retired
                self.memory.delete(claim.id)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        # The record first: an item whose record is retired is gone, whatever a crash
        # leaves of its fields.
        for claim in sorted(self._claims(_subject(namespace, key)), key=lambda c: c.predicate != ITEM):
            self.memory.delete(claim.id)

    # -- listing and search -------------------------------------------------------------

    def _records(self) -> list[Claim]:
        """Every live item record at this store's scope, newest first."""
        own = self.memory.default_scope
        return [c for c in self.memory.get_all(predicate=ITEM) if c.scope == own]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        want = op.offset + op.limit
        if op.query is None or not op.query.strip():  # LangGraph's stores: "" is no query
            prefix = op.namespace_prefix
            ranked = [(c.subject, None) for c in self._records()
                      if tuple(_about(c)["namespace"][: len(prefix)]) == prefix]
            return self._page(op, ranked, want)
        k = min(max(want * 4, 16), _MAX_K)
        own = self.memory.default_scope
        for _ in range(_LOOKS):
            hits = self.memory.search(op.query, k=k)
            best: dict[str, float | None] = {}
            for hit in hits:
                claim = hit.claim
                if claim is not None and claim.scope == own and "langgraph" in claim.meta:
                    best.setdefault(claim.subject, hit.score)
            page = self._page(op, list(best.items()), want)
            if len(page) == op.limit or len(hits) < k:
                break
            k = min(k * 4, _MAX_K)
        return page

    def _page(self, op: SearchOp, ranked: Sequence[tuple[str, float | None]],
              want: int) -> list[SearchItem]:
        """The items of ``ranked`` under the op's prefix and filter, paged."""
        found: list[SearchItem] = []
        prefix = op.namespace_prefix
        for subject, score in ranked:
            if len(found) == want:
                break
            item = self._item(self._claims(subject))
            if item is not None and item.namespace[: len(prefix)] == prefix \
                    and matches(item.value, op.filter):
                found.append(SearchItem(item.namespace, item.key, item.value, item.created_at,
                                        item.updated_at, score))
        return found[op.offset:]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names: set[tuple[str, ...]] = set()
        for record in self._records():
            namespace = tuple(_about(record)["namespace"])
            if all(_matches(condition, namespace) for condition in op.match_conditions or ()):
                names.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(names)[op.offset: op.offset + op.limit]


def _about(claim: Claim) -> dict[str, Any]:
    """What this store wrote in a claim's ``meta``."""
    return cast(dict[str, Any], claim.meta["langgraph"])


def _stamps(record: Claim) -> tuple[datetime, datetime]:
    """An item's ``created_at`` (its first put, carried from record to record) and
    ``updated_at`` (when its current record was written)."""
    updated = cast(datetime, record.recorded_at)  # set on every stored claim
    created = _about(record)["created_at"]
    return (updated if created is None else datetime.fromisoformat(created)), updated


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    ends = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(want in ("*", have) for want, have in zip(path, ends))


def _check_op(op: object) -> None:
    """Refuse what LangGraph forbids and what this store cannot do, before any op runs."""
    if isinstance(op, (GetOp, PutOp)):
        _check_labels(op.namespace, "namespace")
        if not isinstance(op.key, str):
            raise InvalidArgumentError("key", f"expected a string, got {type(op.key).__name__}")
        _utf8(op.key, "key")
        if isinstance(op, PutOp):
            _check_put(op)
    elif isinstance(op, SearchOp):
        _check_labels(op.namespace_prefix, "namespace_prefix")
        _count(op.limit, "limit", 0)
        _count(op.offset, "offset", 0)
        if op.query is not None:
            if not isinstance(op.query, str):
                raise InvalidArgumentError("query", f"expected a string or None, got {type(op.query).__name__}")
            _utf8(op.query, "query")
        check_filter(op.filter)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidArgumentError(
                    "match_conditions", f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r:.40}")
            _check_labels(condition.path, "match_conditions")
        _count(op.limit, "limit", 0)
        _count(op.offset, "offset", 0)
        if op.max_depth is not None:
            _count(op.max_depth, "max_depth", 1)
    else:
        raise InvalidArgumentError(
            "ops", f"expected GetOp, PutOp, SearchOp or ListNamespacesOp, got {type(op).__name__}")


def _check_put(op: PutOp) -> None:
    if not op.namespace:
        raise NamespaceLabelError("namespace", "an item's namespace cannot be empty")
    if op.namespace[0] == "langgraph":
        raise NamespaceLabelError("namespace", "the root label 'langgraph' is reserved by LangGraph")
    if op.ttl is not None:
        raise InvalidArgumentError("ttl", "MemvaraStore does not expire items; pass ttl=None")
    if op.value is None:
        return
    if not isinstance(op.value, Mapping):
        raise InvalidArgumentError("value", f"expected a dict, got {type(op.value).__name__}")
    for name in op.value:
        if not isinstance(name, str):
            raise InvalidArgumentError("value", f"field names must be strings, got {name!r:.40}")
    try:
        whole = json.dumps(op.value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("value", f"must be JSON-serializable: {exc}") from None
    _utf8(whole, "value")


def _check_labels(namespace: object, argument: str) -> None:
    if not isinstance(namespace, tuple):
        raise NamespaceLabelError(argument, f"expected a tuple of strings, got {type(namespace).__name__}")
    for label in namespace:
        if not isinstance(label, str) or not label:
            raise NamespaceLabelError(argument, f"a label must be a non-empty string, got {label!r:.40}")
        if "." in label:
            raise NamespaceLabelError(argument, f"a label cannot contain '.' (LangGraph forbids it), got {label!r:.40}")
        if "\x00" in label:
            raise NamespaceLabelError(argument, "a label cannot contain a NUL character")
        _utf8(label, argument)


def _utf8(text: str, argument: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgumentError(argument, "holds a lone surrogate, not valid Unicode text") from None


def _count(value: object, argument: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= _MAX_K:
        raise InvalidArgumentError(argument, f"expected an int from {least} to {_MAX_K:,}, got {value!r:.40}")
