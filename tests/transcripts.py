"""Two transcripts written for these tests (not taken from any dataset).

``personal_chat()``: 105 turns between a user and an assistant. 21 user turns state a
durable fact; 10 distinct facts, most revised two or three times; the other 84 turns are
chit-chat, questions and the assistant's replies. ``ORACLE`` is a perfect extractor for
it (what a faultless model would return for each fact turn), and ``CURRENT`` the value
each fact ends on.

``support_desk()``: 40 turns of a customer-support exchange. It is full of information,
none of it phrased as the first-person declaratives the rules read, so with no model
nothing becomes a claim: the spec's "what the fast path does not catch" finding.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from memvara import Episode

_START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

# (turn text, the claims a perfect extractor reads from it)
_FACTS: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("My name is Ann Keller.", [("user", "name", "Ann Keller")]),
    ("I live in Berlin", [("user", "lives_in", "Berlin")]),
    ("I work at Acme Corp", [("user", "works_at", "Acme Corp")]),
    ("I'm a backend engineer, mostly Go", [("user", "job_title", "backend engineer")]),
    ("My number is 555-0100", [("user", "phone", "555-0100")]),
    ("I support Benfica, have since I was a kid", [("user", "supports", "Benfica")]),
    ("I'm allergic to peanuts", [("user", "allergic_to", "peanuts")]),
    ("I moved to Lisbon in the spring", [("user", "lives_in", "Lisbon")]),
    ("Actually, call me Annie", [("user", "name", "Annie")]),
    ("I just joined Globex", [("user", "works_at", "Globex")]),
    ("They made me a senior engineer", [("user", "job_title", "senior engineer")]),
    ("New number: 555-0199", [("user", "phone", "555-0199")]),
    ("Switched to Sporting, don't ask", [("user", "supports", "Sporting")]),
    ("We adopted a beagle called Rex", [("user", "has_pet", "Rex")]),
    ("I speak Portuguese", [("user", "speaks", "Portuguese")]),
    ("Mara and I got married in June", [("user", "married_to", "Mara")]),
    ("We relocated to Porto last month", [("user", "lives_in", "Porto")]),
    ("Starting Monday I'm with Initech", [("user", "works_at", "Initech")]),
    ("Got promoted to team lead today!", [("user", "job_title", "team lead")]),
    ("Sorry, typo, my number is 555-0142", [("user", "phone", "555-0142")]),
    ("Honestly I'm more of an FC Porto fan now", [("user", "supports", "FC Porto")]),
]

ORACLE: dict[str, list[tuple[str, str, str]]] = dict(_FACTS)

CURRENT: dict[str, str] = {
    "name": "Annie", "lives_in": "Porto", "works_at": "Initech", "job_title": "team lead",
    "phone": "555-0142", "supports": "FC Porto", "has_pet": "Rex",
    "allergic_to": "peanuts", "speaks": "Portuguese", "married_to": "Mara",
}

# Four exchanges of chit-chat between consecutive facts (84 turns in all).
_CHAT = [
    ("user", "how's it going?"), ("assistant", "All good here. What's on your mind?"),
    ("user", "ok thanks"), ("assistant", "Happy to help."),
    ("user", "can you suggest a podcast for the commute?"),
    ("assistant", "Try a history one, episodes are short."), ("user", "sounds good"),
    ("assistant", "Enjoy!"), ("user", "what should I cook tonight?"),
    ("assistant", "A quick risotto would work."), ("user", "haha"),
    ("assistant", "Anything else?"), ("user", "is it going to rain tomorrow?"),
    ("assistant", "I can't check live weather, sorry."), ("user", "no worries"),
    ("assistant", "Let me know if you need anything."), ("user", "good morning"),
    ("assistant", "Good morning!"), ("user", "remind me what a monad is?"),
    ("assistant", "A way to chain computations that carry context."),
]


def personal_chat() -> list[Episode]:
    """The 105 turns, one minute apart, as ``Episode`` objects with timestamps."""
    turns: list[tuple[str, str]] = []
    chat = iter(_CHAT * 10)
    for text, _ in _FACTS:
        turns.append(("user", text))
        turns.extend(next(chat) for _ in range(4))
    assert len(turns) == 105, len(turns)
    return [Episode(text, role=role, ts=_START + timedelta(minutes=i))
            for i, (role, text) in enumerate(turns)]


_SUPPORT = [
    ("user", "Hi, my order hasn't arrived yet"),
    ("assistant", "Sorry to hear that. Could you share the order number?"),
    ("user", "Sure, it's 4411-B"), ("assistant", "Thanks, one moment while I look it up."),
    ("user", "ok"), ("assistant", "It left our warehouse on Tuesday."),
    ("user", "The tracking page says it's stuck in Leipzig"),
    ("assistant", "That hub has delays this week."),
    ("user", "Can you send a replacement instead?"),
    ("assistant", "I can, once the carrier confirms it is lost."), ("user", "How long does that take?"),
    ("assistant", "Usually two working days."), ("user", "fine"),
    ("assistant", "I've opened a claim with the carrier."),
    ("user", "The kettle was a birthday present, that's why I'm asking"),
    ("assistant", "Understood, I've marked it urgent."), ("user", "thank you so much"),
    ("assistant", "You're welcome."), ("user", "Also the invoice shows the wrong address"),
    ("assistant", "Which address should it show?"),
    ("user", "Flat 2, 19 Harbour Street, the postcode ends in 4QT"),
    ("assistant", "Updated. A new invoice is on its way."), ("user", "great"),
    ("assistant", "Is there anything else?"),
    ("user", "Last time the courier left it with a neighbour"),
    ("assistant", "I'll add a note: deliver to the door only."), ("user", "perfect"),
    ("assistant", "Done."), ("user", "Will I get an email when it ships?"),
    ("assistant", "Yes, with a new tracking link."), ("user", "\U0001f44d"),
    ("assistant", "Have a good day!"), ("user", "Oh wait, can I change the colour to green?"),
    ("assistant", "Green is in stock, I've switched it."), ("user", "awesome, thanks"),
    ("assistant", "My pleasure."), ("user", "The gift receipt should go in the box"),
    ("assistant", "Noted on the order."), ("user", "bye"), ("assistant", "Goodbye!"),
]


def support_desk() -> list[Episode]:
    """The 40 support turns, one minute apart."""
    return [Episode(text, role=role, ts=_START + timedelta(minutes=i))
            for i, (role, text) in enumerate(_SUPPORT)]
