"""``forget_subject()`` erases a subject across its lineage: the claims about it or naming
it, what was derived from them, the turns only they cited, its names in other turns,
its archived claims and aliases; outside targets are asked; a tombstone with no text is
left. Checked by reading every file of the store as bytes."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from memvara import (
    Claim, ExtractionPendingError, Memvara, Scope, ScopedMemvara, SQLiteStore, export_jsonl,
    import_jsonl,
)
from memvara._domain.erasure import ErasureRequest, Scrubber, scrub
from memvara._errors import ClaimNotFoundError, InvalidArgumentError, StoreError
from memvara.llm import NullLLM
from memvara.store import TimeQuery
from memvara.store._scrubbed_claims import mended_scope
from memvara.store._waiting_marks import mark_changes, spoken_by
from memvara.store.base import SimilarityStore

from .conftest import Clock, FakeLLM
from .store_without import store_without

NAME = "Zorblatt"
ALIAS = "Zorby"


def store_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()).lower()


def seeded(mem: Memvara, clock: Clock) -> dict[str, str]:
    """Claims about Zorblatt at a user and the agent beneath it, one naming it as the
    object, one derived from a claim about it, shared and private turns, an archived
    claim, an alias; and the rows that must survive."""
    u = mem.scope(user="u1")
    private = u.add(f"{NAME} said hello to the team")
    shared = u.add(f"ann and {NAME} went hiking")
    turns = {e.content: e.id for e in u.episodes()}
    u.alias_entity(ALIAS, NAME)
    about = u.remember(NAME, "lives_in", "Porto", sources=[turns[f"{NAME} said hello to the team"]]).added[0]
    clock.advance(days=1)
    u.remember(NAME, "lives_in", "Faro")  # ends Porto
    u.remember(ALIAS, "likes", "chess", agent="helper")  # beneath, by the alias
    u.remember("ann", "knows", NAME, sources=[turns[f"ann and {NAME} went hiking"]])
    u.remember("ann", "likes", "tea", sources=[turns[f"ann and {NAME} went hiking"]])
    u.remember("report", "mentions", "hiking", sources=[about.id])  # derived from a claim about it
    old = u.remember(NAME, "speaks", "Esperanto", valid_from=clock.now - timedelta(days=2),
                     valid_to=clock.now - timedelta(hours=1)).added[0]
    clock.advance(days=60)
    assert u.prune(timedelta(days=30))["ended"] >= 2  # Porto and Esperanto go to the archive
    mem.remember("bob", "lives_in", "Oslo", user="u2")  # a sibling scope: untouched
    assert private.added == () and shared.added == ()
    return {"old": old.id, "about": about.id}


def mentioning(u: Memvara | ScopedMemvara, clock: Clock) -> dict[str, str]:
    """Claims about others that mention Zorblatt: in their text, metadata and sources,
    by the alias in metadata alone, in an ended one ``prune()`` archives; and two that
    do not (one with escapes in its JSON, which may hide a name)."""
    met = u.remember("ann", "met", "bob", text=f"ann met bob and {NAME} at the fair",
                     meta={"note": f"with {NAME.upper()}", "tags": [NAME.lower(), 3], NAME: "key"},
                     sources=[f"https://crm/{NAME}/2", "doc 7", f"https://crm/{NAME.lower()}/2"])
    u.remember("ann", "plays", "go", meta={"taught_by": ALIAS})
    u.remember("ann", "likes", "jazz", meta={"note": "nothing\nto scrub"}, sources=["C:\\notes"])
    u.remember("bob", "likes", "jazz", meta={"n": 2}, sources=["doc 8"])
    u.remember("ann", "visited", "Lyon", text=f"ann visited Lyon with {NAME}",
               valid_from=clock.now - timedelta(days=3), valid_to=clock.now - timedelta(days=2))
    assert u.prune(timedelta(days=1))["ended"] == 1
    return {"met": met.added[0].id}


def test_everything_about_the_subject_is_erased_from_every_file(tmp_path: Path, clock: Clock) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    mem = Memvara(str(folder / "m.db"), clock=clock, llm=NullLLM())
    seeded(mem, clock)
    mentioning(mem.scope(user="u1"), clock)
    assert NAME.lower().encode() in store_bytes(folder)
    manifest = mem.forget_subject(ALIAS, reason=f"request of {NAME}", requested_by="dpo", user="u1")
    assert (manifest.claims, manifest.archived, manifest.episodes_erased,
            manifest.episodes_scrubbed, manifest.aliases) == (4, 2, 1, 1, 1)
    assert manifest.claims_scrubbed == 3 and manifest.to_dict()["claims_scrubbed"] == 3
    assert manifest.complete and manifest.targets == {}
    u = mem.scope(user="u1")
    assert sorted((c.subject, c.object) for c in u.get_all(states=("live", "ended", "retired"))) == [
        ("ann", "bob"), ("ann", "go"), ("ann", "jazz"), ("ann", "tea"), ("bob", "jazz")]
    assert [e.content for e in u.episodes()] == ["ann and [erased] went hiking"]
    assert [c.text for c in u.archived()] == ["ann visited Lyon with [erased]"]
    assert sorted(c.object for c in u.get_all(agent="helper")) == ["bob", "go", "jazz", "jazz", "tea"]
    assert [c.object for c in mem.get_all(user="u2")] == ["Oslo"]  # another scope's rows stay
    assert any(r.episode is not None and "[erased]" in r.episode.content
               for r in u.search("hiking", include_episodes=True))  # still searched, scrubbed
    tomb = mem.tombstones()[0]
    assert tomb["reason"] == "request of [erased]" and tomb["subject_digest"] == manifest.subject_digest
    assert mem.verify().ok
    store = mem.store
    assert isinstance(store, SQLiteStore)
    last = store.log_records(0, 1000)[-1]
    assert last[3] == "forget_subject" and '"tombstone"' in last[4]
    blob = store_bytes(folder)  # open: the write-ahead log was truncated after the erase
    mem.close()
    for text in (blob, store_bytes(folder)):
        assert NAME.lower().encode() not in text and ALIAS.lower().encode() not in text
        assert b"esperanto" not in text and b"chess" not in text
    assert b"oslo" in store_bytes(folder)  # the sibling's claim is still there


def test_only_the_callers_scope_and_those_beneath_it_are_reached(mem: Memvara) -> None:
    mem.remember(NAME, "lives_in", "Porto", user="u1", session="s1")
    mem.remember(NAME, "lives_in", "Oslo", user="u2")
    mem.remember(NAME, "lives_in", "Rome")  # the root: broader than u1
    assert mem.forget_subject(NAME, reason="r", requested_by="q", user="u1").claims == 1
    assert [c.object for c in mem.get_all()] == ["Rome"]
    assert [c.object for c in mem.get_all(user="u2")] == ["Rome", "Oslo"]


def test_a_claim_derived_from_an_archived_one_alone_is_erased(mem: Memvara, clock: Clock) -> None:
    """Only the archive names the subject: what was derived from it goes all the same."""
    old = mem.remember(NAME, "speaks", "Esperanto", valid_from=clock.now - timedelta(days=2),
                       valid_to=clock.now - timedelta(hours=1)).added[0]
    mem.remember("report", "mentions", "grammar", sources=[old.id])
    clock.advance(days=60)
    assert mem.prune(timedelta(days=30))["ended"] == 1
    manifest = mem.forget_subject(NAME, reason="r", requested_by="q")
    assert (manifest.claims, manifest.archived) == (1, 1)
    assert mem.get_all(states=("live", "ended", "retired")) == []


def test_a_surviving_claim_loses_its_reference_to_an_erased_one(mem: Memvara, clock: Clock) -> None:
    gone = mem.remember(NAME, "lives_in", "Porto").added[0]
    survivor = mem.supersede(gone.id, Claim("ann", "lives_in", "Porto")).added[0]
    assert mem.forget_subject(NAME, reason="r", requested_by="q").claims == 1
    why = mem.why(survivor.id)
    assert why is not None and why.superseded == () and why.claim.object == "Porto"


class Target:
    def __init__(self, name: str, answer: object) -> None:
        self.name = name
        self.answer = answer
        self.requests: list[ErasureRequest] = []

    def erase(self, request: ErasureRequest) -> bool:
        self.requests.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def test_the_manifest_is_complete_only_when_every_target_confirms(mem: Memvara) -> None:
    claim = mem.remember(NAME, "lives_in", "Porto").added[0]
    vector_db, cache, flaky = Target("vectors", True), Target("cache", "yes"), Target("queue", OSError("down"))
    for target in (vector_db, cache, flaky):
        mem.add_erasure_target(target)
    manifest = mem.forget_subject(NAME, reason="r", requested_by="q")
    assert manifest.targets == {"vectors": True, "cache": False, "queue": False}
    assert not manifest.complete and manifest.to_dict()["complete"] is False
    request = vector_db.requests[0]
    assert request.claim_ids == (claim.id,) and request.names == (NAME,)
    assert request.tombstone == manifest.tombstone
    assert mem.tombstones()[0]["targets"] == manifest.targets
    cache.answer, flaky.answer = True, True
    again = mem.forget_subject(NAME, reason="r", requested_by="q")  # nothing left here: asks again
    assert again.complete and again.claims == 0 and again.tombstone == manifest.tombstone
    assert mem.tombstones()[0]["targets"] == {"vectors": True, "cache": True, "queue": True}
    assert len(mem.tombstones()) == 1


def test_an_unknown_subject_is_an_error_and_writes_nothing(mem: Memvara) -> None:
    mem.remember("ann", "likes", "tea")
    anchor = mem.anchor()
    with pytest.raises(ClaimNotFoundError) as caught:
        mem.forget_subject("Nobody", reason="r", requested_by="q")
    assert str(caught.value) == "subject: nothing in this scope names 'Nobody'"
    assert (caught.value.argument, caught.value.claim_id) == ("subject", "Nobody")
    assert mem.anchor() == anchor and mem.tombstones() == []


def test_a_name_only_turns_hold_is_erased_from_them(mem: Memvara) -> None:
    """No claim names Zorblatt (no rule read the turn, and the model failed or never ran),
    but a turn does: it is scrubbed, and the tombstone says so."""
    mem.add(["My neighbour Zorblatt plays the tuba at night", "I like tea"])
    manifest = mem.forget_subject("Zorblatt", reason="request", requested_by="dpo")
    assert manifest.claims == 0 and mem.tombstones()[0]["erased"] == {
        "claims": 0, "archived": 0, "episodes_erased": 0, "episodes_scrubbed": 1,
        "claims_scrubbed": 0, "aliases": 0}
    assert all("Zorblatt" not in e.content for e in mem.episodes())
    assert [e.content for e in mem.episodes() if "tuba" in e.content] == [
        "My neighbour [erased] plays the tuba at night"]


def test_bad_arguments_are_refused(mem: Memvara) -> None:
    mem.remember(NAME, "likes", "tea")
    for kwargs in ({"subject": " "}, {"reason": ""}, {"requested_by": 5}, {"actor": ""}):
        args = {"subject": NAME, "reason": "r", "requested_by": "q", **kwargs}
        with pytest.raises(InvalidArgumentError, match=next(iter(kwargs))):
            mem.forget_subject(args.pop("subject"), **args)  # type: ignore[arg-type]
    for bad in (object(), Target(" ", True)):
        with pytest.raises(InvalidArgumentError, match="target"):
            mem.add_erasure_target(bad)  # type: ignore[arg-type]
    mem.add_erasure_target(Target("one", True))
    with pytest.raises(InvalidArgumentError, match="registered"):
        mem.add_erasure_target(Target("one", True))
    assert mem.count() == 1


def test_a_store_that_cannot_forget_says_so(clock: Clock) -> None:
    with Memvara(store=store_without("erase_subject")(), clock=clock, llm=NullLLM()) as mem:
        mem.remember(NAME, "likes", "tea")
        for call in (lambda: mem.forget_subject(NAME, reason="r", requested_by="q"), mem.tombstones):
            with pytest.raises(StoreError, match="cannot erase a subject"):
                call()


def test_scrub_replaces_whole_names_longest_first() -> None:
    assert scrub("Maya Silva met maya, not Mayan.", ("Maya", "Maya Silva", " ")) == \
        "[erased] met [erased], not Mayan."
    assert json.loads(json.dumps(scrub("{}", ())))  == "{}"


def test_scrub_finds_a_name_by_its_folded_words_too() -> None:
    assert scrub("ZOË-ANNE-ZOË, Zoetrope", ("zoë anne", "anne zoe")) == "[erased], Zoetrope"
    assert scrub("Straße İstanbul", ("strasse", "istanbul")) == "[erased] [erased]"
    assert scrub("Zoë", ("zoe",)) == "[erased]" and scrub("Zoya", ("zoe",)) == "Zoya"
    assert scrub("Émile!", ("—",)) == "Émile!"  # a name of no words matches no run


def test_an_agent_scope_forgets_its_own_and_leaves_the_users_aliases(clock: Clock) -> None:
    with Memvara(store=SQLiteStore(write_log=False), clock=clock, llm=NullLLM()) as mem:
        mem.alias_entity(ALIAS, NAME, user="u1")
        mem.remember(ALIAS, "likes", "chess", user="u1", agent="helper")
        mem.remember(NAME, "likes", "tea", user="u1")
        manifest = mem.forget_subject(NAME, reason="r", requested_by="q", user="u1", agent="helper")
        assert (manifest.claims, manifest.aliases) == (1, 0)
        assert [c.object for c in mem.get_all(user="u1", agent="helper")] == ["tea"]
        assert len(mem.tombstones()) == 1


def test_a_handle_lists_the_tombstones_of_its_own_subtree_only(mem: Memvara) -> None:
    # A tombstone holds no name, but its reason and requester are one user's business,
    # as reviews() keeps one user's reviews from another.
    for user in ("u1", "u2"):
        mem.remember(NAME, "likes", "chess", user=user)
        mem.forget_subject(NAME, reason=f"asked by {user}", requested_by=user, user=user)
    mem.remember(ALIAS, "likes", "tea")
    mem.forget_subject(ALIAS, reason="asked at the root", requested_by="dpo")
    reasons = [t["reason"] for t in mem.tombstones()]
    assert reasons == ["asked by u1", "asked by u2", "asked at the root"]
    assert [t["reason"] for t in mem.scope(user="u1").tombstones()] == ["asked by u1"]
    assert [t["reason"] for t in mem.tombstones(user="u2")] == ["asked by u2"]
    assert mem.scope(user="u1").tombstones(agent="helper") == []  # nothing asked beneath it
    assert mem.tombstones(user="u3") == []


def test_a_name_is_scrubbed_however_a_turn_accents_cases_or_punctuates_it(mem: Memvara) -> None:
    # An alias is kept as its folded key ("zoe", "o brien"), and a claim's subject as
    # written: a turn may spell either another way, and every spelling goes.
    mem.remember("Zorblatt", "likes", "chess")
    mem.alias_entity("Zoë", "Zorblatt")
    mem.alias_entity("O'Brien", "Zorblatt")
    for turn in ("ZOË came by", "zoë and Zoe met", "O'Brien called, then o-brien again",
                 "Zorblatt-style jokes", "the zoetrope stays"):
        mem.add(turn)
    mem.forget_subject("Zorblatt", reason="r", requested_by="q")
    assert sorted(e.content for e in mem.episodes()) == [
        "[erased] and [erased] met", "[erased] called, then [erased] again", "[erased] came by",
        "[erased]-style jokes", "the zoetrope stays"]


def test_a_ground_naming_the_subject_is_scrubbed_and_one_it_makes_an_echo_goes(
    mem: Memvara, tmp_path: Path,
) -> None:
    # A ground is any string naming a source; a URL or a note may hold the name. Two
    # grounds that differ only by it become one, counted once as an echo is.
    mem.remember(NAME, "likes", "chess")
    mem.remember("ann", "lives_in", "Oslo")
    mem.observe("ann", "lives_in", "Rome", support=[
        f"https://crm/{NAME.lower()}/1", f"call with {NAME}", f"call with {NAME.upper()}", "doc 7"])
    mem.forget_subject(NAME, reason="r", requested_by="q")
    export_jsonl(mem, str(tmp_path / "out.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(line["ground"] for line in lines if line.get("type") == "evidence") == [
        "call with [erased]", "doc 7", "https://crm/[erased]/1"]
    assert [r.grounds for r in mem.reviews()] == [3]
    assert NAME.lower() not in (tmp_path / "out.jsonl").read_text().lower()


def test_erasures_of_one_subject_at_one_instant_get_tombstones_of_their_own(mem: Memvara) -> None:
    # The injected clock here stands still: three erasures of one subject share an instant.
    for user in ("u1", "u2", "u1"):
        mem.remember(NAME, "likes", "chess", user=user)
        mem.forget_subject(NAME, reason="r", requested_by="q", user=user)
    ids = [t["id"] for t in mem.tombstones()]
    assert len(set(ids)) == 3 and ids[1] == f"{ids[0]}-2" and ids[2] == f"{ids[0]}-3"
    assert mem.verify().ok


def test_the_reviews_and_evidence_about_the_subject_are_erased(mem: Memvara) -> None:
    """A review of the subject's slot holds its name and the contested value; evidence
    holds the grounds: neither may outlive the erasure (they were left, and listed)."""
    import io

    from memvara import export_jsonl

    mem.remember(NAME, "lives_in", "Porto")
    mem.observe(NAME, "lives_in", "Quixotown", support=[f"mail from {NAME}", "crm"])
    mem.observe("ann", "knows", NAME, support=["g1", "g2"])  # the subject as the value
    kept = mem.observe("ann", "likes", "tea", support=["g1", "g2"]).review
    assert kept is not None and len(mem.reviews()) == 3
    mem.forget_subject(NAME, reason="r", requested_by="q")
    assert [r.id for r in mem.reviews()] == [kept.id]
    out = io.StringIO()
    export_jsonl(mem, out)
    text = out.getvalue().lower()
    assert "quixotown" not in text and NAME.lower() not in text and '"type":"evidence"' in text
    again = mem.observe(NAME, "lives_in", "Quixotown", support=["crm"])  # its grounds went too
    assert (again.grounds, again.echoes, again.review) == (1, 0, None)


def test_the_reviews_of_an_erased_subject_leave_no_byte_in_the_file(tmp_path: Path, clock: Clock) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    with Memvara(str(folder / "m.db"), clock=clock, llm=NullLLM()) as mem:
        mem.remember(NAME, "lives_in", "Porto")
        mem.observe(NAME, "lives_in", "Quixotown", support=["Zyxwvut-report", "crm"])
        mem.forget_subject(NAME, reason="r", requested_by="q")
        blob = store_bytes(folder)
    assert b"quixotown" not in blob and b"zyxwvut" not in blob and NAME.lower().encode() not in blob


def test_a_turn_naming_the_subject_by_an_alias_alone_is_scrubbed(mem: Memvara) -> None:
    """The alias is a name of the subject even where no claim was written under it."""
    mem.alias_entity(ALIAS, NAME, user="u1")
    u = mem.scope(user="u1")
    u.add(f"{ALIAS} was here yesterday")
    u.remember(NAME, "lives_in", "Porto")
    manifest = u.forget_subject(NAME, reason="r", requested_by="q")
    assert [e.content for e in u.episodes()] == ["[erased] was here yesterday"]
    assert manifest.episodes_scrubbed == 1 and manifest.aliases == 1


def test_a_turn_naming_the_subject_in_another_case_of_a_non_ascii_letter_is_scrubbed(
        mem: Memvara) -> None:
    """SQL's LIKE folds ASCII letters alone: "émile" was not found for "Émile"."""
    mem.remember("Émile", "lives_in", "Nice")
    mem.add("émile came by")
    mem.add("ÉMILE CAME BY AGAIN")
    assert mem.forget_subject("Émile", reason="r", requested_by="q").episodes_scrubbed == 2
    assert sorted(e.content for e in mem.episodes()) == ["[erased] CAME BY AGAIN", "[erased] came by"]


