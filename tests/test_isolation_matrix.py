"""No read leaks across scopes: every read, from every scope, against a plain model.

Scopes form a tree -- tenants ``t1``/``t2``, users ``u1``/``u2``, agents ``a1``/``a2``,
sessions ``s1``/``s2``, nested -- plus the root and a few scopes with a gap in their path
(a tenant-wide agent, a user outside any tenant, a root-level session). Each written
scope gets distinctive claims through ``remember()`` (live, ended, retired, one about an
aliased entity) and turns through ``add()`` with a scripted model (one turn yields a
claim), every one carrying a token unique to it. The model of visibility is one line: a
reader sees a row when, at every level, the row's value is unset or equals the
reader's. From every scope, written or not (and from a few outsiders: an unknown tenant,
an unknown user), each kind of read is compared with it:

* ``get_all()`` and ``count()``, live and with ``states=STATES``;
* ``search()`` plain, with ``include_episodes=True`` and with ``states=STATES``, returning
  exactly what the reader may see (so inheritance from broader scopes is asserted, not
  only the absence of leaks), and a search for other scopes' tokens finding none of them;
* ``recall()`` rendering the token of every visible live claim (and turn, and ended
  value with ``include_history=True``) and no other token, never a retired one;
* ``history()`` of two slots, and of an entity through an alias its owner learned;
* ``get(id)`` and ``why(id)`` of claims of every scope (and every row ``why()`` names);
  ``produced()`` of turns of every scope; ``stats()``;
* ``neighborhood()`` of the subject every scope writes about (and of an alias), and
  ``paths_between()`` it and claims of random scopes: exactly the visible live edges;
* ``delete()``, ``erase()`` and ``supersede()`` of a claim of a sibling session, a sibling
  agent, another user, another tenant or a narrower scope: ``False``, ``False`` and
  ``ClaimNotFoundError``, with the store unchanged.

Then the current rule for inherited rows (``SECURITY.md``: a handle can retire or erase a
row of a broader scope it reads) is exercised -- a reader deletes and erases claims it
inherits, which must return ``True`` -- a scope is purged, and every read is checked again.

A fixed test writes every scope; a derandomized Hypothesis test writes random subsets in
random orders (``MEMVARA_SLOW=1``: many more, randomized). Failures are collected, not
stopped at, so one run lists every leak it finds.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvara import (
    STATES,
    Claim,
    ClaimNotFoundError,
    Memvara,
    MemvaraError,
    Retrieved,
    Scope,
    ScopedMemvara,
    SQLiteStore,
)

from memvara.store.postgres import PostgresStore

from .conftest import Clock, FakeLLM

SLOW = os.environ.get("MEMVARA_SLOW") == "1"
Key = tuple[str | None, str | None, str | None, str | None]
LEVELS = ("tenant", "user", "agent", "session")


def tree() -> list[Key]:
    """The root and every nested scope of two tenants, users, agents and sessions."""
    keys: list[Key] = [(None, None, None, None)]
    for depth in range(1, 5):
        for path in product(*[(f"{lvl[0]}1", f"{lvl[0]}2") for lvl in LEVELS][:depth]):
            keys.append(tuple([*path, *[None] * (4 - depth)]))  # type: ignore[arg-type]
    return keys


NESTED = tree()
GAPPED: list[Key] = [("t1", None, "a1", None), (None, "u1", None, None),
                     (None, None, None, "s1"), ("t2", "u1", None, "s2")]
OUTSIDERS: list[Key] = [("t3", None, None, None), ("t1", "u3", None, None),
                        ("t2", "u2", "a1", "s3")]
WRITABLE = NESTED + GAPPED
READERS = WRITABLE + OUTSIDERS
ALIAS_OWNER: Key = ("t1", "u1", None, None)  # learns "Big Blue" = "IBM"
WORDS = ("harbour", "quince", "lantern", "meadow", "cobalt", "juniper", "falcon", "saffron",
         "glacier", "tundra", "orchid", "basalt", "willow", "citadel", "ember", "fjord",
         "granite", "hazel", "indigo", "jasper", "kestrel", "lagoon", "marble", "nectar",
         "obsidian", "pebble", "quartz", "raven", "sierra", "thistle", "umber", "violet",
         "walnut", "yarrow", "zephyr")


def visible(reader: Key, row: Key) -> bool:
    """The whole rule: at every level, the row's value is unset or equals the reader's."""
    return all(r is None or r == q for r, q in zip(row, reader))


def relation(reader: Key, row: Key) -> str:
    """How a row's scope stands to a reader's, for messages and for picking targets."""
    for level, r, q in zip(("another tenant", "another user", "a sibling agent",
                            "a sibling session"), row, reader):
        if r is not None and q is not None and r != q:
            return level
    if any(r is not None and q is None for r, q in zip(row, reader)):
        return "a narrower scope"
    return "its own scope" if row == reader else "a broader scope"


def name(key: Key) -> str:
    return "/".join(v or "-" for v in key)


# -- what was written ------------------------------------------------------------------
@dataclass
class Row:
    """One claim or turn as the model knows it."""

    id: str
    scope: Key
    token: str
    kind: str  # "claim" or "turn"
    state: str = "live"
    subject: str = "user"
    predicate: str = ""


@dataclass
class World:
    """A memory and the model of everything in it."""

    mem: Memvara
    clock: Clock
    llm: FakeLLM
    rows: dict[str, Row] = field(default_factory=dict)
    checks: int = 0
    failures: list[str] = field(default_factory=list)

    def at(self, key: Key) -> ScopedMemvara:
        tenant, user, agent, session = key
        return self.mem.scope(tenant=tenant, user=user, agent=agent, session=session)

    def expect(self, ok: bool, what: str) -> None:
        self.checks += 1
        if not ok:
            self.failures.append(what)

    def claims(self) -> Iterator[Row]:
        return (r for r in self.rows.values() if r.kind == "claim")

    def seen(self, reader: Key, *, states: tuple[str, ...] = ("live",),
             kind: str = "claim") -> set[str]:
        """Ids the model says ``reader`` sees."""
        return {r.id for r in self.rows.values() if r.kind == kind and r.state in states
                and visible(reader, r.scope)}

    def tick(self) -> None:
        self.clock.advance(minutes=1)

    def store(self) -> SQLiteStore | PostgresStore:
        """The store, for raw reads: SQLite, or PostgreSQL under ``tests/congruence``."""
        store = self.mem.store
        assert isinstance(store, (SQLiteStore, PostgresStore))
        return store

    def mark(self) -> str:
        """The store's SQL parameter marker."""
        return "?" if isinstance(self.store(), SQLiteStore) else "%s"

    def snapshot(self) -> list[object]:
        store = self.store()
        return [store._query("SELECT id, invalidated_at, valid_to, observations FROM claims"
                             " ORDER BY rowid"),
                store._query("SELECT id FROM episodes ORDER BY rowid")]


