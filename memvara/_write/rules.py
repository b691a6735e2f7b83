"""Tier 1b: rule extraction for unambiguous first-person declaratives.

"I live in Berlin", "my name is Ann", "I work at Acme", "I'm allergic to peanuts": forms
common enough to be worth matching and narrow enough to match without a model. A rule
writes a claim about ``user`` only when it is sure the turn states that fact; otherwise it
writes nothing, and the turn falls through to the model tier (or, with no model, is counted
as unextracted). The vocabulary is English only, and says so: the ``fast.hit``/``fast.miss``
series, tagged by script, show what that costs on a given corpus.

Being sure takes three things, checked in this order:

1. **The turn means it.** Nothing is read from a turn that jokes ("haha", "lol", "yeah
   right"), nor from a quoted sentence (someone's words, not the user's).
2. **The sentence asserts it.** A question, a condition ("if", "unless"), a wish, a want, a
   plan or a modal ("I wish", "I'd", "I might", "I'm moving to"), a hedge or a belief ("I
   think", "maybe", "kind of"), reported speech ("she said", "according to") and the
   irrealis ("in my dreams", "someday") state nothing; neither does a clause set in the
   future ("next year", "starting Monday") or taken back ("used to", "or did"). A present
   perfect states a present fact only with a duration ("I've lived in Oslo for ten years").
   A sentence is split into clauses at "and I", "but my", ", I", ": I", and a frame must
   open its clause with the user as subject ("I", "we", "my name"): "my sister lives in
   Rome" and "she said I live in Rome" are about someone else or in someone else's words,
   while "my wife and I live in Rome" keeps its clause "I live in Rome". The adverbs a
   frame allows leave a statement plain ("I also live in"); hyperbole ("I basically live
   in") and frequency ("I sometimes work at") are not among them.
3. **The object looks like one.** The frame ("I live in", "I work at") fixes the
   predicate; ``rule_objects`` decides whether what follows is a place, an employer, a
   name, a language, an allergen or a liking, and where it ends ("Google as a PM" is
   Google). Idioms ("I live in fear", "I work at night", "my name is not important",
   "I speak my mind", "I like to think so") fail there.

Negations ("I don't live in Paris anymore") are frames too, and write polarity -1.

The rules run on every user turn, so the common case is cheap: a turn that contains none
of the frames' keywords is done after a few substring tests, and one that does costs a
split into clauses and one anchored match per clause; the vetoes and the object shapes
run only where a frame matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .rule_objects import SHAPES, case_blind

__all__ = ["RuleClaim", "extract"]

SUBJECT = "user"


@dataclass(frozen=True, slots=True)
class RuleClaim:
    """One fact a rule read from a sentence."""

    predicate: str
    object: str
    polarity: int = 1


# The user as subject: "I", "we" ("my wife and I live in" is read from its clause "I live in").
_I = r"(?:i|we)"
_IM = r"(?:i'm|i\s+am|im|we're|we\s+are)"
_HAVE = r"(?:'ve|\s+have)"
# Adverbs that leave a statement a statement ("I also live in", "I just moved to").
_ADV = (r"(?:(?:also|really|still|actually|currently|now|just|only|truly|definitely|"
        r"absolutely|genuinely|honestly|recently|finally)\s+)?")
_NOT = r"(?:don't|do\s+not|dont|no\s+longer)"
_DEGREE = r"(?:(?:[a-z]+ly|very|super|so|a\s+(?:bit|little))\s+)?"

# (frame, predicate, polarity, needs a duration): the frame runs from the clause's start
# to the object. A present perfect states a present fact only with a duration up to now:
# "I've lived in Oslo for ten years", not "I've lived in Oslo".
_RULES: tuple[tuple[str, str, int, bool], ...] = (
    (rf"{_I}\s+{_NOT}\s+(?:really\s+)?(?:live|reside)\s+in\s+", "lives_in", -1, False),
    (rf"{_IM}\s+(?:no\s+longer|not)\s+(?:living|based|located)\s+in\s+", "lives_in", -1, False),
    (rf"{_I}{_HAVE}?\s+{_ADV}moved\s+(?:away\s+from|out\s+of)\s+", "lives_in", -1, False),
    (rf"{_I}\s+{_ADV}(?:live|reside)\s+in\s+", "lives_in", 1, False),
    (rf"{_IM}\s+{_ADV}(?:(?:living|based|located|settled)\s+in|based\s+out\s+of)\s+",
     "lives_in", 1, False),
    (rf"{_I}{_HAVE}?\s+{_ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+", "lives_in", 1, False),
    (rf"{_I}{_HAVE}\s+{_ADV}(?:lived|resided|been\s+living)\s+in\s+", "lives_in", 1, True),
    (r"my\s+(?:first\s+|full\s+|real\s+)?name(?:\s+is|'s)\s+", "name", 1, False),
    (rf"{_IM}\s+called\s+", "name", 1, False),
    (r"(?:(?:you\s+can|please|just|people|everyone|everybody|my\s+friends)\s+)?calls?\s+me\s+",
     "name", 1, False),
    (rf"{_I}\s+{_NOT}\s+(?:really\s+)?work\s+(?:at|for)\s+", "works_at", -1, False),
    (rf"{_IM}\s+(?:no\s+longer|not)\s+(?:working|employed)\s+(?:at|for|by)\s+", "works_at", -1,
     False),
    (rf"{_I}\s+{_ADV}(?:work|am\s+working)\s+(?:at|for)\s+", "works_at", 1, False),
    (rf"{_I}\s+{_ADV}work\s+as\s+(?:an?\s+)?(?:[\w-]+\s+){{1,4}}?(?:at|for)\s+", "works_at", 1,
     False),
    (rf"{_IM}\s+{_ADV}(?:working|employed)\s+(?:at|for|by)\s+", "works_at", 1, False),
    (rf"{_I}{_HAVE}?\s+{_ADV}(?:joined|started\s+(?:at|with)|started\s+working\s+(?:at|for))\s+",
     "works_at", 1, False),
    (rf"{_I}{_HAVE}\s+{_ADV}(?:worked|been\s+working)\s+(?:at|for)\s+", "works_at", 1, True),
    (rf"{_I}\s+{_NOT}\s+(?:really\s+)?(?:like|love|enjoy)\s+", "likes", -1, False),
    (rf"{_IM}\s+not\s+(?:really\s+)?(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into)\s+", "likes", -1,
     False),
    (rf"{_I}\s+{_ADV}(?:like|love|enjoy|adore)\s+", "likes", 1, False),
    (rf"{_IM}\s+{_ADV}(?:a\s+(?:big\s+|huge\s+|massive\s+)?fan\s+of|into)\s+", "likes", 1, False),
    (rf"{_I}\s+{_ADV}(?:hate|dislike|detest|loathe|can't\s+stand|cannot\s+stand)\s+",
     "dislikes", 1, False),
    (rf"{_IM}\s+(?:not|no\s+longer)\s+allergic\s+to\s+", "allergic_to", -1, False),
    (rf"{_I}\s+{_NOT}\s+have\s+(?:an?\s+|any\s+)?allerg(?:y|ies)\s+to\s+", "allergic_to", -1,
     False),
    (rf"{_IM}\s+{_ADV}{_DEGREE}allergic\s+to\s+", "allergic_to", 1, False),
    (rf"{_I}\s+{_ADV}have\s+(?:an?\s+|some\s+)?(?:[a-z]+\s+)?allerg(?:y|ies)\s+to\s+",
     "allergic_to", 1, False),
    (rf"{_I}\s+(?:don't|do\s+not|dont|can't|cannot)\s+(?:really\s+)?speak\s+", "speaks", -1,
     False),
    (rf"{_I}\s+{_ADV}(?:can\s+)?speak\s+", "speaks", 1, False),
    (rf"{_IM}\s+{_ADV}(?:fluent|conversational|proficient)\s+in\s+", "speaks", 1, False),
    (r"my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+", "speaks", 1, False),
)
# One anchored alternation, tried at each clause's start: group i + 1 is rule i.
_FRAMES = re.compile("|".join(f"({p})" for p, _, _, _ in _RULES))
_DURATION = re.compile(r"\b(?:for|since)\b")

_PUNCT = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"',
                        "\u2014": " - ", "\u2013": " - "})
_CURLY = "\u2019\u2018\u201c\u201d\u2014\u2013"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# A quoted stretch of three or more words is someone's words: "She said 'I live in Rome'".
_QUOTED = re.compile(r"(?:^|(?<=[\s(:,]))([\"'])(?=\S)(.*?\S)\1(?=[\s.,;:!?)]|$)")
# Where a sentence ends (group 1: its punctuation; group 2: a line break) or a clause with
# the user as subject begins: "..., and I", "... but my", ", I", ": I", " - I".
_SUBJECT_AHEAD = r"(?=(?:i|i'm|i've|my|we|we're|call\s+me)\b)"
_BOUNDARY = re.compile(
    r"([.!?;]+)\s+|(\n)\s*"
    rf"|[,:]\s+{_SUBJECT_AHEAD}"
    rf"|\s(?:and|but|also|plus|so|because|though|although|whereas|-+)\s+{_SUBJECT_AHEAD}"
)
# Every frame has one of these; a turn with none (most of them) is done in a few
# substring tests.
_KEYWORDS = ("liv", "resid", "based", "located", "settled", "moved", "relocated", "name",
             "call", "work", "employed", "joined", "started", "like", "love", "enjoy", "adore",
             "fan", "into", "hate", "dislike", "detest", "loathe", "stand", "allerg", "speak",
             "fluent", "conversational", "proficient", "language", "tongue")
# Every frame opens with one of these letters ("I", "we", "my", "call", "people",
# "everyone", "you can", "please", "just").
_OPENERS = frozenset("iwmcpeyj")
_ABBREVIATIONS = frozenset("st mt ft dr mr mrs ms jr sr prof vs etc e.g i.e".split())
_LEAD = re.compile(
    r"\s*(?:(?:so|well|also|and|but|plus|then|oh|ah|um|uh|hmm|btw|by the way|fyi|actually|"
    r"anyway|anyways|hey|hi|hello|hey there|hi there|hello there|ok|okay|alright|yes|yeah|"
    r"yep|yup|no|nope|sure|right|thanks|thank you|honestly|frankly|for the record|"
    r"for context|just so you know|fun fact|update|quick update|sorry|great|cool|nice|good question|"
    r"as for me|me too|same here|as it happens|in fact|ps|p\.s\.|note|quick note)\b[,!:.]?\s+)*"
)
_MODALS = (r"would|will|might|may|could|should|must|shall|wish|wished|hope|hoped|want|wanted|"
           r"wanna|plan|planned|dream|dreamed|dreamt|imagine|wonder|doubt|guess|suppose|"
           r"think|thought|believe|pretend|bet|mean|meant")
# A sentence that opens with a question word, a condition, a wish, a plan or a modal
# asserts none of its clauses: "if I lived in London and I worked at ...".
_FRAMED = re.compile(
    r"(?:if|unless|when|whenever|once|suppose|supposing|imagine|assuming|maybe|perhaps|"
    r"hopefully|ideally|what\s+if|in\s+case|even\s+if|let's\s+say|say|do|does|did|should|"
    r"shall|can|could|would|will|is|are|am|was|were|where|what|who|why|how|which|whether)\b"
    rf"|(?:i|we)(?:'d|'ll|\s+(?:{_MODALS})\b)"
    r"|(?:i'm|i\s+am|im|we're|we\s+are)\s+(?:going|gonna|planning|hoping|thinking|"
    r"considering|moving|relocating|about|starting|joining|leaving|looking|trying|due)\b"
    r"|(?:you\s+can\s+|please\s+|just\s+)?call\s+me\b.*\bbut\b"
)
_DAYS = (r"january|february|march|april|may|june|july|august|september|october|november|"
         r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday")
# A joke (or sarcasm) makes a whole turn no statement of fact.
_JOKE = re.compile(
    r"\b(?:ha(?:ha)+h?|he(?:he)+|lol|lmao|lmfao|rofl|jk|j/k|kidding|joking|yeah\s+right)\b"
    r"|[\U0001F602\U0001F923\U0001F61C\U0001F61D\U0001F609]|;\)|:p\b|\s/s\b"
)
# A question, a condition, a hedge, a belief, reported speech or the irrealis anywhere in
# a sentence makes it none.
_HEDGED = re.compile(
    r"\?|\b(?:if|unless|said|says|say|saying|told|tells|tell|claims?|claimed|asked|asks|"
    r"thinks?|thought|believes?|believed|mentioned|insists?|insisted|wrote|writes|"
    r"according\s+to|apparently|supposedly|allegedly|reportedly|probably|maybe|perhaps|"
    r"possibly|not\s+sure|i\s+(?:guess|suppose|reckon|assume|imagine)|kind\s+of|sort\s+of|"
    r"kinda|sorta|more\s+or\s+less|technically|as\s+if|pretend\w*|someday|some\s+day|"
    r"one\s+day|hypothetically|in\s+theory|in\s+my\s+(?:dreams?|head|mind|imagination)|"
    r"in\s+(?:another|a\s+past|a\s+previous|a\s+parallel|a\s+perfect|an\s+ideal|"
    r"a\s+different)\s+(?:life|world|universe)|role-?play\w*|my\s+character)\b"
)
# A time ahead, or a taking back, makes a clause none: "I work at Google starting next
# month", "I work at Acme, well, used to", "I live in Rome, or did".
_NOT_NOW = re.compile(
    r"\b(?:next\s+(?:week|month|year|summer|spring|autumn|fall|winter|semester|term|"
    rf"{_DAYS})|tomorrow|soon|starting|from\s+next|in\s+(?:a|an|one|two|three|four|five|"
    r"six|a\s+few|\d+)\s+(?:days?|weeks?|months?|years?)|later\s+this\s+(?:week|month|year)"
    r"|(?:will|'ll|gonna|going\s+to)\s+be|used\s+to|until\s+recently|not\s+any\s?more|"
    r"formerly|previously|or\s+did|or\s+at\s+least|at\s+the\s+time|back\s+then)\b"
)

def extract(text: str) -> list[RuleClaim]:
    """Every fact the rules are sure ``text`` (a user's turn) states, in sentence order."""
    if not text.isascii() and any(c in text for c in _CURLY):
        text = text.translate(_PUNCT)
    low = _lower(text)
    for word in _KEYWORDS:
        if word in low:
            break
    else:
        return []
    clauses = _clauses(low)
    if all(frame is None for *_, frame in clauses):
        return []
    if "'" in text or '"' in text:
        unquoted, quotes = _QUOTED.subn(_unquote, text)
        if quotes:
            text, low = unquoted, _lower(unquoted)
            clauses = _clauses(low)
    if _JOKE.search(low):
        return []
    blind: bool | None = None  # whether capitals carry meaning: worked out when needed
    found: list[RuleClaim] = []
    for (start, end), clause_end, frame in clauses:
        if frame is None or _vetoed(low, start, end) \
                or _NOT_NOW.search(low, frame.start(), clause_end):
            continue
        _, predicate, polarity, needs_duration = _RULES[(frame.lastindex or 1) - 1]
        if needs_duration and not _DURATION.search(low, frame.end(), clause_end):
            continue
        if blind is None:
            blind = case_blind(text)
        tail = text[frame.end():clause_end]
        found.extend(RuleClaim(predicate, obj, polarity) for obj in SHAPES[predicate](tail, blind))
    return found


def _lower(text: str) -> str:
    """``text`` in lowercase, index for index (so a match's span is the original's)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _unquote(match: re.Match[str]) -> str:
    """A quoted sentence goes (it is someone's words); a quoted name keeps its words."""
    words = match.group(2)
    return " ; " if len(words.split()) >= 3 else words


_Span = tuple[int, int]


def _clauses(low: str) -> list[tuple[_Span, int, re.Match[str] | None]]:
    """For each clause: its sentence's span, where it ends, and the frame its opening words
    (after a lead-in such as "oh, by the way,") match, or None."""
    out: list[tuple[_Span, int, re.Match[str] | None]] = []
    sentence = start = 0
    clauses: list[_Span] = []  # the current sentence's clauses before the last
    for boundary in _BOUNDARY.finditer(low):
        punctuation, newline = boundary.group(1, 2)
        if punctuation is None and newline is None:
            clauses.append((start, boundary.start()))
            start = boundary.end()
            continue
        if punctuation == "." and _abbreviation(low, boundary.start()):
            continue  # "St. Louis", "the U.S. Army": not a sentence's end
        end = boundary.end(1) if punctuation is not None else boundary.start()
        clauses.append((start, end))
        out.extend(((sentence, end), stop, _frame(low, at, stop)) for at, stop in clauses)
        clauses, sentence = [], boundary.end()
        start = sentence
    clauses.append((start, len(low)))
    out.extend(((sentence, len(low)), stop, _frame(low, at, stop)) for at, stop in clauses)
    return out


def _abbreviation(low: str, dot: int) -> bool:
    word = low[low.rfind(" ", 0, dot) + 1:dot]
    return word in _ABBREVIATIONS or len(word) == 1 or "." in word


def _after_lead(low: str, start: int, end: int) -> int:
    """Where ``low[start:end]`` begins past a lead-in ("oh, by the way,") and spaces."""
    return _LEAD.match(low, start, end).end()  # type: ignore[union-attr]  # (it matches "")


def _frame(low: str, start: int, end: int) -> re.Match[str] | None:
    """The frame ``low[start:end]`` opens with, after any lead-in, or None."""
    if low[start:start + 1] in _OPENERS:  # no lead-in word is a frame's first word
        frame = _FRAMES.match(low, start, end)
        if frame is not None:
            return frame
    at = _after_lead(low, start, end)
    return _FRAMES.match(low, at, end) if at > start and low[at:at + 1] in _OPENERS else None


def _vetoed(low: str, start: int, end: int) -> bool:
    """Whether the sentence ``low[start:end]`` asserts nothing (``_FRAMED``, ``_HEDGED``)."""
    return _FRAMED.match(low, _after_lead(low, start, end), end) is not None \
        or _HEDGED.search(low, start, end) is not None