def test_the_scope_owners_first_person_key_is_no_name_to_scrub(mem: Memvara) -> None:
    """Forgetting a user's own name reaches the rows filed under "user", but the word
    "user" in a turn is no name of theirs."""
    u = mem.scope(user="ana")
    u.remember("ana", "lives_in", "Porto")
    u.add("the user asked about ana")
    u.forget_subject("ana", reason="r", requested_by="q")
    assert [e.content for e in u.episodes()] == ["the user asked about [erased]"]


def test_erasing_a_user_from_the_root_leaves_a_tombstone_whose_scope_reads(
    mem: Memvara, clock: Clock
) -> None:
    # "user" is ann's word for herself in her scope, so it is one of the names erased;
    # the tombstone's scope is JSON whose key is that word too, and must keep it
    mem.scope(user="ann").remember("user", "likes", "tea")
    mem.scope(user="ann", agent="helper").remember("ann", "speaks", "Ido")
    assert mem.forget_subject("ann", reason="gdpr", requested_by="dpo").claims == 2
    (tomb,) = mem.tombstones()
    assert tomb["scope"] == {"agent": None, "session": None, "tenant": None, "user": None}
    out = io.StringIO()
    assert export_jsonl(mem, out)["tombstones"] == 1
    with Memvara(clock=clock, llm=NullLLM()) as other:
        assert import_jsonl(other, io.StringIO(out.getvalue()))["tombstones"] == 1
        assert other.tombstones() == [tomb]
    # asked in her own scope, the scope's user is her name: its value goes, its key stays
    mem.scope(user="bob").remember("user", "likes", "tea")
    mem.scope(user="bob").forget_subject("bob", reason="gdpr", requested_by="bob")
    assert mem.tombstones()[-1]["scope"] == {"agent": None, "session": None, "tenant": None,
                                              "user": "[erased]"}


