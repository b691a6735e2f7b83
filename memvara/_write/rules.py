"""Tier 1b: rule extraction for unambiguous first-person declaratives.

"I live in Berlin", "my name is Ann", "I work at Acme", "I'm allergic to peanuts": forms
common enough to be worth matching and narrow enough to match without a model. A rule
either produces a claim about ``user`` or stays silent; anything it does not recognise
falls through to the model tier (or, with no model, is counted as unextracted). The
vocabulary is English only, and says so: the ``fast.hit``/``fast.miss`` series, tagged by
script, show what that costs on a given corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RuleClaim", "extract"]

SUBJECT = "user"


@dataclass(frozen=True, slots=True)
class RuleClaim:
    """One fact a rule read from a sentence."""

    predicate: str
    object: str
    polarity: int = 1


_I = r"(?:i|we)"
_IM = r"(?:i'm|i am|im|we're|we are)"
_NOT = r"(?:don't|do not|dont|no longer|never|won't|will not|can't|cannot)"
_ANYMORE = r"(?:\s+(?:any ?more|now|these days))?"
# An object: up to six words, stopping at a clause boundary or a trailing adverbial.
_OBJ = r"(?P<obj>[^\s,.;:!?()\[\]\"]+(?:\s+[^\s,.;:!?()\[\]\"]+){0,5}?)"
_END = (
    r"(?=\s*(?:$|[,.;:!?)]|\s+(?:and|or|but|because|since|so|now|too|as well|anymore|any more"
    r"|these days|for|with|when|while|though|although|last|this|next|recently|yesterday"
    r"|today|ago|at the moment|right now|currently)\b|\s+in\s+(?:the\s+)?(?:spring|summer"
    r"|autumn|fall|winter|(?:19|20)\d\d|january|february|march|april|may|june|july|august"
    r"|september|october|november|december)\b))"
)

_RULES: tuple[tuple[str, str, int], ...] = (
    # (pattern, predicate, polarity)
    (rf"^{_I}\s+{_NOT}\s+(?:live|reside)\s+in\s+{_OBJ}{_ANYMORE}{_END}", "lives_in", -1),
    (rf"^{_IM}\s+no longer\s+(?:living|based)\s+in\s+{_OBJ}{_END}", "lives_in", -1),
    (rf"^{_I}\s+(?:live|reside)\s+in\s+{_OBJ}{_END}", "lives_in", 1),
    (rf"^{_IM}\s+(?:living|based|located)\s+in\s+{_OBJ}{_END}", "lives_in", 1),
    (rf"^{_I}(?:'ve| have)?\s+(?:just\s+)?(?:moved|relocated)\s+to\s+{_OBJ}{_END}", "lives_in", 1),
    (rf"^my name is\s+{_OBJ}{_END}", "name", 1),
    (rf"^{_IM}\s+called\s+{_OBJ}{_END}", "name", 1),
    (rf"^(?:people\s+)?call me\s+{_OBJ}{_END}", "name", 1),
    (rf"^{_I}\s+{_NOT}\s+work\s+(?:at|for)\s+{_OBJ}{_ANYMORE}{_END}", "works_at", -1),
    (rf"^{_I}\s+(?:work|am working)\s+(?:at|for)\s+{_OBJ}{_END}", "works_at", 1),
    (rf"^{_IM}\s+(?:working|employed)\s+(?:at|for|by)\s+{_OBJ}{_END}", "works_at", 1),
    (rf"^{_I}(?:'ve| have)?\s+(?:just\s+)?(?:joined|started at|started working at)\s+{_OBJ}{_END}", "works_at", 1),
    (rf"^{_I}\s+{_NOT}\s+(?:like|love|enjoy)\s+{_OBJ}{_ANYMORE}{_END}", "likes", -1),
    (rf"^{_I}\s+(?:really\s+)?(?:like|love|enjoy|adore)\s+{_OBJ}{_END}", "likes", 1),
    (rf"^{_IM}\s+(?:a\s+(?:big\s+|huge\s+)?fan of|into)\s+{_OBJ}{_END}", "likes", 1),
    (rf"^{_I}\s+(?:really\s+)?(?:hate|dislike|can't stand|cannot stand|detest)\s+{_OBJ}{_END}", "dislikes", 1),
    (rf"^{_IM}\s+not\s+allergic\s+to\s+{_OBJ}{_END}", "allergic_to", -1),
    (rf"^{_IM}\s+(?:severely\s+|very\s+|mildly\s+)?allergic\s+to\s+{_OBJ}{_END}", "allergic_to", 1),
    (rf"^{_I}\s+have\s+an?\s+(?:\w+\s+)?allergy\s+to\s+{_OBJ}{_END}", "allergic_to", 1),
    (rf"^{_I}\s+{_NOT}\s+speak\s+{_OBJ}{_END}", "speaks", -1),
    (rf"^{_I}\s+(?:can\s+)?speak\s+{_OBJ}{_END}", "speaks", 1),
)
_COMPILED = tuple((re.compile(p, re.IGNORECASE), pred, pol) for p, pred, pol in _RULES)
_SENTENCES = re.compile(
    r"(?<=[.!?;])\s+|\n+|,?\s+(?:and|but|also|plus)\s+(?=(?:i|i'm|i've|my|we|we're)\b)",
    re.IGNORECASE,
)
_MANY = frozenset({"likes", "dislikes", "speaks", "allergic_to"})
_LIST_STOP = re.compile(
    r"\s+(?:because|but|since|when|while|though|although|too|as well|anymore|any more"
    r"|these days|now)\b.*$|[.;:!?].*$", re.IGNORECASE
)
_LIST_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|&)\s*", re.IGNORECASE)
_LEAD = re.compile(
    r"^(?:(?:so|well|also|and|but|oh|btw|by the way|fyi|actually|anyway|hey|hi|hello|ok|okay"
    r"|yes|yeah|no|thanks|thank you)[,!]?\s+)+", re.IGNORECASE
)
_ARTICLE = re.compile(r"^(?:the|a|an|my)\s+(?=\S)", re.IGNORECASE)
_OPENERS = frozenset("iIwWmMcCpP")
_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'"})
_VAGUE = frozenset({"it", "that", "this", "there", "here", "them", "him", "her", "you",
                    "someone", "something", "somewhere", "anything", "everything", "nothing"})
# An object that starts with one of these points at something said elsewhere ("this song",
# "your idea"): not a fact the rule can state on its own.
_DEICTIC = frozenset({"this", "that", "these", "those", "your", "his", "her", "their", "its",
                      "our", "it's", "what", "how", "when", "where", "why", "which", "who"})


def extract(text: str) -> list[RuleClaim]:
    """Every fact the rules read from ``text`` (a user's turn), in sentence order."""
    found: list[RuleClaim] = []
    for sentence in _SENTENCES.split(text.translate(_CURLY)):
        sentence = _LEAD.sub("", sentence.strip())
        if sentence[:1] not in _OPENERS:  # every rule starts "I", "we", "my", "call", "people"
            continue
        for pattern, predicate, polarity in _COMPILED:
            match = pattern.search(sentence)
            if match is None:
                continue
            if predicate in _MANY:  # "I speak French and German": one claim each
                rest = _LIST_STOP.sub("", sentence[match.start("obj"):])
                objects = [o for o in _LIST_SPLIT.split(rest) if o][:8]
            else:
                objects = [match.group("obj")]
            for obj in objects:
                obj = obj.strip(" '\"")
                if predicate not in ("name", "lives_in"):  # "the Hague" keeps its article
                    obj = _ARTICLE.sub("", obj)
                words = obj.casefold().split()
                if words and len(words) <= 6 and obj.casefold() not in _VAGUE \
                        and words[0] not in _DEICTIC:
                    found.append(RuleClaim(predicate, obj, polarity))
            break
    return found
