"""The answer-quality round trip: build contexts, hide their arms, collect answers, score.

    python demo/harness.py dump --out runs/demo.jsonl [--scale N]
    python demo/harness.py score-context runs/demo.jsonl [--json]
    python demo/harness.py prompts runs/demo.jsonl --out runs/prompts.jsonl
    python demo/harness.py answer runs/demo.jsonl --reader file:runs/answers.jsonl --out runs/answered.jsonl
    python demo/harness.py score runs/answered.jsonl [--json]
    python demo/harness.py plot runs/demo-1.jsonl runs/demo-3.jsonl ... --out chart.png

``dump`` and ``score-context`` need only the core install and give the same bytes on
every run. ``answer`` shows a reader each question and context under an opaque item id,
in a shuffled order, never the arm. Every file read back is checked whole before
anything is scored: a cut-off line, another scenario version, or a missing or repeated
row is refused with the line it was found on. See demo/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scenario, baselines

from baselines import ARMS, AddTally, build_contexts  # noqa: E402
from scenario import QUESTIONS, SCENARIO_VERSION, turns  # noqa: E402

__all__ = [
    "BadInputError",
    "HarnessError",
    "ReaderError",
    "judge",
    "load_answered",
    "load_answers",
    "load_dump",
    "main",
    "norm",
    "past_split",
]

QUESTION_IDS = tuple(q.id for q in QUESTIONS)
BY_ID = {q.id: q for q in QUESTIONS}
# A context line that opens a part about the past: memvara's recall() history header.
# tests/test_demo_harness.py checks that recall() still writes it, so a new wording fails
# a test instead of silently counting every earlier value as current.
PAST_MARKERS = ("No longer true",)
ABSTAIN = ("unknown", "not known", "don't know", "do not know", "not stated",
           "not mentioned", "no information", "not in the context", "cannot tell",
           "can't tell", "not available", "not say")
INSTRUCTIONS = (
    "You are a support agent for a broadband company. Answer the question about the "
    "customer using only the context below. Give the shortest answer that is right: a "
    "value, not a sentence. If the context does not say, answer exactly: unknown."
)
BANNER = (
    f"NOT A BENCHMARK: {len(QUESTIONS)} questions about one customer, on a corpus this "
    "project wrote, answered by one reader, judged by string containment. It shows the "
    "pipeline gives sane answers from real retrieval; it cannot rank systems, and a "
    "second run with another reader will differ."
)
DUMP_KEYS = ("scenario_version", "scale", "corpus_turns", "arm", "question_id", "question",
             "kind", "closure", "asked_at", "gold", "trap", "context", "chars", "tokens",
             "items", "turns_seen")
ANSWERED_KEYS = ("scenario_version", "scale", "arm", "question_id", "kind", "closure",
                 "gold", "trap", "reader", "answer")


class HarnessError(Exception):
    """Anything the harness reports as one line and exit status 2."""


class BadInputError(HarnessError, ValueError):
    """A file or option given to the harness is unusable: cut short, from another
    scenario version, missing or repeating rows; the message names the file and line."""


class ReaderError(HarnessError):
    """A model reader's provider failed; nothing is written."""


# -- building and reading dumps ---------------------------------------------------------

def dump_rows(scale: int, tally: AddTally | None = None) -> list[dict[str, Any]]:
    """One row per arm and question, arm by arm, in question order."""
    said = turns(scale)
    contexts = build_contexts(said, QUESTIONS, tally)
    rows = []
    for arm in ARMS:
        for q in QUESTIONS:
            c = contexts[arm][q.id]
            rows.append({
                "scenario_version": SCENARIO_VERSION, "scale": scale,
                "corpus_turns": len(said), "arm": arm, "question_id": q.id,
                "question": q.text, "kind": q.kind, "closure": q.closure,
                "asked_at": q.asked_at.isoformat(), "gold": q.gold, "trap": q.trap,
                "context": c.text, "chars": len(c.text), "tokens": approx_tokens(c.text),
                "items": c.items, "turns_seen": c.turns_seen,
            })
    return rows