def test_a_tombstone_an_older_erasure_left_with_a_level_s_key_scrubbed_reads(
    tmp_path: Path, clock: Clock
) -> None:
    path = str(tmp_path / "m.db")
    with Memvara(path, clock=clock, llm=NullLLM()) as mem:
        mem.remember("zed", "likes", "tea", user="u1")
        mem.forget_subject("zed", reason="r", requested_by="q", user="u1")
    with sqlite3.connect(path) as conn:  # as the code before 2026-12-07 could write it
        conn.execute("UPDATE tombstones SET scope = ?", (json.dumps(
            {"agent": None, "session": None, "tenant": None, "[erased]": "u1"}),))
    conn.close()
    with Memvara(path, clock=clock, llm=NullLLM()) as mem:
        assert [t["scope"] for t in mem.tombstones(user="u1")] == [
            {"agent": None, "session": None, "tenant": None, "user": "u1"}]
        assert export_jsonl(mem, io.StringIO())["tombstones"] == 1


def test_a_tombstone_scope_is_mended_level_by_level() -> None:
    whole = {"agent": None, "session": None, "tenant": "t", "user": "u"}
    assert mended_scope(whole) == whole
    assert mended_scope({"agent": None, "session": None, "tenant": "t", "[erased]": "u"}) == whole
    assert mended_scope({"agent": None, "session": None, "[erased]": None}) == {
        "agent": None, "session": None, "tenant": None, "user": None}
    assert mended_scope({"session": None, "tenant": None, "[erased]": "[erased]"}) == {
        "agent": "[erased]", "session": None, "tenant": None, "user": "[erased]"}


