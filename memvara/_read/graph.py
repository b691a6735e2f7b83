"""Walking the claims as a graph: neighbourhoods and paths, at one pinned instant.

Entities are nodes (folded keys, with the owner's learned aliases applied) and live,
positively-stated claims are edges, walkable in either direction. The caller pins one
``TimeQuery`` and the walk runs inside one store snapshot, so every hop reads the same
state: a chain is reported only if all of it held at that instant, as believed then.

Walks are bounded so a hub entity cannot blow one up: each node reads at most
``FANOUT`` edges a side, each level expands at most ``FRONTIER`` nodes, and at most
``PATHS_PER_NODE`` partial paths are kept to any node. Paths never revisit a node, so
cycles end themselves.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from .._domain.model import Claim, Scope, TimeQuery

from .._domain.results import Path
from .._errors import InvalidArgumentError
from ..schema import PredicateRegistry
from ..store.base import Store

__all__ = [
    "FANOUT",
    "FRONTIER",
    "HOP_DECAY",
    "MAX_DEPTH",
    "PATHS_PER_NODE",
    "Walker",
    "neighborhood",
    "paths_between",
    "walkable",
]

MAX_DEPTH = 6
"""The deepest walk accepted: past six hops nearly everything connects to everything."""

FANOUT = 64
"""Edges read per node on each side (subject, object) per hop, newest first."""

FRONTIER = 512
"""Nodes expanded per level, the best-scoring first."""

PATHS_PER_NODE = 8
"""Partial paths kept to any one node, the best-scoring first."""

HOP_DECAY = 0.75
"""Each hop past the first multiplies a path's score by this: a longer chain is a weaker
connection even when every link is certain."""


@dataclass(frozen=True, slots=True)
class _Edge:
    claim: Claim
    to: str  # the node this edge leads to
    forward: bool  # walked from the claim's subject to its object


@dataclass(frozen=True, slots=True)
class _Partial:
    """A path under construction from the walk's start: its hops and nodes so far."""

    claims: tuple[Claim, ...]
    forward: tuple[bool, ...]
    nodes: tuple[str, ...]
    weight: float  # the product of the hops' confidences

    def then(self, edge: _Edge) -> _Partial:
        return _Partial(
            (*self.claims, edge.claim), (*self.forward, edge.forward), (*self.nodes, edge.to),
            self.weight * edge.claim.confidence,
        )

    def reversed(self) -> _Partial:
        """The same hops walked from the other end."""
        return _Partial(
            self.claims[::-1], tuple(not f for f in self.forward[::-1]), self.nodes[::-1],
            self.weight,
        )

    @property
    def identity(self) -> tuple[tuple[str, bool], ...]:
        return tuple((c.id, f) for c, f in zip(self.claims, self.forward))


def _score(partial: _Partial) -> float:
    hops = len(partial.claims)
    return partial.weight * HOP_DECAY ** max(0, hops - 1)


def _labels(partial: _Partial) -> tuple[str, ...]:
    """Each node's name as the claims store it (the first hop's for the start)."""
    first, ahead = partial.claims[0], partial.forward[0]
    labels = [first.subject if ahead else first.object]
    labels += [c.object if f else c.subject for c, f in zip(partial.claims, partial.forward)]
    return tuple(labels)


def _to_path(partial: _Partial) -> Path:
    """A finished path (at least one hop: an entity joined to itself is the caller's)."""
    return Path(partial.claims, partial.nodes, _labels(partial), partial.forward, _score(partial))


def _rank_key(path: Path) -> tuple[float, int, str, tuple[str, ...]]:
    """Best score first, then fewer hops; content breaks ties, so two ingests of one
    corpus list paths identically."""
    return (-path.score, path.hops, path.render(), tuple(c.id for c in path.claims))


def _keep_best(partials: list[_Partial]) -> list[_Partial]:
    partials.sort(key=lambda p: (-_score(p), len(p.claims), p.identity))
    return partials[:PATHS_PER_NODE]


