"""LOCOMO, retrieval only: does ``search()`` surface the turns the annotators marked?

Run (from the repository root)::

    python bench/locomo.py [--data PATH] [--k 1,5,12,20] [--budget N]
                           [--embedder hashing|minilm] [--reranker none|coverage|cross]
                           [--turn-format speaker|text] [--captions]
                           [--claims drop|hold|sources] [--json PATH]

Not answer accuracy, and not comparable to published LOCOMO scores (those are judged
end-to-end answers). No model runs: ``add()`` has no LLM, so this is episode retrieval,
plus whatever the rules tier reads.

How the data becomes a store, and what is counted (decided before any run, not tuned):

* One in-memory ``Memvara`` per conversation, at its root scope, with a deterministic
  clock starting one day after the conversation's last session.
* Sessions are the ``session_<N>`` lists that exist (conv-26 has date keys for sessions
  with no turns); each is one ``add()`` of ``Episode`` objects stamped with
  ``session_<N>_date_time`` (``%I:%M %p on %d %B, %Y``, read as UTC).
* A turn is stored as ``"<speaker>: <text>"`` (``--turn-format text`` stores the text
  alone); ``--captions`` appends ``" [image: <blip_caption>]"`` to turns that shared an
  image. ``speaker_a``'s turns have role ``user``, ``speaker_b``'s ``assistant``.
* Evidence strings are split on ``[;\\s]`` and ids that name no turn are skipped (and
  counted); a question left with no evidence turn is not scored (and counted). Categories
  1-4 are scored by default; 5 (adversarial) has no evidence answer.
* The ranked list is ``search(question, k=max(k), include_episodes=True)`` in the
  library's order. Claims (the rules tier reads some first-person sentences) are dropped
  from it by default and the episodes keep their order (``--claims drop``); ``--claims
  hold`` keeps a claim's rank but credits no turn, ``--claims sources`` credits the turns
  it cites. The search asks for ``max(k)`` results either way, never more.
* A turn is retrieved only when an episode in the list maps back to that exact ``dia_id``
  (``_metrics.TurnLedger``, built from what the store says it holds). A turn skipped as an
  exact duplicate is credited through the kept episode with the same text; one skipped as
  a near duplicate is held by no episode and can never be retrieved (reported).
* ``chance`` is the same metric's exact expectation for a uniformly random ranking of the
  conversation's stored episodes.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import sys
import time
import warnings
from collections.abc import Sequence
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
    parse_ks,
    percentile,
    score,
)

from memvara import DegradedExtractionWarning, Embedder, HashingEmbedder, Memvara

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = "../shared/data/locomo-dev.json"
"""Resolved against the repository root, not the working directory."""
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""The mapping most third-party harnesses use (see the data README)."""
ORDER = ("single-hop", "temporal", "multi-hop", "open-domain", "adversarial")
EMBEDDERS = ("hashing", "minilm")
RERANKERS = ("none", "coverage", "cross")
_SESSION = re.compile(r"session_(\d+)")


# -- loading ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LocomoTurn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    when: datetime
    turns: tuple[LocomoTurn, ...]


@dataclass(frozen=True, slots=True)
class QA:
    index: int
    question: str
    answer: str | None
    category: int
    evidence: tuple[str, ...]
    """Resolved ``dia_id``s, in order, without repeats."""
    unresolved: tuple[str, ...]
    """Evidence tokens that name no turn (``"D"``, ``"D:11:26"``, ``"D10:19"``...)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[QA, ...]

    @property
    def dia_ids(self) -> set[str]:
        return {t.dia_id for s in self.sessions for t in s.turns}


def parse_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware UTC datetime.

    Raises:
        BenchError: the text does not have that format.
    """
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        raise BenchError(f"session date {text!r} does not match {DATE_FORMAT!r}") from None


def split_evidence(raw: object) -> list[str]:
    """Evidence tokens from a list of strings, each split on ``;`` and whitespace."""
    if not isinstance(raw, list):
        return []
    tokens: list[str] = []
    for item in raw:
        tokens.extend(t for t in re.split(r"[;\s]+", str(item)) if t)
    return tokens


