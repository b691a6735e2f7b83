"""Five ways to build the context an agent reads before answering one question.

Each arm sees only the turns said by the question's ``asked_at``, and the three that
retrieve share one embedder (memvara's default ``HashingEmbedder``) and one ``k``:

- ``none``: no context at all, the floor;
- ``full_transcript``: every visible turn, dated, oldest first;
- ``naive_rag``: the ``k`` visible turns whose vectors are closest to the question's,
  shown oldest first; no claims, no clocks;
- ``memvara``: the shipped defaults. The transcript goes through ``add()`` one
  conversation at a time with no model (rules only), and the context is ``recall()``
  with the turns and the earlier values included, as an agent would ask for it;
- ``memvara_structured``: the scenario's facts written as claims with both clocks, as a
  deployment that already holds them as fields would (``remember()``, ending a value
  that changed and retiring one that was never true), read back with ``recall()``.

Both memvara arms run on an in-memory store whose clock is moved by hand, so the same
scenario gives the same contexts byte for byte.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memvara import (
    BUILTIN_PREDICATES,
    Cardinality,
    DegradedExtractionWarning,
    Episode,
    HashingEmbedder,
    Memvara,
    NullLLM,
    PredicateRegistry,
    PredicateSpec,
    Volatility,
)
from scenario import CUSTOMER, FACT_EVENTS, Question, Turn

__all__ = ["ARMS", "K", "AddTally", "Context", "build_contexts", "render_turn",
           "structured_registry"]

ARMS = ("none", "full_transcript", "naive_rag", "memvara", "memvara_structured")
K = 8  # recall()'s default k, used by every retrieving arm

ROLE_NAMES = {"user": "customer", "assistant": "agent", "tool": "system"}


@dataclass(frozen=True)
class Context:
    """What one arm shows the reader for one question: the text, how many items (turns
    or lines of facts) it holds, and how many turns were visible when it was built."""

    text: str
    items: int
    turns_seen: int


class _Clock:
    """memvara's injected clock: "now" is whatever the scenario last set."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def render_turn(turn: Turn) -> str:
    """One transcript line: ``[2026-03-12 customer] text``."""
    return f"[{turn.ts:%Y-%m-%d} {ROLE_NAMES[turn.role]}] {turn.text}"


def _listed_items(block: str) -> int:
    return sum(1 for line in block.splitlines() if line.startswith("- "))


def _visible(turns: Sequence[Turn], q: Question) -> int:
    """How many of ``turns`` (oldest first) were said by ``q.asked_at``."""
    return sum(1 for t in turns if t.ts <= q.asked_at)


def _transcript(turns: Sequence[Turn], questions: Sequence[Question]) -> dict[str, Context]:
    out = {}
    for q in questions:
        seen = turns[:_visible(turns, q)]
        out[q.id] = Context("\n".join(render_turn(t) for t in seen), len(seen), len(seen))
    return out


def _naive_rag(turns: Sequence[Turn], questions: Sequence[Question]) -> dict[str, Context]:
    embedder = HashingEmbedder()
    vectors = embedder.encode([t.text for t in turns])
    out = {}
    for q in questions:
        n = _visible(turns, q)
        scores = vectors[:n] @ embedder.encode([q.text])[0]
        # The best k by cosine (a stable sort: ties go to the older turn), shown in the
        # order they were said, as a transcript excerpt.
        best = sorted(int(i) for i in np.argsort(-scores, kind="stable")[:K])
        out[q.id] = Context("\n".join(render_turn(turns[i]) for i in best), len(best), n)
    return out


def _conversations(turns: Iterable[Turn]) -> list[list[Turn]]:
    groups: list[list[Turn]] = []
    for t in turns:
        if groups and groups[-1][0].conversation == t.conversation:
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def _replay(
    turns: Sequence[Turn],
    questions: Sequence[Question],
    mem: Memvara,
    clock: _Clock,
    write: Callable[[list[Turn]], None],
    read: Callable[[Question], str],
) -> dict[str, Context]:
    """Play the conversations into ``mem`` in order, stopping at each question's
    ``asked_at`` to read its context with the clock standing there."""
    groups = _conversations(turns)
    done = 0  # conversations written so far
    written = 0  # turns in them
    out = {}
    for q in sorted(questions, key=lambda q: q.asked_at):
        while done < len(groups) and groups[done][-1].ts <= q.asked_at:
            clock.now = groups[done][-1].ts  # a session is stored when it closes
            write(groups[done])
            written += len(groups[done])
            done += 1
        clock.now = q.asked_at
        text = read(q)
        out[q.id] = Context(text, _listed_items(text), written)
    return out


@dataclass
class AddTally:
    """What the ``memvara`` arm's ``add()`` calls did, summed over the receipts: the
    finding that matters most in this demo is how little the rules read."""

    turns: int = 0
    claims: int = 0
    unextracted: int = 0
    skipped: int = 0


def _memvara(
    turns: Sequence[Turn], questions: Sequence[Question], tally: AddTally
) -> dict[str, Context]:
    clock = _Clock(turns[0].ts)
    # No llm=: the defaults an evaluator gets, rules only. The warning that says so is
    # expected here, and silenced so the harness's output stays clean.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegradedExtractionWarning)
        mem = Memvara(user=CUSTOMER, clock=clock)
    with mem:
        def write(group: list[Turn]) -> None:
            receipt = mem.add([Episode(t.text, role=t.role, ts=t.ts) for t in group])
            tally.turns += len(group)
            tally.claims += len(receipt.added)
            tally.unextracted += receipt.unextracted
            tally.skipped += len(receipt.skipped)

        def read(q: Question) -> str:
            return mem.recall(q.text, k=K, include_episodes=True, include_history=True)

        return _replay(turns, questions, mem, clock, write, read)


def structured_registry() -> PredicateRegistry:
    """The built-in predicates plus the account's own, each holding one value at a time."""
    own = sorted({e.predicate for e in FACT_EVENTS})
    return PredicateRegistry(BUILTIN_PREDICATES + tuple(
        PredicateSpec(name, Cardinality.ONE, Volatility.SLOW) for name in own))


def _memvara_structured(
    turns: Sequence[Turn], questions: Sequence[Question]
) -> dict[str, Context]:
    clock = _Clock(turns[0].ts)
    # remember() never consults a model; NullLLM() says so and keeps the warning away.
    with Memvara(user=CUSTOMER, clock=clock, registry=structured_registry(),
                 llm=NullLLM()) as mem:
        def write(group: list[Turn]) -> None:
            # The facts this conversation established, learned when it closed.
            for event in FACT_EVENTS:
                if event.conversation == group[0].conversation:
                    mem.remember(CUSTOMER, event.predicate, event.value,
                                 valid_from=event.valid_from, recorded_at=clock.now,
                                 close=event.close)

        def read(q: Question) -> str:
            return mem.recall(q.text, k=K, include_history=True)

        return _replay(turns, questions, mem, clock, write, read)


def build_contexts(
    turns: Sequence[Turn], questions: Sequence[Question], tally: AddTally | None = None,
) -> dict[str, dict[str, Context]]:
    """Every arm's context for every question: ``{arm: {question_id: Context}}``;
    ``tally``, when given, receives what the ``memvara`` arm's ``add()`` calls did."""
    transcript = _transcript(turns, questions)
    return {
        "none": {q.id: Context("", 0, transcript[q.id].turns_seen) for q in questions},
        "full_transcript": transcript,
        "naive_rag": _naive_rag(turns, questions),
        "memvara": _memvara(turns, questions, AddTally() if tally is None else tally),
        "memvara_structured": _memvara_structured(turns, questions),
    }