def open_world() -> World:
    clock = Clock()
    llm = FakeLLM()
    world = World(Memvara(llm=llm, clock=clock), clock, llm)
    tenant, user, _, _ = ALIAS_OWNER
    world.mem.alias_entity("Big Blue", "IBM", tenant=tenant, user=user)
    return world


def write(world: World, key: Key) -> None:
    """A scope's claims and turns, each with a token no other row has."""
    i = WRITABLE.index(key)
    handle = world.at(key)

    def remember(j: int, subject: str, predicate: str) -> Claim:
        token = f"m{i}x{j}q"
        (claim,) = handle.remember(subject, predicate, f"marker {token}").added
        world.rows[claim.id] = Row(claim.id, key, token, "claim", subject=subject,
                                   predicate=predicate)
        world.tick()
        return claim

    remember(0, "user", "likes")
    ended = remember(1, "user", "lives_in")
    remember(2, "user", "lives_in")  # the same one-valued slot: ends the claim before it
    world.rows[ended.id].state = "ended"
    retired = remember(3, "user", "likes")
    assert handle.delete(retired.id)
    world.rows[retired.id].state = "retired"
    remember(5, "IBM", "likes")

    said = f"marker t{i}x0q please put the {WORDS[i]} review on the agenda"
    asked = f"marker t{i}x1q could you check the {WORDS[-1 - i]} ticket"
    world.llm.facts[said] = [("user", "likes", f"marker m{i}x4q")]
    receipt = handle.add([said, asked])
    assert receipt.skipped == () and len(receipt.added) == 1, receipt
    (claim,) = receipt.added
    world.rows[claim.id] = Row(claim.id, key, f"m{i}x4q", "claim", predicate="likes")
    for j, content in enumerate((said, asked)):  # a receipt does not name its turns
        ((turn_id,),) = world.store()._query(
            f"SELECT id FROM episodes WHERE content = {world.mark()}", [content])
        world.rows[turn_id] = Row(turn_id, key, f"t{i}x{j}q", "turn")
    world.tick()


