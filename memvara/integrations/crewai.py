"""A storage backend for CrewAI 1.x's unified ``Memory``, on memvara.

>>> from crewai import Memory                                        # doctest: +SKIP
>>> memory = Memory(storage=MemvaraStorage(mem.scope(user="alice")))  # doctest: +SKIP

``MemvaraStorage`` implements CrewAI's ``StorageBackend`` protocol (``save``, ``search``,
``delete``, ``update``, ``get_record``, ``list_records``, the scope and category
listings, ``count``, ``reset`` and the async ``asave``/``asearch``/``adelete``). Each
``MemoryRecord`` is one claim: its subject is the record's id, its predicate
``crewai_memory``, its object and text the record's content; the rest of the record
(CrewAI's scope path, categories, metadata, importance, dates, source, privacy) and the
embedding CrewAI computed ride in the claim's ``meta``.

What it keeps: both clocks, because nothing is overwritten. ``update`` supersedes the
record's claim (the old version stays in ``history(record_id, "crewai_memory")``), and
``delete``/``reset`` retire (reads at an earlier ``known_at`` still see what was
removed); scope isolation, because the memvara scope is the handle's (its own level only,
not the broader ones it inherits) and CrewAI's scope path is only data, filtered on. What it loses is most of what makes memvara different:

- **The query text.** CrewAI embeds the query itself and hands the storage only the
  vector, so search cannot use memvara's search at all: no BM25 (an exact name or number
  is found only as far as CrewAI's embedder places it), no fusion of the two rankings,
  no recency scaled to how fast a predicate changes, no explanation of a score. Search
  here is the cosine between that vector and each stored record's own CrewAI
  embedding, over every live record in a linear scan, clipped at 0 (CrewAI's
  composite score expects a similarity from 0 to 1).
- **Contradiction resolution.** A record is free text that names no subject or
  predicate memvara could key on, so a newer record never closes an older one: "Alice
  lives in Berlin" and, later, "Alice has moved to Lisbon" are two records, both live
  (CrewAI's own consolidation step, with its model, is what may merge them).
- **The write path.** Records are stored as given, never read by ``add()``'s rules or
  model, so no facts are learned from them.
- **Access times.** ``recall()`` would refresh a record's ``last_accessed`` through an
  optional ``touch_records``; this backend has none, since a memvara read never writes.

A CrewAI ``reset`` retires; ``memory.purge(...)`` at the handle's scope erases for good.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt
from crewai.memory.types import MemoryRecord, ScopeInfo

from .. import Claim, DimensionMismatchError, InvalidArgumentError, PredicateSpec
from ..schema import Cardinality, Volatility
from ._handles import MemoryHandle, sync_handle

__all__ = ["RECORD_PREDICATE", "MemvaraStorage"]

RECORD_PREDICATE = "crewai_memory"
"""The predicate of every record's claim. Its subject is the record's id, so records never
close each other; within one record's slot a new content closes the old one (``ONE``),
as the memory's registry is told."""
_RECORD_SPEC = PredicateSpec(RECORD_PREDICATE, Cardinality.ONE, Volatility.SLOW)
_RECORD, _EMBEDDING = "crewai_record", "crewai_embedding"
_LATEST = 16
"""How many of the newest records a save reads for the stored embeddings' width."""


class _Row(NamedTuple):
    claim: Claim
    record: MemoryRecord
    vector: npt.NDArray[np.float32] | None


