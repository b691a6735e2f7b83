"""One customer's support history, January to August 2026, and the questions asked of it.

The corpus exists to test answers, not retrieval: six facts about Maren Holt's
broadband account change seven times, some because the world changed (*ended*: the plan
twice, two addresses, a contact preference) and some because the record was wrong from
the start (*retired*: a mistyped mobile number, a misread router serial). After every change the superseded
value comes up again (an old invoice line, a letter to the old address, a legacy system
replaying a typo), so the most recent and the most repeated mention of a slot is often
the wrong one. Every ``gold`` and ``trap`` below was written by hand from the transcript.

``turns(scale)`` lengthens the corpus with ordinary exchanges (speed tests, wifi in the
loft, a games console) between the same conversations, so context size can be measured
against corpus length with the facts held fixed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

__all__ = [
    "CUSTOMER",
    "CONVERSATIONS",
    "FACT_EVENTS",
    "QUESTIONS",
    "SCENARIO_VERSION",
    "Conversation",
    "FactEvent",
    "Question",
    "Turn",
    "filler_conversation",
    "turns",
]

# Bump whenever a turn, a fact event or a question changes: dumps and answers carry it,
# and a file from another version is refused rather than scored against the wrong golds.
SCENARIO_VERSION = "maren-holt-2026.1"

CUSTOMER = "maren"  # the scope's user, and the subject of the structured claims


def _at(month: int, day: int, hour: int = 10, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Turn:
    """One line of the transcript: who said it (``user`` is the customer, ``assistant``
    the support agent, ``tool`` an automated system), when, and in which conversation."""

    role: str
    text: str
    ts: datetime
    conversation: str


@dataclass(frozen=True)
class Conversation:
    """A support session: its turns are said two minutes apart from ``start``."""

    key: str
    start: datetime
    lines: tuple[tuple[str, str], ...]

    def turns(self) -> list[Turn]:
        return [Turn(role, text, self.start + timedelta(minutes=2 * i), self.key)
                for i, (role, text) in enumerate(self.lines)]


@dataclass(frozen=True)
class FactEvent:
    """A fact as a deployment would write it from ``conversation`` (a key): the value,
    when it became true (``valid_from``), and how it closes the slot's old value:
    ``ended`` (it stopped being true) or ``retired`` (it never was)."""

    conversation: str
    predicate: str
    value: str
    valid_from: datetime
    close: str = "ended"


@dataclass(frozen=True)
class Question:
    """A question asked at ``asked_at`` (only turns said by then are visible).

    ``kind`` is ``now`` (the value at ``asked_at``), ``past`` (a value at an earlier
    date), ``stable`` (a fact that never moved) or ``unanswerable`` (the transcript never
    says; ``gold`` is empty). ``trap`` is the wrong answer a store with one clock gives:
    the superseded value for ``now``, today's value for ``past``. ``closure`` says which
    clock closed the trap's claim: ``ended`` (valid time: it stopped being true) or
    ``retired`` (transaction time: it was never true); empty when nothing closed."""

    id: str
    text: str
    gold: str
    trap: str
    closure: str
    kind: str
    asked_at: datetime


U, A, T = "user", "assistant", "tool"

CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation("signup", _at(1, 8), (
        (U, "Hi, I signed up online yesterday and wanted to check it all went through. "
            "The name is Maren Holt."),
        (A, "Welcome to Skerry Broadband, Maren. Your account number is SKB-448170 and "
            "you're on Home Lite 50, starting today."),
        (U, "Great. The router should come to 9 Tanner's Row, York. That's home, and "
            "it's where the bills should go too."),
        (A, "Noted: delivery and billing are both 9 Tanner's Row, York. I have your "
            "mobile as 07700 900461. How would you like us to contact you?"),
        (U, "Email, please. I never pick up calls from numbers I don't know."),
        (A, "Done, your contact preference is email. A Skerry Hub 6 router will reach "
            "you within five working days."),
    )),
    Conversation("router-arrives", _at(1, 19, 18, 30), (
        (U, "The router turned up on Friday. Where do I find the wifi password?"),
        (A, "It's on the card clipped to the back of the Skerry Hub 6, under 'Network key'."),
        (U, "Found it, everything is connected. A speed test says about 48 down."),
        (A, "That's right where it should be for your line. Get back to us if it drops."),
    )),
    Conversation("mobile-corrected", _at(2, 9, 12, 15), (
        (U, "Your verification texts never arrive. Which number have you got for me?"),
        (A, "The account has 07700 900461."),
        (U, "That's wrong, two digits are swapped. My mobile is 07700 900416 and has been "
            "for years; it must have been mistyped when I signed up."),
        (A, "Sorry about that. I've corrected it to 07700 900416; the other number was "
            "never yours, so it's off the account."),
        (U, "Thanks, the code just came through."),
    )),
    Conversation("router-fault", _at(2, 20, 9, 40), (
        (U, "The router reboots about once an hour and all the lights go out."),
        (A, "That sounds like a faulty unit. A replacement Skerry Hub 6 goes out to "
            "9 Tanner's Row tomorrow by courier."),
    )),
    Conversation("replacement-serial", _at(2, 23, 17, 5), (
        (U, "The replacement is here and it's been stable all day. You wanted the "
            "serial: I think it says SKR-5318-B8, the label is a bit smudged."),
        (A, "Thanks, I've logged the replacement router as serial SKR-5318-B8."),
    )),
    Conversation("upgrade", _at(3, 12, 11, 20), (
        (U, "Fibre has finally reached our street. I'd like to upgrade from Home Lite 50."),
        (A, "Good news. Fibre Max 900 is 45 pounds a month. Shall I switch you today?"),
        (U, "Yes, go ahead with Fibre Max 900."),
        (A, "Done: you're on Fibre Max 900 from today, 12 March, and Home Lite 50 has "
            "ended."),
    )),
    Conversation("loft-office", _at(3, 30, 20, 10), (
        (U, "Upstairs in the loft the laptop only gets about a third of the speed I "
            "see downstairs."),
        (A, "Wifi loses a lot through floors. Is the router on the ground floor?"),
        (U, "Yes, in the hallway under the stairs."),
        (A, "A cable run or a mesh point in the loft would fix it. Moving the router "
            "higher up the hallway wall also helps."),
    )),
    Conversation("serial-corrected", _at(4, 3, 16, 45), (
        (U, "The warranty page rejects the serial you have on file. I took the router "
            "down and read the label under a torch: the last two characters are both "
            "eights, so it's SKR-5318-88."),
        (A, "You're right, the B was a misreading of the smudged label. The serial is "
            "SKR-5318-88; it's corrected and the warranty is registered."),
    )),
    Conversation("april-invoice", _at(4, 14, 9, 5), (
        (U, "My April invoice has a line for Home Lite 50 on it. Am I paying for that "
            "as well?"),
        (A, "No. That line is a part-month credit for Home Lite 50 covering 1 to 11 "
            "March, before the upgrade; there's nothing else on Home Lite 50 to pay."),
        (U, "Right, that makes sense."),
    )),
    Conversation("contact-change", _at(4, 22, 19, 0), (
        (U, "Can you stop writing to my inbox? I'd rather get everything by SMS from "
            "now on; I miss half of what lands in my inbox."),
        (A, "Changed: your contact preference is now SMS, to 07700 900416."),
        (U, "Perfect, thank you."),
    )),
    Conversation("move", _at(5, 6, 13, 30), (
        (U, "I've moved to Hull for a new job. Please send anything from now on to "
            "Flat 2, 41 Quayside Mews, Hull."),
        (A, "Updated: your delivery address is now Flat 2, 41 Quayside Mews, Hull. "
            "Billing is still 9 Tanner's Row, York. Do you want that changed as well?"),
        (U, "Not yet, the post office is forwarding my letters for a few months. I'll "
            "change billing later."),
        (A, "No problem, billing stays at 9 Tanner's Row for now. I've also booked the "
            "line transfer so Fibre Max 900 moves with you."),
    )),
    Conversation("engineer-visit", _at(5, 19, 8, 50), (
        (U, "The engineer came this morning to the new flat. Is the line live yet?"),
        (A, "It went live at 10:14. A speed test from your end should now show close "
            "to 900 down on a cable."),
        (U, "Getting 870 on the desktop, brilliant."),
        (A, "Lovely. Wifi will be a bit lower, that's normal."),
    )),
    Conversation("downgrade", _at(6, 10, 18, 15), (
        (U, "Money is tighter than I expected. Is there anything cheaper than Fibre "
            "Max 900?"),
        (A, "Fibre Plus 300 is 29 pounds a month. I can switch you on your next billing "
            "date, 17 June."),
        (U, "Yes please, book Fibre Plus 300 from the 17th."),
        (A, "Booked: Fibre Plus 300 starts on 17 June, and Fibre Max 900 ends that day."),
    )),
    Conversation("cable-misdelivered", _at(6, 24, 14, 0), (
        (U, "I ordered a longer ethernet cable last week and it hasn't arrived."),
        (A, "Sorry, the warehouse used an old order template and sent it to 9 Tanner's "
            "Row, York. A second cable is on its way to Flat 2, 41 Quayside Mews, Hull."),
    )),
    Conversation("maintenance-notice", _at(6, 26, 7, 45), (
        (T, "Notification log: planned maintenance notice for 30 June sent to the "
            "customer by email."),
        (U, "Why did the maintenance notice come by email? I asked for SMS."),
        (A, "A bulk mailing skipped the preference check; that's been reported to the "
            "team that runs it."),
    )),
    Conversation("warranty-letter", _at(7, 2, 11, 0), (
        (U, "I had a letter saying router SKR-5318-B8 has no warranty. Is something "
            "wrong with my router?"),
        (A, "Nothing is wrong with the router. That letter came out of an old record; "
            "your warranty stands."),
    )),
    Conversation("reminder-failed", _at(7, 9, 8, 0), (
        (T, "SMS gateway: engineer reminder to 07700 900461 failed, number not in "
            "service."),
        (A, "Maren, an automated reminder went to an old number from our records; I've "
            "passed the failure on."),
    )),
    Conversation("billing-change", _at(7, 21, 15, 10), (
        (U, "My post redirect runs out soon. Please change the billing address to "
            "PO Box 5520, Hull."),
        (A, "Done: bills now go to PO Box 5520, Hull, and 9 Tanner's Row is off your "
            "account."),
    )),
    Conversation("plan-regret", _at(7, 28, 21, 30), (
        (U, "Honestly, online games were much smoother on Fibre Max 900. Everyone in "
            "the house says Fibre Max 900 was the best we've had."),
        (A, "I can put you back on Fibre Max 900 whenever you like, but it's 45 pounds "
            "again. Shall I?"),
        (U, "Not this month. Leave it as it is."),
    )),
    Conversation("garden-office", _at(8, 5, 12, 0), (
        (U, "I'm working from a shed at the bottom of the garden this summer and the "
            "wifi barely reaches it."),
        (A, "Outdoor walls and distance both hurt. A powerline adapter or an outdoor "
            "mesh point would carry the signal there."),
        (U, "Which is easier to set up?"),
        (A, "Powerline: plug one adapter in near the router and one in the shed, and "
            "press the pair buttons."),
    )),
    Conversation("forwarded-letter", _at(8, 12, 10, 40), (
        (U, "The people who live at my old place forwarded a Skerry letter to me. Did "
            "the August invoice go there?"),
        (A, "It did: the August invoice was printed before your change went through, "
            "so it went to 9 Tanner's Row, York."),
    )),
    Conversation("statement-notice", _at(8, 20, 9, 15), (
        (U, "The August statement notice arrived by email again."),
        (A, "Statements use their own sending defaults. Your contact preference on the "
            "account itself hasn't changed."),
    )),
    Conversation("firmware", _at(8, 27, 17, 50), (
        (U, "The router restarted by itself last night around two."),
        (A, "That was a scheduled firmware update to the Skerry Hub 6; it restarts once "
            "when it installs."),
        (U, "OK, as long as it's not the old fault again."),
        (A, "No, the logs show one clean restart and nothing since."),
    )),
)

# What a deployment writes as structured claims, and from which conversation. The
# corrections are retirements with the same valid_from: the right value always held.
FACT_EVENTS: tuple[FactEvent, ...] = (
    FactEvent("signup", "account_number", "SKB-448170", _at(1, 8)),
    FactEvent("signup", "broadband_plan", "Home Lite 50", _at(1, 8)),
    FactEvent("signup", "delivery_address", "9 Tanner's Row, York", _at(1, 8)),
    FactEvent("signup", "billing_address", "9 Tanner's Row, York", _at(1, 8)),
    FactEvent("signup", "mobile_number", "07700 900461", _at(1, 8)),
    FactEvent("signup", "contact_preference", "email", _at(1, 8)),
    FactEvent("signup", "router_model", "Skerry Hub 6", _at(1, 8)),
    FactEvent("mobile-corrected", "mobile_number", "07700 900416", _at(1, 8), "retired"),
    FactEvent("replacement-serial", "router_serial", "SKR-5318-B8", _at(2, 21)),
    FactEvent("upgrade", "broadband_plan", "Fibre Max 900", _at(3, 12)),
    FactEvent("serial-corrected", "router_serial", "SKR-5318-88", _at(2, 21), "retired"),
    FactEvent("contact-change", "contact_preference", "SMS", _at(4, 22)),
    FactEvent("move", "delivery_address", "Flat 2, 41 Quayside Mews, Hull", _at(5, 6)),
    FactEvent("downgrade", "broadband_plan", "Fibre Plus 300", _at(6, 17)),
    FactEvent("billing-change", "billing_address", "PO Box 5520, Hull", _at(7, 21)),
)

END = _at(9, 1, 9, 0)  # when most questions are asked: after the last turn

QUESTIONS: tuple[Question, ...] = (
    # What holds now, with the superseded value re-surfaced after its replacement.
    Question("q01", "Which broadband plan is the customer on?", "Fibre Plus 300",
             "Fibre Max 900", "ended", "now", END),
    Question("q02", "What mobile number should we use to reach her?", "07700 900416",
             "07700 900461", "retired", "now", END),
    Question("q03", "What is the serial number of the router she has at the moment?",
             "SKR-5318-88", "SKR-5318-B8", "retired", "now", END),
    Question("q04", "Where should a replacement power adapter be sent?",
             "41 Quayside Mews", "9 Tanner's Row", "ended", "now", END),
    Question("q05", "Which address do her invoices go to?", "PO Box 5520",
             "9 Tanner's Row", "ended", "now", END),
    Question("q06", "How does she want us to get in touch with her?", "SMS", "email",
             "ended", "now", END),
    # The same kind of question, asked part-way through the year.
    Question("q07", "Which broadband plan is she paying for right now?", "Fibre Max 900",
             "Home Lite 50", "ended", "now", _at(5, 20)),
    Question("q08", "Which mobile number should the engineer's reminder go to?",
             "07700 900416", "07700 900461", "retired", "now", _at(7, 15)),
    Question("q09", "What address should a new ethernet cable be posted to?",
             "41 Quayside Mews", "9 Tanner's Row", "ended", "now", _at(6, 30)),
    Question("q10", "What is the serial of the router she has now?", "SKR-5318-88",
             "SKR-5318-B8", "retired", "now", _at(7, 5)),
    # The past: a store that keeps one clock answers with today's value.
    Question("q11", "Which plan was the customer on in April?", "Fibre Max 900",
             "Fibre Plus 300", "ended", "past", END),
    Question("q12", "Which plan did the account start on in January?", "Home Lite 50",
             "Fibre Plus 300", "ended", "past", END),
    Question("q13", "Which address was the February replacement router delivered to?",
             "9 Tanner's Row", "41 Quayside Mews", "ended", "past", END),
    Question("q14", "Where were her bills being sent in June?", "9 Tanner's Row",
             "PO Box 5520", "ended", "past", END),
    Question("q15", "In March, how did she prefer to be contacted?", "email", "SMS",
             "ended", "past", END),
    Question("q16", "What was her mobile number back in January, when she signed up?",
             "07700 900416", "07700 900461", "retired", "past", END),
    Question("q17", "What serial did the replacement router delivered in February have?",
             "SKR-5318-88", "SKR-5318-B8", "retired", "past", END),
    # Facts that never moved.
    Question("q18", "What is her account number?", "SKB-448170", "", "", "stable", END),
    Question("q19", "Which router model does she have?", "Skerry Hub 6", "", "",
             "stable", END),
    # Never said anywhere in the transcript.
    Question("q20", "What is the customer's date of birth?", "", "", "", "unanswerable",
             END),
    Question("q21", "Which bank does she pay her bills from?", "", "", "",
             "unanswerable", END),
    Question("q22", "What is her landline number?", "", "", "", "unanswerable", END),
)


# Ordinary exchanges for --scale: built from parts, so a long corpus does not
# repeat one line hundreds of times. None of them names a plan, an address, a number, a
# serial or a contact channel (tests/test_demo_scenario.py checks that).
_DEVICES = ("laptop", "games console", "smart TV", "tablet", "doorbell camera",
            "printer", "desktop", "e-reader", "smart speaker", "work phone")
_ROOMS = ("kitchen", "back bedroom", "loft", "living room", "hallway", "spare room",
          "conservatory", "study")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_TOPICS: tuple[tuple[str, str, str, str], ...] = (
    ("The {device} in the {room} keeps dropping off the wifi since {day}.",
     "Does the {device} reconnect by itself, or only after you restart it?",
     "Only after a restart, and then it's fine until about {hour}.",
     "Try forgetting the network on the {device} and joining again; if it recurs, we can "
     "move it to the 5 GHz band."),
    ("Streaming on the {device} buffered all {day} evening.",
     "Was anything else downloading around {hour}?",
     "Someone may have been updating a game in the {room}.",
     "That would do it. The router can give the {device} priority; I've switched that on."),
    ("Can I set the {device} in the {room} to go offline at {hour}?",
     "Yes, the parental controls page lets you schedule the {device} on its own.",
     "Found it. Does the schedule survive the router restarting on a {day}?",
     "Yes, the schedule is kept through restarts and updates."),
    ("A speed test on the {device} in the {room} gave odd results on {day}.",
     "Speed tests over wifi vary a lot. Was the {device} close to the router?",
     "Two walls away, in the {room}.",
     "Run one with the {device} next to the router; if that's fine, the line is fine."),
    ("Was there an outage on {day} morning? Nothing in the {room} could connect.",
     "There was a short fault at the local exchange until about {hour}.",
     "That matches what the {device} showed. Is it sorted?",
     "Yes, it's been stable since {day}, and nothing is planned this week."),
    ("How do I change the wifi name? The {device} in the {room} shows the factory one.",
     "Log in to the router page and open Wireless settings; the name is the first box.",
     "Done at {hour}. Do I have to reconnect everything?",
     "Yes, each device joins the new name once, starting with the {device}."),
    ("The {device} says the connection has no internet, but the router lights look "
     "normal.",
     "Does anything else in the {room} work?",
     "Everything except the {device}, since {day}.",
     "Then it's the {device}. Restart it and renew its address; that usually clears it."),
    ("Is there a guest network I can turn on for visitors this {day}?",
     "Yes, on the router page under Guest. It keeps visitors away from the {device}.",
     "Can guests in the {room} still cast to the TV?",
     "Not on the guest network; your own devices can, from {hour} or any time."),
)
_HOURS = ("seven", "half past eight", "nine", "eleven", "noon", "three", "six", "ten")


def filler_conversation(n: int, start: datetime) -> Conversation:
    """The ``n``th ordinary exchange, said from ``start``: a topic taken in turn, its
    device, room, day and hour drawn from a generator seeded with ``n``."""
    first, second, third, fourth = _TOPICS[n % len(_TOPICS)]
    pick = random.Random(n)  # an int seed draws the same values on every Python version
    slots = {"device": pick.choice(_DEVICES), "room": pick.choice(_ROOMS),
             "day": pick.choice(_DAYS), "hour": pick.choice(_HOURS)}
    lines = tuple((role, text.format(**slots))
                  for role, text in zip((U, A, U, A), (first, second, third, fourth)))
    return Conversation(f"ordinary-{n}", start, lines)


def turns(scale: int = 1) -> list[Turn]:
    """The transcript, oldest first; at ``scale`` N about N times as many turns, the
    extra ones ordinary exchanges spread evenly between the story's conversations.

    Raises:
        ValueError: ``scale`` is not a whole number from 1 to 100.
    """
    if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= 100:
        raise ValueError(f"scale: must be a whole number from 1 to 100, got {scale!r}")
    story = [c.turns() for c in CONVERSATIONS]
    base = sum(len(t) for t in story)
    extra = (scale - 1) * base // 4  # ordinary exchanges are four turns each
    out: list[Turn] = []
    made = 0
    for i, said in enumerate(story):
        out.extend(said)
        # The gap up to the next conversation (or a week after the last one) gets its
        # share of the exchanges, spaced evenly and ending before the next one starts.
        gap_end = (CONVERSATIONS[i + 1].start if i + 1 < len(CONVERSATIONS)
                   else said[-1].ts + timedelta(days=3))
        share = extra * (i + 1) // len(story) - made
        gap_start = said[-1].ts + timedelta(minutes=10)
        step = int((gap_end - gap_start).total_seconds()) // (share + 1)
        for j in range(share):
            at = gap_start + timedelta(seconds=step * (j + 1))
            out.extend(filler_conversation(made + j, at).turns())
        made += share
    return out
