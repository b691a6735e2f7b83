"""bench/_metrics.py: recall, all-evidence recall, MRR and their chance baselines on
hand-computed cases; chance checked against every permutation; the turn ledger."""

from __future__ import annotations

import io
import itertools
import statistics
import sys
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memvara import DegradedExtractionWarning, Episode, Explanation, Memvara, Retrieved

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _metrics
from _metrics import BenchError, Turn, TurnLedger, score

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
NEAR_A = "We spent the whole weekend hiking in the mountains near the lake with the kids and the dog."
NEAR_B = NEAR_A[:-1] + "!"  # cosine >= 0.97 under HashingEmbedder: skipped as a near duplicate


def test_two_evidence_turns_scored_by_hand() -> None:
    s = score("c", {"a": "A", "b": "B"}, ["X", "A", None, "B"], candidates=10, ks=(1, 2, 4))
    assert s.recall == {1: 0.0, 2: 0.5, 4: 1.0}
    assert s.all_found == {1: 0.0, 2: 0.0, 4: 1.0}
    assert s.rr == 0.5
    assert s.chance_recall == pytest.approx({1: 0.1, 2: 0.2, 4: 0.4})
    # all of 2 units in the top 4 of 10: (4 * 3) / (10 * 9)
    assert s.chance_all[4] == pytest.approx(12 / 90)
    assert s.chance_all[1] == 0.0  # two units cannot fit in the top 1
    # P(first = r) = C(10 - r, 1) / C(10, 2) = (10 - r) / 45, counted to depth 4
    assert s.chance_rr == pytest.approx((9 / 1 + 8 / 2 + 7 / 3 + 6 / 4) / 45)
    assert (s.candidates, s.evidence, s.unreachable) == (10, 2, 0)


def test_a_miss_scores_zero_and_only_the_first_hit_counts_for_rr() -> None:
    s = score("c", {"a": "A"}, ["X", "Y"], candidates=5, ks=(1, 5))
    assert s.recall == {1: 0.0, 5: 0.0} and s.rr == 0.0
    s = score("c", {"a": "A", "b": "B"}, ["B", "A"], candidates=5, ks=(1, 5))
    assert s.rr == 1.0 and s.recall[1] == 0.5


def test_evidence_beyond_the_depth_is_not_found() -> None:
    s = score("c", {"a": "A"}, ["X", "Y", "A"], candidates=5, ks=(1, 2))
    assert s.recall == {1: 0.0, 2: 0.0} and s.rr == 0.0


def test_an_unstored_evidence_turn_is_never_found_even_by_chance() -> None:
    s = score("c", {"a": None, "b": "B"}, ["B"], candidates=4, ks=(1, 4))
    assert s.recall == {1: 0.5, 4: 0.5}
    assert s.all_found == {1: 0.0, 4: 0.0}
    assert s.unreachable == 1
    assert s.chance_recall == pytest.approx({1: 0.5 * 1 / 4, 4: 0.5 * 4 / 4})
    assert s.chance_all == {1: 0.0, 4: 0.0}
    assert s.chance_rr == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


def test_two_turns_held_by_one_episode_are_found_together() -> None:
    s = score("c", {"a": "A", "b": "A"}, ["A"], candidates=3, ks=(1,))
    assert s.recall == {1: 1.0} and s.all_found == {1: 1.0}
    assert s.chance_all[1] == pytest.approx(1 / 3)  # one unit, not two


def test_a_claim_slot_occupies_its_rank() -> None:
    s = score("c", {"a": "A"}, [None, "A"], candidates=3, ks=(1, 2))
    assert s.recall == {1: 0.0, 2: 1.0} and s.rr == 0.5


def test_k_beyond_the_haystack_is_certain_by_chance() -> None:
    s = score("c", {"a": "A"}, ["A"], candidates=3, ks=(20,))
    assert s.chance_recall[20] == 1.0 and s.chance_all[20] == 1.0


