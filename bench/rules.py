"""The rule tier (``memvara._write.rules``) scored against a labelled corpus.

Run::

    python bench/rules.py [--data PATH] [--repeat 200] [--json PATH]

``--data`` is a JSONL file, one user turn a line: ``{"text": ..., "expect": [{"predicate",
"object": [accepted spellings], "polarity"}]}``; ``expect: []`` means the turn states no fact
the rules should write. The default is ``../shared/data/rules-dev.jsonl`` beside the repo
root. Scoring follows that corpus's README: a claim written matches an expected one when the
predicate and polarity are equal and the object equals one of the accepted spellings, both
case-folded, without a leading article or surrounding punctuation; each expected claim is
matched at most once. Precision = matched claims / claims written; recall = matched /
expected. Every false claim and every missed claim is printed, then the time ``extract()``
takes per turn (the best of ``--repeat`` passes over the corpus: the rules run on every
user turn ``add()`` sees).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memvara._write.rules import extract  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "rules-dev.jsonl"

_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def norm(text: str) -> str:
    """An object as the scoring rule compares it: case-folded, no leading article, no
    punctuation at either end, runs of white space as one."""
    text = " ".join(_EDGE.sub("", text.casefold()).split())
    return _EDGE.sub("", _ARTICLE.sub("", text))


@dataclass(frozen=True)
class Expected:
    """One claim a turn should produce, with every spelling accepted for its object."""

    predicate: str
    objects: tuple[str, ...]
    polarity: int


@dataclass(frozen=True)
class Turn:
    text: str
    expect: tuple[Expected, ...]


@dataclass
class Score:
    """The corpus's counts, and the turns behind every error."""

    written: int = 0
    expected: int = 0
    matched: int = 0
    false: list[tuple[str, str, str, int]] = field(default_factory=list)  # text, claim
    missed: list[tuple[str, str, str, int]] = field(default_factory=list)  # text, expected

    @property
    def precision(self) -> float:
        return self.matched / self.written if self.written else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 1.0


def load(path: Path) -> list[Turn]:
    """The corpus: one turn a non-blank line."""
    turns = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row: dict[str, Any] = json.loads(line)
            expect = tuple(
                Expected(e["predicate"], tuple(e["object"]), int(e["polarity"]))
                for e in row["expect"]
            )
            turns.append(Turn(row["text"], expect))
    return turns


def score(turns: list[Turn]) -> Score:
    """Run the rules over every turn and score what they write."""
    result = Score()
    for turn in turns:
        open_ = list(turn.expect)
        result.expected += len(open_)
        for claim in extract(turn.text):
            result.written += 1
            got = norm(claim.object)
            hit = next((e for e in open_ if e.predicate == claim.predicate
                        and e.polarity == claim.polarity
                        and got in {norm(o) for o in e.objects}), None)
            if hit is None:
                result.false.append((turn.text, claim.predicate, claim.object, claim.polarity))
            else:
                result.matched += 1
                open_.remove(hit)
        result.missed.extend((turn.text, e.predicate, " | ".join(e.objects), e.polarity)
                             for e in open_)
    return result


def time_per_turn(turns: list[Turn], repeat: int) -> float:
    """Microseconds ``extract()`` takes per turn: the best of ``repeat`` passes."""
    texts = [t.text for t in turns]
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        for text in texts:
            extract(text)
        best = min(best, time.perf_counter() - start)
    return best / max(1, len(texts)) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no corpus at {args.data}", file=sys.stderr)
        return 2
    turns = load(args.data)
    s = score(turns)
    micros = time_per_turn(turns, args.repeat)
    print(f"corpus: {args.data} ({len(turns)} turns)")
    print(f"precision: {s.precision:.1%} ({s.matched} of {s.written} claims written)")
    print(f"recall:    {s.recall:.1%} ({s.matched} of {s.expected} claims expected)")
    print(f"false claims: {len(s.false)}")
    for text, pred, obj, pol in s.false:
        print(f"  FALSE  {pred}({obj!r}, {pol:+d})  <- {text!r}")
    print(f"missed claims: {len(s.missed)}")
    for text, pred, obj, pol in s.missed:
        print(f"  MISSED {pred}({obj!r}, {pol:+d})  <- {text!r}")
    print(f"extract(): {micros:.1f} us per turn (best of {args.repeat} passes)")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "data": str(args.data), "turns": len(turns), "precision": s.precision,
            "recall": s.recall, "written": s.written, "expected": s.expected,
            "matched": s.matched, "false": s.false, "missed": s.missed,
            "us_per_turn": micros,
        }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
