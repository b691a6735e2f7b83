"""A seeded random history of the public write API, for the tests that check what must
hold after any of them (``test_transfer_roundtrip.py``, ``test_forget_subject_random.py``):
facts, turns a failing model leaves waiting, retirements, erasures, ``forget_subject``,
``prune``/``restore_archived``, reviews, corrections, aliases, consolidation, purges,
and the clock moving, over the root and two users."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from datetime import timedelta

from memvara import Claim, ExtractionPendingError, Memvara, MemvaraError, ScopedMemvara

from .conftest import Clock, FakeLLM

SUBJECTS = ["user", "ann", "Bob", "Zorblatt", "acme"]
PREDICATES = ["lives_in", "likes", "works_at", "speaks"]
OBJECTS = ["Berlin", "Lisbon", "tea", "Acme", "Zorblatt", "French", "Oslo"]
TURNS = ["I live in Berlin", "I live in Lisbon", "my cat is called Miso", "I love tea",
         "Zorblatt lives in Oslo", "I work at Acme", "I speak French", "hello there"]
USERS = [None, "ann", "bob"]
STATES = ("live", "ended", "retired")
REFUSED = ("ClaimNotFoundError", "InvalidArgumentError", "NotFoundError")
"""What a random step may be told (an id it picked was erased by an earlier step)."""


def model() -> FakeLLM:
    return FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso")]})


def step(rnd: random.Random, mem: Memvara, llm: FakeLLM, clock: Clock, ids: list[str]) -> None:
    user = rnd.choice(USERS)
    at = at_user(mem, user)
    op = rnd.choice(["remember"] * 4 + ["add"] * 3 + [
        "delete", "erase", "forget_subject", "prune", "restore", "observe", "resolve", "retry",
        "advance", "advance", "supersede", "revert", "alias", "consolidate", "past", "many",
        "purge"])
    if op == "remember":
        ids += [c.id for c in at.remember(rnd.choice(SUBJECTS), rnd.choice(PREDICATES),
                                          rnd.choice(OBJECTS),
                                          meta=rnd.choice([None, {"k": rnd.randint(0, 3)}])).added]
    elif op == "add":
        llm.fail = rnd.random() < 0.4
        said = [rnd.choice([text, {"role": "user", "content": text,
                                   "name": rnd.choice(["Bruno", "Zorblatt", "ann"])}])
                for text in rnd.sample(TURNS, rnd.randint(1, 3))]
        try:
            ids += [c.id for c in at.add(said, meta=rnd.choice([None, {"ch": "slack"}])).added]
        except ExtractionPendingError as exc:
            ids += [c.id for c in exc.receipt.added]
    elif op in ("delete", "erase", "revert", "supersede") and ids:
        target = rnd.choice(ids)
        if op == "delete":
            at.delete(target)
        elif op == "erase":
            at.erase(target)
        elif op == "revert":
            at.revert(target)
        else:
            ids += [c.id for c in at.supersede(
                target, Claim(rnd.choice(SUBJECTS), "lives_in", rnd.choice(OBJECTS))).added]
    elif op == "forget_subject":
        at.forget_subject(rnd.choice(SUBJECTS[1:]), reason="asked", requested_by="dpo")
    elif op == "prune":
        at.prune(timedelta(days=rnd.choice([0, 1, 3])))
    elif op == "restore":
        at.restore_archived()
    elif op == "observe":
        at.observe(rnd.choice(SUBJECTS), "lives_in", rnd.choice(OBJECTS),
                   support=rnd.sample(["g1", "g2", "g3"], 2))
    elif op == "resolve" and (open_reviews := at.reviews()):
        at.resolve(open_reviews[0].id, rnd.choice(["keep", "accept"]))
    elif op == "retry":
        llm.fail = rnd.random() < 0.3
        try:
            at.retry_extraction()
        except ExtractionPendingError:
            pass
    elif op == "alias":
        at.alias_entity(rnd.choice(["Zorby", "Annie", "Bobby"]), rnd.choice(SUBJECTS[1:]))
    elif op == "consolidate":
        at.consolidate()
    elif op == "past":
        ids += [c.id for c in at.remember(
            rnd.choice(SUBJECTS), rnd.choice(PREDICATES), rnd.choice(OBJECTS),
            valid_from=clock.now - timedelta(days=rnd.randint(1, 30)),
            valid_to=rnd.choice([None, clock.now - timedelta(hours=1)])).added]
    elif op == "many":
        ids += [c.id for c in at.remember_many(
            [Claim(rnd.choice(SUBJECTS), rnd.choice(PREDICATES), rnd.choice(OBJECTS))
             for _ in range(3)]).added]
    elif op == "purge" and user is not None:
        mem.scope(user=user, session="s1").purge()
    elif op == "advance":
        clock.advance(days=rnd.choice([0.5, 1, 2]))



def at_user(mem: Memvara, user: str | None) -> Memvara | ScopedMemvara:
    """``mem`` at ``user``'s scope, or ``mem`` itself for ``None`` (the root)."""
    return mem.scope(user=user) if user else mem


@contextlib.contextmanager
def played(seed: int, clock: Clock) -> Iterator[tuple[random.Random, Memvara]]:
    """A new memory after seed ``seed``'s history (5 to 40 random steps), and the random
    source the test goes on drawing from."""
    rnd = random.Random(seed)
    llm = model()
    with Memvara(clock=clock, llm=llm) as mem:
        ids: list[str] = []
        for _ in range(rnd.randint(5, 40)):
            try:
                step(rnd, mem, llm, clock, ids)
            except MemvaraError as exc:
                if type(exc).__name__ not in REFUSED:
                    raise
        yield rnd, mem
