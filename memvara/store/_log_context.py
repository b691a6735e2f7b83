"""The write log's call context, shared by both stores' logs: which API verb, actor and
instant the records the calling thread seals belong to (``logged()`` holds it)."""

from __future__ import annotations

import threading

__all__ = ["Context", "Logged"]

Context = tuple[str, str, int, bool]
"""``(action, actor, at, named)``: the verb, who, when (us), and whether the actor was named."""


class Logged:
    """``WriteLog.logged()``: a class, not a generator, as it wraps every write."""

    __slots__ = ("_local", "_context")

    def __init__(self, local: threading.local, context: Context) -> None:
        self._local = local
        self._context = context

    def __enter__(self) -> None:
        stack: list[Context] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append(self._context)

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self._local.stack.pop()