@pytest.mark.parametrize(("n", "m"), [(5, 1), (5, 2), (6, 3), (4, 4)])
def test_chance_is_the_mean_over_every_ranking(n: int, m: int) -> None:
    units = [f"u{i}" for i in range(n)]
    evidence: dict[str, str | None] = {f"t{i}": units[i] for i in range(m)}
    ks = (1, 2, 3)
    perms = [score("c", evidence, list(p), n, ks) for p in itertools.permutations(units)]
    chance = score("c", evidence, [], n, ks)
    for k in ks:
        assert statistics.fmean(p.recall[k] for p in perms) == pytest.approx(chance.chance_recall[k])
        assert statistics.fmean(p.all_found[k] for p in perms) == pytest.approx(chance.chance_all[k])
    assert statistics.fmean(p.rr for p in perms) == pytest.approx(chance.chance_rr)


def test_chance_of_an_empty_store_is_zero() -> None:
    assert _metrics.chance_recall(0, 1, 0, 5) == 0.0
    assert _metrics.chance_all(0, 1, 0, 5) == 0.0
    assert _metrics.chance_rr(0, 1, 5) == 0.0


def test_score_refuses_what_it_cannot_score() -> None:
    with pytest.raises(BenchError, match="no evidence"):
        score("c", {}, ["A"], 3)
    with pytest.raises(BenchError, match="cut-offs"):
        score("c", {"a": "A"}, ["A"], 3, ks=(0, 1))


def test_aggregate_means_per_category_then_all() -> None:
    one = score("x", {"a": "A"}, ["A"], 4, ks=(1,))
    two = score("y", {"a": "A"}, ["B"], 4, ks=(1,))
    three = score("y", {"a": "A"}, ["A"], 4, ks=(1,))
    rows = _metrics.aggregate([one, two, three], (1,), order=("y",))
    assert [r.category for r in rows] == ["y", "x", "all"]
    assert [r.n for r in rows] == [2, 1, 3]
    assert rows[0].recall[1] == pytest.approx(50.0)
    assert rows[2].recall[1] == pytest.approx(200 / 3)
    assert rows[2].chance_recall[1] == pytest.approx(25.0)
    assert rows[2].as_json()["recall"] == {"1": pytest.approx(200 / 3)}
    assert _metrics.aggregate([], (1,)) == []


def test_tables_show_measured_and_chance() -> None:
    rows = _metrics.aggregate([score("x", {"a": "A"}, ["A"], 4, ks=(1, 12))], (1, 12))
    text = _metrics.format_tables(rows, (1, 12), 12)
    measured, chance = text.split("\n\n")
    assert measured.splitlines()[0] == "| category | n | R@1 | R@12 | MRR | all@12 | hit@12 | chance@12 |"
    assert "| x | 1 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |" in measured
    assert chance.splitlines()[0].startswith("| chance: category | n | R@1 |")
    assert "| x | 1 | 25.0 | 100.0 |" in chance


def test_parse_ks_and_percentile() -> None:
    assert _metrics.parse_ks("20,1, 5,5") == (1, 5, 20)
    for bad in ("", "0,5", "a"):
        with pytest.raises(ValueError, match="--k"):
            _metrics.parse_ks(bad)
    assert _metrics.percentile([], 0.5) == 0.0
    assert _metrics.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert _metrics.percentile([1.0, 2.0], 0.5) == 1.5
    assert _metrics.unique(["b", "a", "b"]) == ["b", "a"]


def test_progress_draws_on_its_stream() -> None:
    out = io.StringIO()
    bar = _metrics.Progress(2, "x", stream=out)
    bar.advance()
    bar.advance()
    bar.close()
    assert "2/2" in out.getvalue() and out.getvalue().endswith("\n")


def test_ticking_clock_moves_and_is_utc() -> None:
    clock = _metrics.TickingClock(datetime(2023, 1, 1))
    first, second = clock(), clock()
    assert first.tzinfo is timezone.utc and second > first


# -- the ledger ------------------------------------------------------------------------------
@pytest.fixture
def ledger() -> TurnLedger:
    warnings.simplefilter("ignore", DegradedExtractionWarning)
    return TurnLedger(Memvara(clock=_metrics.TickingClock(WHEN)))


