"""What a user says of themselves is about the user in scope: "I live in Porto" from
maya's turn is maya's, so ``history("maya", ...)``, ``remember("maya", ...)`` and the
graph meet it. ``user`` stands for the speaker only where no user is known."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memvara import Memvara, NullLLM, SQLiteStore

from .conftest import JAN, JUN, SEP, Clock, FakeLLM


def test_a_user_s_own_turn_is_about_that_user(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), user="maya") as mem:
        (claim,) = mem.add("I live in Porto", ts=JAN).added
        assert (claim.subject, claim.text) == ("maya", "maya lives in Porto")
        assert [c.object for c in mem.history("maya", "lives_in")] == ["Porto"]
        receipt = mem.remember("maya", "lives_in", "Lisbon", valid_from=JUN)
        assert [c.object for c in receipt.ended] == ["Porto"]  # one slot, one live city
        assert [c.object for c in mem.get_all(predicate="lives_in")] == ["Lisbon"]
        assert [p.render() for p in mem.paths_between("maya", "Lisbon")] == [
            "maya -lives_in-> Lisbon"]


def test_user_in_a_user_s_scope_names_that_user(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), user="maya") as mem:
        mem.remember("user", "lives_in", "Porto", valid_from=JAN)
        (claim,) = mem.add("I live in Lisbon", ts=JUN).added
        assert [c.object for c in mem.history("user", "lives_in")] == ["Porto", "Lisbon"]
        assert [c.state for c in mem.history("maya", "lives_in")] == ["ended", "live"]
        assert claim.subject == "maya"


def test_a_message_name_is_the_speaker(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        receipt = mem.add([{"role": "user", "name": "Ravi", "content": "I live in Pune"},
                           {"role": "user", "content": "I live in Goa"}])
        assert sorted(c.text for c in receipt.added) == ["Ravi lives in Pune", "user lives in Goa"]


def test_the_model_s_claims_about_user_are_about_the_speaker(clock: Clock) -> None:
    llm = FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso"), ("Miso", "likes", "fish")]})
    with Memvara(clock=clock, llm=llm, user="maya") as mem:
        added = mem.add("my cat is called Miso").added
        assert sorted((c.subject, c.object) for c in added) == [("Miso", "fish"), ("maya", "Miso")]


def test_a_store_written_before_keeps_answering(tmp_path: Path, clock: Clock) -> None:
    """A store as the code before schema 6 left it: the rule tier's claims in maya's scope
    filed under the subject ``user``. Opening it moves them to maya's key."""
    path = str(tmp_path / "old.db")
    with Memvara(path, clock=clock, llm=NullLLM(), user="maya") as mem:
        mem.remember("user", "lives_in", "Porto", valid_from=JAN, recorded_at=JAN)
        mem.remember("user", "likes", "tea", valid_from=JAN, recorded_at=JAN, user="bob")
    with sqlite3.connect(path) as conn:  # back to what schema 5 wrote
        conn.execute("UPDATE claims SET subject_key = 'user'")
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN speaker")  # v13 added it
        conn.execute("ALTER TABLE extraction_backlog DROP COLUMN meta")
        conn.execute("PRAGMA user_version = 5")
    conn.close()
    with Memvara(path, clock=clock, llm=NullLLM(), user="maya") as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        assert {k for (k,) in store._query("SELECT subject_key FROM claims")} == {"maya", "bob"}
        assert [c.object for c in mem.history("maya", "lives_in")] == ["Porto"]
        receipt = mem.remember("maya", "lives_in", "Lisbon", valid_from=SEP)
        assert [c.object for c in receipt.ended] == ["Porto"]
        assert [c.object for c in mem.get_all(subject="user", user="bob")] == ["tea"]


def test_recall_history_lists_an_earlier_value_once_for_both_names(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), user="maya") as mem:
        mem.remember("user", "likes", "tea", valid_from=JAN, valid_to=JUN)
        mem.remember("user", "likes", "green tea")
        mem.remember("maya", "likes", "jasmine tea")
        block = mem.recall("tea", include_history=True)
        assert block.count("likes tea (until") == 1, block
