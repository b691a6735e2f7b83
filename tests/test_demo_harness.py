"""demo/harness.py end to end: dump (the same bytes every run), score-context, the
blinded prompts, answer with a file reader, score, plot; and every kind of bad file is
refused with its line before anything is scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvara import Memvara, NullLLM

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "demo"))

import harness  # noqa: E402 - demo/ is put on the path just above
from baselines import ARMS, AddTally  # noqa: E402
from scenario import QUESTIONS, SCENARIO_VERSION  # noqa: E402

HARNESS = ROOT / "demo" / "harness.py"
ROWS = len(ARMS) * len(QUESTIONS)


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "dump.jsonl"
    assert harness.main(["dump", "--out", str(path)]) == 0
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def call(*argv: str) -> tuple[int, str, str]:
        status = harness.main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return call


# -- dump ---------------------------------------------------------------------------------

def test_dump_has_one_row_per_arm_and_question_with_every_field(dump: Path) -> None:
    rows = _rows(dump)
    assert len(rows) == ROWS
    assert {(r["arm"], r["question_id"]) for r in rows} == {
        (a, q.id) for a in ARMS for q in QUESTIONS}
    for r in rows:
        assert set(harness.DUMP_KEYS) <= set(r)
        assert r["scenario_version"] == SCENARIO_VERSION
        assert r["chars"] == len(r["context"]) and r["tokens"] == -(-r["chars"] // 4)
    assert all(r["context"] == "" for r in rows if r["arm"] == "none")


def test_dump_gives_the_same_bytes_in_fresh_processes_with_the_core_install(
    tmp_path: Path, dump: Path
) -> None:
    """Two processes with different hash seeds, run from another directory as the README
    says; neither imports a plotting library or a model SDK."""
    probe = (
        "import runpy, sys; sys.argv = ['harness.py', 'dump', '--out', sys.argv[1]];"
        f"sys.path.insert(0, {str(ROOT / 'demo')!r});"
        "import harness; code = harness.main(sys.argv[1:]);"
        "bad = [m for m in ('matplotlib', 'anthropic', 'openai', 'torch') if m in sys.modules];"
        "sys.exit(code or bool(bad))"
    )
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"dump-{seed}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", probe, str(out)], cwd=tmp_path, env=env,
                       check=True, capture_output=True, timeout=120)
        outs.append(out.read_bytes())
    script = tmp_path / "script.jsonl"
    subprocess.run([sys.executable, str(HARNESS), "dump", "--out", str(script)],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    assert outs[0] == outs[1] == script.read_bytes() == dump.read_bytes()


def test_dump_says_how_many_claims_the_rule_tier_read(tmp_path: Path, run: Run) -> None:
    status, out, _ = run("dump", "--out", str(tmp_path / "d.jsonl"))
    assert status == 0
    tally = AddTally()
    rows = harness.dump_rows(1, tally)
    assert tally.turns == rows[0]["corpus_turns"] and 0 <= tally.unextracted <= tally.turns
    assert (f"add() with no model read {tally.turns} turns into {tally.claims} claim(s); "
            f"{tally.unextracted} turn(s) unextracted") in out


def test_each_retrieving_arm_uses_at_most_k_items(dump: Path) -> None:
    for r in _rows(dump):
        if r["arm"] in ("naive_rag", "memvara", "memvara_structured"):
            assert r["items"] <= 8 + 8  # recall: k results, plus the ended values of those
        if r["arm"] == "full_transcript":
            assert r["items"] == r["turns_seen"]


def test_questions_asked_earlier_see_fewer_turns(dump: Path) -> None:
    seen = {r["question_id"]: r["turns_seen"] for r in _rows(dump) if r["arm"] == "none"}
    early = {q.id for q in QUESTIONS if q.asked_at.month < 9}
    assert early and all(seen[q] < seen["q01"] for q in early)


# -- score-context ------------------------------------------------------------------------

def test_score_context_prints_the_table_and_its_json(dump: Path, run: Run) -> None:
    status, out, _ = run("score-context", str(dump))
    assert status == 0
    assert all(arm in out for arm in ARMS) and "trap as current" in out
    status, out, _ = run("score-context", str(dump), "--json")
    data = json.loads(out)
    arms = data["arms"]
    answerable = sum(1 for q in QUESTIONS if q.gold)
    # The whole transcript holds every gold by construction; no context holds none.
    assert arms["full_transcript"]["gold_in_context"] == f"{answerable}/{answerable}"
    assert arms["none"]["gold_in_context"] == f"0/{answerable}"
    assert arms["none"]["mean_chars"] == 0


def _row(context: str, gold: str = "Fibre Plus 300", trap: str = "Fibre Max 900",
         arm: str = "memvara") -> dict[str, Any]:
    return {"arm": arm, "kind": "now", "closure": "ended", "gold": gold, "trap": trap,
            "context": context, "chars": len(context), "tokens": 0, "items": 0,
            "turns_seen": 0, "scenario_version": "x", "scale": 1, "corpus_turns": 0}


def test_a_trap_counts_as_current_only_outside_a_past_part() -> None:
    past = ("Known about the user (stored notes):\n- maren plan Fibre Plus 300\n"
            "No longer true \u2014 earlier values (do not answer with these):\n"
            "- maren plan Fibre Max 900 (until 17 June 2026)")
    current = "[2026-07-28 customer] Fibre Max 900 was the best.\n- FIBRE PLUS 300"
    rows = [_row(past), _row(current, arm="naive_rag")]
    arms = harness.context_scores(rows)["arms"]
    assert arms["memvara"]["trap_as_current"] == "0/1"
    assert arms["memvara"]["gold_in_context"] == "1/1"
    assert arms["naive_rag"]["trap_as_current"] == "1/1"
    assert arms["naive_rag"]["trap_as_current_ended"] == "1/1"
    assert arms["naive_rag"]["gold_in_context"] == "1/1"  # case and spaces do not matter


def test_recall_still_marks_earlier_values_with_the_header_the_scorer_knows() -> None:
    mem = Memvara(user="maren", llm=NullLLM())
    try:
        mem.remember("maren", "lives_in", "Leeds")
        mem.remember("maren", "lives_in", "Hull")
        block = mem.recall("where does maren live", include_history=True)
    finally:
        mem.close()
    current, past = harness.past_split(block)
    assert "Hull" in current and "Leeds" not in current
    assert "Leeds" in past


# -- bad input ----------------------------------------------------------------------------

def _refused(run: Run, *argv: str) -> str:
    status, out, err = run(*argv)
    assert status == 2 and out == "", (out, err)
    return err


def test_a_dump_cut_mid_line_is_refused_naming_the_line(dump: Path, tmp_path: Path,
                                                        run: Run) -> None:
    data = dump.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])
    err = _refused(run, "score-context", str(cut))
    lines = data[: len(data) // 2].count(b"\n") + 1
    assert f"line {lines}" in err and "cut short" in err


def test_a_dump_cut_between_lines_is_refused_as_missing_rows(dump: Path, tmp_path: Path,
                                                            run: Run) -> None:
    rows = _rows(dump)
    short = _write(tmp_path / "short.jsonl", rows[:-3])
    err = _refused(run, "score-context", str(short))
    assert f"line {ROWS - 3}" in err and "3 row(s) missing" in err
    assert "memvara_structured q20" in err


def test_a_dump_of_another_scenario_version_is_refused_naming_the_line(
    dump: Path, tmp_path: Path, run: Run
) -> None:
    rows = _rows(dump)
    rows[6]["scenario_version"] = "someone-else-2025.9"
    err = _refused(run, "score-context", str(_write(tmp_path / "old.jsonl", rows)))
    assert "line 7" in err and "someone-else-2025.9" in err


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(gold="Fibre Max 900"), "gold of"),
    (lambda r: r.update(arm="mystery"), "unknown arm"),
    (lambda r: r.update(question_id="q99"), "unknown question_id"),
    (lambda r: r.update(context=r["context"] + "x"), "chars does not match"),
    (lambda r: r.pop("trap"), "missing field(s) trap"),
    (lambda r: r.update(scale=3), "scale 3"),
])
def test_an_edited_dump_row_is_refused_naming_the_line(
    dump: Path, tmp_path: Path, run: Run, change: Callable[[dict[str, Any]], object],
    message: str,
) -> None:
    rows = _rows(dump)
    change(rows[40])
    err = _refused(run, "score-context", str(_write(tmp_path / "edited.jsonl", rows)))
    assert "line 41" in err and message in err


def test_a_repeated_row_and_odd_files_are_refused(dump: Path, tmp_path: Path,
                                                  run: Run) -> None:
    rows = _rows(dump)
    err = _refused(run, "score-context",
                   str(_write(tmp_path / "twice.jsonl", rows + [rows[3]])))
    assert f"line {ROWS + 1}" in err and "first on line 4" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert "is empty" in _refused(run, "score-context", str(empty))
    assert "cannot read" in _refused(run, "score-context", str(tmp_path / "absent.jsonl"))
    listed = tmp_path / "list.jsonl"
    listed.write_text("[1, 2]\n")
    assert "line 1: not a JSON object" in _refused(run, "score-context", str(listed))


# -- prompts, answer, score ---------------------------------------------------------------

def test_prompts_are_blinded_and_shuffled(dump: Path, tmp_path: Path, run: Run) -> None:
    out = tmp_path / "prompts.jsonl"
    status, _, _ = run("prompts", str(dump), "--out", str(out))
    assert status == 0
    prompts = _rows(out)
    assert len(prompts) == ROWS and len({p["item"] for p in prompts}) == ROWS
    assert all(set(p) == {"scenario_version", "item", "prompt"} for p in prompts)
    text = out.read_text(encoding="utf-8")
    for arm in ARMS:
        assert arm not in text
    # Items are numbered after a shuffle: the arms are interleaved, not in blocks.
    item_arm = {item: row["arm"] for item, row in harness.blinded(_rows(dump))}
    first = {item_arm[p["item"]] for p in prompts[:len(QUESTIONS)]}
    assert len(first) > 2
    assert [p["item"] for p in prompts] == sorted(p["item"] for p in prompts)
    again = tmp_path / "again.jsonl"
    run("prompts", str(dump), "--out", str(again))
    assert again.read_bytes() == out.read_bytes()


def _answers(dump: Path, tmp_path: Path, answer: Callable[[dict[str, Any]], str]) -> Path:
    rows = [{"scenario_version": SCENARIO_VERSION, "item": item, "answer": answer(row)}
            for item, row in harness.blinded(_rows(dump))]
    return _write(tmp_path / "answers.jsonl", rows)


def test_a_file_reader_round_trip_scores_under_the_banner(dump: Path, tmp_path: Path,
                                                          run: Run) -> None:
    def reader(row: dict[str, Any]) -> str:
        if row["arm"] == "none":
            return "unknown"
        if row["arm"] == "naive_rag" and row["trap"]:
            return f"It was {row['trap']}."
        return row["gold"] or "Unknown - the context does not say."

    answers = _answers(dump, tmp_path, reader)
    answered = tmp_path / "answered.jsonl"
    status, out, _ = run("answer", str(dump), "--reader", f"file:{answers}",
                         "--out", str(answered))
    assert status == 0 and str(answered) in out
    rows = _rows(answered)
    assert [(r["arm"], r["question_id"]) for r in rows] == [
        (r["arm"], r["question_id"]) for r in _rows(dump)]
    status, out, _ = run("score", str(answered))
    assert status == 0 and harness.BANNER in out and "not a benchmark" in out.lower()
    status, out, _ = run("score", str(answered), "--json")
    arms = json.loads(out)["arms"]
    n = len(QUESTIONS)
    unanswerable = sum(1 for q in QUESTIONS if not q.gold)
    trapped = sum(1 for q in QUESTIONS if q.trap)
    assert arms["full_transcript"]["correct"] == n and arms["full_transcript"]["trapped"] == 0
    assert arms["none"]["correct"] == unanswerable
    assert arms["naive_rag"]["trapped"] == trapped
    assert arms["naive_rag"]["correct"] == n - trapped


def test_an_answers_file_with_a_gap_a_cut_or_another_version_is_refused(
    dump: Path, tmp_path: Path, run: Run
) -> None:
    answers = _answers(dump, tmp_path, lambda row: row["gold"] or "unknown")
    lines = answers.read_text(encoding="utf-8").splitlines(keepends=True)
    out = str(tmp_path / "answered.jsonl")

    def refused(text: str) -> str:
        bad = tmp_path / "bad-answers.jsonl"
        bad.write_text(text, encoding="utf-8")
        return _refused(run, "answer", str(dump), "--reader", f"file:{bad}", "--out", out)

    assert f"line {ROWS - 1}" in refused("".join(lines[:-1])) and "unanswered" in refused(
        "".join(lines[:-1]))
    assert "cut short" in refused("".join(lines)[:-30])
    other = lines[:]
    other[9] = other[9].replace(SCENARIO_VERSION, "older-2026.0")
    assert "line 10" in refused("".join(other))
    assert "unknown item" in refused("".join(lines) + json.dumps(
        {"scenario_version": SCENARIO_VERSION, "item": "s1-999", "answer": "x"}) + "\n")
    assert "again" in refused("".join(lines) + lines[0])
    other_scale = "".join(lines).replace('"s1-', '"s3-')
    assert "line 1: unknown item 's3-" in refused(other_scale)
    assert not Path(out).exists()


def test_an_answered_file_is_checked_before_it_is_scored(dump: Path, tmp_path: Path,
                                                         run: Run) -> None:
    answers = _answers(dump, tmp_path, lambda row: row["gold"])
    answered = tmp_path / "answered.jsonl"
    run("answer", str(dump), "--reader", f"file:{answers}", "--out", str(answered))
    rows = _rows(answered)
    err = _refused(run, "score", str(_write(tmp_path / "short.jsonl", rows[:50])))
    assert "line 50" in err and "missing" in err
    rows[2]["answer"] = 7
    err = _refused(run, "score", str(_write(tmp_path / "typed.jsonl", rows)))
    assert "line 3" in err and "answer must be a string" in err


def test_a_model_reader_needs_its_key_and_an_unknown_reader_is_named(
    dump: Path, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = str(tmp_path / "answered.jsonl")
    assert "ANTHROPIC_API_KEY" in _refused(run, "answer", str(dump), "--reader", "anthropic",
                                           "--out", out)
    assert "OPENAI_API_KEY" in _refused(run, "answer", str(dump), "--reader", "openai:gpt-x",
                                        "--out", out)
    assert "expected file:ANSWERS" in _refused(run, "answer", str(dump), "--reader", "oracle",
                                               "--out", out)


@pytest.mark.parametrize(("answer", "gold", "trap", "correct", "trapped"), [
    ("07700900416", "07700 900416", "07700 900461", True, False),
    ("Flat 2, 41 Quayside Mews, Hull", "41 Quayside Mews", "9 Tanner's Row", True, False),
    ("9 tanners row", "41 Quayside Mews", "9 Tanner's Row", False, True),
    ("SMS now; it used to be email", "SMS", "email", True, True),  # the known false positive
    ("by text message", "SMS", "email", False, False),  # the known false negative
    ("Unknown.", "", "", True, False),
    ("The context does not say.", "", "", True, False),
    ("1 May 1990", "", "", False, False),
])
def test_the_judge_is_containment_after_normalizing(
    answer: str, gold: str, trap: str, correct: bool, trapped: bool
) -> None:
    assert harness.judge(answer, gold, trap) == harness.Verdict(correct, trapped)


def test_a_bad_scale_is_an_argument_error(run: Run) -> None:
    with pytest.raises(SystemExit) as exc:
        run("dump", "--out", "x.jsonl", "--scale", "0")
    assert exc.value.code == 2


# -- plot ---------------------------------------------------------------------------------

def test_plot_draws_context_size_against_corpus_length(dump: Path, tmp_path: Path,
                                                       run: Run) -> None:
    pytest.importorskip("matplotlib", reason="plot needs the 'plot' extra (matplotlib)")
    longer = tmp_path / "dump-2.jsonl"
    assert run("dump", "--out", str(longer), "--scale", "2")[0] == 0
    png = tmp_path / "chart.png"
    status, _, _ = run("plot", str(dump), str(longer), "--out", str(png))
    assert status == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_plot_without_matplotlib_names_the_extra(dump: Path, tmp_path: Path, run: Run) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("matplotlib is installed here; the CI runs under the other Pythons, "
                    "with the dev extra only, check the message")
    err = _refused(run, "plot", str(dump), "--out", str(tmp_path / "chart.png"))
    assert "pip install '.[plot]'" in err
