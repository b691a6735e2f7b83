"""Multi-hop questions: a search-then-search loop against graph traversal.

Run::

    python bench/multihop.py [--chains 100] [--noise 2] [--k 10] [--beam 3]
                             [--graph-size 100000] [--latency-queries 50] [--json PATH]

The data is synthetic and seeded. Each chain is three claims,
``person -reports_to-> manager -works_at-> company -located_in-> city``; the 2-hop
question asks for the company from the person, the 3-hop one for the city. Every entity
also gets ``--noise`` distracting edges (``knows``/``likes``/``partners_with``/
``visited`` to other chains' entities and to filler entities), so one-hop answers and
wrong branches compete for the same ``k`` results. Nothing here is tuned to the answers.

Strategies, each scored as recall: is the answer among the ``k`` entities it returns?

* ``search loop``: what an agent does with search alone. Search the start's name, take
  the other ends of the top results as the next entities (the best ``--beam`` of them),
  search those, and so on (following only hits that name the entity searched); the
  answers are the entities met at the last hop, in rank order. Each search is a separate read, so each sees whatever the store holds then.
* ``traversal``: ``neighborhood(start, depth=d, k=k)``: the answers are the far ends of
  its paths in rank order.
* ``traversal, min_hops=d``: the same, with one-hop paths kept from spending ``k``.
* ``traversal, predicates``: the same, walking only the chain's three relations (what a
  caller that knows the question's relations can ask for).

Then the race. For ``--chains`` fresh pairs, only hop 1 exists (``a -reports_to-> b``).
The loop searches ``a`` and finds ``b``; a write then retires hop 1 and creates hop 2
(``b -works_at-> c``); the loop searches ``b`` and finds ``c``, reporting ``a -> b -> c``,
which was true at no instant. ``paths_between(a, c)`` runs with the same write landing
between its hops (injected into its second edge read), and once after the write.

Last, latency: ``paths_between`` at depth 3 over a random graph of ``--graph-size``
claims (about five edges an entity), median and spread over ``--latency-queries``
random pairs, in a file store.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memvara import Claim, Memvara, NullLLM  # noqa: E402
from memvara._domain.model import Scope, TimeQuery  # noqa: E402

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
CHAIN = ("reports_to", "works_at", "located_in")
NOISE = ("knows", "likes", "partners_with", "visited")
SYLLABLES = ("ka", "lo", "mi", "ren", "sa", "tor", "vel", "zu", "den", "ri", "po", "nak")


class Clock:
    """A clock the bench moves by hand, so every run writes the same timestamps."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def tick(self) -> None:
        self.now += timedelta(seconds=1)


def _name(rng: random.Random, used: set[str]) -> str:
    """A made-up two-word name no other entity has (no shared word like "Person" for a
    lexical search to match every entity of a kind by)."""
    while True:
        name = " ".join(
            "".join(rng.choice(SYLLABLES) for _ in range(4)).capitalize() for _ in range(2)
        )
        if name not in used:
            used.add(name)
            return name


def build_chains(mem: Memvara, chains: int, noise: int, seed: int) -> list[tuple[str, ...]]:
    """Write the chains and their distractors; each chain's four entity names."""
    rng = random.Random(seed)
    used: set[str] = set()
    rows = [tuple(_name(rng, used) for _ in range(len(CHAIN) + 1)) for _ in range(chains)]
    fillers = [_name(rng, used) for _ in range(chains * 2)]
    claims = [
        Claim(row[i], CHAIN[i], row[i + 1]) for row in rows for i in range(len(CHAIN))
    ]
    everyone = [name for row in rows for name in row]
    for name in everyone:
        for _ in range(noise):
            other = rng.choice(everyone if rng.random() < 0.5 else fillers)
            if other != name:
                claims.append(Claim(name, rng.choice(NOISE), other))
    mem.remember_many(claims)
    return rows


def _other_end(claim: Claim, entity: str) -> str | None:
    """The entity a hit leads to from ``entity``; ``None`` for a hit not about it."""
    if claim.subject.casefold() == entity.casefold():
        return claim.object
    return claim.subject if claim.object.casefold() == entity.casefold() else None


def search_loop(mem: Memvara, start: str, depth: int, k: int, beam: int) -> list[str]:
    """The entities a search-then-search loop reaches at ``depth``, best first."""
    frontier = [start]
    seen = {start.casefold()}
    reached: list[str] = []
    for _ in range(depth):
        reached = []
        for entity in frontier:
            for hit in mem.search(entity, k=k):
                if hit.claim is None:
                    continue
                other = _other_end(hit.claim, entity)
                if other is not None and other.casefold() not in seen and other not in reached:
                    reached.append(other)
        seen.update(r.casefold() for r in reached)
        frontier = reached[:beam]
    return reached[:k]


def traversal(mem: Memvara, start: str, depth: int, k: int, **kwargs: Any) -> list[str]:
    """The far ends of ``neighborhood()``'s paths, best first."""
    ends: list[str] = []
    for path in mem.neighborhood(start, depth=depth, k=k, **kwargs):
        if path.labels[-1] not in ends:
            ends.append(path.labels[-1])
    return ends


