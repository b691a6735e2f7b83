"""Graph walks: ``neighborhood()`` and ``paths_between()`` walk the claims as a graph,
every hop read at one pinned instant, within the reader's scope."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta

import pytest

from memvara import Claim, InvalidArgumentError, Memvara, Path, PredicateSpec
from memvara._read.graph import FANOUT, MAX_DEPTH
from memvara.schema import Cardinality, Volatility
from memvara.store.base import Store

from .conftest import JAN, JUN, MAR, Clock


def _rendered(paths: list[Path]) -> list[str]:
    return [p.render() for p in paths]


def test_the_spec_example_walks_two_hops(mem: Memvara) -> None:
    mem.remember("alice", "reports_to", "Dana")
    mem.remember("dana", "works_at", "Kovac Labs")
    (path,) = mem.paths_between("Alice", "Kovac Labs")
    assert path.render() == "alice -reports_to-> Dana -works_at-> Kovac Labs"
    assert round(path.score, 3) == 0.75
    assert path.nodes == ("alice", "dana", "kovac labs")
    assert path.labels == ("alice", "Dana", "Kovac Labs")
    assert [c.predicate for c in path.claims] == ["reports_to", "works_at"]
    assert path.hops == 2 and path.forward == (True, True)
    assert mem.why(path.claims[0].id) is not None  # every hop is a claim to explain


def test_edges_are_walked_both_ways(mem: Memvara) -> None:
    mem.remember("alice", "reports_to", "Dana")
    mem.remember("dana", "works_at", "Kovac Labs")
    (path,) = mem.paths_between("Kovac Labs", "alice")
    assert path.render() == "Kovac Labs <-works_at- dana <-reports_to- alice"
    assert path.forward == (False, False)


def test_spellings_of_one_entity_are_one_node(mem: Memvara) -> None:
    mem.remember("alice", "works_at", "Acme Corp.")
    mem.remember("ACME, Inc.", "located_in", "Zagreb")
    (path,) = mem.paths_between("alice", "zagreb")
    assert path.nodes == ("alice", "acme", "zagreb")
    assert path.labels == ("alice", "Acme Corp.", "Zagreb")


def test_endpoints_and_hops_resolve_through_learned_aliases(mem: Memvara) -> None:
    mem.remember("alice", "works_at", "Big Blue")
    mem.remember("IBM", "located_in", "Armonk")
    assert mem.paths_between("alice", "Armonk") == []  # two entities until we learn better
    mem.alias_entity("Big Blue", "IBM")
    (path,) = mem.paths_between("alice", "Armonk")
    assert path.nodes == ("alice", "ibm", "armonk")
    # One entity is not connected to itself: two names of it (an alias, or one fold) have
    # no path between them.
    assert mem.paths_between("Big Blue", "IBM") == []
    assert mem.paths_between("Acme Corp", "acme, inc.") == []
    assert mem.paths_between("Acme", "ACME") == []


def test_a_negative_claim_is_never_a_link(mem: Memvara) -> None:
    mem.remember("alice", "works_at", "Acme", polarity=-1)
    assert mem.paths_between("alice", "Acme") == []
    assert mem.neighborhood("alice") == []


def test_scope_is_checked_on_every_hop(mem: Memvara) -> None:
    mem.remember("alice", "reports_to", "Dana", user="u1")
    mem.remember("dana", "works_at", "Kovac Labs", user="u2")
    assert mem.paths_between("alice", "Kovac Labs", user="u1") == []
    assert mem.paths_between("alice", "Kovac Labs", user="u2") == []
    assert mem.paths_between("alice", "Kovac Labs") == []  # root sees neither user
    mem.remember("dana", "works_at", "Kovac Labs")  # shared memory: every user inherits it
    assert len(mem.paths_between("alice", "Kovac Labs", user="u1")) == 1
    assert mem.paths_between("alice", "Kovac Labs", user="u2") == []
    sibling = mem.scope(user="u1", session="s2")
    mem.remember("kovac labs", "located_in", "Zagreb", user="u1", session="s1")
    assert sibling.paths_between("alice", "Zagreb") == []
    assert len(mem.scope(user="u1", session="s1").paths_between("alice", "Zagreb")) == 1


def test_every_hop_reads_the_same_instant(mem: Memvara, clock: Clock) -> None:
    mem.remember("alice", "reports_to", "Dana", valid_from=JAN)
    mem.remember("alice", "reports_to", "Erin", valid_from=JUN)  # ends Dana's hop in June
    mem.remember("dana", "works_at", "Kovac Labs", valid_from=MAR)
    assert mem.paths_between("alice", "Kovac Labs") == []  # now: alice reports to Erin
    (then,) = mem.paths_between("alice", "Kovac Labs", valid_at=MAR + timedelta(days=1))
    assert then.labels[1] == "Dana"
    assert mem.paths_between("alice", "Kovac Labs", valid_at=JAN + timedelta(days=1)) == []
    learned = clock.now
    clock.advance(days=1)
    mem.forget("dana", "works_at")
    assert mem.paths_between("alice", "Kovac Labs", valid_at=MAR + timedelta(days=1)) == []
    assert len(mem.paths_between(
        "alice", "Kovac Labs", valid_at=MAR + timedelta(days=1), known_at=learned
    )) == 1


def test_cycles_are_safe_and_paths_never_revisit_a_node(mem: Memvara) -> None:
    for a, b in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]:
        mem.remember(a, "knows", b)
    paths = mem.neighborhood("a", depth=MAX_DEPTH, k=1000)
    assert paths and all(len(set(p.nodes)) == len(p.nodes) for p in paths)
    between = mem.paths_between("a", "d", depth=MAX_DEPTH, k=10)
    assert _rendered(between) == ["a <-knows- c -knows-> d", "a -knows-> b -knows-> c -knows-> d"]


def test_a_hub_is_read_a_bounded_number_of_edges_at_a_time(mem: Memvara) -> None:
    mem.remember_many([Claim("hub", "links", f"leaf {i}") for i in range(3 * FANOUT)])
    one_hop = mem.neighborhood("hub", depth=1, k=1_000)
    assert len(one_hop) == FANOUT  # the newest FANOUT edges of that side
    assert {p.labels[1] for p in one_hop} == {f"leaf {i}" for i in range(2 * FANOUT, 3 * FANOUT)}
    two_hops = mem.neighborhood("leaf 5", depth=2, k=1_000)
    assert 1 <= len(two_hops) <= 1 + FANOUT


def test_neighborhood_ranks_closer_and_surer_links_first(mem: Memvara) -> None:
    mem.remember("alice", "reports_to", "Dana")
    mem.remember("alice", "likes", "tea", confidence=0.5)
    mem.remember("dana", "works_at", "Kovac Labs")
    paths = mem.neighborhood("alice")
    assert _rendered(paths) == [
        "alice -reports_to-> Dana",
        "alice -reports_to-> Dana -works_at-> Kovac Labs",
        "alice -likes-> tea",
    ]
    assert [round(p.score, 3) for p in paths] == [1.0, 0.75, 0.5]
    assert _rendered(mem.neighborhood("alice", k=1)) == ["alice -reports_to-> Dana"]
    assert _rendered(mem.neighborhood("alice", min_hops=2)) == [
        "alice -reports_to-> Dana -works_at-> Kovac Labs"
    ]
    assert len(mem.neighborhood("alice", min_score=0.6)) == 2
    assert mem.neighborhood("nobody we know") == []


def test_paths_between_keeps_the_best_k(mem: Memvara) -> None:
    for middle in ["b1", "b2", "b3", "b4"]:
        mem.remember("a", "knows", middle)
        mem.remember(middle, "knows", "z")
    mem.remember("a", "knows", "z", confidence=0.6)
    paths = mem.paths_between("a", "z")
    assert len(paths) == 3 and paths[0].hops == 2  # 0.75 beats the direct link at 0.6
    assert [p.hops for p in mem.paths_between("a", "z", k=10)] == [2, 2, 2, 2, 1]
    assert [p.hops for p in mem.paths_between("a", "z", depth=1)] == [1]
    assert mem.paths_between("a", "z", min_score=0.9) == []
    assert mem.paths_between("a", "nowhere") == []


def test_predicates_limit_what_is_walked(mem: Memvara) -> None:
    mem.remember("alice", "reports_to", "Dana")
    mem.remember("dana", "works_at", "Kovac Labs")
    mem.remember("alice", "resides_in", "Zagreb")
    assert mem.paths_between("alice", "Kovac Labs", predicates=["works_at"]) == []
    assert len(mem.paths_between(
        "alice", "Kovac Labs", predicates=["reports_to", "works_at"]
    )) == 1
    # An alias names its slot's relation, and a relation only ever written is known too.
    assert _rendered(mem.neighborhood("alice", predicates=["based_in"])) == [
        "alice -lives_in-> Zagreb"
    ]
    with pytest.raises(InvalidArgumentError) as caught:
        mem.neighborhood("alice", predicates=["reports_to", "reports_too", 5])  # type: ignore[list-item]
    assert str(caught.value) == ("predicates: expected known predicate names; unknown:"
                                 " 'reports_too', 5")  # was ["'reports_too'", '5']
    with pytest.raises(InvalidArgumentError, match="predicates"):
        mem.neighborhood("alice", predicates="works_at")
    with pytest.raises(InvalidArgumentError, match="predicates"):
        mem.neighborhood("alice", predicates=[])
    with pytest.raises(InvalidArgumentError, match="predicates"):
        mem.neighborhood("alice", predicates=["  "])


def test_a_learned_predicate_is_walkable(mem: Memvara) -> None:
    mem.registry.register(PredicateSpec("mentors", Cardinality.MANY, Volatility.SLOW))
    assert mem.neighborhood("alice", predicates=["mentors"]) == []


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda m: m.neighborhood("a", depth=0), "depth"),
        (lambda m: m.neighborhood("a", depth=MAX_DEPTH + 1), "depth"),
        (lambda m: m.neighborhood("a", depth=True), "depth"),
        (lambda m: m.neighborhood("a", k=0), "k"),
        (lambda m: m.neighborhood("a", min_hops=0), "min_hops"),
        (lambda m: m.neighborhood("a", depth=2, min_hops=3), "min_hops"),
        (lambda m: m.neighborhood("a", min_score=-1), "min_score"),
        (lambda m: m.neighborhood(""), "entity"),
        (lambda m: m.paths_between("a", "b", depth=10**9), "depth"),
        (lambda m: m.paths_between("a", "b", k=-1), "k"),
        (lambda m: m.paths_between("a", "b", min_score=float("nan")), "min_score"),
        (lambda m: m.paths_between("", "b"), "source"),
        (lambda m: m.paths_between("a", None), "target"),
        (lambda m: m.paths_between("a", "b", as_of=JAN, valid_at=JAN), "as_of"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(
    mem: Memvara, call: object, argument: str
) -> None:
    mem.remember("a", "knows", "b")
    with pytest.raises(InvalidArgumentError, match=argument):
        call(mem)  # type: ignore[operator]
    assert mem.count() == 1


class _WriteBetweenHops:
    """A store whose second edge read first lets a write land: the race a
    search-then-search loop loses."""

    def __init__(self, store: Store, write: object) -> None:
        self.read_edges = store.graph_edges
        self.write = write
        self.reads = 0

    def __call__(
        self, scope: object, tq: object, keys: Collection[str], predicates: object, fanout: int
    ) -> object:
        self.reads += 1
        if self.reads == 2:
            self.write()  # type: ignore[operator]
        return self.read_edges(scope, tq, keys, predicates, fanout)  # type: ignore[arg-type]


@pytest.mark.parametrize("on_disk", [True, False])
def test_a_write_between_hops_cannot_make_a_chain_that_was_never_true(
    on_disk: bool, db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memvara(db_path if on_disk else ":memory:", clock=clock) as mem:
        mem.remember("alice", "reports_to", "Dana")

        def race() -> None:  # hop 1 is retired, hop 2 appears, in one later write
            clock.advance(seconds=1)
            mem.forget("alice", "reports_to")
            mem.remember("dana", "works_at", "Kovac Labs")

        # The search-then-search loop reports the chain: each read saw a different store.
        first = mem.search("alice reports_to", k=1)[0].claim
        assert first is not None and first.object == "Dana"
        race()
        second = mem.search(f"{first.object} works_at", k=1)[0].claim
        assert second is not None and second.object == "Kovac Labs"  # true at no instant

        # Replay the race against a traversal: the write lands between its hops.
        mem.forget("dana", "works_at")
        clock.advance(seconds=1)
        mem.remember("alice", "reports_to", "Dana")
        interloper = _WriteBetweenHops(mem.store, race)
        monkeypatch.setattr(mem.store, "graph_edges", interloper)
        assert mem.paths_between("alice", "Kovac Labs", depth=2) == []
        assert interloper.reads >= 2
        monkeypatch.undo()
        assert mem.paths_between("alice", "Kovac Labs") == []  # and none after it, either


def test_a_walk_reads_one_snapshot_even_at_one_instant(
    db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same clock reading for the walk and the write, so the pinned instant alone cannot
    tell them apart: the walk's snapshot is what keeps the write out."""
    with Memvara(db_path, clock=clock) as mem:
        mem.remember("alice", "reports_to", "Dana")

        def race() -> None:
            mem.forget("alice", "reports_to")
            mem.remember("dana", "works_at", "Kovac Labs")

        interloper = _WriteBetweenHops(mem.store, race)
        monkeypatch.setattr(mem.store, "graph_edges", interloper)
        assert mem.paths_between("alice", "Kovac Labs", depth=2) == []
        assert interloper.reads == 2
        monkeypatch.undo()
        assert mem.get_all()[0].object == "Kovac Labs"  # the write did land


def test_a_claim_about_an_entity_and_itself_leads_nowhere(mem: Memvara) -> None:
    mem.remember("narcissus", "admires", "Narcissus")
    mem.remember("narcissus", "lives_in", "Thespiae")
    assert _rendered(mem.neighborhood("narcissus")) == ["narcissus -lives_in-> Thespiae"]
