"""``forget_subject()`` after any history: a seeded random run of the write API
(``random_history.py``), then the erasure of a subject from one scope. Nothing of that
scope's subtree may still name the subject as a word: no line of its export (the
tombstone aside, which holds no name, and the ids of scopes and actors, which are the
caller's, not text), no search result over every state, now or as the memory believed
it before."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest

from memvara import Retrieved, Scope, export_jsonl

from .conftest import Clock
from .random_history import STATES, USERS, at_user, played

SEEDS = range(30)
NAMES = ["Zorblatt", "ann", "Bob"]
_IDS = ("scope", "actor", "decided_by")
"""The fields of an export line that name a scope or who acted, not what was said."""


def _naming(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(name.casefold())}\b")


def _scope_of(found: Retrieved) -> Scope | None:
    held = found.claim or found.episode
    return None if held is None else held.scope


def _text_of(line: str) -> str:
    record = json.loads(line)
    for key in _IDS:
        record.pop(key, None)
    record.get("internal", {}).pop("actor", None)
    return json.dumps(record, ensure_ascii=False).casefold()


@pytest.mark.parametrize("seed", SEEDS)
def test_nothing_beneath_the_erasure_names_the_subject(seed: int, clock: Clock) -> None:
    with played(seed, clock) as (rnd, mem):
        name, user = rnd.choice(NAMES), rnd.choice(USERS)
        at = at_user(mem, user)
        at.remember(name, "likes", "chess")  # so the erasure always has something to do
        before = clock.now - timedelta(days=1)
        clock.advance(hours=1)
        assert at.forget_subject(name, reason="asked", requested_by="dpo").claims >= 1
        naming = _naming(name)
        out = io.StringIO()
        export_jsonl(at, out)
        left = [line for line in out.getvalue().splitlines()[1:]
                if '"type":"tombstone"' not in line and naming.search(_text_of(line))]
        assert left == []
        for known_at in (None, before):
            found = at.search(name, k=100, include_episodes=True, states=STATES,
                              known_at=known_at)
            left = [r.text for r in found if (scope := _scope_of(r)) is not None
                    and at.default_scope.holds(scope) and naming.search(r.text.casefold())]
            assert left == []
