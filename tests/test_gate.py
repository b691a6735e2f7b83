"""Tier 1, the salience gate: filler is dropped with a reason; anything else goes on."""

from __future__ import annotations

import pytest

from memvara._write.gate import drop_reason


@pytest.mark.parametrize(("text", "reason"), [
    ("", "empty"), ("   \n\t", "empty"), ("...", "empty"), ("?!", "empty"),
    ("ok thanks", "ack_only"), ("Ok, thanks!", "ack_only"), ("sounds good", "ack_only"),
    ("Great, thank you so much.", "ack_only"), ("got it", "ack_only"), ("lol", "ack_only"),
    ("yes", "ack_only"), ("Perfect!!", "ack_only"), ("thanks a lot", "ack_only"),
    ("\U0001f44d", "emoji_only"), ("\U0001f602\U0001f602 \u2764\ufe0f", "emoji_only"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467", "emoji_only"),
    ("Hi!", "greeting"), ("hello there", "greeting"), ("good morning", "greeting"),
    ("bye, thanks", "greeting"), ("see you later", "greeting"),
])
def test_filler_is_dropped_with_its_reason(text: str, reason: str) -> None:
    assert drop_reason(text) == reason


@pytest.mark.parametrize("text", [
    "I live in Berlin", "thanks, I moved to Oslo", "ok so my name is Ann",
    "no, I work at Acme", "hello, I'm allergic to peanuts", "Sure, my order is #4411",
    "good morning! my flight is at 9", "\U0001f44d I speak French", "42",
    "Ich wohne in Berlin", "\u6211\u4f4f\u5728\u5317\u4eac", "yes " * 30 + "and my dog is Rex",
])
def test_a_turn_with_content_passes(text: str) -> None:
    assert drop_reason(text) is None


@pytest.mark.parametrize("text", ["I could help", "I have all day", "you need a day off",
                                  "let me know your address"])
def test_words_of_a_filler_phrase_are_not_filler_on_their_own(text: str) -> None:
    assert drop_reason(text) is None
