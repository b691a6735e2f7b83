"""LongMemEval, retrieval only: does ``search()`` surface the turns marked ``has_answer``?

Run (from the repository root)::

    python bench/longmemeval.py [--data PATH] [--k 1,5,12,20] [--budget N] [--share-store]
                                [--embedder hashing|minilm] [--reranker none|coverage|cross]
                                [--claims drop|hold|sources] [--json PATH]

The default data is ``bench/data/longmemeval-sample.json``: seven items written for this
project in LongMemEval's schema, to exercise the harness. The real files
(``longmemeval_oracle.json``, ``longmemeval_s_cleaned.json``...) are on Hugging Face only;
pass one with ``--data``. Not comparable to published LongMemEval scores (judged answers).

The schema (a JSON array of items): ``question_id``, ``question_type``, ``question``,
``answer`` (a string, sometimes a number), ``question_date``, ``haystack_session_ids``,
``haystack_dates`` (``"2023/05/20 (Sat) 02:21"``), ``haystack_sessions`` (lists of turns
``{"role", "content", "has_answer"?}``) and ``answer_session_ids``.

What is counted (decided before any run, not tuned):

* Evidence is every haystack turn with ``has_answer: true``. An item with no such turn
  falls back to every turn of its ``answer_session_ids`` sessions (session level); an item
  with neither is not scored (counted). Items whose id ends in ``_abs`` are reported as
  the ``abstention`` row, whatever their ``question_type``.
* One store per item (its own haystack) by default. ``--share-store`` ingests every
  distinct session once (same id and same turns) into one store that all questions
  search, so each question has the other items' sessions as distractors.
* Each session is one ``add()`` of its turns as ``Episode`` objects stamped with the
  session date (read as UTC); the clock starts one day after the latest date. A turn is
  ``<session id>#<index>``; the turn map, duplicate handling, ``--claims`` and ``chance``
  are those of ``bench/locomo.py`` (see ``_metrics.TurnLedger``).
* When the overall ``chance`` at some ``k`` exceeds 50%, the haystack is too small to
  measure retrieval at that ``k`` (LongMemEval's ``oracle`` split holds only evidence
  sessions): a warning goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from _metrics import (
    CLAIM_MODES,
    DEFAULT_KS,
    BenchError,
    Progress,
    QuestionScore,
    Row,
    TickingClock,
    Turn,
    TurnLedger,
    aggregate,
    format_tables,
    percentile,
    score,
)
from locomo import EMBEDDERS, RERANKERS, make_embedder, reranker_options, resolve_data
from locomo import _budget as budget_arg
from locomo import _ks as ks_arg

from memvara import DegradedExtractionWarning, Embedder, Memvara

DEFAULT_DATA = "bench/data/longmemeval-sample.json"
"""Resolved against the repository root, not the working directory."""
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
ORDER = (
    "single-session-assistant", "single-session-user", "knowledge-update", "temporal-reasoning",
    "multi-session", "single-session-preference", "abstention",
)
CHANCE_WARNING = 50.0
"""Overall chance recall (percent) above which a ``k`` cannot measure retrieval."""
ROLES = ("user", "assistant", "system", "tool")


# -- loading ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LmeSession:
    key: str
    """The turn-id prefix: the session id, suffixed when one id carries different turns."""
    session_id: str
    when: datetime
    turns: tuple[tuple[str, str], ...]
    """``(role, content)`` per turn."""
    marked: tuple[int, ...]
    """Indexes of the turns with ``has_answer: true`` in this item's copy."""


