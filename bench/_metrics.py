"""Turn-level evidence retrieval metrics, their chance baselines, and the turn ledger.

Shared by ``bench/locomo.py`` and ``bench/longmemeval.py``. Two concepts live here because
the scorer is only as honest as the map it scores against:

* **Scoring.** A question has a set of evidence *turns* (dataset ids: ``D3:7`` in LOCOMO,
  ``<session id>#<index>`` in LongMemEval). Each evidence turn is held by at most one
  stored *unit* (an episode of the store), or by none when the library did not store it.
  Retrieval returns a ranked list of units (``None`` for a result that holds no turn, such
  as a claim). ``R@k`` is the fraction of the question's evidence turns whose unit is in
  the top ``k``; ``all@k`` is 1 when every evidence turn is, ``hit@k`` when any one is (a
  hit rate: the issue's reference figures for plain BM25, MiniLM and their fusion on the
  LOCOMO dev split match this measure, not ``R@k``); ``RR`` is the reciprocal rank
  of the first evidence unit within the retrieved depth (0 if none). ``chance`` is the
  same measure's expectation under a uniformly random ranking of the store's candidate
  units, computed exactly (no sampling).
* **The ledger** (``TurnLedger``): which stored episode holds which dataset turn. It is
  built from the store itself (``Store.copies_of`` after each ``add()``), not from
  what the benchmark hoped was stored, and every episode a search returns is checked
  against it: an episode id that does not map back to a dataset turn, or two ids for one
  text, is an error rather than a silent miss or a silent hit.

Aggregates are plain means over questions, per category and overall, reported in percent.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TextIO

from memvara import Episode, Memvara, Retrieved, WriteReceipt

__all__ = [
    "CLAIM_MODES",
    "DEFAULT_KS",
    "BenchError",
    "Progress",
    "QuestionScore",
    "Row",
    "TickingClock",
    "Turn",
    "TurnLedger",
    "aggregate",
    "chance_all",
    "chance_hit",
    "chance_recall",
    "chance_rr",
    "format_tables",
    "parse_ks",
    "percentile",
    "score",
    "unique",
]

DEFAULT_KS = (1, 5, 12, 20)
CLAIM_MODES = ("drop", "hold", "sources")
"""What a claim in a search's results becomes in the ranked list; see ``TurnLedger.ranked``."""


class BenchError(Exception):
    """The benchmark cannot produce an honest number (bad data, a broken evidence map)."""


# -- scoring ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class QuestionScore:
    """One question's measured and chance scores at each ``k`` (fractions from 0 to 1)."""

    category: str
    recall: Mapping[int, float]
    all_found: Mapping[int, float]
    rr: float
    chance_recall: Mapping[int, float]
    chance_all: Mapping[int, float]
    chance_rr: float
    candidates: int
    evidence: int
    unreachable: int
    hit: Mapping[int, float] = field(default_factory=dict)
    """1 at ``k`` when any evidence turn is in the top ``k`` (a hit rate, not recall)."""
    chance_hit: Mapping[int, float] = field(default_factory=dict)


def chance_recall(candidates: int, evidence: int, unreachable: int, k: int) -> float:
    """Expected ``R@k`` of a random ranking: each stored evidence turn's unit lands in the
    top ``k`` of ``candidates`` with probability ``min(k, n) / n``; unstored ones never do."""
    if candidates <= 0 or evidence <= 0:
        return 0.0
    return (evidence - unreachable) / evidence * min(k, candidates) / candidates


def chance_all(candidates: int, units: int, unreachable: int, k: int) -> float:
    """Probability that a random ranking puts all ``units`` distinct evidence units in the
    top ``k``: ``C(n - m, k - m) / C(n, k)``; zero when any evidence turn is unstored."""
    if unreachable or units <= 0 or candidates <= 0:
        return 0.0
    top = min(k, candidates)
    if units > top:
        return 0.0
    p = 1.0
    for i in range(units):
        p *= (top - i) / (candidates - i)
    return p


def chance_hit(candidates: int, units: int, k: int) -> float:
    """Probability that a random ranking puts at least one of ``units`` evidence units in
    the top ``k``: ``1 - C(n - m, k) / C(n, k)``."""
    if units <= 0 or candidates <= 0:
        return 0.0
    top = min(k, candidates)
    return 1.0 - math.comb(candidates - units, top) / math.comb(candidates, top)


