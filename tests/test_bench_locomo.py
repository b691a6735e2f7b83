"""bench/locomo.py on a tiny synthetic file in LOCOMO's schema, quirks included.

The real data is CC BY-NC and stays out of the repository; this file is written here."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from memvara import DegradedExtractionWarning

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import locomo
from _metrics import BenchError


def _turn(dia_id: str, speaker: str, text: str, **extra: object) -> dict[str, object]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


SYNTHETIC: list[dict[str, object]] = [
    {
        "sample_id": "conv-x1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("D1:1", "Ada", "Hey Bo! I went to a pottery workshop yesterday."),
                _turn("D1:2", "Bo", "Nice! What did you make there?"),
                _turn("D1:3", "Ada", "A blue ceramic teapot with a crooked spout.",
                      img_url=["https://example.invalid/teapot.jpg"],
                      blip_caption="a photo of a blue teapot on a table", query="blue teapot"),
                _turn("D1:4", "Bo", "Ha, crooked spouts have character."),
            ],
            "session_2_date_time": "10:04 am on 19 June, 2023",
            "session_2": [
                _turn("D2:1", "Bo", "I adopted a greyhound called Pepper last weekend."),
                _turn("D2:2", "Ada", "Congratulations! Greyhounds are gentle dogs."),
                _turn("D2:3", "Bo", "Pepper sleeps twenty hours a day, honestly."),
            ],
            # a date key with no session list, as conv-26 has for sessions 20-35
            "session_3_date_time": "9:00 am on 1 July, 2023",
        },
        "qa": [
            {"question": "What did Ada make at the pottery workshop?",
             "answer": "A blue ceramic teapot", "evidence": ["D1:3"], "category": 4},
            {"question": "What is the name of Bo's greyhound?", "answer": "Pepper",
             "evidence": ["D2:1; D2:3"], "category": 4},  # malformed: two ids in one string
            {"question": "In which year did Ada go to the pottery workshop?", "answer": 2023,
             "evidence": ["D1:1 D1:3"], "category": 2},  # an int answer; space-joined ids
            {"question": "What pets and crafts do Ada and Bo have?", "answer": "a greyhound, pottery",
             "evidence": ["D", "D:1:3", "D9:9", "D2:1"], "category": 1},  # three unresolvable
            {"question": "What would Bo's dog think of teapots?", "answer": "unknown",
             "evidence": ["D7:7"], "category": 3},  # nothing resolves: not scored
            {"question": "What did Bo make at the pottery workshop?",
             "adversarial_answer": "a vase", "evidence": ["D1:3"], "category": 5},
        ],
        "event_summary": {}, "observation": {}, "session_summary": {},
    },
    {
        "sample_id": "conv-x2",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Di",
            "session_1_date_time": "7:30 pm on 2 January, 2024",
            "session_1": [
                _turn("D1:1", "Cy", "I started learning the cello in December."),
                _turn("D1:2", "Di", "That's lovely. I'm training for a marathon in April."),
            ],
        },
        "qa": [
            {"question": "Which instrument is Cy learning?", "answer": "cello",
             "evidence": ["D1:1"], "category": 4},
        ],
        "event_summary": {}, "observation": {}, "session_summary": {},
    },
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-synthetic.json"
    path.write_text(json.dumps(SYNTHETIC), encoding="utf-8")
    return path


def test_load_reads_the_schema_and_its_quirks(data: Path) -> None:
    first, second = locomo.load(data)
    assert first.sample_id == "conv-x1" and (first.speaker_a, first.speaker_b) == ("Ada", "Bo")
    assert [s.number for s in first.sessions] == [1, 2]  # session_3 has a date but no turns
    assert first.sessions[0].when.isoformat() == "2023-05-08T13:56:00+00:00"
    assert first.sessions[1].when.isoformat() == "2023-06-19T10:04:00+00:00"
    assert first.sessions[0].turns[2].caption == "a photo of a blue teapot on a table"
    assert first.sessions[0].turns[0].caption is None
    qa = first.questions
    assert qa[1].evidence == ("D2:1", "D2:3") and qa[1].unresolved == ()
    assert qa[2].answer == "2023" and qa[2].evidence == ("D1:1", "D1:3")
    assert qa[3].evidence == ("D2:1",) and qa[3].unresolved == ("D", "D:1:3", "D9:9")
    assert qa[4].evidence == ()
    assert qa[5].answer is None and qa[5].category == 5
    assert len(second.sessions) == 1 and second.dia_ids == {"D1:1", "D1:2"}


def test_split_evidence_and_dates() -> None:
    assert locomo.split_evidence(["D8:6; D9:17", "D1:1  D1:2", "D3:3"]) == [
        "D8:6", "D9:17", "D1:1", "D1:2", "D3:3"]
    assert locomo.split_evidence("D1:1") == []
    assert locomo.parse_date("12:09 am on 1 January, 2024").hour == 0
    with pytest.raises(BenchError, match="does not match"):
        locomo.parse_date("2023-05-08")


def test_content_formats() -> None:
    turn = locomo.LocomoTurn("D1:3", "Ada", "Look!", "a teapot")
    assert locomo.content(turn, "speaker", False) == "Ada: Look!"
    assert locomo.content(turn, "text", False) == "Look!"
    assert locomo.content(turn, "speaker", True) == "Ada: Look! [image: a teapot]"


def test_bad_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    cases: list[object] = [
        {"not": "a list"},
        [1],
        [{"sample_id": "x", "conversation": []}],
        [{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}],  # no date for session_1
        [{"sample_id": "x", "conversation": {"speaker_a": "A", "speaker_b": "B"},
          "qa": [{"question": "q", "category": "4"}]}],
    ]
    for case in cases:
        bad.write_text(json.dumps(case), encoding="utf-8")
        with pytest.raises(BenchError):
            locomo.load(bad)


def test_run_scores_categories_1_to_4_and_maps_turns_exactly(data: Path) -> None:
    warnings.simplefilter("ignore", DegradedExtractionWarning)
    config = locomo.Config(data=data, ks=(1, 5, 12), progress=False)
    result = locomo.run(locomo.load(data), config)
    assert len(result.scores) == 5  # 4 + 1 scored; category 5 and the no-evidence one are not
    assert result.no_evidence == 1 and result.unresolved_ids == 4
    assert (result.turns, result.episodes, result.lost_turns) == (9, 9, {})
    by_question = {q["question"]: q for q in result.questions}
    cello = by_question["Which instrument is Cy learning?"]
    assert cello["retrieved"] == [["D1:1"], ["D1:2"]]  # conv-x2's turns, nothing of conv-x1
    assert cello["recall"] == {"1": 1.0, "5": 1.0, "12": 1.0}
    for q in result.questions:  # every retrieved id is a turn of that conversation
        conv = {c.sample_id: c for c in locomo.load(data)}[str(q["sample_id"])]
        assert all(set(ids) <= conv.dia_ids for ids in q["retrieved"])  # type: ignore[attr-defined]
    rows, text = locomo.report(result, config)
    assert rows[-1].category == "all" and rows[-1].n == 5
    assert "| category | n | R@1 | R@5 | R@12 | MRR | all@12 | hit@12 | chance@12 |" in text


def test_budget_cuts_questions_and_skips_conversations(data: Path) -> None:
    config = locomo.Config(data=data, budget=2, progress=False)
    plan = locomo.selected(locomo.load(data), config)
    assert [(c.sample_id, len(qs)) for c, qs in plan] == [("conv-x1", 2)]


def test_end_to_end_in_a_subprocess(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "locomo.py"), "--data", str(data), "--json", str(out),
         "--score", "retrieval"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    assert time.perf_counter() - started < 10
    lines = proc.stdout.splitlines()
    assert "| category | n | R@1 | R@5 | R@12 | R@20 | MRR | all@12 | hit@12 | chance@12 |" in lines
    assert any(line.startswith("| all | 5 |") for line in lines)
    assert any(line.startswith("query: 5 searches, p50") for line in lines)
    assert "locomo [" in proc.stderr and "5/5" in proc.stderr  # the progress line
    payload = json.loads(out.read_text())
    assert payload["config"]["ks"] == [1, 5, 12, 20]
    assert [r["category"] for r in payload["rows"]] == ["single-hop", "temporal", "multi-hop", "all"]
    assert payload["mapping"]["unresolved_ids"] == 4
    assert len(payload["questions"]) == 5


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "locomo.py"), "--data", str(tmp_path / "nope.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 2 and "no LOCOMO file" in proc.stderr


def test_the_default_data_path_is_relative_to_the_repository() -> None:
    assert locomo.resolve_data(locomo.DEFAULT_DATA) == (ROOT / ".." / "shared" / "data" / "locomo-dev.json").resolve()
    assert locomo.resolve_data("/x/y.json") == Path("/x/y.json")


def test_reranker_flags_build_the_library_rerankers(monkeypatch: pytest.MonkeyPatch) -> None:
    from memvara.rerank import CoverageReranker

    assert locomo.reranker_options("none") == {}
    assert isinstance(locomo.reranker_options("coverage")["read_reranker"], CoverageReranker)
    real = importlib.import_module

    def refuse(name: str, package: str | None = None) -> ModuleType:
        if name == "memvara.rerank":
            raise ImportError("no rerank here")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.raises(BenchError, match="CrossEncoderReranker"):
        locomo.reranker_options("cross")


def test_minilm_without_its_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def refuse(name: str, package: str | None = None) -> ModuleType:
        if name.startswith("memvara.embed"):
            raise ImportError("no sentence-transformers here")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.raises(BenchError, match="minilm"):
        locomo.make_embedder("minilm")
    assert locomo.make_embedder("hashing").dim > 0
