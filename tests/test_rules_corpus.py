"""The rule tier against labelled corpora: ``../shared/data/rules-dev.jsonl``, and
``bench/data/rules-probe.jsonl``, 125 turns of the same kinds written here after the rules
were (a check of how they carry to sentences they were not written against, never tuned
on: a sentence it gets wrong stays in it as labelled).

Scored by the corpus README's rule (``bench/rules.py`` holds the scorer): precision is the
share of claims written that match an expected one, recall the share of expected claims
written. The rules must be sure of what they write (precision at least 98%) and still read
most plain statements (recall at least 90%). The corpus lives beside the repository, not in
it: without it that half skips.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from rules import load, score  # noqa: E402  (bench/rules.py)

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [ROOT.parent / "shared" / "data" / "rules-dev.jsonl",
           ROOT / "bench" / "data" / "rules-probe.jsonl"]


@pytest.mark.parametrize("corpus", CORPORA, ids=lambda path: path.stem)
def test_the_rules_are_precise_and_read_most_statements(corpus: Path) -> None:
    if not corpus.is_file():
        pytest.skip(f"the labelled corpus is not at {corpus} (it is kept beside the repository)")
    turns = load(corpus)
    result = score(turns)
    report = "\n".join(
        [f"precision {result.precision:.1%}, recall {result.recall:.1%}"]
        + [f"false: {pred}({obj!r}, {pol:+d}) <- {text!r}" for text, pred, obj, pol in result.false]
        + [f"missed: {pred}({obj!r}, {pol:+d}) <- {text!r}" for text, pred, obj, pol in result.missed]
    )
    assert len(turns) >= 50 and result.expected > 0, report
    assert result.precision >= 0.98, report
    assert result.recall >= 0.90, report
