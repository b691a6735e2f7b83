"""The SQLite backend: claims and episodes in one SQLite file (WAL, FTS5), vectors in a
memory-mapped sidecar file per table.

``SQLiteStore`` is the class users name; the modules beside it each hold one part of it.
The other names below were importable from ``memvara.store.sqlite`` when it was a single
module, and stay importable from it.
"""

from __future__ import annotations

from ..._domain.entities import entity_key as fold_entity
from ..._domain.model import Claim as Claim
from ..._domain.salience import reinforced_storage as reinforced_storage
from ..._domain.salience import retrievability as retrievability
from ..._domain.model import Episode as Episode
from ..._domain.model import Scope as Scope
from ..._domain.model import TimeQuery as TimeQuery
from ..._domain.model import set_new_claim_id as set_new_claim_id
from ..._domain.time import from_micros as from_micros
from ..._domain.time import to_micros as to_micros
from ..._errors import ClosedError as ClosedError
from ..._errors import DimensionMismatchError as DimensionMismatchError
from ..._errors import NotAStoreError as NotAStoreError
from ..._errors import ReadOnlyStoreError as ReadOnlyStoreError
from ..._errors import SchemaVersionError as SchemaVersionError
from ..._errors import StorageFullError as StorageFullError
from ..._errors import StoreCorruptError as StoreCorruptError
from ..._errors import StoreError as StoreError
from ..._errors import StoreLockedError as StoreLockedError
from ...schema import Cardinality as Cardinality
from ...schema import PredicateSpec as PredicateSpec
from ...schema import Volatility as Volatility
from ..base import NO_SETTLEMENT as NO_SETTLEMENT
from ..base import RankFields as RankFields
from ..base import Settlement as Settlement
from ..base import SweepWindow as SweepWindow
from ..base import Written as Written
from ._migrations import APPLICATION_ID, FOLD_FUNCTION, MIGRATIONS, SCHEMA_VERSION
from ._nearest import nearest_admitted as nearest_admitted
from ._rows import CLAIM_COLUMNS as CLAIM_COLUMNS
from ._rows import claim_row as claim_row
from ._rows import claim_rowid as claim_rowid
from ._rows import decode_claim as decode_claim
from ._rows import ended as ended
from ._rows import insert_statement as insert_statement
from ._rows import new_id as new_id
from ._rows import retired as retired
from ._rows import scope_levels as scope_levels
from ._rows import scope_of as scope_of
from ._rows import single_insert as single_insert
from ._rows import with_id as with_id
from ._vectors import VectorFile as VectorFile
from ._vectors import dot as dot
from ._vectors import read_header as read_header
from ._connections import CHECKPOINT_PAGES, MIN_SQLITE
from ._core import TEXT_INDEX_BATCH
from ._episodes import content_hash
from .store import SQLiteStore

__all__ = [
    "APPLICATION_ID",
    "CHECKPOINT_PAGES",
    "FOLD_FUNCTION",
    "MIGRATIONS",
    "MIN_SQLITE",
    "SCHEMA_VERSION",
    "SQLiteStore",
    "TEXT_INDEX_BATCH",
    "content_hash",
    "fold_entity",
]