def approx_tokens(text: str) -> int:
    """Characters divided by four, rounded up: an estimate, not a tokenizer."""
    return -(-len(text) // 4)


def _json_lines(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    """Each line of ``path`` as a JSON object, with its line number."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the {what}: {exc.strerror}") from exc
    if not data:
        raise BadInputError(f"{path}: the {what} is empty")
    lines = data.split(b"\n")
    if lines[-1] != b"":
        raise BadInputError(
            f"{path} line {len(lines)}: the {what} is cut short (its last line has no "
            "line ending)")
    out = []
    for number, raw in enumerate(lines[:-1], start=1):
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadInputError(
                f"{path} line {number}: not a JSON object ({exc}); is the {what} "
                "truncated?") from exc
        if not isinstance(row, dict):
            raise BadInputError(f"{path} line {number}: not a JSON object")
        out.append((number, row))
    return out


def _check_version(path: Path, number: int, row: dict[str, Any]) -> None:
    version = row.get("scenario_version")
    if version != SCENARIO_VERSION:
        raise BadInputError(
            f"{path} line {number}: scenario_version {version!r}, but this harness's "
            f"scenario is {SCENARIO_VERSION!r}; rebuild it with this version")


def _check_keys(path: Path, number: int, row: dict[str, Any], keys: Sequence[str]) -> None:
    missing = [k for k in keys if k not in row]
    if missing:
        raise BadInputError(f"{path} line {number}: missing field(s) {', '.join(missing)}")


def _check_complete(
    path: Path, numbered: Sequence[tuple[int, dict[str, Any]]], what: str
) -> None:
    """Every arm has every question exactly once, and each row's question fields are
    this scenario's."""
    seen: dict[tuple[str, str], int] = {}
    for number, row in numbered:
        arm, qid = row["arm"], row["question_id"]
        if arm not in ARMS:
            raise BadInputError(f"{path} line {number}: unknown arm {arm!r}")
        if qid not in BY_ID:
            raise BadInputError(f"{path} line {number}: unknown question_id {qid!r}")
        q = BY_ID[qid]
        for field, want in (("gold", q.gold), ("trap", q.trap), ("kind", q.kind),
                            ("closure", q.closure)):
            if row[field] != want:
                raise BadInputError(
                    f"{path} line {number}: {field} of {qid} is {row[field]!r}, the "
                    f"scenario says {want!r}")
        if (arm, qid) in seen:
            raise BadInputError(
                f"{path} line {number}: {arm} {qid} again (first on line {seen[arm, qid]})")
        seen[arm, qid] = number
    absent = [(a, q) for a in ARMS for q in QUESTION_IDS if (a, q) not in seen]
    if absent:
        last = numbered[-1][0] if numbered else 0
        shown = ", ".join(f"{a} {q}" for a, q in absent[:3])
        raise BadInputError(
            f"{path} line {last}: the {what} ends with {len(absent)} row(s) missing "
            f"({shown}{', ...' if len(absent) > 3 else ''}); is it truncated?")


def _check_scale(path: Path, numbered: Sequence[tuple[int, dict[str, Any]]]) -> int:
    scale = numbered[0][1]["scale"]
    for number, row in numbered:
        if row["scale"] != scale:
            raise BadInputError(
                f"{path} line {number}: scale {row['scale']!r}, but line 1 has {scale!r}")
    if isinstance(scale, bool) or not isinstance(scale, int):
        raise BadInputError(f"{path} line 1: scale {scale!r} is not a whole number")
    return scale


def load_dump(path: Path) -> list[dict[str, Any]]:
    """A dump's rows, checked whole: every line JSON, this scenario version, one scale,
    every arm and question exactly once.

    Raises:
        BadInputError: naming the file and the line.
    """
    numbered = _json_lines(path, "dump")
    for number, row in numbered:
        _check_version(path, number, row)
        _check_keys(path, number, row, DUMP_KEYS)
        if not isinstance(row["context"], str) or row["chars"] != len(row["context"]):
            raise BadInputError(f"{path} line {number}: chars does not match the context")
    _check_scale(path, numbered)
    _check_complete(path, numbered, "dump")
    return [row for _, row in numbered]


# -- scoring the contexts -----------------------------------------------------------------

def norm(text: str) -> str:
    """Lower case with everything but letters and digits removed, so ``07700 900416``
    matches ``07700900416`` and ``Tanner's Row`` matches ``tanners row``."""
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def past_split(context: str) -> tuple[str, str]:
    """``context`` cut into what it presents as current and what it marks as past: a
    line starting with a ``PAST_MARKERS`` header opens a past part, which runs to the
    next header line (one ending in ``:`` that is not a list item)."""
    current: list[str] = []
    past: list[str] = []
    in_past = False
    for line in context.splitlines():
        if not line.startswith(("- ", "[")) and line.endswith(":"):
            in_past = line.startswith(PAST_MARKERS)
        (past if in_past else current).append(line)
    return "\n".join(current), "\n".join(past)


def _percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


def context_scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per arm: how often the gold is in the context (answerable questions), how often
    the trap is in it outside a part marked as past (``now`` questions, by closure), and
    the context's size."""
    arms: dict[str, Any] = {}
    for arm in (a for a in ARMS if any(r["arm"] == a for r in rows)):
        mine = [r for r in rows if r["arm"] == arm]
        answerable = [r for r in mine if r["gold"]]
        now = [r for r in mine if r["kind"] == "now" and r["trap"]]
        gold_in = sum(1 for r in answerable if norm(r["gold"]) in norm(r["context"]))

        def trapped(pool: Iterable[dict[str, Any]]) -> int:
            return sum(1 for r in pool
                       if norm(r["trap"]) in norm(past_split(r["context"])[0]))

        by_closure = {c: [r for r in now if r["closure"] == c] for c in ("ended", "retired")}
        arms[arm] = {
            "questions": len(mine),
            "gold_in_context_pct": _percent(gold_in, len(answerable)),
            "gold_in_context": f"{gold_in}/{len(answerable)}",
            "trap_as_current_pct": _percent(trapped(now), len(now)),
            "trap_as_current": f"{trapped(now)}/{len(now)}",
            "trap_as_current_ended": f"{trapped(by_closure['ended'])}/{len(by_closure['ended'])}",
            "trap_as_current_retired":
                f"{trapped(by_closure['retired'])}/{len(by_closure['retired'])}",
            "mean_chars": round(sum(r["chars"] for r in mine) / len(mine), 1),
            "max_chars": max(r["chars"] for r in mine),
            "mean_tokens": round(sum(r["tokens"] for r in mine) / len(mine), 1),
            "mean_items": round(sum(r["items"] for r in mine) / len(mine), 1),
            "mean_turns_seen": round(sum(r["turns_seen"] for r in mine) / len(mine), 1),
        }
    first = rows[0]
    return {"scenario_version": first["scenario_version"], "scale": first["scale"],
            "corpus_turns": first["corpus_turns"], "arms": arms}


def render_context_scores(s: dict[str, Any]) -> str:
    head = (f"scenario {s['scenario_version']}, scale {s['scale']}: {s['corpus_turns']} "
            f"turns; {len(QUESTIONS)} questions per arm")
    cols = ("arm", "gold in ctx", "trap as current", "ended", "retired", "mean chars",
            "max chars", "mean ~tok", "items / turns seen")
    table = [cols]
    for arm, a in s["arms"].items():
        table.append((arm, f"{a['gold_in_context']} {a['gold_in_context_pct']:.0f}%",
                      f"{a['trap_as_current']} {a['trap_as_current_pct']:.0f}%",
                      a["trap_as_current_ended"], a["trap_as_current_retired"],
                      f"{a['mean_chars']:.0f}", str(a["max_chars"]),
                      f"{a['mean_tokens']:.0f}",
                      f"{a['mean_items']:.1f} / {a['mean_turns_seen']:.1f}"))
    notes = ("gold in ctx: answerable questions whose gold is in the context (normalized "
             "containment).\ntrap as current: 'now' questions whose superseded value is in "
             "the context outside a part marked as past;\n  ended / retired split it by "
             "the clock that closed the trap. ~tok is chars / 4, not a tokenizer.")
    return "\n".join([head, "", _table(table), "", notes])


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# -- blinding, reading, answering ---------------------------------------------------------

def prompt_text(question: str, context: str) -> str:
    """What a reader sees for one item: the instructions, the context, the question."""
    shown = context if context else "(no context)"
    return f"{INSTRUCTIONS}\n\nContext:\n{shown}\n\nQuestion: {question}\nAnswer:"


def blinded(rows: Sequence[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``(item_id, row)`` in the order a reader sees them: shuffled by a seed fixed by
    the scenario version and scale, numbered after the shuffle, so neither the order nor
    the id says which arm built the context. The id names the scale (``s3-017``), so
    answers written for one corpus length cannot be joined to another's contexts."""
    scale = rows[0]["scale"]
    order = list(rows)
    random.Random(f"{SCENARIO_VERSION}/scale-{scale}").shuffle(order)
    return [(f"s{scale}-{i:03d}", row) for i, row in enumerate(order, start=1)]


def prompt_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"scenario_version": SCENARIO_VERSION, "item": item,
             "prompt": prompt_text(row["question"], row["context"])}
            for item, row in blinded(rows)]


def load_answers(path: Path, items: Sequence[str]) -> dict[str, str]:
    """An answers file: one JSON object a line, ``{"scenario_version", "item",
    "answer"}``, one for every item ``prompts`` wrote, in any order.

    Raises:
        BadInputError: naming the file and the line.
    """
    known = set(items)
    answers: dict[str, str] = {}
    lines: dict[str, int] = {}
    numbered = _json_lines(path, "answers file")
    for number, row in numbered:
        _check_version(path, number, row)
        _check_keys(path, number, row, ("item", "answer"))
        item, answer = row["item"], row["answer"]
        if item not in known:
            raise BadInputError(f"{path} line {number}: unknown item {item!r}")
        if not isinstance(answer, str):
            raise BadInputError(f"{path} line {number}: answer must be a string")
        if item in answers:
            raise BadInputError(
                f"{path} line {number}: {item} again (first on line {lines[item]})")
        answers[item], lines[item] = answer, number
    absent = [i for i in items if i not in answers]
    if absent:
        raise BadInputError(
            f"{path} line {numbered[-1][0]}: the answers file ends with {len(absent)} "
            f"item(s) unanswered ({', '.join(absent[:3])}{', ...' if len(absent) > 3 else ''})"
            "; is it truncated?")
    return answers


Reader = Callable[[str], str]


def _api_reader(spec: str) -> tuple[str, Reader]:
    """``anthropic[:MODEL]`` or ``openai[:MODEL]``: a reader calling that provider with
    its default sampling (no seed: two runs can differ); the SDK is imported only here
    (extras ``anthropic`` and ``openai``)."""
    provider, _, model = spec.partition(":")
    env = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}[provider]
    if not os.environ.get(env):
        raise BadInputError(f"--reader {spec}: set {env} to use this reader")
    try:
        if provider == "anthropic":
            import anthropic
        else:
            import openai
    except ImportError as exc:
        raise BadInputError(
            f"--reader {spec}: the {provider} package is not installed; "
            f"pip install '.[{provider}]'") from exc
    if provider == "anthropic":
        name = model or "claude-opus-5"
        client = anthropic.Anthropic()

        def ask_anthropic(prompt: str) -> str:
            try:
                reply = client.messages.create(
                    model=name, max_tokens=100,
                    messages=[{"role": "user", "content": prompt}])
            except anthropic.AnthropicError as exc:
                raise ReaderError(f"anthropic:{name}: {type(exc).__name__}: {exc}") from exc
            return "".join(getattr(b, "text", "") for b in reply.content).strip()

        return f"anthropic:{name}", ask_anthropic
    name = model or "gpt-4.1"
    oclient = openai.OpenAI()

    def ask_openai(prompt: str) -> str:
        try:
            reply = oclient.chat.completions.create(
                model=name, max_completion_tokens=100,
                messages=[{"role": "user", "content": prompt}])
        except openai.OpenAIError as exc:
            raise ReaderError(f"openai:{name}: {type(exc).__name__}: {exc}") from exc
        return (reply.choices[0].message.content or "").strip() if reply.choices else ""

    return f"openai:{name}", ask_openai


def answered_rows(
    rows: Sequence[dict[str, Any]], reader_name: str, answers: dict[str, str]
) -> list[dict[str, Any]]:
    """The dump's rows joined back to their answers by item id, in dump order."""
    item_of = {(row["arm"], row["question_id"]): item for item, row in blinded(rows)}
    return [{
        "scenario_version": SCENARIO_VERSION, "scale": row["scale"], "arm": row["arm"],
        "question_id": row["question_id"], "kind": row["kind"], "closure": row["closure"],
        "gold": row["gold"], "trap": row["trap"], "reader": reader_name,
        "answer": answers[item_of[row["arm"], row["question_id"]]],
    } for row in rows]


def load_answered(path: Path) -> list[dict[str, Any]]:
    """What ``answer`` wrote, checked whole like a dump.

    Raises:
        BadInputError: naming the file and the line.
    """
    numbered = _json_lines(path, "answered file")
    for number, row in numbered:
        _check_version(path, number, row)
        _check_keys(path, number, row, ANSWERED_KEYS)
        if not isinstance(row["answer"], str):
            raise BadInputError(f"{path} line {number}: answer must be a string")
    _check_scale(path, numbered)
    _check_complete(path, numbered, "answered file")
    return [row for _, row in numbered]


# -- judging answers ----------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    correct: bool
    trapped: bool


def judge(answer: str, gold: str, trap: str) -> Verdict:
    """Containment, after ``norm()``: correct when the gold is in the answer (for an
    unanswerable question, when the answer abstains); trapped when the trap is in it.
    An answer can be both: one that recites the history it corrects is marked trapped
    (a known false positive), and a right paraphrase is marked wrong (a false negative)."""
    said = norm(answer)
    if gold:
        correct = norm(gold) in said
    else:
        correct = any(norm(a) in said for a in ABSTAIN)
    return Verdict(correct, bool(trap) and norm(trap) in said)


def answer_scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for arm in ARMS:
        mine = [r for r in rows if r["arm"] == arm]
        verdicts = [(r, judge(r["answer"], r["gold"], r["trap"])) for r in mine]
        kinds = {}
        for kind in ("now", "past", "stable", "unanswerable"):
            of_kind = [v for r, v in verdicts if r["kind"] == kind]
            kinds[kind] = f"{sum(v.correct for v in of_kind)}/{len(of_kind)}"
        correct = sum(v.correct for _, v in verdicts)
        trapped = sum(v.trapped for _, v in verdicts)
        arms[arm] = {"questions": len(mine), "correct": correct, "trapped": trapped,
                     "correct_pct": _percent(correct, len(mine)), "by_kind": kinds}
    return {"scenario_version": rows[0]["scenario_version"], "scale": rows[0]["scale"],
            "reader": rows[0]["reader"], "arms": arms}


def render_answer_scores(s: dict[str, Any]) -> str:
    table = [("arm", "correct", "trapped", "now", "past", "stable", "unanswerable")]
    for arm, a in s["arms"].items():
        k = a["by_kind"]
        table.append((arm, f"{a['correct']}/{a['questions']} {a['correct_pct']:.0f}%",
                      str(a["trapped"]), k["now"], k["past"], k["stable"],
                      k["unanswerable"]))
    floor = ("The 'none' arm sees no context: it gets the unanswerable questions right by "
             "abstaining,\nby construction, on any corpus. Read its row as the floor.")
    return "\n".join([
        "=" * 88, BANNER, "=" * 88, "",
        f"scenario {s['scenario_version']}, scale {s['scale']}, reader {s['reader']}", "",
        _table(table), "", floor])


# -- plotting -----------------------------------------------------------------------------

def plot(dumps: Sequence[list[dict[str, Any]]], out: Path) -> None:
    """Mean context size (~tokens) of each arm against corpus length, one point per dump."""
    try:
        import matplotlib
        import matplotlib.ticker
    except ImportError as exc:
        raise BadInputError("plot: needs matplotlib; pip install '.[plot]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = sorted((context_scores(rows) for rows in dumps), key=lambda s: s["corpus_turns"])
    fig, ax = plt.subplots(figsize=(8.5, 4.8), dpi=120)
    markers = {"none": "x", "full_transcript": "o", "naive_rag": "s", "memvara": "^",
               "memvara_structured": "D"}
    xs = [p["corpus_turns"] for p in points]
    for arm in ARMS:
        ys = [p["arms"][arm]["mean_tokens"] for p in points]
        ax.plot(xs, ys, marker=markers[arm], label=arm)
        for x, y in zip(xs, ys):
            below = arm == "naive_rag"  # it runs just under memvara's line
            ax.annotate(f"{y:,.0f}", (x, y), textcoords="offset points",
                        xytext=(5, -11 if below else 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=10)  # symlog: the 'none' arm's zero stays on the chart
    ax.set_ylim(bottom=0, top=max(p["arms"]["full_transcript"]["mean_tokens"]
                                  for p in points) * 3)
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{p['corpus_turns']} turns\n(--scale {p['scale']})" for p in points])
    ax.set_xlabel("corpus length (log scale)")
    ax.set_ylabel("mean context per question\n(~tokens = chars / 4, log scale)")
    ax.set_title(f"Context size against corpus length: {len(QUESTIONS)} questions, "
                 f"k = 8, scenario {SCENARIO_VERSION}", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)


# -- the command line ---------------------------------------------------------------------

def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _scale(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, got {value!r}")
    return n


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="demo/harness.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="build every arm's context for every question")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--scale", type=_scale, default=1,
                   help="a corpus about N times longer: the same facts, more ordinary turns")
    c = sub.add_parser("score-context", help="gold, trap and size per arm, offline")
    c.add_argument("dump", type=Path)
    c.add_argument("--json", action="store_true")
    pr = sub.add_parser("prompts", help="the blinded prompts, for a file reader")
    pr.add_argument("dump", type=Path)
    pr.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("answer", help="answer every blinded prompt with a reader")
    a.add_argument("dump", type=Path)
    a.add_argument("--reader", required=True,
                   help="file:ANSWERS, anthropic[:MODEL] or openai[:MODEL]")
    a.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score", help="judge answered rows (containment)")
    s.add_argument("answered", type=Path)
    s.add_argument("--json", action="store_true")
    pl = sub.add_parser("plot", help="context size against corpus length (extra 'plot')")
    pl.add_argument("dumps", type=Path, nargs="+")
    pl.add_argument("--out", type=Path, required=True)
    return p


def _answer(dump: Path, reader: str, out: Path) -> str:
    rows = load_dump(dump)
    items = blinded(rows)
    if reader.startswith("file:"):
        path = Path(reader[len("file:"):])
        answers = load_answers(path, [i for i, _ in items])
        name = f"file:{path.name}"
    elif reader.partition(":")[0] in ("anthropic", "openai"):
        name, ask = _api_reader(reader)
        answers = {item: ask(prompt_text(row["question"], row["context"]))
                   for item, row in items}
    else:
        raise BadInputError(
            f"--reader {reader!r}: expected file:ANSWERS, anthropic[:MODEL] or "
            "openai[:MODEL]")
    _write_jsonl(out, answered_rows(rows, name, answers))
    return f"wrote {len(rows)} answered rows to {out} (reader {name})"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "dump":
            tally = AddTally()
            rows = dump_rows(args.scale, tally)
            _write_jsonl(args.out, rows)
            print(f"wrote {len(rows)} rows to {args.out} (scale {args.scale}, "
                  f"{rows[0]['corpus_turns']} turns)")
            print(f"memvara arm: add() with no model read {tally.turns} turns into "
                  f"{tally.claims} claim(s); {tally.unextracted} turn(s) unextracted, "
                  f"{tally.skipped} skipped")
        elif args.command == "score-context":
            scores = context_scores(load_dump(args.dump))
            print(json.dumps(scores, indent=2) if args.json else render_context_scores(scores))
        elif args.command == "prompts":
            prompts = prompt_rows(load_dump(args.dump))
            _write_jsonl(args.out, prompts)
            print(f"wrote {len(prompts)} blinded prompts to {args.out}; answer each as "
                  '{"scenario_version": ..., "item": ..., "answer": ...}, one a line')
        elif args.command == "answer":
            print(_answer(args.dump, args.reader, args.out))
        elif args.command == "score":
            scores = answer_scores(load_answered(args.answered))
            if args.json:
                print(json.dumps({"banner": BANNER, **scores}, indent=2))
            else:
                print(render_answer_scores(scores))
        else:  # plot
            plot([load_dump(path) for path in args.dumps], args.out)
            print(f"wrote {args.out}")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
