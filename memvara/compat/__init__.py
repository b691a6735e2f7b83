"""mem0 compatibility: run a mem0 app on memvara, and bring a mem0 store's history over.

``Memory`` and ``AsyncMemory`` have mem0 2.x's methods and return shapes;
``import_mem0`` replays mem0's ``history.db`` with no model call. Importing this
package imports nothing of mem0's: the shim is memvara's own code.
"""

from __future__ import annotations

from ._aio import AsyncMemory
from ._errors import MemoryNotFoundError, NoTranslationError
from ._importer import MEM0_PREDICATE, Conflict, Mem0ImportReceipt, import_mem0
from ._memory import Memory

__all__ = [
    "AsyncMemory",
    "Conflict",
    "MEM0_PREDICATE",
    "Mem0ImportReceipt",
    "Memory",
    "MemoryNotFoundError",
    "NoTranslationError",
    "import_mem0",
]
