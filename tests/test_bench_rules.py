"""bench/rules.py: the corpus README's scoring rule on hand-made cases, and the script
running end to end on a small corpus written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from rules import Expected, Turn, load, norm, score  # noqa: E402  (bench/rules.py)

ROOT = Path(__file__).resolve().parents[1]

CORPUS: list[dict[str, Any]] = [
    {"text": "I live in Toronto", "expect": [
        {"predicate": "lives_in", "object": ["Toronto"], "polarity": 1}]},
    {"text": "I'm employed by the Salvation Army.", "expect": [
        {"predicate": "works_at", "object": ["Salvation Army"], "polarity": 1}]},
    {"text": "I live in denial", "expect": []},
    {"text": "I live in Oslo with my aunt", "expect": [  # labelled with the aunt: a miss
        {"predicate": "lives_in", "object": ["Oslo with my aunt"], "polarity": 1}]},
    {"text": "I don't speak Greek", "expect": [  # labelled +1: the claim written is false
        {"predicate": "speaks", "object": ["Greek"], "polarity": 1}]},
]


def test_objects_compare_case_folded_without_an_article_or_punctuation() -> None:
    assert norm("The Hague.") == norm("hague") == "hague"
    assert norm("  'Rio  de Janeiro' ") == "rio de janeiro"
    assert norm("A") == "a" and norm("an apple") == "apple"


def test_each_expected_claim_is_matched_once() -> None:
    twice = Turn("I love jazz and jazz", (Expected("likes", ("jazz",), 1),))
    result = score([twice])
    assert (result.written, result.matched, result.expected) == (2, 1, 1)
    assert result.false == [("I love jazz and jazz", "likes", "jazz", 1)]
    assert result.precision == 0.5 and result.recall == 1.0


def test_an_empty_run_scores_one() -> None:
    result = score([Turn("ok", ())])
    assert result.precision == result.recall == 1.0


def test_the_script_prints_every_false_and_missed_claim(tmp_path: Path) -> None:
    data = tmp_path / "corpus.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in CORPUS) + "\n\n", encoding="utf-8")
    assert [t.text for t in load(data)] == [row["text"] for row in CORPUS]
    out = tmp_path / "rules.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "rules.py"), "--data", str(data),
         "--repeat", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert "precision: 50.0% (2 of 4 claims written)" in result.stdout
    assert "recall:    50.0% (2 of 4 claims expected)" in result.stdout
    assert "FALSE  speaks('Greek', -1)  <- \"I don't speak Greek\"" in result.stdout
    assert "FALSE  lives_in('Oslo', +1)" in result.stdout
    assert "MISSED lives_in('Oslo with my aunt', +1)" in result.stdout
    assert "MISSED speaks('Greek', +1)" in result.stdout
    assert "us per turn" in result.stdout
    report = json.loads(out.read_text())
    assert (report["written"], report["matched"], report["expected"]) == (4, 2, 4)
    assert report["turns"] == len(CORPUS)


def test_the_script_says_when_the_corpus_is_missing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "rules.py"), "--data", str(tmp_path / "none.jsonl")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2 and "no corpus at" in result.stderr