def _str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise BenchError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _conversation(item: object, where: str) -> Conversation:
    if not isinstance(item, dict):
        raise BenchError(f"{where}: expected an object")
    conv = item.get("conversation")
    if not isinstance(conv, dict):
        raise BenchError(f"{where}: 'conversation' must be an object")
    sample_id = _str(item, "sample_id", where)
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION.fullmatch(key)))
    sessions: list[Session] = []
    for n in numbers:
        raw_turns = conv[f"session_{n}"]
        if not isinstance(raw_turns, list):
            raise BenchError(f"{sample_id} session_{n}: expected a list of turns")
        turns = []
        for j, t in enumerate(raw_turns):
            at = f"{sample_id} session_{n}[{j}]"
            if not isinstance(t, dict):
                raise BenchError(f"{at}: expected an object")
            caption = t.get("blip_caption")
            turns.append(LocomoTurn(
                _str(t, "dia_id", at), _str(t, "speaker", at), _str(t, "text", at),
                caption if isinstance(caption, str) and caption.strip() else None,
            ))
        when = parse_date(_str(conv, f"session_{n}_date_time", f"{sample_id} session_{n}"))
        sessions.append(Session(n, when, tuple(turns)))
    known = {t.dia_id for s in sessions for t in s.turns}
    questions: list[QA] = []
    raw_qa = item.get("qa", [])
    if not isinstance(raw_qa, list):
        raise BenchError(f"{sample_id}: 'qa' must be a list")
    for i, q in enumerate(raw_qa):
        at = f"{sample_id} qa[{i}]"
        if not isinstance(q, dict):
            raise BenchError(f"{at}: expected an object")
        category = q.get("category")
        if isinstance(category, bool) or not isinstance(category, int):
            raise BenchError(f"{at}: 'category' must be an int")
        answer = q.get("answer")
        tokens = split_evidence(q.get("evidence"))
        questions.append(QA(
            i, _str(q, "question", at), None if answer is None else str(answer), category,
            tuple(dict.fromkeys(t for t in tokens if t in known)),
            tuple(t for t in tokens if t not in known),
        ))
    return Conversation(
        sample_id, _str(conv, "speaker_a", sample_id), _str(conv, "speaker_b", sample_id),
        tuple(sessions), tuple(questions),
    )


