"""``verify()``: walk the write log and find the first record that does not chain.

The walk reads the log in pages, recomputing each record's hash from the one before
(``_domain/ledger.py``), so a record edited in place, one dropped from the middle, or two
swapped all fail at the first record they touch. A rewrite that recomputes every hash
after its edit chains again; so does a log cut short. Only an anchor kept outside the
store catches those: ``verify(since=anchor)`` also checks that the anchored record is
still there, unchanged.
"""

from __future__ import annotations

from .._domain.ledger import Anchor, LogReport, genesis, record_hash
from ..store.base import WriteLogStore

__all__ = ["verify_log"]

PAGE = 10_000
"""Records read at a time (a page of 10,000 is a few MB at most)."""


def verify_log(store: WriteLogStore, since: Anchor | None) -> LogReport:
    """Check the whole chain, and with ``since`` that the anchored record survives."""
    with store.snapshot():
        head = store.log_head()
        prev, expected, count = genesis(store.log_identity()), 1, 0
        if since is not None and since.seq == 0 and since.hash != prev:
            return _broken(0, head, 0, "the anchor names record 0, the start of the log, with"
                           " another hash than this store's: it is no anchor this store gave")
        while True:
            page = store.log_records(expected - 1, PAGE)
            for seq, at, actor, action, body, stored in page:
                if seq != expected:
                    return _broken(count, head, expected, f"record {expected} is missing")
                if record_hash(prev, seq, at, actor, action, body) != stored:
                    return _broken(count, head, seq, (
                        f"record {seq} ({action} by {actor or 'no actor'}) does not match its"
                        " hash, or the record before it changed"))
                if since is not None and seq == since.seq and stored != since.hash:
                    return _broken(count, head, seq, (
                        f"record {seq} is not the one the anchor names: history was"
                        " rewritten since the anchor"))
                prev, expected, count = stored, expected + 1, count + 1
            if len(page) < PAGE:
                break
    if since is not None and since.seq > head.seq:
        return _broken(count, head, since.seq, (
            f"the log ends at record {head.seq} but the anchor names record {since.seq}:"
            " history was rolled back since the anchor"))
    return LogReport(ok=True, records=count, head=str(head))


def _broken(count: int, head: Anchor, seq: int, problem: str) -> LogReport:
    return LogReport(ok=False, records=count, head=str(head), broken=seq, problem=problem)