def test_a_turn_said_again_after_the_erasure_is_not_a_copy_of_the_scrubbed_one(mem: Memvara) -> None:
    """The scrubbed turn's old vector (it encoded the name) leaves the memory's recent
    turns too: the original words said again are a new turn, not a "near_duplicate",
    which would confirm a guess of the erased name."""
    said = f"Yesterday {NAME} showed me the new flat in town"
    mem.add(["hello there, how are you", said], user="u1")
    mem.remember(NAME, "lives_in", "Porto", user="u1")
    assert mem.forget_subject(NAME, reason="r", requested_by="q", user="u1").episodes_scrubbed == 1
    assert mem.add(said, user="u1").skipped == ()
    assert said in [e.content for e in mem.episodes(user="u1")]


def test_the_same_words_at_the_same_instant_after_a_scrub_are_a_turn_of_their_own(
    mem: Memvara,
) -> None:
    # the clock stands still: the new turn's scope, role, text, instant and place in its
    # call are all the scrubbed turn's, yet it is another turn, with an id of its own
    said = f"{NAME} lives in Oslo"
    mem.add(said, user="u1")
    assert mem.forget_subject(NAME, reason="r", requested_by="q", user="u1").episodes_scrubbed == 1
    assert mem.add(said, user="u1").skipped == ()  # stored (it raised a StoreError)
    turns = mem.episodes(user="u1")
    assert sorted(e.content for e in turns) == sorted(["[erased] lives in Oslo", said])
    assert len({e.id for e in turns}) == 2
    assert [s.reason for s in mem.add(said, user="u1").skipped] == ["duplicate"]


