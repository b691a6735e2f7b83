"""Which frame a warning names: the first one outside memvara.

A fixed ``stacklevel`` counts frames, and the count differs with the path a call takes
(the facade's keyword check wraps every public method; ``Memvara()`` opens a
``SQLiteStore`` a frame deeper than a caller who opens one directly). Counted wrong, the
warning names a line inside memvara, where the user can neither find which of their calls
it was about nor filter it by their own module. Python 3.12's ``skip_file_prefixes`` does
this, but memvara runs on 3.10.
"""

from __future__ import annotations

import sys

__all__ = ["user_stacklevel"]


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the function calling this one
    name the innermost frame whose module is not memvara's."""
    frame = sys._getframe(1)  # the function about to warn: stacklevel 1
    level = 1
    while frame.f_back is not None and _ours(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    return level


def _ours(module: str) -> bool:
    return module == "memvara" or module.startswith("memvara.")