class Walker:
    """One walk's view of the graph: a scope, a pinned instant, the owner's aliases.

    Args:
        store: where the edges live.
        scope: the reader's scope, checked on every hop by the store.
        tq: the instant every hop reads at.
        aliases: the owner's learned aliases (alias key -> entity key).
        predicates: canonical predicate names to walk, or ``None`` for all.
    """

    def __init__(
        self,
        store: Store,
        scope: Scope,
        tq: TimeQuery,
        aliases: Mapping[str, str],
        predicates: Collection[str] | None,
    ) -> None:
        self._store = store
        self._scope = scope
        self._tq = tq
        self._aliases = aliases
        self._names: dict[str, list[str]] = {}
        for alias, entity in aliases.items():
            self._names.setdefault(entity, []).append(alias)
        self._predicates = None if predicates is None else sorted(set(predicates))

    def node(self, key: str) -> str:
        """The node a folded key names: its entity if it is a learned alias."""
        return self._aliases.get(key, key)

    def _edges(self, nodes: Iterable[str]) -> dict[str, list[_Edge]]:
        """Every edge leaving each of ``nodes``, read in one store call."""
        wanted = set(nodes)
        keys = sorted({k for n in wanted for k in (n, *self._names.get(n, ()))})
        found = self._store.graph_edges(self._scope, self._tq, keys, self._predicates, FANOUT)
        edges: dict[str, dict[tuple[str, bool], _Edge]] = {n: {} for n in wanted}
        for claim, subject_key, object_key in found:
            head, tail = self.node(subject_key), self.node(object_key)
            if head == tail:
                continue  # a claim about an entity and itself leads nowhere
            if head in wanted:
                edges[head][(claim.id, True)] = _Edge(claim, tail, True)
            if tail in wanted:
                edges[tail][(claim.id, False)] = _Edge(claim, head, False)
        return {n: list(e.values()) for n, e in edges.items()}

    def reach(self, start: str, depth: int) -> list[dict[str, list[_Partial]]]:
        """Level ``d`` (0..depth): the best partial paths of exactly ``d`` hops from
        ``start`` to each node they reach."""
        levels = [{start: [_Partial((), (), (start,), 1.0)]}]
        for _ in range(depth):
            frontier = levels[-1]
            if not frontier:
                break
            best = sorted(frontier, key=lambda n: (-_score(frontier[n][0]), n))[:FRONTIER]
            edges = self._edges(best)
            grown: dict[str, list[_Partial]] = {}
            for node in best:
                for edge in edges[node]:
                    for partial in frontier[node]:
                        if edge.to not in partial.nodes:  # simple paths: cycles end here
                            grown.setdefault(edge.to, []).append(partial.then(edge))
            levels.append({n: _keep_best(ps) for n, ps in grown.items()})
        return levels

    def neighborhood(self, start: str, depth: int, min_hops: int) -> list[Path]:
        """Every path kept from ``start`` of ``min_hops``..``depth`` hops, ranked."""
        levels = self.reach(start, depth)
        paths = [
            _to_path(partial)
            for level in levels[min_hops:]
            for partials in level.values()
            for partial in partials
        ]
        return sorted(paths, key=_rank_key)

    def paths_between(self, source: str, target: str, depth: int) -> list[Path]:
        """Paths of 1..``depth`` hops from ``source`` to ``target``, ranked: walked from
        both ends (half the depth each) and joined where they meet."""
        ahead = self.reach(source, depth - depth // 2)
        behind = self.reach(target, depth // 2)
        to_target: dict[str, list[_Partial]] = {}
        for level in behind:
            for node, partials in level.items():
                to_target.setdefault(node, []).extend(p.reversed() for p in partials)
        seen: set[tuple[tuple[str, bool], ...]] = set()
        paths: list[Path] = []
        for level in ahead:
            for node, partials in level.items():
                for first in partials:
                    for rest in to_target.get(node, ()):
                        hops = len(first.claims) + len(rest.claims)
                        if not 1 <= hops <= depth or set(first.nodes) & set(rest.nodes[1:]):
                            continue
                        joined = _Partial(
                            first.claims + rest.claims, first.forward + rest.forward,
                            first.nodes + rest.nodes[1:], first.weight * rest.weight,
                        )
                        if joined.identity not in seen:
                            seen.add(joined.identity)
                            paths.append(_to_path(joined))
        return sorted(paths, key=_rank_key)


def walkable(registry: PredicateRegistry, store: Store, predicates: object) -> list[str]:
    """Canonical names for a walk's relation filter: each one registered, or used by
    some stored claim (a relation nobody ever wrote is a typo, not an empty walk)."""
    if isinstance(predicates, str) or not isinstance(predicates, Iterable):
        raise InvalidArgumentError("predicates", "expected a list of predicate names")
    names: list[str] = []
    unknown: list[str] = []
    for item in predicates:
        try:
            name = registry.canonical(item)
        except InvalidArgumentError:
            name = ""
        if name and (registry.is_known(name) or store.predicate_in_use(name)):
            names.append(name)
        else:
            unknown.append(repr(item)[:40])
    if not names or unknown:
        raise InvalidArgumentError(
            "predicates", f"expected known predicate names; unknown: {', '.join(unknown) or 'none given'}"
        )
    return names


def _walker(
    store: Store, registry: PredicateRegistry, scope: Scope, tq: TimeQuery,
    aliases: Mapping[str, str], predicates: Iterable[str] | None,
) -> Walker:
    """A walker pinned to ``tq``, with the owner's aliases and the relations to walk."""
    names = None if predicates is None else walkable(registry, store, predicates)
    return Walker(store, scope, tq, aliases, names)


def neighborhood(
    store: Store, registry: PredicateRegistry, scope: Scope, tq: TimeQuery, start_key: str,
    *, aliases: Mapping[str, str], depth: int, min_hops: int, predicates: Iterable[str] | None, floor: float, k: int,
) -> list[Path]:
    """The best ``k`` paths scoring at least ``floor`` out of the entity ``start_key``
    names, of ``min_hops`` to ``depth`` hops, in one snapshot."""
    walker = _walker(store, registry, scope, tq, aliases, predicates)
    with store.snapshot():
        paths = walker.neighborhood(walker.node(start_key), depth, min_hops)
    return [p for p in paths if p.score >= floor][:k]


def paths_between(
    store: Store, registry: PredicateRegistry, scope: Scope, tq: TimeQuery,
    source: str, target: str,
    *, aliases: Mapping[str, str], depth: int, predicates: Iterable[str] | None, floor: float, k: int,
) -> list[Path]:
    """The best ``k`` chains scoring at least ``floor`` joining the entities the folded
    keys ``source`` and ``target`` name, in one snapshot. Two names of one entity have
    no path between them: an entity is not connected to itself."""
    walker = _walker(store, registry, scope, tq, aliases, predicates)
    start, end = walker.node(source), walker.node(target)
    if start == end:
        return []
    with store.snapshot():
        paths = walker.paths_between(start, end, depth)
    return [p for p in paths if p.score >= floor][:k]