# -- every read, from one reader --------------------------------------------------------
def ids(results: list[Retrieved]) -> set[str]:
    return {r.id for r in results}


def check_reader(world: World, reader: Key, rng: random.Random) -> None:
    """Every read from ``reader``, against the model."""
    at = world.at(reader)
    who = name(reader)
    live, every = world.seen(reader), world.seen(reader, states=tuple(STATES))
    ended = world.seen(reader, states=("ended",))
    retired = world.seen(reader, states=("retired",))
    turns = world.seen(reader, kind="turn")

    def leaks(got: set[str], want: set[str], read: str) -> None:
        extra, missing = got - want, want - got
        world.expect(not extra, f"{read} from {who} leaked " + ", ".join(
            f"{world.rows[i].token} ({relation(reader, world.rows[i].scope)})"
            if i in world.rows else i for i in sorted(extra)))
        world.expect(not missing, f"{read} from {who} missed " + ", ".join(
            f"{world.rows[i].token} ({relation(reader, world.rows[i].scope)})"
            for i in sorted(missing)))

    leaks({c.id for c in at.get_all()}, live, "get_all()")
    leaks({c.id for c in at.get_all(states=STATES)}, every, "get_all(states=STATES)")
    world.expect(at.count() == len(live), f"count() from {who}: {at.count()} != {len(live)}")
    world.expect(at.count(states=STATES) == len(every), f"count(states=STATES) from {who}")

    leaks(ids(at.search("marker", k=1000)), live, "search()")
    leaks(ids(at.search("marker", k=1000, include_episodes=True)), live | turns,
          "search(include_episodes=True)")
    leaks(ids(at.search("marker", k=1000, states=STATES)), every, "search(states=STATES)")
    foreign = [r.token for r in world.rows.values() if not visible(reader, r.scope)]
    rng.shuffle(foreign)
    if foreign:  # the query names other scopes' tokens; at most 32 words are used
        got = ids(at.search(" ".join(foreign[:30]), k=1000, include_episodes=True,
                            states=STATES))
        leaks(got, got & (every | turns), "search(other scopes' tokens)")

    text = at.recall("marker", k=1000, include_episodes=True, include_history=True)
    plain = at.recall("marker", k=1000)
    # include_history adds the ended values of each shown claim's slot, as its scope sees it
    history = {e for e in ended if any(
        (world.rows[c].subject, world.rows[c].predicate)
        == (world.rows[e].subject, world.rows[e].predicate)
        and visible(world.rows[c].scope, world.rows[e].scope) for c in live)}
    for row in world.rows.values():
        shown = row.id in live | turns | history
        world.expect((row.token in text) == shown,
                     f"recall(include_history, include_episodes) from {who}: {row.token}"
                     f" ({row.state} {row.kind}, {relation(reader, row.scope)})"
                     f" {'missing' if shown else 'shown'}")
        world.expect((row.token in plain) == (row.id in live),
                     f"recall() from {who}: {row.token} ({row.state},"
                     f" {relation(reader, row.scope)})")

    for subject, predicate in (("user", "likes"), ("user", "lives_in"), ("IBM", "likes")):
        want = {r.id for r in world.claims() if r.id in every and r.subject == subject
                and r.predicate == predicate}
        leaks({c.id for c in at.history(subject, predicate)}, want,
              f"history({subject!r}, {predicate!r})")
    owner_has_alias = reader[:2] == ALIAS_OWNER[:2]
    want = {r.id for r in world.claims() if r.id in every and r.subject == "IBM"
            and owner_has_alias}
    leaks({c.id for c in at.history("Big Blue", "likes")}, want, "history('Big Blue', 'likes')")

    stats = at.stats()
    world.expect(
        (stats["claims"], stats["live_claims"], stats["ended_claims"], stats["invalidated"],
         stats["episodes"]) == (len(every), len(live), len(ended), len(retired), len(turns)),
        f"stats() from {who}: {stats}")

    by_scope: dict[Key, list[Row]] = {}
    for row in world.claims():
        by_scope.setdefault(row.scope, []).append(row)
    for scope, rows in by_scope.items():  # one claim of every scope, by id
        row = rng.choice(rows)
        world.expect((at.get(row.id) is not None) == visible(reader, scope),
                     f"get() from {who} of {row.token} ({relation(reader, scope)})")

    for scope, rows in by_scope.items():  # provenance of one claim of every scope
        row = rng.choice(rows)
        prov = at.why(row.id)
        world.expect((prov is not None) == visible(reader, scope),
                     f"why() from {who} of {row.token} ({relation(reader, scope)})")
        if prov is not None:
            named = [e.id for e in prov.episodes] + [c.id for c in prov.superseded] + (
                [] if prov.closed_by is None else [prov.closed_by.id])
            world.expect(all(visible(reader, world.rows[i].scope) for i in named),
                         f"why() from {who} of {row.token} named a row it cannot see")
    for turn in (r for r in world.rows.values() if r.kind == "turn" and r.token.endswith("x0q")):
        made = at.produced(turn.id)
        derived = f"m{turn.token[1:-3]}x4q"  # the claim the scripted model read from it
        still_there = any(r.token == derived for r in world.claims())
        world.expect(bool(made) == (visible(reader, turn.scope) and still_there),
                     f"produced() from {who} of {turn.token} ({relation(reader, turn.scope)})")
        world.expect(all(visible(reader, world.rows[c.id].scope) for c in made),
                     f"produced() from {who} of {turn.token} returned a row it cannot see")

    # The graph: "user" is the hub of every scope's claims, so one walk meets them all.
    walked = {c.id for p in at.neighborhood("user", depth=2, k=1000) for c in p.claims}
    leaks(walked, {r.id for r in world.claims() if r.id in live and r.subject == "user"},
          "neighborhood('user')")
    walked = {c.id for p in at.neighborhood("Big Blue", k=1000) for c in p.claims}
    leaks(walked, {r.id for r in world.claims() if r.id in live and r.subject == "IBM"
                   and owner_has_alias}, "neighborhood('Big Blue')")
    claims = list(world.claims())
    for row in rng.sample(claims, min(6, len(claims))):
        if row.subject != "user":
            continue
        joined = at.paths_between("user", f"marker {row.token}", k=5)
        world.expect(bool(joined) == (row.id in live),
                     f"paths_between() from {who} to {row.token} ({row.state},"
                     f" {relation(reader, row.scope)})")

    # A claim of each kind of scope the reader may not see: no retiring, no erasing.
    targets: dict[str, Row] = {}
    for row in sorted(world.claims(), key=lambda r: rng.random()):
        if not visible(reader, row.scope):
            targets.setdefault(relation(reader, row.scope), row)
    before = world.snapshot()
    for why, row in targets.items():
        world.expect(at.delete(row.id) is False, f"delete() from {who} of {row.token} ({why})")
        world.expect(at.erase(row.id, sources=True) is False,
                     f"erase() from {who} of {row.token} ({why})")
        try:
            at.supersede(row.id, Claim("user", "likes", "intruder"))
        except MemvaraError as exc:
            world.expect(isinstance(exc, ClaimNotFoundError),
                         f"supersede() from {who} of {row.token} ({why}) raised {exc!r}")
        else:
            world.expect(False, f"supersede() from {who} of {row.token} ({why}) went through")
    world.expect(world.snapshot() == before, f"refused writes from {who} changed the store")


