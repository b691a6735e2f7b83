"""The answer type a query asks for, and turns that carry it (``memvara._read.answer_types``)."""

from __future__ import annotations

import pytest

from memvara._read.answer_types import asks_time, says_time


@pytest.mark.parametrize("query", [
    "When did Caroline go to the LGBTQ support group?",
    "  when is the party",
    "Since when has John played chess?",
    "How long has Melanie been practicing art?",
    "How long ago was Caroline's 18th birthday?",
    "What year did Maria move?",
    "Which month was the race?",
])
def test_a_question_about_time_is_read(query: str) -> None:
    assert asks_time(query)


@pytest.mark.parametrize("query", [
    "What did Caroline say when she left?",  # "when" that does not start the question
    "Where did Oliver hide his bone?",
    "Whenever you can, tell me about pottery",
    "What time zone is Berlin in",
    "",
])
def test_other_questions_do_not_ask_for_a_time(query: str) -> None:
    assert not asks_time(query)


@pytest.mark.parametrize("text", [
    "Caroline: I went to the support group yesterday",
    "we met last Friday", "see you next week", "that was two weeks ago",
    "we married in 2019", "it opened in May", "the race on the 16th",
    "I've painted for seven years", "this morning I ran", "on Saturday we hiked",
    "recently I started pottery", "back in the 1990s",
])
def test_a_text_that_says_when(text: str) -> None:
    assert says_time(text)


@pytest.mark.parametrize("text", [
    "I may go to the support group", "they march for rights",  # verbs, not months
    "the pottery class was fun", "I have 3 dogs", "room 2404b", "",
    # the words of a relative time or a count, but not next to each other
    "the last thing I said about the morning", "two cats for days",
])
def test_a_text_that_does_not_say_when(text: str) -> None:
    assert not says_time(text)