def test_a_claim_that_mentions_the_subject_loses_the_name_its_index_entry_and_vector(
        mem: Memvara, clock: Clock) -> None:
    """A claim about someone else may name the subject in its text, its metadata (an
    adapter's transcript message, ``add(meta=)``) or its sources (a CRM link): it stays,
    archived or not, each name replaced, found by its other words and its new sources,
    no longer by the name or the old ones, and the vector that encoded the name is gone."""
    mem.alias_entity(ALIAS, NAME)
    mem.remember(NAME, "lives_in", "Porto")
    said = f"ann met {NAME} at the fair"
    met = mem.remember("ann", "met", "bob", text=said, sources=[f"https://crm/{NAME}/2", "doc 7"],
                       meta={"message": {"content": said, "calls": [{"args": {"q": NAME}}]},
                             "n": 1}).added[0]
    told = mem.add("I live in Lisbon", meta={"told_by": ALIAS.lower()}).added[0]
    ids = mentioning(mem.scope(user="u1"), clock)
    mem._core.writer.embed_missing()
    store = mem.store
    assert isinstance(store, SimilarityStore)
    old = mem._core.embedder.encode([said])[0]
    assert store.claim_similarities([met.id], old)[met.id] > 0.99
    assert met.id in [r.claim.id for r in mem.search(NAME) if r.claim]
    manifest = mem.forget_subject(NAME, reason="r", requested_by="q")
    assert (manifest.claims, manifest.claims_scrubbed) == (1, 5)
    claims = {c.id: c for c in mem.get_all()}
    assert claims[met.id].text == "ann met [erased] at the fair"
    assert claims[met.id].meta == {"message": {"content": "ann met [erased] at the fair",
                                               "calls": [{"args": {"q": "[erased]"}}]}, "n": 1}
    assert claims[met.id].sources == ("https://crm/[erased]/2", "doc 7")
    assert claims[told.id].meta == {"told_by": "[erased]"}
    u1 = mem.get_all(user="u1")
    assert {c.id: c for c in u1}[ids["met"]].sources == ("https://crm/[erased]/2", "doc 7")
    assert sorted(json.dumps(c.meta) for c in u1 if c.object in ("go", "jazz")) == [
        '{"n": 2}', '{"note": "nothing\\nto scrub"}', '{"taught_by": "[erased]"}']
    assert [c.text for c in mem.archived(user="u1")] == ["ann visited Lyon with [erased]"]
    everything = TimeQuery(known_at=10**18, valid_at=None)
    u1_scope = Scope(user="u1")  # sees the root's claims too
    assert [c.id for c in store.claims_citing("https://crm/[erased]/2", u1_scope, everything)] == [
        met.id, ids["met"]]
    assert store.claims_citing(f"https://crm/{NAME}/2", u1_scope, everything) == []
    assert sorted(r.claim.id for r in mem.search("fair", user="u1") if r.claim) == sorted([
        met.id, ids["met"]])
    assert not {met.id, ids["met"]} & {r.claim.id for r in mem.search(NAME, user="u1") if r.claim}
    assert store.claim_similarities([met.id], old).get(met.id, 0.0) < 0.99