def check_everyone(world: World, rng: random.Random) -> None:
    for reader in READERS:
        check_reader(world, reader, rng)


# -- what changes the store on purpose --------------------------------------------------
def retire_inherited(world: World, rng: random.Random) -> None:
    """The current rule: a reader may retire and erase a row it inherits from a broader
    scope (``SECURITY.md``); both return ``True`` and the model follows."""
    pairs = [(reader, row) for reader in WRITABLE for row in world.claims()
             if row.scope != reader and visible(reader, row.scope) and row.state != "retired"]
    for action in ("delete", "erase"):
        if not pairs:
            return
        reader, row = rng.choice(pairs)
        at = world.at(reader)
        if action == "delete":
            world.expect(at.delete(row.id) is True,
                         f"delete() from {name(reader)} of inherited {row.token}")
            row.state = "retired"
        else:
            world.expect(at.erase(row.id) is True,
                         f"erase() from {name(reader)} of inherited {row.token}")
            del world.rows[row.id]
        pairs = [(r, c) for r, c in pairs if c.id != row.id]


def purge(world: World, key: Key) -> None:
    """``purge()`` of a nested scope takes it and the scopes beneath it, nothing else."""
    depth = sum(v is not None for v in key)
    gone = {r.id for r in world.rows.values() if r.scope[:depth] == key[:depth]}
    tenant, user, agent, session = key
    counts = world.mem.purge(tenant=tenant, user=user, agent=agent, session=session)
    world.expect(counts["claims"] + counts["episodes"] == len(gone),
                 f"purge({name(key)}) removed {counts}, the model {len(gone)} rows")
    for row_id in gone:
        del world.rows[row_id]


