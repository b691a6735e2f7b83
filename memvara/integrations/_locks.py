"""One lock per item an adapter reads and then rewrites, shared by every object in the
process that speaks for that item.

An adapter's write can be a read and a rewrite (a LangGraph ``put`` retires the fields
the item no longer has; an Agents session appends at the position after its last item),
and two objects for one item (a store per request, a session object per request, worker
threads of one ``abatch``) doing that at once rewrite from the same read and lose one
side's change. Thread locks, not ``asyncio.Lock``: those bind to the first event loop
that waits on them. An item takes the lock its key hashes to, one of a fixed 64, so
other items go on beside it however many items there are. They hold within one process;
two processes rewriting one item at the same instant can still collide.
"""

from __future__ import annotations

import threading

__all__ = ["item_lock"]

_STRIPES = tuple(threading.Lock() for _ in range(64))


def item_lock(key: str) -> threading.Lock:
    """The lock of ``key``'s stripe: the same one for every caller with that key."""
    return _STRIPES[hash(key) % len(_STRIPES)]