def test_a_scrubber_reaches_every_string_of_json_and_decodes_only_what_may_name_one() -> None:
    scrubber = Scrubber(("Zoë", "Zorblatt"))
    assert scrubber.value({"Zoë": ["zoe", {"k": "hi ZOE"}, 3, None]}) == {
        "[erased]": ["[erased]", {"k": "hi [erased]"}, 3, None]}
    for raw in ('{"k": "line\\nzorblatt"}', '["nZORBLATT"]', '{"k": "ZOE"}', '["a\\u00e9"]'):
        assert scrubber.may_change_json(raw), raw  # a name anywhere, or an escape
    assert not scrubber.may_change_json('{"k": "zorb and zed", "n": 3}')
    # a dotless ı matches an i ignoring case, which no folded word shows
    assert Scrubber(("Yılmaz",)).may_change_json('["YILMAZ"]') and scrub("YILMAZ", ("Yılmaz",)) == "[erased]"
    assert Scrubber(("Yilmaz",)).may_change_json('["yılmaz"]')
    assert not Scrubber(("Yilmaz",)).may_change_json('["café"]')


def _spoken(path: str, clock: Clock) -> FakeLLM:
    """Turns of one shared session, each message naming who said it, stored at ``path``
    while the model fails: two by Zorblatt (one the rules read, one that waits), one by
    ann and one by a speaker whose name holds Zorblatt's (both wait). The model, mended."""
    llm = FakeLLM({"my cat is called Miso": [("user", "has_pet", "Miso")],
                   "my dog is called Rex": [("user", "has_pet", "Rex")],
                   "we meet on fridays": [("user", "meets_on", "friday")]})
    llm.fail = True
    with Memvara(path, clock=clock, llm=llm) as mem, pytest.raises(ExtractionPendingError) as failed:
        mem.add([{"role": "user", "name": NAME, "content": "I live in Quimper"},
                 {"role": "user", "name": NAME, "content": "my cat is called Miso"},
                 {"role": "user", "name": "ann", "content": "my dog is called Rex"},
                 {"role": "user", "name": f"{NAME} fan club", "content": "we meet on fridays"}],
                session="standup", meta={"thread": f"chat with {NAME}"})
    assert len(failed.value.pending) == 3
    llm.fail = False
    return llm