def run(world: World, written: list[Key], purged: Key | None, seed: int) -> None:
    rng = random.Random(seed)
    for key in written:
        write(world, key)
    check_everyone(world, rng)
    retire_inherited(world, rng)
    if purged is not None:
        purge(world, purged)
    check_everyone(world, rng)


def verdict(world: World, minimum: int) -> None:
    assert not world.failures, f"{len(world.failures)} of {world.checks} checks failed:\n" + \
        "\n".join(world.failures[:40])
    assert world.checks >= minimum, world.checks


# -- the tests ---------------------------------------------------------------------------
def test_every_scope_written_every_read_from_every_scope() -> None:
    """Every scope of the tree (and the gapped ones) holds rows; every reader reads."""
    world = open_world()
    try:
        run(world, list(WRITABLE), ("t1", "u2", None, None), seed=7)
        verdict(world, minimum=20_000)
    finally:
        world.mem.close()


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[Key], Key | None, int]:
    """Which scopes hold rows, in what order they are written, what is purged."""
    written = draw(st.lists(st.sampled_from(WRITABLE), min_size=2, max_size=12, unique=True))
    purged = draw(st.none() | st.sampled_from(NESTED[1:]))
    return written, purged, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=300 if SLOW else 6, deadline=None, derandomize=not SLOW,
          database=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts())
def test_random_scopes_never_leak(layout: tuple[list[Key], Key | None, int]) -> None:
    written, purged, seed = layout
    world = open_world()
    try:
        run(world, written, purged, seed)
        verdict(world, minimum=1_000)
    finally:
        world.mem.close()


def test_the_model_of_visibility_is_what_the_docs_say() -> None:
    """The test's one-line rule, spelled out on the cases SECURITY.md and the guide name,
    so the matrix cannot agree with a wrong model."""
    session = ("t1", "u1", "a1", "s1")
    assert visible(session, (None, None, None, None))  # the root is everyone's
    assert visible(session, ("t1", None, None, None))  # the tenant-wide row
    assert visible(session, ("t1", "u1", "a1", None))  # its agent's memory
    assert not visible(session, ("t1", "u1", "a1", "s2"))  # a sibling session
    assert not visible(session, ("t1", "u1", "a2", None))  # a sibling agent
    assert not visible(session, ("t1", "u2", None, None))  # another user
    assert not visible(session, ("t2", "u1", "a1", "s1"))  # the same names, another tenant
    assert not visible(("t1", "u1", None, None), session)  # a narrower scope's scratch
    assert not visible(("t1", None, None, None), (None, "u1", None, None))  # an unset level
    assert [relation(session, k) for k in [("t2", None, None, None), ("t1", "u2", None, None),
                                           ("t1", "u1", "a2", None), ("t1", "u1", "a1", "s2")]] \
        == ["another tenant", "another user", "a sibling agent", "a sibling session"]
    assert len(NESTED) == 31 and len(READERS) == 38


@pytest.mark.parametrize("key", [("t1", "u1", None, None), (None, "u1", None, None)])
def test_a_write_never_lands_outside_its_scope(key: Key) -> None:
    """What a handle writes carries exactly its scope, and a claim naming another scope
    in ``remember_many`` is written where it says, never where the handle is."""
    world = open_world()
    try:
        at = world.at(key)
        (claim,) = at.remember("user", "likes", "marker own").added
        assert claim.scope == Scope(*key)
        (other,) = at.remember_many([Claim("user", "likes", "marker elsewhere",
                                           scope=Scope("t2", "u2"))]).added
        assert other.scope == Scope("t2", "u2")
        assert at.get(other.id) is None
        assert world.at(("t2", "u2", None, None)).get(other.id) == other
    finally:
        world.mem.close()