def load(path: Path) -> list[Conversation]:
    """Every conversation in a LOCOMO file (a JSON array).

    Raises:
        BenchError: the file is not LOCOMO-shaped.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise BenchError(f"{path}: expected a JSON array of conversations")
    return [_conversation(item, f"{path}[{i}]") for i, item in enumerate(data)]


def content(turn: LocomoTurn, turn_format: str, captions: bool) -> str:
    """The text a turn is stored as."""
    text = f"{turn.speaker}: {turn.text}" if turn_format == "speaker" else turn.text
    if captions and turn.caption is not None:
        text = f"{text} [image: {turn.caption}]"
    return text


# -- the memory under test -------------------------------------------------------------------
def make_embedder(name: str) -> Embedder:
    """``hashing`` (the default ``HashingEmbedder``) or ``minilm``.

    Raises:
        BenchError: ``minilm`` cannot be built here (module or weights missing).
    """
    if name == "hashing":
        return HashingEmbedder()
    try:
        embed = importlib.import_module("memvara.embed")
        cls = getattr(embed, "SentenceTransformerEmbedder", None)
        if cls is None:
            cls = importlib.import_module("memvara.embed.sentence").SentenceTransformerEmbedder
        built = cls()
    except (ImportError, AttributeError) as exc:
        raise BenchError(
            f"--embedder minilm needs memvara.embed.SentenceTransformerEmbedder and"
            f" sentence-transformers (pip install 'memvara[local-embed]'): {exc}"
        ) from exc
    if not isinstance(built, Embedder):
        raise BenchError("SentenceTransformerEmbedder does not implement memvara.Embedder")
    return built


def reranker_options(name: str) -> dict[str, Any]:
    """The ``Memvara`` keyword arguments for ``--reranker``.

    Raises:
        BenchError: the reranker's optional package is not installed.
    """
    if name == "none":
        return {}
    cls_name = {"coverage": "CoverageReranker", "cross": "CrossEncoderReranker"}[name]
    try:
        cls = getattr(importlib.import_module("memvara.rerank"), cls_name)
        return {"read_reranker": cls()}
    except (ImportError, AttributeError) as exc:
        raise BenchError(f"--reranker {name} needs memvara.rerank.{cls_name}: {exc}") from exc


# -- running ---------------------------------------------------------------------------------
@dataclass
class Config:
    data: Path
    ks: tuple[int, ...] = DEFAULT_KS
    budget: int | None = None
    categories: tuple[int, ...] = (1, 2, 3, 4)
    embedder: str = "hashing"
    reranker: str = "none"
    turn_format: str = "speaker"
    captions: bool = False
    claims: str = "drop"
    table_k: int = 12
    progress: bool = True


@dataclass
class Result:
    scores: list[QuestionScore] = field(default_factory=list)
    questions: list[dict[str, object]] = field(default_factory=list)
    ingest_s: list[tuple[str, int, float]] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    turns: int = 0
    episodes: int = 0
    duplicate_turns: int = 0
    lost_turns: dict[str, str] = field(default_factory=dict)
    lost_evidence: int = 0
    unresolved_ids: int = 0
    no_evidence: int = 0
    claims_returned: int = 0


def selected(conversations: Sequence[Conversation], config: Config) -> list[tuple[Conversation, list[QA]]]:
    """Each conversation with the questions to score in it, in file order, cut at
    ``--budget``; conversations left with none are dropped (never ingested)."""
    out: list[tuple[Conversation, list[QA]]] = []
    left = config.budget
    for conv in conversations:
        qs = [q for q in conv.questions if q.category in config.categories and q.evidence]
        if left is not None:
            qs, left = qs[:left], max(0, left - len(qs))
        if qs:
            out.append((conv, qs))
    return out


def run(conversations: Sequence[Conversation], config: Config) -> Result:
    """Ingest each conversation into its own memory and score its questions."""
    result = Result()
    plan = selected(conversations, config)
    for conv, _ in plan:
        for q in conv.questions:
            if q.category in config.categories:
                result.unresolved_ids += len(q.unresolved)
                result.no_evidence += not q.evidence
    embedder = make_embedder(config.embedder)
    options = reranker_options(config.reranker)
    depth = max(config.ks)
    bar = Progress(sum(len(qs) for _, qs in plan), "locomo") if config.progress else None
    for conv, questions in plan:
        last = max((s.when for s in conv.sessions), default=datetime(2000, 1, 1, tzinfo=timezone.utc))
        mem = Memvara(embedder=embedder, clock=TickingClock(last + timedelta(days=1)), **options)
        try:
            ledger = TurnLedger(mem)
            started = time.perf_counter()
            for session in conv.sessions:
                ledger.add([
                    Turn(t.dia_id, content(t, config.turn_format, config.captions),
                         "user" if t.speaker == conv.speaker_a else "assistant")
                    for t in session.turns
                ], session.when)
            ledger.check_counts()
            result.ingest_s.append((conv.sample_id, len(ledger.unit_of), time.perf_counter() - started))
            result.turns += len(ledger.unit_of)
            result.episodes += ledger.candidates
            result.duplicate_turns += ledger.duplicates
            result.lost_turns.update({f"{conv.sample_id}/{k}": v for k, v in ledger.lost.items()})
            for q in questions:
                t0 = time.perf_counter()
                found = mem.search(q.question, k=depth, include_episodes=True)
                result.query_ms.append((time.perf_counter() - t0) * 1000.0)
                ranked = ledger.ranked(found, config.claims)
                result.claims_returned += sum(1 for r in found if r.kind != "episode")
                evidence = ledger.evidence(q.evidence)
                result.lost_evidence += sum(1 for u in evidence.values() if u is None)
                s = score(CATEGORY_NAMES.get(q.category, str(q.category)), evidence, ranked,
                          ledger.candidates, config.ks)
                result.scores.append(s)
                result.questions.append({
                    "sample_id": conv.sample_id, "qa": q.index, "category": q.category,
                    "question": q.question, "evidence": list(q.evidence),
                    "unresolved": list(q.unresolved),
                    "retrieved": [ledger.turns_of(u) if u is not None else ["<claim>"] for u in ranked],
                    "candidates": ledger.candidates,
                    "recall": {str(k): v for k, v in s.recall.items()}, "rr": s.rr,
                })
                if bar is not None:
                    bar.advance(note=conv.sample_id)
        finally:
            mem.close()
    if bar is not None:
        bar.close()
    return result


def report(result: Result, config: Config) -> tuple[list[Row], str]:
    """The rows and the printed report."""
    rows = aggregate(result.scores, config.ks, ORDER)
    table_k = config.table_k if config.table_k in config.ks else max(config.ks)
    ingest = sum(s for _, _, s in result.ingest_s)
    lines = [
        (
            f"LOCOMO retrieval: {config.data} | embedder={config.embedder} reranker={config.reranker}"
            f" turn-format={config.turn_format} captions={config.captions} claims={config.claims}"
            f" k={list(config.ks)}"
        ),
        "",
        format_tables(rows, config.ks, table_k) if rows else "(no questions scored)",
        "",
        (
            f"ingest: {result.turns} turns -> {result.episodes} episodes in {len(result.ingest_s)}"
            f" conversations, {ingest:.2f}s ({result.turns / ingest if ingest else 0:.0f} turns/s)"
        ),
        (
            f"query: {len(result.query_ms)} searches, p50 {percentile(result.query_ms, 0.5):.2f} ms,"
            f" p95 {percentile(result.query_ms, 0.95):.2f} ms"
        ),
        (
            f"mapping: {result.duplicate_turns} turns held by an earlier exact duplicate;"
            f" {len(result.lost_turns)} turns stored by no episode"
            f" ({_reasons(result.lost_turns)}), {result.lost_evidence} of them evidence of a scored question;"
            f" {result.unresolved_ids} evidence ids unresolved and {result.no_evidence} questions with no"
            f" resolvable evidence (not scored) in the conversations run;"
            f" {result.claims_returned} claims among the results (--claims {config.claims})"
        ),
    ]
    return rows, "\n".join(lines)


def _reasons(lost: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for reason in lost.values():
        counts[reason] = counts.get(reason, 0) + 1
    return ", ".join(f"{r}={n}" for r, n in sorted(counts.items())) or "none"


def write_json(path: Path, result: Result, rows: Sequence[Row], config: Config, argv: Sequence[str]) -> None:
    digest = hashlib.sha256(config.data.read_bytes()).hexdigest()
    payload = {
        "benchmark": "locomo-retrieval",
        "argv": list(argv),
        "data": str(config.data),
        "data_sha256": digest,
        "config": {
            "ks": list(config.ks), "budget": config.budget, "categories": list(config.categories),
            "embedder": config.embedder, "reranker": config.reranker,
            "turn_format": config.turn_format, "captions": config.captions,
            "claims": config.claims,
        },
        "rows": [r.as_json() for r in rows],
        "timing": {
            "ingest": [{"sample_id": s, "turns": n, "seconds": sec} for s, n, sec in result.ingest_s],
            "query_ms_p50": percentile(result.query_ms, 0.5),
            "query_ms_p95": percentile(result.query_ms, 0.95),
        },
        "mapping": {
            "turns": result.turns, "episodes": result.episodes,
            "duplicate_turns": result.duplicate_turns, "lost_turns": result.lost_turns,
            "lost_evidence": result.lost_evidence, "unresolved_ids": result.unresolved_ids,
            "no_evidence_questions": result.no_evidence, "claims_returned": result.claims_returned,
        },
        "questions": result.questions,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def _categories(text: str) -> tuple[int, ...]:
    try:
        cats = tuple(sorted({int(c) for c in text.split(",") if c.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ints 1-5, got {text!r}") from None
    if not cats or not set(cats) <= set(CATEGORY_NAMES):
        raise argparse.ArgumentTypeError(f"expected comma-separated ints 1-5, got {text!r}")
    return cats


def _ks(text: str) -> tuple[int, ...]:
    try:
        return parse_ks(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _budget(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", default=DEFAULT_DATA,
                   help=f"LOCOMO JSON; a relative path is read from the repository root (default {DEFAULT_DATA})")
    p.add_argument("--score", choices=("retrieval",), default="retrieval",
                   help="what is scored (only retrieval: no reader runs)")
    p.add_argument("--k", type=_ks, default=DEFAULT_KS, help="cut-offs (default 1,5,12,20)")
    p.add_argument("--budget", type=_budget, default=None, help="score at most N questions")
    p.add_argument("--categories", type=_categories, default=(1, 2, 3, 4),
                   help="which categories to score (default 1,2,3,4; 5 has no evidence answer)")
    p.add_argument("--embedder", choices=EMBEDDERS, default="hashing")
    p.add_argument("--reranker", choices=RERANKERS, default="none")
    p.add_argument("--turn-format", choices=("speaker", "text"), default="speaker",
                   help="store '<speaker>: <text>' (default) or the text alone")
    p.add_argument("--captions", action="store_true", help="append shared images' BLIP captions")
    p.add_argument("--claims", choices=CLAIM_MODES, default="drop",
                   help="a claim in the results: dropped (default), holds its rank, or credits its sources")
    p.add_argument("--table-k", type=int, default=12, help="the k of the all-evidence and chance columns")
    p.add_argument("--json", type=Path, default=None, help="write results (and per-question ranks) here")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    return p


def resolve_data(text: str) -> Path:
    path = Path(text)
    return path if path.is_absolute() else (ROOT / path).resolve()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    config = Config(
        data=resolve_data(args.data), ks=args.k, budget=args.budget, categories=args.categories,
        embedder=args.embedder, reranker=args.reranker, turn_format=args.turn_format,
        captions=args.captions, claims=args.claims, table_k=args.table_k, progress=not args.no_progress,
    )
    warnings.simplefilter("ignore", DegradedExtractionWarning)  # no model here, on purpose
    try:
        if not config.data.is_file():
            raise BenchError(f"no LOCOMO file at {config.data} (pass --data PATH)")
        result = run(load(config.data), config)
    except BenchError as exc:
        print(f"locomo.py: error: {exc}", file=sys.stderr)
        return 2
    rows, text = report(result, config)
    print(text)
    if args.json is not None:
        write_json(args.json, result, rows, config, sys.argv if argv is None else ["locomo.py", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main())
