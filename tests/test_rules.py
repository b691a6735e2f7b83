"""Tier 1b, the rules: unambiguous first-person declaratives become claims about ``user``.

Anything the rules do not recognise produces nothing (and goes on to the model tier).
"""

from __future__ import annotations

import pytest

from memvara._write.rules import extract


def _read(text: str) -> list[tuple[str, str, int]]:
    return [(c.predicate, c.object, c.polarity) for c in extract(text)]


@pytest.mark.parametrize(("text", "claims"), [
    ("I live in Berlin", [("lives_in", "Berlin", 1)]),
    ("I moved to New York City last year", [("lives_in", "New York City", 1)]),
    ("So I just moved to Oslo!", [("lives_in", "Oslo", 1)]),
    ("I'm based in Lisbon, Portugal", [("lives_in", "Lisbon", 1)]),
    ("I am living in the Hague these days", [("lives_in", "the Hague", 1)]),
    ("I don't live in Paris anymore", [("lives_in", "Paris", -1)]),
    ("I no longer live in Rome", [("lives_in", "Rome", -1)]),
    ("My name is Ann Smith.", [("name", "Ann Smith", 1)]),
    ("Call me Ishmael.", [("name", "Ishmael", 1)]),
    ("I work at Acme Corp", [("works_at", "Acme Corp", 1)]),
    ("I work for the government", [("works_at", "government", 1)]),
    ("I don't work at Initech any more", [("works_at", "Initech", -1)]),
    ("I just joined Globex", [("works_at", "Globex", 1)]),
    ("I really like the Beatles", [("likes", "Beatles", 1)]),
    ("I love hiking, cooking and long walks because they relax me",
     [("likes", "hiking", 1), ("likes", "cooking", 1), ("likes", "long walks", 1)]),
    ("I don't like olives", [("likes", "olives", -1)]),
    ("I hate cilantro", [("dislikes", "cilantro", 1)]),
    ("I\u2019m allergic to peanuts, shellfish and eggs",
     [("allergic_to", "peanuts", 1), ("allergic_to", "shellfish", 1), ("allergic_to", "eggs", 1)]),
    ("I'm not allergic to cats", [("allergic_to", "cats", -1)]),
    ("I have a severe allergy to penicillin", [("allergic_to", "penicillin", 1)]),
    ("I speak French and German", [("speaks", "French", 1), ("speaks", "German", 1)]),
    ("I live in Berlin. I work at Siemens.", [("lives_in", "Berlin", 1), ("works_at", "Siemens", 1)]),
    ("I work at Acme and I love jazz.", [("works_at", "Acme", 1), ("likes", "jazz", 1)]),
    ("Thanks! Btw, I moved to Tromso", [("lives_in", "Tromso", 1)]),
])
def test_first_person_declaratives_are_read(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize("text", [
    "I live in it", "I love you", "I like that", "She lives in Berlin",
    "I love this song", "I like your idea", "I love what you did there",
    "Do you live in Berlin?", "Ich wohne in Berlin", "\u6211\u4f4f\u5728\u5317\u4eac",
    "The office moved to a new building", "my order number is 4411", "",
    "I work at " + "very " * 10 + "big company",
])
def test_anything_else_yields_nothing(text: str) -> None:
    assert _read(text) == []