def recall_rows(
    mem: Memvara, rows: Sequence[tuple[str, ...]], k: int, beam: int
) -> list[dict[str, Any]]:
    strategies: list[tuple[str, Callable[[str, int], list[str]]]] = [
        ("search loop", lambda s, d: search_loop(mem, s, d, k, beam)),
        ("traversal", lambda s, d: traversal(mem, s, d, k)),
        ("traversal, min_hops=d", lambda s, d: traversal(mem, s, d, k, min_hops=d)),
        ("traversal, predicates", lambda s, d: traversal(mem, s, d, k, predicates=CHAIN)),
    ]
    out = []
    for label, run in strategies:
        row: dict[str, Any] = {"strategy": label}
        for depth in (2, 3):
            started = time.perf_counter()
            hits = sum(r[depth] in run(r[0], depth) for r in rows)
            row[f"recall@{depth} hops"] = 100.0 * hits / len(rows)
            row[f"ms/question@{depth}"] = 1000 * (time.perf_counter() - started) / len(rows)
        out.append(row)
    return out


def race(path: str, pairs: int) -> dict[str, int]:
    """How often each strategy reports a chain that was true at no instant."""
    clock = Clock()
    loop_false = walk_false = walk_after = 0
    with Memvara(path, clock=clock, llm=NullLLM()) as mem:
        store = mem.store
        for i in range(pairs):
            a, b, c = f"Ava {i}", f"Ben {i}", f"Cole Labs {i}"
            mem.remember(a, "reports_to", b)
            clock.tick()

            def write(a: str = a, b: str = b, c: str = c) -> None:
                mem.forget(a, "reports_to")
                mem.remember(b, "works_at", c)
                clock.tick()

            # The loop: search, a write lands, search again.
            first = [h.claim.object for h in mem.search(a, k=3) if h.claim is not None
                     and h.claim.subject == a and h.claim.predicate == "reports_to"]
            write()
            second = [h.claim.object for h in mem.search(b, k=3) if h.claim is not None
                      and h.claim.subject == b and h.claim.predicate == "works_at"]
            loop_false += bool(first and first[0] == b and second and second[0] == c)

            # The walk: the same write lands between its hops.
            mem.forget(b, "works_at")
            clock.tick()
            mem.remember(a, "reports_to", b)
            clock.tick()
            reads = _WriteOnSecondRead(store.graph_edges, write)
            setattr(store, "graph_edges", reads)  # noqa: B010 - an injected race
            try:
                walk_false += bool(mem.paths_between(a, c, depth=2))
            finally:
                delattr(store, "graph_edges")
            walk_after += bool(mem.paths_between(a, c, depth=2))
    return {"pairs": pairs, "search loop: false chains": loop_false,
            "traversal: false chains": walk_false, "traversal after the write": walk_after}


class _WriteOnSecondRead:
    def __init__(self, read: Callable[..., Any], write: Callable[[], None]) -> None:
        self.read, self.write, self.calls = read, write, 0

    def __call__(
        self, scope: Scope, tq: TimeQuery, keys: Collection[str], predicates: Any, fanout: int
    ) -> Any:
        self.calls += 1
        if self.calls == 2:
            self.write()
        return self.read(scope, tq, keys, predicates, fanout)


def latency(path: str, size: int, queries: int, seed: int) -> dict[str, Any]:
    """``paths_between(depth=3)`` over a random graph of ``size`` claims."""
    rng = random.Random(seed)
    entities = [f"node {i}" for i in range(max(2, size // 5))]
    with Memvara(path, clock=Clock(), llm=NullLLM()) as mem:
        for start in range(0, size, 5000):
            mem.remember_many([
                Claim(rng.choice(entities), rng.choice(NOISE), rng.choice(entities))
                for _ in range(min(5000, size - start))
            ])
        pairs = [(rng.choice(entities), rng.choice(entities)) for _ in range(queries)]
        mem.paths_between(*pairs[0], depth=3)  # warm the caches once
        times, found = [], 0
        for source, target in pairs:
            started = time.perf_counter()
            found += bool(mem.paths_between(source, target, depth=3))
            times.append(1000 * (time.perf_counter() - started))
    return {"claims": size, "queries": queries, "p50 ms": statistics.median(times),
            "min ms": min(times), "max ms": max(times), "pairs joined": found}


def _table(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in row.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--chains", type=int, default=100, help="chains (and race pairs)")
    p.add_argument("--noise", type=int, default=2, help="distracting edges per entity")
    p.add_argument("--k", type=int, default=10, help="answers each strategy may return")
    p.add_argument("--beam", type=int, default=3, help="entities the loop follows per hop")
    p.add_argument("--graph-size", type=int, default=100_000, help="claims for the latency row")
    p.add_argument("--latency-queries", type=int, default=50)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        with Memvara(f"{tmp}/chains.db", clock=Clock(), llm=NullLLM()) as mem:
            rows = build_chains(mem, args.chains, args.noise, args.seed)
            print(f"{args.chains} chains, {mem.count()} claims, k={args.k}, beam={args.beam}")
            recall = recall_rows(mem, rows, args.k, args.beam)
        print(_table(recall))
        raced = race(f"{tmp}/race.db", args.chains)
        print()
        print(_table([raced]))
        timed = latency(f"{tmp}/graph.db", args.graph_size, args.latency_queries, args.seed)
        print()
        print(_table([timed]))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"args": vars(args), "recall": recall, "race": raced, "latency": timed}, indent=2
        ))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
