"""Optional dependencies, imported when a feature is used and never when memvara is."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


def require(module: str, hint: str) -> ModuleType:
    """Import ``module`` now, typed as a plain module (so type checking memvara never
    walks into a large SDK), or raise ``ImportError`` carrying the install ``hint``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(hint) from exc