def test_the_waiting_turns_the_subject_said_are_erased_and_other_speakers_scrubbed(
        clock: Clock, db_path: str) -> None:
    llm = _spoken(db_path, clock)
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        assert [c.text for c in mem.get_all(session="standup")] == [f"{NAME} lives in Quimper"]
        manifest = mem.forget_subject(NAME, reason="asked", requested_by="dpo")
        assert (manifest.claims, manifest.episodes_erased) == (1, 2)  # Quimper's turn, Miso's
    with Memvara(db_path, clock=clock, llm=llm) as mem:
        assert sorted(e.content for e in mem.episodes(session="standup")) == [
            "my dog is called Rex", "we meet on fridays"]
        retried = mem.retry_extraction()
        assert sorted(c.text for c in retried.added) == [
            "[erased] fan club meets on friday", "ann has pet Rex"]
        assert [c.meta for c in retried.added] == [{"thread": "chat with [erased]"}] * 2
        assert llm.extract_calls[-1] == ["my dog is called Rex", "we meet on fridays"]


def test_a_waiting_turn_the_subject_said_leaves_no_byte_in_the_file(tmp_path: Path, clock: Clock) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    _spoken(str(folder / "m.db"), clock)
    mem = Memvara(str(folder / "m.db"), clock=clock, llm=NullLLM())
    assert NAME.lower().encode() in store_bytes(folder)
    mem.forget_subject(NAME, reason="asked", requested_by="dpo")
    mem.close()
    assert NAME.lower().encode() not in store_bytes(folder)
    assert b"miso" not in store_bytes(folder) and b"rex" in store_bytes(folder)


