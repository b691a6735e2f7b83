"""Every public result has a JSON form: ``to_dict()`` gives JSON's types, instants as
ISO-8601 with a UTC offset, computed fields included; claims and turns round-trip."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from memvara import (
    Claim, Episode, InvalidArgumentError, InvalidTimeError, Memvara, Scope, parse_instant,
)
from memvara.llm import NullLLM

from .conftest import AUG, JAN, JUN, Clock

UTC = timezone.utc


def _json(value: object) -> object:
    """``value`` through JSON text and back: fails on anything JSON cannot hold."""
    return json.loads(json.dumps(value, allow_nan=False))


@pytest.fixture
def lived(clock: Clock) -> Memvara:
    mem = Memvara(clock=clock, llm=NullLLM(), user="maya")
    mem.remember("maya", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN,
                 meta={"source": "x"})
    mem.remember("maya", "lives_in", "Lisbon", valid_from=JUN, recorded_at=AUG)
    mem.remember("maya", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    mem.remember("Acme", "located_in", "Porto", valid_from=JAN, recorded_at=JAN)
    return mem


def test_a_claim_s_form_has_every_field_state_and_offsets(lived: Memvara) -> None:
    with lived:
        berlin = lived.history("maya", "lives_in")[0]
        form = berlin.to_dict()
    assert _json(form) == form
    assert form["state"] == "ended" and form["object"] == "Berlin" and form["id"] == berlin.id
    assert form["valid_from"] == "2026-01-06T00:00:00+00:00"
    assert form["valid_to"] == JUN.isoformat() and form["invalidated_at"] is None
    assert form["scope"] == {"tenant": None, "user": "maya", "agent": None, "session": None}
    assert form["meta"] == {"source": "x"} and isinstance(form["sources"], list)
    assert set(form) == {f for f in Claim.__dataclass_fields__} | {"state"}


def test_claims_and_episodes_round_trip(lived: Memvara) -> None:
    with lived:
        lived.add("I like green tea", ts=JUN)
        claims = lived.get_all(states=["live", "ended", "retired"])
        turn = Episode("hello", role="assistant", ts=JUN, recorded_at=AUG,
                       scope=Scope("t", "u", "a", "s"), id="e1")
    for claim in claims:
        assert Claim.from_dict(_json(claim.to_dict())) == claim
    assert Episode.from_dict(_json(turn.to_dict())) == turn
    assert Scope.from_dict({"user": "bob"}) == Scope(user="bob")


def test_a_naive_instant_is_written_as_utc() -> None:
    claim = Claim("a", "b", "c", valid_from=datetime(2026, 1, 1))
    assert claim.to_dict()["valid_from"] == "2026-01-01T00:00:00+00:00"


def test_every_result_type_is_json_serializable(lived: Memvara) -> None:
    with lived:
        receipt = lived.remember("maya", "lives_in", "Faro")
        found = lived.search("where does maya live", k=3, include_episodes=True)
        prov = lived.why(receipt.added[0].id)
        paths = lived.paths_between("maya", "Porto")
        skipped = lived.add(["ok", "ok"]).skipped
    assert prov is not None and paths and found and skipped
    forms = [receipt.to_dict(), *(r.to_dict() for r in found), prov.to_dict(),
             *(p.to_dict() for p in paths), *(s.to_dict() for s in skipped),
             found[0].explain.to_dict(), Scope("t").to_dict()]
    for form in forms:
        assert _json(form) == form
    assert receipt.to_dict()["closed"] == [c.id for c in receipt.closed] != []
    top = found[0].to_dict()
    assert top["id"] == found[0].id and top["explain"]["summary"] == found[0].explain.summary()
    assert prov.to_dict()["closed_by"] is None and prov.to_dict()["superseded"]
    assert paths[0].to_dict()["text"] == paths[0].render()
    assert paths[0].to_dict()["hops"] == paths[0].hops == 2


@pytest.mark.parametrize("text, expected", [
    ("2026-06-24T09:30:00+02:00", datetime(2026, 6, 24, 7, 30, tzinfo=UTC)),
    ("2026-06-24T09:30:00Z", datetime(2026, 6, 24, 9, 30, tzinfo=UTC)),
    ("2026-06-24 09:30+0000", datetime(2026, 6, 24, 9, 30, tzinfo=UTC)),
    ("2026-06-24T09:30:00.5-01:00", datetime(2026, 6, 24, 10, 30, 0, 500000, tzinfo=UTC)),
])
def test_parse_instant_reads_an_offset_on_every_python(text: str, expected: datetime) -> None:
    parsed = parse_instant(text)
    assert parsed == expected and parsed.utcoffset() is not None


@pytest.mark.parametrize("text", [
    "2026-06-24T09:30:00", "2026-06-24", "yesterday", "2026-13-01T00:00:00Z", "", 5, None,
])
def test_parse_instant_refuses_what_names_no_zone(text: object) -> None:
    with pytest.raises(InvalidTimeError, match="^when: "):
        parse_instant(text, "when")


@pytest.mark.parametrize("form, named", [
    ({"subject": "a", "predicate": "b"}, "claim.object"),
    ({"subject": "a", "predicate": "b", "object": "c", "valid_from": "2026-01-01"}, "claim.valid_from"),
    ({"subject": "a", "predicate": "b", "object": "c", "colour": "red"}, "claim.colour"),
    ({"subject": "a", "predicate": "b", "object": "c", "sources": "e1"}, "claim.sources"),
    ({"subject": "a", "predicate": "b", "object": "c", "meta": []}, "claim.meta"),
    ({"subject": "a", "predicate": "b", "object": "c", "polarity": "1"}, "claim.polarity"),
    ({"subject": "a", "predicate": "b", "object": "c", "confidence": True}, "claim.confidence"),
    ({"subject": "a", "predicate": "b", "object": "c", "scope": {"user": ""}}, "user"),
    ({"subject": "a", "predicate": "b", "object": "c", "scope": ["u"]}, "scope"),
    ([], "claim"),
])
def test_a_bad_claim_form_names_the_field(form: object, named: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        Claim.from_dict(form)
    assert caught.value.argument == named


def test_a_bad_episode_form_names_the_field() -> None:
    with pytest.raises(InvalidArgumentError, match="^episode.ts: "):
        Episode.from_dict({"content": "x", "ts": "2026-01-01T00:00:00"})
    with pytest.raises(InvalidArgumentError, match="^episode.content: "):
        Episode.from_dict({"role": "user"})
    assert Episode.from_dict({"content": "x", "ts": None}).ts is None