def chance_rr(candidates: int, units: int, depth: int) -> float:
    """Expected reciprocal rank of the first of ``units`` evidence units in a random
    ranking of ``candidates``, counting only ranks up to ``depth`` (as the measured RR does):
    ``sum_r P(first = r) / r`` with ``P(first = r) = C(n - r, m - 1) / C(n, m)``."""
    if units <= 0 or candidates <= 0:
        return 0.0
    total = math.comb(candidates, units)
    acc = 0.0
    for r in range(1, min(depth, candidates - units + 1) + 1):
        acc += math.comb(candidates - r, units - 1) / total / r
    return acc


def score(
    category: str,
    evidence: Mapping[str, str | None],
    ranked: Sequence[str | None],
    candidates: int,
    ks: Sequence[int] = DEFAULT_KS,
) -> QuestionScore:
    """Score one question.

    Args:
        category: the row it is aggregated into.
        evidence: each evidence turn id mapped to the unit (episode) holding it, or to
            ``None`` when no stored unit holds it (it can never be retrieved).
        ranked: the retrieved units in rank order; ``None`` marks a result that holds no
            dataset turn (it still occupies its rank).
        candidates: how many units the search ranked among (the store's episodes).
        ks: the cut-offs; the retrieved depth for RR is ``max(ks)``.

    Raises:
        BenchError: no evidence, or a cut-off below 1.
    """
    if not evidence:
        raise BenchError(f"a {category!r} question has no evidence turns to score")
    if not ks or min(ks) < 1:
        raise BenchError(f"cut-offs must be >= 1, got {list(ks)}")
    depth = max(ks)
    position: dict[str, int] = {}
    for rank, unit in enumerate(ranked[:depth], start=1):
        if unit is not None:
            position.setdefault(unit, rank)
    ranks = [position.get(unit, 0) if unit is not None else 0 for unit in evidence.values()]
    units = {u for u in evidence.values() if u is not None}
    unreachable = sum(1 for u in evidence.values() if u is None)
    found_ranks = [r for r in ranks if r]
    recall = {k: sum(1 for r in ranks if r and r <= k) / len(ranks) for k in ks}
    all_found = {k: float(all(r and r <= k for r in ranks)) for k in ks}
    hit = {k: float(any(r and r <= k for r in ranks)) for k in ks}
    rr = 1.0 / min(found_ranks) if found_ranks else 0.0
    return QuestionScore(
        category=category,
        recall=recall,
        all_found=all_found,
        rr=rr,
        chance_recall={k: chance_recall(candidates, len(ranks), unreachable, k) for k in ks},
        chance_all={k: chance_all(candidates, len(units), unreachable, k) for k in ks},
        chance_rr=chance_rr(candidates, len(units), depth),
        candidates=candidates,
        evidence=len(ranks),
        unreachable=unreachable,
        hit=hit,
        chance_hit={k: chance_hit(candidates, len(units), k) for k in ks},
    )