def test_a_waiting_turn_the_subject_said_that_another_claim_cites_stays_and_waits_no_more(
        clock: Clock, db_path: str) -> None:
    llm = _spoken(db_path, clock)
    with Memvara(db_path, clock=clock, llm=llm) as mem:
        (miso,) = [e.id for e in mem.episodes(session="standup") if "Miso" in e.content]
        mem.remember("ann", "knows_about", "Miso", sources=[miso], session="standup")
        assert mem.forget_subject(NAME, reason="asked", requested_by="dpo").episodes_erased == 1
        assert "my cat is called Miso" in [e.content for e in mem.episodes(session="standup")]
        assert sorted(c.text for c in mem.retry_extraction().added) == [
            "[erased] fan club meets on friday", "ann has pet Rex"]  # not the cat


def test_a_mark_loses_the_subject_s_names_from_its_speaker_and_its_meta() -> None:
    marks = [("e1", 1, NAME, None), ("e2", 2, None, json.dumps({"thread": f"with {NAME}"})),
             ("e3", 3, "ann", json.dumps({"thread": "standup"})), ("e4", 4, f"{NAME} fan club", None),
             ("e5", 5, None, json.dumps({"thread": f"{NAME}ian ways"}))]  # no whole name: kept
    dropped, changed = mark_changes(marks, ["zorblatt"], Scrubber((NAME,)))
    assert dropped == [1]  # the subject said it
    assert changed == [(None, '{"thread": "with [erased]"}', 2), ("[erased] fan club", None, 4)]
    assert spoken_by(marks, ["zorblatt"]) == ["e1"]
