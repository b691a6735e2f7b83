"""Export and import, lossless after any history: a seeded random run of the public write
API (facts, turns a failing model leaves waiting, retirements, erasures, ``forget_subject``,
``prune``/``restore_archived``, reviews, corrections, aliases, consolidation, purges, the
clock moving) is exported, imported into a fresh memory and exported again. The record
lines must match, and so must what both memories answer: every claim in every state, the
turns, the open reviews, ``why()`` of every claim, the turns still waiting, and each
write log's ``verify()``.

Runs of this kind found the tombstone whose scope lost its ``user`` key (an erasure of a
user from the root) that broke every later export."""

from __future__ import annotations

import io
import json

import pytest

from memvara import Memvara, export_jsonl, import_jsonl

from .conftest import Clock
from .random_history import STATES, USERS, at_user, model, played

SEEDS = range(40)


def _records(text: str) -> list[str]:
    """An export's record lines but the write log's (re-exported only when asked)."""
    return [line for line in text.splitlines()[1:] if '"type":"log"' not in line]


def _answers(mem: Memvara) -> dict[str, object]:
    found: dict[str, object] = {}
    for user in USERS:
        at = at_user(mem, user)
        found[f"{user} claims"] = sorted(json.dumps(c.to_dict(), sort_keys=True)
                                         for c in at.get_all(states=STATES))
        found[f"{user} turns"] = sorted(json.dumps(e.to_dict(), sort_keys=True)
                                        for e in at.episodes())
        found[f"{user} reviews"] = sorted(repr(r) for r in at.reviews())
    found["why"] = {c.id: repr(mem.why(c.id)) for c in mem.get_all(states=STATES)}
    found["waiting"] = sorted(e.id for e in mem.store.unextracted_episodes(mem.default_scope, 10**6))
    found["tombstones"] = mem.tombstones()
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_any_history_comes_back_whole(seed: int, clock: Clock) -> None:
    with played(seed, clock) as (rnd, mem):
        out = io.StringIO()
        export_jsonl(mem, out, include_log=rnd.random() < 0.5)
        with Memvara(clock=clock, llm=model()) as other:
            import_jsonl(other, io.StringIO(out.getvalue()))
            again = io.StringIO()
            export_jsonl(other, again)
            assert _records(again.getvalue()) == _records(out.getvalue())
            assert _answers(other) == _answers(mem)
            assert mem.verify().ok and other.verify().ok
