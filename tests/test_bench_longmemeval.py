"""bench/longmemeval.py on bench/data/longmemeval-sample.json (seven items written for
this project in LongMemEval's schema), per item and with one shared store."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from memvara import DegradedExtractionWarning

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "bench" / "data" / "longmemeval-sample.json"
sys.path.insert(0, str(ROOT / "bench"))

import longmemeval
from _metrics import BenchError


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "longmemeval.py"), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_the_sample_is_in_longmemeval_schema() -> None:
    raw = json.loads(SAMPLE.read_text())
    keys = {"question_id", "question_type", "question", "answer", "question_date",
            "haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"}
    assert 6 <= len(raw) <= 10
    for item in raw:
        assert set(item) == keys
        assert len(item["haystack_session_ids"]) == len(item["haystack_dates"]) == len(item["haystack_sessions"])
        for session in item["haystack_sessions"]:
            for turn in session:
                assert set(turn) <= {"role", "content", "has_answer"}
                assert turn["role"] in ("user", "assistant")


def test_load_finds_turn_and_session_level_evidence() -> None:
    items = {i.question_id: i for i in longmemeval.load(SAMPLE)}
    ku = items["sample_ku_04"]
    assert ku.category == "knowledge-update"
    assert ku.evidence() == (("sess_bike#0", "sess_bike_update#0"), "turn")
    assert ku.sessions[0].when.isoformat() == "2023-04-01T11:30:00+00:00"
    assert ku.question_date is not None and ku.question_date.year == 2023
    abstention = items["sample_ssu_07_abs"]
    assert abstention.category == "abstention"  # whatever its question_type says
    turns, level = abstention.evidence()
    assert level == "session" and turns == tuple(f"sess_dog#{i}" for i in range(4))
    assert items["sample_ms_06"].answer == "3"  # a number in the file


def test_one_session_id_with_different_turns_gets_its_own_key(tmp_path: Path) -> None:
    raw = json.loads(SAMPLE.read_text())[:2]
    raw[1]["haystack_session_ids"][0] = raw[0]["haystack_session_ids"][0]  # same id, other turns
    path = tmp_path / "clash.json"
    path.write_text(json.dumps(raw))
    first, second = longmemeval.load(path)
    assert first.sessions[0].key == "sess_weather"
    assert second.sessions[0].key == "sess_weather~1"


def test_bad_items_are_refused(tmp_path: Path) -> None:
    good = json.loads(SAMPLE.read_text())[0]
    path = tmp_path / "bad.json"
    changes: list[dict[str, object]] = [{"haystack_dates": ["2023-01-01"] * 3}, {"haystack_dates": []},
                                         {"question": 3},
                                         {"haystack_sessions": [[{"role": "bot", "content": "x"}]] * 3}]
    for change in changes:
        path.write_text(json.dumps([{**good, **change}]))
        with pytest.raises(BenchError):
            longmemeval.load(path)
    path.write_text("{}")
    with pytest.raises(BenchError):
        longmemeval.load(path)


def test_a_shared_store_holds_each_session_once() -> None:
    warnings.simplefilter("ignore", DegradedExtractionWarning)
    items = longmemeval.load(SAMPLE)
    per_item = longmemeval.run(items, longmemeval.Config(data=SAMPLE, progress=False))
    shared = longmemeval.run(items, longmemeval.Config(data=SAMPLE, share_store=True, progress=False))
    distinct = {s.key: len(s.turns) for i in items for s in i.sessions}
    assert (per_item.stores, shared.stores) == (len(items), 1)
    assert shared.turns == sum(distinct.values())
    assert per_item.turns == sum(len(s.turns) for i in items for s in i.sessions)
    # "Ok thanks" closes two sessions: the second is held by the first one's episode
    assert shared.duplicate_turns == 1 and shared.episodes == shared.turns - 1
    assert len(shared.scores) == len(per_item.scores) == len(items)
    assert all(s.candidates == shared.episodes for s in shared.scores)
    assert all(s.candidates < shared.episodes for s in per_item.scores)


def test_the_script_per_item_warns_that_chance_is_high(tmp_path: Path) -> None:
    out = tmp_path / "lme.json"
    proc = _run("--json", str(out), "--no-progress", "--score", "retrieval")
    assert proc.returncode == 0, proc.stderr
    assert "one store per item" in proc.stdout
    assert "| abstention | 1 |" in proc.stdout and "| all | 7 |" in proc.stdout
    assert "warning: chance R@12" in proc.stderr and "warning: chance R@1 " not in proc.stderr
    payload = json.loads(out.read_text())
    assert payload["config"]["share_store"] is False
    assert payload["mapping"]["evidence_levels"] == {"turn": 6, "session": 1}
    assert any(w.startswith("warning: chance R@20") for w in payload["warnings"])


def test_the_script_with_a_shared_store_does_not_warn_at_small_k() -> None:
    proc = _run("--share-store", "--k", "1,5,12", "--budget", "6")
    assert proc.returncode == 0, proc.stderr
    assert "one shared store" in proc.stdout and "| all | 6 |" in proc.stdout
    assert "warning" not in proc.stderr
    assert "longmemeval [" in proc.stderr  # the progress line


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run("--data", str(tmp_path / "nope.json"))
    assert proc.returncode == 2 and "no LongMemEval file" in proc.stderr


def test_chance_warnings_name_each_k_above_half() -> None:
    assert longmemeval.chance_warnings([], (1,)) == []