def test_the_ledger_maps_duplicates_to_the_kept_turn_and_loses_near_duplicates(ledger: TurnLedger) -> None:
    ledger.add([
        Turn("D1:1", "Melanie: the pottery class was great, I made a bowl", "assistant"),
        Turn("D1:2", NEAR_A, "user"),
        Turn("D1:3", NEAR_B, "user"),
    ], WHEN)
    ledger.add([Turn("D2:1", "Melanie: the pottery class was great, I made a bowl", "assistant")], WHEN)
    assert ledger.candidates == 2
    assert ledger.duplicates == 1
    assert ledger.lost == {"D1:3": "near_duplicate"}
    assert ledger.evidence(["D2:1", "D1:3"]) == {
        "D2:1": "Melanie: the pottery class was great, I made a bowl", "D1:3": None}
    ledger.check_counts()
    found = ledger.mem.search("what did Melanie make in the pottery class", k=2, include_episodes=True)
    ranked = ledger.ranked(found)
    assert ledger.turns_of(ranked[0]) == ["D1:1", "D2:1"]
    assert ledger.turns_of(None) == []
    with pytest.raises(BenchError, match="never ingested"):
        ledger.evidence(["D9:9"])
    with pytest.raises(BenchError, match="ingested twice"):
        ledger.add([Turn("D1:1", "again", "user")], WHEN)
    ledger.mem.close()


def _result(kind: str, episode: Episode | None = None) -> Retrieved:
    explain = Explanation(1, 0.5, None, None, 0.5, 1.0, 1.0, 1.0, 0.5)
    text = episode.content if episode is not None else "user likes tech"
    return Retrieved(kind, text, 0.5, explain, episode=episode)  # type: ignore[arg-type]


def test_the_ledger_refuses_episodes_it_cannot_map(ledger: TurnLedger) -> None:
    ledger.add([Turn("D1:1", "hello there", "user")], WHEN)
    assert ledger.ranked(ledger.mem.search("hello", k=1, include_episodes=True)) == ["hello there"]
    with pytest.raises(BenchError, match="holding no dataset turn"):
        ledger.ranked([_result("episode", Episode("never stored", "user", WHEN, id="e1"))])
    with pytest.raises(BenchError, match="one to one"):
        ledger.ranked([_result("episode", Episode("hello there", "user", WHEN, id="e-other"))])
    with pytest.raises(BenchError, match="claims must be"):
        ledger.ranked([], claims="keep")
    ledger.mem.close()


def test_claims_are_dropped_held_or_credited_to_their_sources(ledger: TurnLedger) -> None:
    ledger.add([
        Turn("D1:1", "I love tech.", "user"),
        Turn("D1:2", "Melanie: I finally bought the new laptop, a tech upgrade", "assistant"),
    ], WHEN)
    found = ledger.mem.search("what tech did Melanie buy", k=3, include_episodes=True)
    kinds = [r.kind for r in found]
    assert "claim" in kinds  # the rules tier read "I love tech."
    dropped = ledger.ranked(found, "drop")
    held = ledger.ranked(found, "hold")
    sourced = ledger.ranked(found, "sources")
    assert None not in dropped and len(dropped) == kinds.count("episode")
    assert len(held) == len(found) and held.count(None) == kinds.count("claim")
    assert "I love tech." in sourced and None not in sourced
    assert len(sourced) == len(set(sourced))
    ledger.mem.close()


def test_hit_counts_a_question_once_any_evidence_turn_is_found() -> None:
    s = _metrics.score("single-hop", {"D1:1": "e1", "D1:2": "e2"}, ["x", "e2", "y"], candidates=10,
              ks=(1, 2))
    assert s.recall == {1: 0.0, 2: 0.5} and s.hit == {1: 0.0, 2: 1.0}
    assert s.chance_hit[1] == pytest.approx(0.2)  # 2 evidence units among 10, k=1
    assert _metrics.chance_hit(10, 2, 10) == 1.0 and _metrics.chance_hit(0, 2, 5) == 0.0