@dataclass(frozen=True, slots=True)
class Item:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime | None
    sessions: tuple[LmeSession, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def category(self) -> str:
        return "abstention" if self.question_id.endswith("_abs") else self.question_type

    def evidence(self) -> tuple[tuple[str, ...], str]:
        """The evidence turn ids and their level: ``"turn"`` (``has_answer``), ``"session"``
        (the answer sessions' turns) or ``"none"``."""
        marked = tuple(f"{s.key}#{i}" for s in self.sessions for i in s.marked)
        if marked:
            return marked, "turn"
        wanted = set(self.answer_session_ids)
        whole = tuple(f"{s.key}#{i}" for s in self.sessions if s.session_id in wanted
                      for i in range(len(s.turns)))
        return whole, "session" if whole else "none"


def parse_date(text: object) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` as an aware UTC datetime.

    Raises:
        BenchError: not that format.
    """
    if isinstance(text, str):
        try:
            return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    raise BenchError(f"date {text!r} does not match {DATE_FORMAT!r}")


def _list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if not isinstance(value, list):
        raise BenchError(f"{where}: {key!r} must be a list")
    return value


def _session_turns(raw: object, where: str) -> tuple[tuple[tuple[str, str], ...], tuple[int, ...]]:
    if not isinstance(raw, list):
        raise BenchError(f"{where}: a session must be a list of turns")
    turns: list[tuple[str, str]] = []
    marked: list[int] = []
    for j, turn in enumerate(raw):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            raise BenchError(f"{where}[{j}]: a turn is {{'role', 'content', 'has_answer'?}}")
        role = turn.get("role")
        if role not in ROLES:
            raise BenchError(f"{where}[{j}]: role must be one of {', '.join(ROLES)}, got {role!r}")
        turns.append((str(role), turn["content"]))
        if turn.get("has_answer") is True:
            marked.append(j)
    return tuple(turns), tuple(marked)


def load(path: Path) -> list[Item]:
    """Every item of a LongMemEval file. Sessions that share an id and the same turns get
    one key (so ``--share-store`` stores them once); an id reused for different turns gets
    a suffixed key per version.

    Raises:
        BenchError: the file is not LongMemEval-shaped.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise BenchError(f"{path}: expected a JSON array of items")
    keys: dict[tuple[str, str], str] = {}
    versions: dict[str, int] = {}
    items: list[Item] = []
    for i, raw in enumerate(data):
        where = f"{path}[{i}]"
        if not isinstance(raw, dict):
            raise BenchError(f"{where}: expected an object")
        qid, qtype, question = raw.get("question_id"), raw.get("question_type"), raw.get("question")
        if not (isinstance(qid, str) and isinstance(qtype, str) and isinstance(question, str)):
            raise BenchError(f"{where}: question_id, question_type and question must be strings")
        ids = _list(raw, "haystack_session_ids", where)
        dates = _list(raw, "haystack_dates", where)
        sessions_raw = _list(raw, "haystack_sessions", where)
        if not len(ids) == len(dates) == len(sessions_raw):
            raise BenchError(f"{where}: haystack ids, dates and sessions differ in length")
        sessions = []
        for sid, date, turns_raw in zip(ids, dates, sessions_raw):
            turns, marked = _session_turns(turns_raw, f"{where} session {sid!r}")
            digest = hashlib.sha256(json.dumps(turns).encode("utf-8")).hexdigest()
            sid = str(sid)
            key = keys.get((sid, digest))
            if key is None:
                n = versions.get(sid, 0)
                versions[sid] = n + 1
                key = sid if n == 0 else f"{sid}~{n}"
                keys[(sid, digest)] = key
            sessions.append(LmeSession(key, sid, parse_date(date), turns, marked))
        qdate = raw.get("question_date")
        items.append(Item(
            qid, qtype, question, str(raw.get("answer", "")),
            None if qdate is None else parse_date(qdate), tuple(sessions),
            tuple(str(s) for s in _list(raw, "answer_session_ids", where)),
        ))
    return items


# -- running ---------------------------------------------------------------------------------
@dataclass
class Config:
    data: Path
    ks: tuple[int, ...] = DEFAULT_KS
    budget: int | None = None
    share_store: bool = False
    embedder: str = "hashing"
    reranker: str = "none"
    claims: str = "drop"
    table_k: int = 12
    progress: bool = True


@dataclass
class Result:
    scores: list[QuestionScore] = field(default_factory=list)
    questions: list[dict[str, object]] = field(default_factory=list)
    ingest_s: float = 0.0
    query_ms: list[float] = field(default_factory=list)
    stores: int = 0
    turns: int = 0
    episodes: int = 0
    duplicate_turns: int = 0
    lost_turns: dict[str, str] = field(default_factory=dict)
    lost_evidence: int = 0
    levels: dict[str, int] = field(default_factory=dict)
    claims_returned: int = 0


def _open(embedder: Embedder, options: dict[str, Any], dates: Sequence[datetime]) -> Memvara:
    last = max(dates, default=datetime(2000, 1, 1, tzinfo=timezone.utc))
    return Memvara(embedder=embedder, clock=TickingClock(last + timedelta(days=1)), **options)


def _ingest(ledger: TurnLedger, sessions: Sequence[LmeSession], done: set[str]) -> None:
    for s in sessions:
        if s.key in done:
            continue
        done.add(s.key)
        ledger.add([Turn(f"{s.key}#{i}", content, role) for i, (role, content) in enumerate(s.turns)],
                   s.when)


def _fold(result: Result, ledger: TurnLedger, prefix: str) -> None:
    ledger.check_counts()
    result.stores += 1
    result.turns += len(ledger.unit_of)
    result.episodes += ledger.candidates
    result.duplicate_turns += ledger.duplicates
    result.lost_turns.update({f"{prefix}{k}": v for k, v in ledger.lost.items()})


def run(items: Sequence[Item], config: Config) -> Result:
    """Ingest (per item, or once with ``share_store``) and score every item with evidence."""
    result = Result()
    chosen = []
    for item in items:
        turn_ids, level = item.evidence()
        result.levels[level] = result.levels.get(level, 0) + 1
        if turn_ids:
            chosen.append(item)
    if config.budget is not None:
        chosen = chosen[: config.budget]
    embedder = make_embedder(config.embedder)
    options = reranker_options(config.reranker)
    bar = Progress(len(chosen), "longmemeval") if config.progress else None
    shared: tuple[Memvara, TurnLedger] | None = None
    if config.share_store and chosen:
        every = [s for item in chosen for s in item.sessions]
        mem = _open(embedder, options, [s.when for s in every])
        shared = (mem, TurnLedger(mem))
        started = time.perf_counter()
        _ingest(shared[1], every, set())
        result.ingest_s += time.perf_counter() - started
        _fold(result, shared[1], "")
    try:
        for item in chosen:
            if shared is None:
                mem = _open(embedder, options, [s.when for s in item.sessions])
                ledger = TurnLedger(mem)
                started = time.perf_counter()
                _ingest(ledger, item.sessions, set())
                result.ingest_s += time.perf_counter() - started
                _fold(result, ledger, f"{item.question_id}/")
            else:
                mem, ledger = shared
            try:
                _score(item, mem, ledger, config, result)
            finally:
                if shared is None:
                    mem.close()
            if bar is not None:
                bar.advance(note=item.question_id)
    finally:
        if shared is not None:
            shared[0].close()
    if bar is not None:
        bar.close()
    return result


def _score(item: Item, mem: Memvara, ledger: TurnLedger, config: Config, result: Result) -> None:
    turn_ids, level = item.evidence()
    t0 = time.perf_counter()
    found = mem.search(item.question, k=max(config.ks), include_episodes=True)
    result.query_ms.append((time.perf_counter() - t0) * 1000.0)
    result.claims_returned += sum(1 for r in found if r.kind != "episode")
    ranked = ledger.ranked(found, config.claims)
    evidence = ledger.evidence(turn_ids)
    result.lost_evidence += sum(1 for u in evidence.values() if u is None)
    s = score(item.category, evidence, ranked, ledger.candidates, config.ks)
    result.scores.append(s)
    result.questions.append({
        "question_id": item.question_id, "category": item.category, "question": item.question,
        "evidence": list(turn_ids), "evidence_level": level, "candidates": ledger.candidates,
        "retrieved": [ledger.turns_of(u) if u is not None else ["<claim>"] for u in ranked],
        "recall": {str(k): v for k, v in s.recall.items()}, "rr": s.rr,
    })


def chance_warnings(rows: Sequence[Row], ks: Sequence[int]) -> list[str]:
    """One line per ``k`` whose overall chance recall exceeds ``CHANCE_WARNING`` percent."""
    overall = [r for r in rows if r.category == "all"]
    if not overall:
        return []
    return [
        f"warning: chance R@{k} is {overall[0].chance_recall[k]:.1f}% (> {CHANCE_WARNING:.0f}%):"
        f" the haystack is too small for R@{k} to measure retrieval (an oracle split?);"
        " try --share-store or a larger haystack"
        for k in ks if overall[0].chance_recall[k] > CHANCE_WARNING
    ]


def report(result: Result, config: Config) -> tuple[list[Row], str]:
    rows = aggregate(result.scores, config.ks, ORDER)
    table_k = config.table_k if config.table_k in config.ks else max(config.ks)
    levels = ", ".join(f"{k}={v}" for k, v in sorted(result.levels.items()))
    lost = ", ".join(f"{r}={n}" for r, n in sorted(_count(result.lost_turns.values()).items())) or "none"
    store = "one shared store" if config.share_store else "one store per item"
    lines = [
        (
            f"LongMemEval retrieval: {config.data} | {store} | embedder={config.embedder}"
            f" reranker={config.reranker} claims={config.claims} k={list(config.ks)}"
        ),
        "",
        format_tables(rows, config.ks, table_k) if rows else "(no items scored)",
        "",
        f"evidence level per item in the file: {levels} (items at 'none' are not scored)",
        (
            f"ingest: {result.turns} turns -> {result.episodes} episodes in {result.stores} store(s),"
            f" {result.ingest_s:.2f}s"
        ),
        (
            f"query: {len(result.query_ms)} searches, p50 {percentile(result.query_ms, 0.5):.2f} ms,"
            f" p95 {percentile(result.query_ms, 0.95):.2f} ms"
        ),
        (
            f"mapping: {result.duplicate_turns} turns held by an earlier exact duplicate;"
            f" {len(result.lost_turns)} turns stored by no episode ({lost}),"
            f" {result.lost_evidence} evidence references to them; {result.claims_returned} claims"
            f" among the results (--claims {config.claims})"
        ),
    ]
    return rows, "\n".join(lines)


def _count(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def write_json(path: Path, result: Result, rows: Sequence[Row], config: Config, argv: Sequence[str]) -> None:
    payload = {
        "benchmark": "longmemeval-retrieval",
        "argv": list(argv),
        "data": str(config.data),
        "data_sha256": hashlib.sha256(config.data.read_bytes()).hexdigest(),
        "config": {
            "ks": list(config.ks), "budget": config.budget, "share_store": config.share_store,
            "embedder": config.embedder, "reranker": config.reranker, "claims": config.claims,
        },
        "rows": [r.as_json() for r in rows],
        "warnings": chance_warnings(rows, config.ks),
        "timing": {
            "ingest_s": result.ingest_s,
            "query_ms_p50": percentile(result.query_ms, 0.5),
            "query_ms_p95": percentile(result.query_ms, 0.95),
        },
        "mapping": {
            "stores": result.stores, "turns": result.turns, "episodes": result.episodes,
            "duplicate_turns": result.duplicate_turns, "lost_turns": result.lost_turns,
            "lost_evidence": result.lost_evidence, "evidence_levels": result.levels,
            "claims_returned": result.claims_returned,
        },
        "questions": result.questions,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", default=DEFAULT_DATA,
                   help=f"LongMemEval JSON; a relative path is read from the repository root (default {DEFAULT_DATA})")
    p.add_argument("--score", choices=("retrieval",), default="retrieval",
                   help="what is scored (only retrieval: no reader runs)")
    p.add_argument("--k", type=ks_arg, default=DEFAULT_KS, help="cut-offs (default 1,5,12,20)")
    p.add_argument("--budget", type=budget_arg, default=None, help="score at most N items")
    p.add_argument("--share-store", action="store_true",
                   help="one store holding every item's sessions, searched by every question")
    p.add_argument("--embedder", choices=EMBEDDERS, default="hashing")
    p.add_argument("--reranker", choices=RERANKERS, default="none")
    p.add_argument("--claims", choices=CLAIM_MODES, default="drop",
                   help="a claim in the results: dropped (default), holds its rank, or credits its sources")
    p.add_argument("--table-k", type=int, default=12, help="the k of the all-evidence and chance columns")
    p.add_argument("--json", type=Path, default=None, help="write results (and per-item ranks) here")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    config = Config(
        data=resolve_data(args.data), ks=args.k, budget=args.budget, share_store=args.share_store,
        embedder=args.embedder, reranker=args.reranker, claims=args.claims,
        table_k=args.table_k, progress=not args.no_progress,
    )
    warnings.simplefilter("ignore", DegradedExtractionWarning)  # no model here, on purpose
    try:
        if not config.data.is_file():
            raise BenchError(f"no LongMemEval file at {config.data} (pass --data PATH)")
        result = run(load(config.data), config)
    except BenchError as exc:
        print(f"longmemeval.py: error: {exc}", file=sys.stderr)
        return 2
    rows, text = report(result, config)
    print(text)
    for line in chance_warnings(rows, config.ks):
        print(line, file=sys.stderr)
    if args.json is not None:
        write_json(args.json, result, rows, config, sys.argv if argv is None else ["longmemeval.py", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main())
