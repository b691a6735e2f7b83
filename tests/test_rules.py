"""Tier 1b, the rules: a first-person turn becomes claims about ``user`` only when the rules
are sure it states a fact; anything else produces nothing (and goes on to the model tier).

Each principle is tested with sentences written for this file (none is copied from the
labelled corpus, ``tests/test_rules_corpus.py``): what a place, an employer, a name, a
language, an allergen and a liking look like; where an object ends; idioms; modality;
other people; reported speech; jokes and hedges; lowercase turns; negations.
"""

from __future__ import annotations

import pytest

from memvara._write import rule_objects
from memvara._write.rules import SUBJECT, RuleClaim, extract


def _read(text: str) -> list[tuple[str, str, int]]:
    return [(c.predicate, c.object, c.polarity) for c in extract(text)]


def test_claims_are_about_the_user() -> None:
    assert SUBJECT == "user"
    assert extract("I live in Toronto") == [RuleClaim("lives_in", "Toronto", 1)]


@pytest.mark.parametrize(("text", "claims"), [
    ("I live in Toronto", [("lives_in", "Toronto", 1)]),
    ("We live in Wellington.", [("lives_in", "Wellington", 1)]),
    ("I'm based in Cape Town", [("lives_in", "Cape Town", 1)]),
    ("I'm based out of Chicago", [("lives_in", "Chicago", 1)]),
    ("I am living in the Hague these days", [("lives_in", "the Hague", 1)]),
    ("I reside in Luxembourg", [("lives_in", "Luxembourg", 1)]),
    ("So I just moved to Oslo!", [("lives_in", "Oslo", 1)]),
    ("I've relocated to Łódź", [("lives_in", "Łódź", 1)]),
    ("I live in São Paulo", [("lives_in", "São Paulo", 1)]),
    ("I live in Buenos Aires", [("lives_in", "Buenos Aires", 1)]),
    ("I live in St. Louis", [("lives_in", "St. Louis", 1)]),
    ("I live in Newcastle upon Tyne", [("lives_in", "Newcastle upon Tyne", 1)]),
    ("I live in central London", [("lives_in", "London", 1)]),
    ("I've lived in Vienna for ten years", [("lives_in", "Vienna", 1)]),
    ("I've been living in Quito since March", [("lives_in", "Quito", 1)]),
    ("My wife and I live in Porto", [("lives_in", "Porto", 1)]),
    ("My name is Ann Smith.", [("name", "Ann Smith", 1)]),
    ("My name's Kofi", [("name", "Kofi", 1)]),
    ("my name is Mary-Kate O'Neill", [("name", "Mary-Kate O'Neill", 1)]),
    ("You can call me Max", [("name", "Max", 1)]),
    ("I'm called Ines", [("name", "Ines", 1)]),
    ("My name is 'Bob'", [("name", "Bob", 1)]),
    ("I work at Acme Corp", [("works_at", "Acme Corp", 1)]),
    ("I work for the Salvation Army", [("works_at", "the Salvation Army", 1)]),
    ("I work at Procter & Gamble", [("works_at", "Procter & Gamble", 1)]),
    ("I work at Bank of America", [("works_at", "Bank of America", 1)]),
    ("I work at eBay", [("works_at", "eBay", 1)]),
    ("I work at 3M", [("works_at", "3M", 1)]),
    ("I work at SAP", [("works_at", "SAP", 1)]),
    ("I'm employed at Siemens", [("works_at", "Siemens", 1)]),
    ("I just joined Globex", [("works_at", "Globex", 1)]),
    ("I started at Initech in May", [("works_at", "Initech", 1)]),
    ("I've been working at Pfizer since 2020", [("works_at", "Pfizer", 1)]),
    ("I work as a nurse at St. Mary's Hospital", [("works_at", "St. Mary's Hospital", 1)]),
    ("I speak Portuguese", [("speaks", "Portuguese", 1)]),
    ("I speak fluent Spanish and some Italian", [("speaks", "Spanish", 1), ("speaks", "Italian", 1)]),
    ("I speak French, German, and a bit of Dutch",
     [("speaks", "French", 1), ("speaks", "German", 1), ("speaks", "Dutch", 1)]),
    ("I speak Brazilian Portuguese", [("speaks", "Brazilian Portuguese", 1)]),
    ("I speak Mandarin Chinese", [("speaks", "Mandarin Chinese", 1)]),
    ("I speak sign language", [("speaks", "sign language", 1)]),
    ("I speak English fluently", [("speaks", "English", 1)]),
    ("I speak Spanish fluently and a bit of French", [("speaks", "Spanish", 1), ("speaks", "French", 1)]),
    ("I speak Spanish at home and French at work", [("speaks", "Spanish", 1)]),
    ("I'm fluent in Korean", [("speaks", "Korean", 1)]),
    ("My native language is Polish", [("speaks", "Polish", 1)]),
    ("I\u2019m allergic to almonds, sesame and eggs",
     [("allergic_to", "almonds", 1), ("allergic_to", "sesame", 1), ("allergic_to", "eggs", 1)]),
    ("I'm deathly allergic to bee stings", [("allergic_to", "bee stings", 1)]),
    ("I have a severe allergy to latex", [("allergic_to", "latex", 1)]),
    ("I have allergies to all kinds of nuts", [("allergic_to", "nuts", 1)]),
    ("I really like the Rolling Stones", [("likes", "Rolling Stones", 1)]),
    ("I love Lord of the Rings and Star Wars",
     [("likes", "Lord of the Rings", 1), ("likes", "Star Wars", 1)]),
    ("I love baking, knitting and long walks because they relax me",
     [("likes", "baking", 1), ("likes", "knitting", 1), ("likes", "long walks", 1)]),
    ("I'm really into photography", [("likes", "photography", 1)]),
    ("I'm a huge fan of Radiohead", [("likes", "Radiohead", 1)]),
    ("I adore sushi", [("likes", "sushi", 1)]),
    ("I detest olives", [("dislikes", "olives", 1)]),
    ("I can't stand horror films", [("dislikes", "horror films", 1)]),
    ("I hate Mondays", [("dislikes", "Mondays", 1)]),
])
def test_first_person_declaratives_are_read(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize(("text", "claims"), [
    ("Hey! I'm Sam and I live in Leeds", [("lives_in", "Leeds", 1)]),
    ("Honestly, I work at Tesco", [("works_at", "Tesco", 1)]),
    ("FYI I'm allergic to shellfish", [("allergic_to", "shellfish", 1)]),
    ("Quick update: I live in Dublin now", [("lives_in", "Dublin", 1)]),
    ("Good morning! My name is Lena", [("name", "Lena", 1)]),
    ("Here's the thing: I live in Oslo", [("lives_in", "Oslo", 1)]),
    ("I live in Bern. I work at Swisscom.", [("lives_in", "Bern", 1), ("works_at", "Swisscom", 1)]),
    ("I live in Bern\nI work at Swisscom", [("lives_in", "Bern", 1), ("works_at", "Swisscom", 1)]),
    ("I live in Zurich, I work at UBS, and I speak German",
     [("lives_in", "Zurich", 1), ("works_at", "UBS", 1), ("speaks", "German", 1)]),
    ("I love jazz but I hate country music", [("likes", "jazz", 1), ("dislikes", "country music", 1)]),
    ("I live in Oslo because I work at Equinor", [("lives_in", "Oslo", 1), ("works_at", "Equinor", 1)]),
    ("I live in the U.S. now", [("lives_in", "the U.S.", 1)]),
])
def test_lead_ins_and_several_clauses(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize(("text", "claims"), [
    # a role
    ("I work at Microsoft as a designer", [("works_at", "Microsoft", 1)]),
    ("I work for Ericsson as a tester in Lund", [("works_at", "Ericsson", 1)]),
    # a place
    ("I work for Spotify in Stockholm", [("works_at", "Spotify", 1)]),
    ("I live in Berlin, Germany", [("lives_in", "Berlin", 1)]),
    ("I live in Paris, not London", [("lives_in", "Paris", 1)]),
    # a time
    ("I live in Lyon since 2018", [("lives_in", "Lyon", 1)]),
    ("I moved to Lyon last summer", [("lives_in", "Lyon", 1)]),
    ("I relocated to Singapore in 2021", [("lives_in", "Singapore", 1)]),
    ("I love hiking on weekends", [("likes", "hiking", 1)]),
    # a companion, a reason, a comment
    ("I live in Salt Lake City with my husband", [("lives_in", "Salt Lake City", 1)]),
    ("I live in Tampa because of the weather", [("lives_in", "Tampa", 1)]),
    ("I'm allergic to shellfish, especially shrimp", [("allergic_to", "shellfish", 1)]),
    ("I'm allergic to peanuts so I avoid them", [("allergic_to", "peanuts", 1)]),
    ("I'm allergic to dogs, which is sad", [("allergic_to", "dogs", 1)]),
    ("My name is Ruth, pleased to meet you", [("name", "Ruth", 1)]),
    ("I speak Spanish at home", [("speaks", "Spanish", 1)]),
    ("I speak German pretty well", [("speaks", "German", 1)]),
])
def test_the_object_ends_at_a_role_a_place_or_a_time(
        text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize(("text", "claims"), [
    ("i live in lyon", [("lives_in", "lyon", 1)]),
    ("I live in lyon", [("lives_in", "lyon", 1)]),  # only "I" capitalised: capitals say nothing
    ("i live in new york city", [("lives_in", "new york city", 1)]),
    ("i live in france", [("lives_in", "france", 1)]),
    ("i live in italy mostly", [("lives_in", "italy", 1)]),
    ("i work at google", [("works_at", "google", 1)]),
    ("i work at acme labs", [("works_at", "acme labs", 1)]),
    ("my name is sven", [("name", "sven", 1)]),
    ("i speak french", [("speaks", "french", 1)]),
    ("i'm allergic to kiwi", [("allergic_to", "kiwi", 1)]),
    ("my wife and i live in porto", [("lives_in", "porto", 1)]),
    ("I LIVE IN PARIS", [("lives_in", "PARIS", 1)]),
])
def test_lowercase_turns_are_read_by_word_class(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize("text", [
    # states are not places
    "I live in denial", "I live in constant fear", "i live in hope", "i live in terror of exams",
    "I live in luxury these days", "i live in poverty", "i live in oblivion", "I live in the past",
    "i live in the now", "I live in splendour", "i live in freedom", "i live in abundance",
    "I Live In Fear", "I LIVE IN FEAR", "I live in a dream world", "I live in my head",
    "I live in a van down by the river", "i live in the city", "i live in town",
    "I'm based in the cloud", "i'm based in facts", "I'm located in the basement",
    "I live in sweatpants", "i practically live in the library",
    "I live in Berlin's shadow",
    # times, manners and pay are not employers
    "I work at weekends", "I work at dawn", "i work at odd hours", "I work at my own pace",
    "I work for peanuts", "I work for free", "i work for long hours", "I work for the weekend",
    "I work at a hospital", "I work for the government", "I work for my dad", "I work at it",
    "I work at improving my French", "i work at being patient", "i work at home depot",
    "I work for Google's rival", "I joined a gym", "I work for exposure", "i work for pennies",
    # languages are known names
    "I speak for myself", "I speak up when needed", "I speak the truth", "I speak highly of you",
    "I speak in riddles", "I speak volumes", "I speak French good", "I speak Klingon",
    "I speak three languages",
    # allergens are things
    "I'm allergic to mornings", "I'm allergic to commitment", "I'm allergic to hard work",
    "I'm allergic to Karen", "I'm allergic to small talk", "i'm allergic to running",
    "I'm allergic to it", "I'm allergic to animals with fur", "I'm allergic to bureaucracy",
    # likings are tastes, not the conversation
    "I love it here", "I love the way you think", "I like the sound of that",
    "I love how you explained that", "I hate when that happens", "I hate myself sometimes",
    "I enjoy our chats", "I love your style", "I love hearing from you", "I'm into you",
    "I can't stand still", "I can't stand on one leg", "I hate being late", "I adore you guys",
    "I like to believe that", "I hate to admit it", "I love the ocean", "I like a challenge",
    "I love going on road trips", "I love people who listen", "I like my coffee black",
    "I love cheese more than you do", "I love Taylor Swift songs", "i love the beatles",
    "I love life", "I'm allergic to stupid questions",
])
def test_idioms_write_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize("text", [
    "My name is irrelevant", "My name is hard to pronounce", "my name is pretty common",
    "My name is spelled with two Ls", "my name is mud", "My name is not on the list",
    "My name is in the credits", "my name is literally bob", "My name is literally Bob",
    "Call me crazy, but I love opera", "call me crazy but i love opera", "Call me later",
    "call me tomorrow", "call me at 555-0100", "my name is a mouthful",
    "my name is unpronounceable", "my name is forgettable",
])
def test_names_that_are_not_names_write_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize("text", [
    # wishes, wants, plans
    "I wish I worked at Google", "I'd love to live in Paris", "I would like to work at NASA",
    "I hope to move to Lisbon", "I'm hoping to work at NASA", "I want to live in Kyoto",
    "I'm thinking of moving to Berlin", "I'm planning to move to Austin",
    "I wish I was taller and I lived in Rome", "I'd like a cup of tea",
    # the future
    "I'm going to live in Tokyo", "I'm starting at Google next week", "I'm moving to Boston",
    "I will work at Deloitte from September", "I'll be living in Madrid", "Maybe I'll move to Rome",
    "I work at Stripe starting next month", "Someday I'll live in Paris",
    "I live in Lima from next year",
    # might, could, should, used to
    "I might move to Denver", "I could live in Paris", "I should work at a bank",
    "I used to work at IBM", "I used to be allergic to eggs", "I used to speak German",
    "I lived in Berlin for a year", "I worked at Google in 2015", "I've lived in Vienna",
    "I work at Google, well, used to", "I live in Berlin, or did until May",
    # conditionals
    "If I worked at Apple, I'd be rich", "If I moved to Rome and I lived there, I'd learn",
    "I'd live in Spain if I could", "When I'm in Paris I speak French",
    "Unless I move to Leeds, I work at Asda",
    # questions
    "Should I move to Dublin?", "Do you think I should live in Prague?", "Why do I live in Ohio?",
    "What if I lived in Iceland?", "Is my name Bob?", "I live in Berlin?",
    "My name is Bob, right?",
    # the irrealis and hedges
    "I live in Berlin in my dreams", "In another life I live in Paris",
    "I think I'm allergic to nuts", "I'm allergic to nuts, I think",
    "I'm probably allergic to cats", "I'm not sure I speak German well",
    "I doubt I speak Russian well", "I live in Berlin, kind of", "Technically, I live in Berlin",
    "As if I live in Paris", "I'd say I live in Berlin mostly",
])
def test_modality_writes_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize("text", [
    "My brother works at Apple", "My mom lives in Houston", "Her name is Lucy",
    "My friend speaks Dutch", "My dog is allergic to chicken", "Tom loves jazz",
    "They live in Kyoto", "My husband's name is Raj", "Our daughter speaks French",
    "Me and my brother live in Leeds", "You live in Berlin", "She's allergic to cats",
])
def test_other_people_state_nothing_about_the_user(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "claims"), [
    ("I live in Berlin and my sister lives in Rome", [("lives_in", "Berlin", 1)]),
    ("My sister lives in Rome but I live in Milan", [("lives_in", "Milan", 1)]),
])
def test_only_the_users_clause_is_read(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize("text", [
    "He said I live in Rome", "She told me I work at Google", "My boss thinks I live in Paris",
    "\"I live in Rome,\" she said.", "\u201cI work at Acme,\u201d my friend claimed",
    "He keeps saying \"I work at Google\" as a joke", "She said 'I'm allergic to nuts'",
    "He wrote: 'My name is Dave'", "According to my mom, I speak French",
    "Apparently I'm allergic to penicillin", "They say I speak Italian like a native",
    "My friend keeps telling everyone I live in Rome",
])
def test_reported_speech_writes_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize("text", [
    "I'm allergic to work lol", "I'm allergic to exercise \U0001F602", "I live in Narnia haha",
    "I work at the Ministry of Magic jk", "I speak Parseltongue ;)", "Yeah right, I work at Google",
])
def test_jokes_write_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "claims"), [
    ("I don't live in Boston any more", [("lives_in", "Boston", -1)]),
    ("I no longer live in Leeds", [("lives_in", "Leeds", -1)]),
    ("I'm no longer living in Madrid", [("lives_in", "Madrid", -1)]),
    ("I moved away from Chicago", [("lives_in", "Chicago", -1)]),
    ("I don't work for Oracle anymore", [("works_at", "Oracle", -1)]),
    ("I'm not working at Uber any more", [("works_at", "Uber", -1)]),
    ("I'm not allergic to dairy", [("allergic_to", "dairy", -1)]),
    ("I don't have any allergies to pets", [("allergic_to", "pets", -1)]),
    ("I'm not allergic to nuts, just sensitive", [("allergic_to", "nuts", -1)]),
    ("I can't speak Greek", [("speaks", "Greek", -1)]),
    ("I don't speak Mandarin", [("speaks", "Mandarin", -1)]),
    ("I don't like olives", [("likes", "olives", -1)]),
    ("I'm not a fan of horror movies", [("likes", "horror movies", -1)]),
    ("I don't live in Paris, I live in Lyon", [("lives_in", "Paris", -1), ("lives_in", "Lyon", 1)]),
])
def test_negations_write_polarity_minus_one(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


@pytest.mark.parametrize("text", [
    "I don't live in fear", "I don't work at night", "I don't like it", "I don't speak much",
])
def test_negated_idioms_write_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize("text", [
    "I live in it", "I love you", "I like that", "She lives in Berlin", "I love this song",
    "I like your idea", "I love what you did there", "Do you live in Berlin?",
    "Ich wohne in Berlin", "\u6211\u4f4f\u5728\u5317\u4eac", "The office moved to a new building",
    "my order number is 4411", "", "I live in", "I work at " + "very " * 10 + "big company",
    "I live in Zanzibar Stone Town Old Quarter North Side Block Nine",
    "Thanks, that helps a lot",
])
def test_anything_else_yields_nothing(text: str) -> None:
    assert _read(text) == []


@pytest.mark.parametrize(("text", "blind"), [
    ("i live in porto", True),
    ("I live in porto. I love it", True),  # "I" and sentence starts say nothing
    ("I LIVE IN PORTO", True),
    ("I Live In Porto", True),
    ("I live in Porto", False),
    ("\u00c9milie says hi, and I live in porto", True),
    ("Oh, I'm in Porto", False),
])
def test_capitals_mean_something_only_where_the_writer_uses_them(text: str, blind: bool) -> None:
    assert rule_objects.case_blind(text) is blind


@pytest.mark.parametrize(("text", "claims"), [
    ("I love jazz!", [("likes", "jazz", 1)]),
    ("I speak French and", [("speaks", "French", 1)]),
    ("I love ' jazz", [("likes", "jazz", 1)]),
    ("I live in Rome I love it", [("lives_in", "Rome", 1)]),
    ("I speak (some) French", []),
    ("I'm allergic to (tree) nuts", []),
    ("I love (free) jazz", []),
    ("I live in Paris I guess", []),
])
def test_punctuation_ends_an_object(text: str, claims: list[tuple[str, str, int]]) -> None:
    assert _read(text) == claims


def test_a_text_the_lowercase_of_which_is_longer_keeps_its_spans() -> None:
    # "İ" lowercases to two characters; the match is still read from the original text.
    assert _read("I live in İzmir") == [("lives_in", "İzmir", 1)]