class MemvaraStorage:
    """CrewAI's ``StorageBackend`` on a memvara memory.

    Args:
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async one): the scope every
            record is written to and read from.

    Raises:
        InvalidArgumentError: ``memory`` is not a memvara handle, or its registry
            already gives ``crewai_memory`` another meaning.
    """

    def __init__(self, memory: MemoryHandle) -> None:
        self._memory = sync_handle(memory)
        self._memory.registry.register(_RECORD_SPEC)
        self._decoded: dict[str, _Row] = {}
        self._witness: str | None = None
        """The id of a stored record whose embedding said the stored width last time."""

    # -- writes ---------------------------------------------------------------------------
    def save(self, records: list[MemoryRecord]) -> None:
        """Store each record as a claim, in one transaction."""
        checked = _records(records)
        if checked:
            self._check_widths([(f"records[{i}]", record) for i, record in enumerate(checked)])
            self._memory.remember_many([_claim(record) for record in checked])

    def update(self, record: MemoryRecord) -> None:
        """Replace the record with the same id: its claim is superseded, so the earlier
        version stays in the history. A record not stored yet is saved."""
        _record(record, "record")
        self._check_widths([("record", record)])
        old = self._find(record.id)
        if old is None:
            self._memory.remember_many([_claim(record)])
        else:
            self._memory.supersede(old.claim.id, _claim(record))

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Retire every record matching all the criteria given (all of them when none
        is); returns how many."""
        rows = self._select(scope_prefix, categories, metadata_filter, record_ids, older_than)
        return sum(self._memory.delete(row.claim.id) for row in rows)

    def reset(self, scope_prefix: str | None = None) -> None:
        """Retire every record under ``scope_prefix`` (every record when ``None``)."""
        self.delete(scope_prefix=scope_prefix)

    def _check_widths(self, named: list[tuple[str, MemoryRecord]]) -> None:
        """Refuse an embedding whose width is not the stored records' (or the other new
        ones'), as CrewAI's LanceDB backend does: kept, it would make every later search
        a ``DimensionMismatchError``. The records these replace are not counted.

        The stored embeddings all have one width (this check keeps them so), so when one
        live record says the new ones' width (``_latest_width``), nothing more is read;
        every stored record is read only for another width (refused, or the width after
        the last record of the old one went), or where the newest have no embedding."""
        replaced = {record.id for _, record in named}
        new = {len(record.embedding) for _, record in named if record.embedding}
        if not new or new == {self._latest_width(replaced)}:
            return
        widths = {row.vector.shape[0]
                  for row in self._rows(self._memory.get_all(predicate=RECORD_PREDICATE))
                  if row.vector is not None and row.record.id not in replaced}
        for name, record in named:
            if record.embedding:
                width = len(record.embedding)
                if widths - {width}:
                    raise DimensionMismatchError(
                        f"{name}.embedding: {width} values, but the stored records'"
                        f" embeddings have {sorted(widths)}")
                widths.add(width)

    def _latest_width(self, replaced: set[str]) -> int | None:
        """The embedding width of a live record at the handle's own scope that has one
        and is not in ``replaced`` (``None``: none found). The record that said it last
        time is looked up first, by its slot; when it is gone, replaced or of another
        width now, the newest few records are read and one of them says it."""
        if self._witness is not None and self._witness not in replaced:
            width = self._width_among(self._memory.get_all(
                subject=self._witness, predicate=RECORD_PREDICATE), replaced)
            if width is not None:
                return width
        return self._width_among(
            self._memory.get_all(predicate=RECORD_PREDICATE, limit=_LATEST), replaced)

    def _width_among(self, claims: list[Claim], replaced: set[str]) -> int | None:
        own = self._memory.default_scope
        for claim in claims:
            packed = claim.meta.get(_EMBEDDING)
            if claim.scope == own and isinstance(packed, str) and claim.subject not in replaced:
                self._witness = claim.subject
                return len(base64.b64decode(packed)) // 4
        return None

    # -- reads ----------------------------------------------------------------------------
    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The ``limit`` records whose embeddings are closest to ``query_embedding`` by
        cosine (clipped at 0), best first, at least ``min_score``; records saved without
        an embedding are never found. An empty ``categories`` list filters nothing, as
        CrewAI's own recall and LanceDB backend read it (``delete`` with one retires
        nothing).

        Raises:
            InvalidArgumentError: a bad argument, named.
            DimensionMismatchError: the query's width is not the stored embeddings'.
        """
        query = _vector(query_embedding)
        limit = _count(limit, "limit")
        if isinstance(min_score, bool) or not isinstance(min_score, (int, float)) \
                or math.isnan(min_score):
            raise InvalidArgumentError("min_score", f"expected a number, got {min_score!r:.40}")
        if categories is not None and not _strings(categories, "categories"):
            categories = None  # an empty list filters nothing, as CrewAI's recall reads it
        pairs = [(row.record, row.vector)
                 for row in self._select(scope_prefix, categories, metadata_filter)
                 if row.vector is not None]
        widths = {vector.shape[0] for _, vector in pairs}
        if widths - {query.shape[0]}:
            raise DimensionMismatchError(
                f"query_embedding: {query.shape[0]} values, but the stored records'"
                f" embeddings have {sorted(widths)}")
        scored = []
        norm = float(np.linalg.norm(query))
        for record, vector in pairs:
            both = norm * float(np.linalg.norm(vector))
            score = max(0.0, float(query @ vector) / both) if both else 0.0
            if score >= min_score:
                scored.append((score, record))
        scored.sort(key=lambda hit: (-hit[0], hit[1].id))
        return [(record.model_copy(), score) for score, record in scored[:limit]]

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record with this id, or ``None``."""
        row = self._find(_text(record_id, "record_id"))
        return None if row is None else row.record.model_copy()

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """The records under ``scope_prefix``, newest created first."""
        limit, offset = _count(limit, "limit"), _count(offset, "offset")
        rows = sorted(self._select(scope_prefix),
                      key=lambda row: (_utc(row.record.created_at), row.record.id), reverse=True)
        return [row.record.model_copy() for row in rows[offset:offset + limit]]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records lie under ``scope``, their categories, their creation dates'
        range, and the scope's immediate children."""
        path = _path(_text(scope, "scope"))
        rows = self._select(path)
        made = [row.record.created_at for row in rows]
        return ScopeInfo(
            path=path, record_count=len(rows),
            categories=sorted({c for row in rows for c in row.record.categories}),
            oldest_record=min(made, key=_utc, default=None),
            newest_record=max(made, key=_utc, default=None),
            child_scopes=_children(path, rows),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes of ``parent`` that hold records."""
        path = _path(_text(parent, "parent"))
        return _children(path, self._select(path))

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """How many records under ``scope_prefix`` carry each category."""
        counts: dict[str, int] = {}
        for row in self._select(scope_prefix):
            for category in row.record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records lie under ``scope_prefix`` (all of them for ``None``)."""
        return len(self._select(scope_prefix))

    # -- async: the same calls on a worker thread ---------------------------------------
    async def asave(self, records: list[MemoryRecord]) -> None:
        """``save()`` on a worker thread."""
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """``search()`` on a worker thread."""
        return await asyncio.to_thread(self.search, query_embedding, scope_prefix,
                                       categories, metadata_filter, limit, min_score)

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """``delete()`` on a worker thread."""
        return await asyncio.to_thread(self.delete, scope_prefix, categories, record_ids,
                                       older_than, metadata_filter)

    # -- the rows -------------------------------------------------------------------------
    def _rows(self, claims: Iterable[Claim]) -> list[_Row]:
        """The records among ``claims`` at the handle's own scope (not those it
        inherits, so one crew's ``reset`` never retires a broader scope's records),
        decoded once per claim (a claim never changes: an update is a new claim), so a
        search decodes only what was written since the last."""
        known, own = self._decoded, self._memory.default_scope
        rows = [known.get(claim.id) or _row(claim) for claim in claims if claim.scope == own]
        self._decoded = {row.claim.id: row for row in rows}
        return rows

    def _find(self, record_id: str) -> _Row | None:
        claims = self._memory.get_all(subject=record_id, predicate=RECORD_PREDICATE)
        return next((row for row in self._rows(claims) if row.record.id == record_id), None)

    def _select(
        self,
        scope_prefix: object = None,
        categories: object = None,
        metadata_filter: object = None,
        record_ids: object = None,
        older_than: object = None,
    ) -> list[_Row]:
        """The live records matching every criterion given."""
        prefix = None if scope_prefix is None else _path(_text(scope_prefix, "scope_prefix"))
        wanted = None if categories is None else set(_strings(categories, "categories"))
        ids = None if record_ids is None else set(_strings(record_ids, "record_ids"))
        if metadata_filter is not None and not isinstance(metadata_filter, Mapping):
            raise InvalidArgumentError(
                "metadata_filter", f"expected a dict, got {type(metadata_filter).__name__}")
        if older_than is not None and not isinstance(older_than, datetime):
            raise InvalidArgumentError(
                "older_than", f"expected a datetime, got {type(older_than).__name__}")
        rows = self._rows(self._memory.get_all(predicate=RECORD_PREDICATE))
        return [
            row for row in rows
            if (prefix is None or _under(row.record.scope, prefix))
            and (wanted is None or not wanted.isdisjoint(row.record.categories))
            and (ids is None or row.record.id in ids)
            and (metadata_filter is None or all(
                row.record.metadata.get(key) == value for key, value in metadata_filter.items()))
            and (older_than is None or _utc(row.record.created_at) < _utc(older_than))
        ]


def _claim(record: MemoryRecord) -> Claim:
    """The claim a record is stored as."""
    meta: dict[str, object] = {_RECORD: record.model_dump(mode="json")}
    if record.embedding:
        packed = np.asarray(record.embedding, dtype="<f4").tobytes()
        meta[_EMBEDDING] = base64.b64encode(packed).decode("ascii")
    return Claim(record.id, RECORD_PREDICATE, record.content, text=record.content, meta=meta)


def _row(claim: Claim) -> _Row:
    """The record a claim stores, and its embedding as an array."""
    packed = claim.meta.get(_EMBEDDING)
    vector = None if not isinstance(packed, str) else np.frombuffer(
        base64.b64decode(packed), dtype="<f4").astype(np.float32)
    embedding = None if vector is None else vector.tolist()
    fields = cast(Mapping[str, object], claim.meta[_RECORD])  # as _claim wrote it
    record = MemoryRecord.model_validate({**fields, "embedding": embedding})
    return _Row(claim, record, vector)


def _utc(value: datetime) -> datetime:
    """An instant as naive UTC, as CrewAI makes them (``datetime.utcnow()``), so a naive
    and an aware one compare."""
    if value.tzinfo is None:
        return value
    return value.astimezone(timezone.utc).replace(tzinfo=None)


def _records(records: object) -> list[MemoryRecord]:
    """``records`` checked: a list of ``MemoryRecord``, each as ``_record`` checks it."""
    if not isinstance(records, list):
        raise InvalidArgumentError("records", f"expected a list of MemoryRecord, got"
                                              f" {type(records).__name__}")
    for i, record in enumerate(records):
        _record(record, f"records[{i}]")
    return records


def _record(record: object, name: str) -> None:
    """One record checked, named ``name``: non-blank content, a finite embedding, and
    text the store can hold (a lone surrogate was refused by the store, named by its own
    claim's fields)."""
    if not isinstance(record, MemoryRecord):
        raise InvalidArgumentError(name, f"expected a MemoryRecord, got {type(record).__name__}")
    _text(record.content, f"{name}.content")
    if record.embedding and not np.isfinite(np.asarray(record.embedding, dtype=np.float64)).all():
        raise InvalidArgumentError(f"{name}.embedding", "holds a value that is not a finite number")
    try:
        json.dumps(record.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(name, "holds a lone surrogate, not valid Unicode text") from None


def _vector(value: object) -> npt.NDArray[np.float32]:
    """A query embedding: a non-empty sequence of finite numbers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InvalidArgumentError(
            "query_embedding", f"expected a list of floats, got {type(value).__name__}")
    try:
        vector = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidArgumentError("query_embedding", "expected a list of floats") from None
    if vector.ndim != 1 or not vector.size or not np.isfinite(vector).all():
        raise InvalidArgumentError(
            "query_embedding", f"expected a non-empty list of finite floats, got shape"
                               f" {vector.shape}")
    return vector


def _text(value: object, argument: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(argument, f"expected a non-blank string, got {value!r:.40}")
    return value


def _strings(value: object, argument: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidArgumentError(argument, f"expected a list of strings, got {value!r:.40}")
    items = list(value)
    if not all(isinstance(item, str) for item in items):
        raise InvalidArgumentError(argument, f"expected a list of strings, got {items!r:.40}")
    return items


def _count(value: object, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(argument, f"expected an integer >= 0, got {value!r:.40}")
    return value


def _path(scope: str) -> str:
    """A scope path in one spelling: a leading slash, no trailing one (``"/"`` the root)."""
    return "/" + scope.strip("/")


def _under(scope: str, prefix: str) -> bool:
    """Whether ``scope`` is ``prefix`` or beneath it, by whole path segments (``/a/b`` is
    under ``/a``; ``/ab`` is not)."""
    path = _path(scope)
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


def _children(path: str, rows: Iterable[_Row]) -> list[str]:
    """The immediate child scopes of ``path`` among ``rows``' scopes."""
    base = "" if path == "/" else path
    children = set()
    for row in rows:
        rest = _path(row.record.scope)[len(base):].strip("/")
        if rest:
            children.add(f"{base}/{rest.split('/', 1)[0]}")
    return sorted(children)