@dataclass(frozen=True, slots=True)
class Row:
    """Means over one category's questions (or all of them), in percent."""

    category: str
    n: int
    recall: dict[int, float]
    all_found: dict[int, float]
    mrr: float
    chance_recall: dict[int, float]
    chance_all: dict[int, float]
    chance_mrr: float
    mean_candidates: float
    unreachable_evidence: int
    hit: dict[int, float] = field(default_factory=dict)
    chance_hit: dict[int, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """A JSON-ready dict (``k`` keys as strings)."""
        return {
            "category": self.category,
            "n": self.n,
            "recall": {str(k): v for k, v in self.recall.items()},
            "all_found": {str(k): v for k, v in self.all_found.items()},
            "hit": {str(k): v for k, v in self.hit.items()},
            "chance_hit": {str(k): v for k, v in self.chance_hit.items()},
            "mrr": self.mrr,
            "chance_recall": {str(k): v for k, v in self.chance_recall.items()},
            "chance_all": {str(k): v for k, v in self.chance_all.items()},
            "chance_mrr": self.chance_mrr,
            "mean_candidates": self.mean_candidates,
            "unreachable_evidence": self.unreachable_evidence,
        }


def _row(category: str, scores: Sequence[QuestionScore], ks: Sequence[int]) -> Row:
    def mean(values: Iterable[float]) -> float:
        return 100.0 * statistics.fmean(values)

    return Row(
        category=category,
        n=len(scores),
        recall={k: mean(s.recall[k] for s in scores) for k in ks},
        all_found={k: mean(s.all_found[k] for s in scores) for k in ks},
        mrr=mean(s.rr for s in scores),
        chance_recall={k: mean(s.chance_recall[k] for s in scores) for k in ks},
        chance_all={k: mean(s.chance_all[k] for s in scores) for k in ks},
        chance_mrr=mean(s.chance_rr for s in scores),
        mean_candidates=statistics.fmean(s.candidates for s in scores),
        unreachable_evidence=sum(s.unreachable for s in scores),
        hit={k: mean(s.hit[k] for s in scores) for k in ks},
        chance_hit={k: mean(s.chance_hit[k] for s in scores) for k in ks},
    )


def aggregate(
    scores: Sequence[QuestionScore], ks: Sequence[int], order: Sequence[str] = ()
) -> list[Row]:
    """One row per category (in ``order``, then any others sorted), then ``all``.

    Categories with no scored question get no row; ``all`` is present whenever any
    question was scored.
    """
    by: dict[str, list[QuestionScore]] = {}
    for s in scores:
        by.setdefault(s.category, []).append(s)
    names = [c for c in order if c in by] + sorted(c for c in by if c not in order)
    rows = [_row(c, by[c], ks) for c in names]
    if scores:
        rows.append(_row("all", scores, ks))
    return rows


def format_tables(rows: Sequence[Row], ks: Sequence[int], table_k: int) -> str:
    """The measured table and, below it, the chance table of the same shape (markdown)."""
    head = ["category", "n", *(f"R@{k}" for k in ks), "MRR", f"all@{table_k}", f"hit@{table_k}"]
    measured = [head, ["---", "---:", *(["---:"] * (len(head) - 2))]]
    chance = [[f"chance: {h}" if i == 0 else h for i, h in enumerate(head)] + ["candidates"],
              ["---", "---:", *(["---:"] * (len(head) - 1))]]
    measured[0].append(f"chance@{table_k}")
    measured[1].append("---:")
    for row in rows:
        measured.append([
            row.category, str(row.n), *(f"{row.recall[k]:.1f}" for k in ks), f"{row.mrr:.1f}",
            f"{row.all_found[table_k]:.1f}", f"{row.hit[table_k]:.1f}",
            f"{row.chance_recall[table_k]:.1f}",
        ])
        chance.append([
            row.category, str(row.n), *(f"{row.chance_recall[k]:.1f}" for k in ks),
            f"{row.chance_mrr:.1f}", f"{row.chance_all[table_k]:.1f}",
            f"{row.chance_hit[table_k]:.1f}", f"{row.mean_candidates:.0f}",
        ])
    return "\n\n".join(
        "\n".join("| " + " | ".join(line) + " |" for line in table) for table in (measured, chance)
    )


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,5,12,20"`` as sorted distinct ints >= 1.

    Raises:
        ValueError: not a comma-separated list of positive ints.
    """
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"--k expects comma-separated positive integers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise ValueError(f"--k expects comma-separated positive integers, got {text!r}")
    return tuple(ks)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# -- the ledger ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Turn:
    """A dataset turn as the benchmark stores it: its id, the stored text and the role."""

    turn_id: str
    content: str
    role: str


@dataclass
class TurnLedger:
    """Which stored episode of one memory (at its default scope) holds which dataset turn.

    The unit of retrieval is the stored text: ``add()`` keeps at most one episode per exact
    text at a scope, so a text names one episode, and the ledger checks that the episode
    ids a search returns are one-to-one with texts. A turn skipped as an exact duplicate
    is held by the episode of the earlier turn with the same text (both turns are credited
    when it is retrieved); a turn skipped as a *near* duplicate is held by no episode and
    is recorded in ``lost``: it can never count as retrieved.
    """

    mem: Memvara
    holders: dict[str, list[str]] = field(default_factory=dict)
    """Stored text -> the dataset turn ids it holds, in ingest order."""
    unit_of: dict[str, str | None] = field(default_factory=dict)
    """Dataset turn id -> the stored text holding it, or ``None``."""
    lost: dict[str, str] = field(default_factory=dict)
    """Dataset turn id -> why no episode holds it (the library's skip reason)."""
    duplicates: int = 0
    """Turns held by an episode stored for an earlier turn of the same text."""
    stored: int = 0
    """Episodes the adds stored: every turn but the copies tier 0 skipped (a text said
    again later is stored again, and both episodes are one unit here)."""
    _ids: dict[str, str] = field(default_factory=dict)
    _texts: dict[str, str] = field(default_factory=dict)

    def add(self, turns: Sequence[Turn], ts: datetime | None) -> WriteReceipt:
        """``add()`` the turns in one call, then read back which texts the store holds."""
        for turn in turns:
            if turn.turn_id in self.unit_of:
                raise BenchError(f"turn id {turn.turn_id!r} was ingested twice")
        receipt = self.mem.add([Episode(t.content, t.role, ts) for t in turns])
        held = self.mem.store.copies_of(self.mem.default_scope, {t.content for t in turns})
        reasons = {s.content: s.reason for s in receipt.skipped}
        self.stored += len(turns) - sum(
            s.reason in ("duplicate", "near_duplicate") for s in receipt.skipped)
        for turn in turns:
            if turn.content in held:
                holders = self.holders.setdefault(turn.content, [])
                if holders:
                    self.duplicates += 1
                holders.append(turn.turn_id)
                self.unit_of[turn.turn_id] = turn.content
            else:
                self.unit_of[turn.turn_id] = None
                self.lost[turn.turn_id] = reasons.get(turn.content, "not stored")
        return receipt

    @property
    def candidates(self) -> int:
        """How many stored episodes hold dataset turns (what a search ranks among)."""
        return len(self.holders)

    def evidence(self, turn_ids: Iterable[str]) -> dict[str, str | None]:
        """The evidence map ``score()`` takes.

        Raises:
            BenchError: an id that was never ingested (resolve evidence before scoring).
        """
        out: dict[str, str | None] = {}
        for turn_id in turn_ids:
            if turn_id not in self.unit_of:
                raise BenchError(f"evidence turn {turn_id!r} was never ingested")
            out[turn_id] = self.unit_of[turn_id]
        return out

    def ranked(self, results: Sequence[Retrieved], claims: str = "drop") -> list[str | None]:
        """The units of ``results`` in rank order.

        Args:
            results: what ``search()`` returned.
            claims: what a claim result becomes: ``"drop"`` (removed; episodes keep their
                order among themselves), ``"hold"`` (``None``: it keeps its rank and credits
                no turn) or ``"sources"`` (the episodes it cites, in citation order; one
                already listed is not listed again).

        Raises:
            BenchError: an episode whose text no dataset turn was stored as, or whose id
                disagrees with an earlier id for the same text (the map would be wrong).
        """
        if claims not in CLAIM_MODES:
            raise BenchError(f"claims must be one of {', '.join(CLAIM_MODES)}, got {claims!r}")
        out: list[str | None] = []
        for result in results:
            episode, claim = result.episode, result.claim
            if result.kind == "episode" and episode is not None:
                unit = self._unit(episode.id, episode.content)
                if unit not in out:
                    out.append(unit)
            elif claims == "hold":
                out.append(None)
            elif claims == "sources" and claim is not None:
                for source in claim.sources:
                    cited = self.mem.store.get_episode(source, self.mem.default_scope)
                    if cited is None:
                        continue
                    unit = self._unit(cited.id, cited.content)
                    if unit not in out:
                        out.append(unit)
        return out

    def _unit(self, episode_id: str, text: str) -> str:
        if text not in self.holders:
            raise BenchError(f"search returned episode {episode_id} holding no dataset turn")
        if self._ids.setdefault(text, episode_id) != episode_id or (
            self._texts.setdefault(episode_id, text) != text
        ):
            raise BenchError(f"episode {episode_id} and its text do not map one to one")
        return text

    def turns_of(self, unit: str | None) -> list[str]:
        """The dataset turn ids a unit holds (none for ``None``)."""
        return [] if unit is None else list(self.holders.get(unit, []))

    def check_counts(self) -> None:
        """The store holds exactly the episodes the ledger counted its adds storing.

        Raises:
            BenchError: ``stats()["episodes"]`` differs from the ledger's count.
        """
        stored = self.mem.stats()["episodes"]
        if stored != self.stored:
            raise BenchError(
                f"the store holds {stored} episodes but the ledger counts {self.stored}"
            )


# -- running ---------------------------------------------------------------------------------
class TickingClock:
    """A deterministic clock: starts at ``start`` and moves one millisecond per reading,
    so runs are reproducible and no two writes share an instant."""

    def __init__(self, start: datetime) -> None:
        self._now = start if start.tzinfo is not None else start.replace(tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self._now += timedelta(milliseconds=1)
        return self._now


class Progress:
    """A dependency-free progress line on a stream (stderr by default), redrawn in place
    at most ten times a second, with a final newline from ``close()``."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label, self.done = total, label, 0
        self._stream = sys.stderr if stream is None else stream
        self._started = time.perf_counter()
        self._drawn = 0.0

    def advance(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` more done and redraw if due."""
        self.done += n
        now = time.perf_counter()
        if now - self._drawn >= 0.1 or self.done >= self.total:
            self._drawn = now
            self._draw(note)

    def _draw(self, note: str) -> None:
        width = 30
        filled = width * self.done // self.total if self.total else width
        elapsed = time.perf_counter() - self._started
        bar = "#" * filled + "." * (width - filled)
        self._stream.write(
            f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {note:<24.24}"
        )
        self._stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        self._draw("")
        self._stream.write("\n")
        self._stream.flush()


def unique(values: Collection[str]) -> list[str]:
    """``values`` without repeats, in first-seen order."""
    return list(dict.fromkeys(values))
