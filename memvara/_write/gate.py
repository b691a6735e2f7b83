"""Tier 1: the salience gate. Does this turn carry anything worth extracting at all?

Most conversational turns are acknowledgements, greetings and reactions. Dropping them
here costs a string comparison; sending them on costs an extraction (a model call, with
one configured). The gate is deliberately narrow: it drops only turns that are nothing
*but* such filler, so "thanks, I moved to Oslo" still goes through. A dropped turn is
still stored as an episode (the raw record is kept); it is only not mined for claims.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["drop_reason"]

# Whole-turn filler, compared after folding case, punctuation and repeated spaces. A turn
# is filler when it is nothing but a run of these phrases ("great, thank you so much").
_ACKS = frozenset(p.strip() for p in """
ok|okay|k|kk|okey|alright|all right|right|sure|yes|yeah|yep|yup|no|nope|nah|fine|cool|
great|nice|good|perfect|awesome|excellent|wonderful|lovely|brilliant|neat|sweet|
thanks|thank you|thanks a lot|thank you so much|thanks so much|many thanks|thx|ty|cheers|
got it|gotcha|understood|noted|makes sense|i see|sounds good|sounds great|that works|
works for me|will do|no problem|no worries|np|of course|sure thing|agreed|exactly|indeed|
haha|hahaha|lol|lmao|hmm|hm|um|uh|oh|ah|wow|whoa|oops|yay|
you're welcome|youre welcome|welcome|my pleasure|happy to help|glad to help|
glad i could help|enjoy|done|all done|anything else|is there anything else|
let me know if you need anything|have a good day|have a nice day|have a great day
""".split("|") if p.strip())
_GREETINGS = frozenset(p.strip() for p in """
hi|hello|hey|hiya|howdy|yo|good morning|good afternoon|good evening|good night|
bye|goodbye|bye bye|see you|see ya|see you later|talk soon|take care|later|cya|
hi there|hello there|hey there
""".split("|") if p.strip())
_LONGEST = max(len(p.split()) for p in _ACKS | _GREETINGS)
_NOT_WORD = re.compile(r"[^\w\s']+", re.UNICODE)
_SPACES = re.compile(r"\s+")


def _is_symbolic(ch: str) -> bool:
    """Emoji, pictographs, punctuation, joiners and variation selectors."""
    category = unicodedata.category(ch)
    return category[0] in "PSZC" or category == "Mn" or ch in "\u200d\ufe0f"


def drop_reason(text: str) -> str | None:
    """Why the gate drops ``text`` (``"empty"``, ``"emoji_only"``, ``"ack_only"``,
    ``"greeting"``), or ``None`` when it may carry a durable fact."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    if all(_is_symbolic(ch) for ch in stripped):
        return "emoji_only" if any(unicodedata.category(ch) == "So" for ch in stripped) else "empty"
    folded = _SPACES.sub(" ", _NOT_WORD.sub(" ", stripped.casefold())).strip()
    if len(folded) > 40:  # no filler phrase is this long; skip the lookups
        return None
    words = folded.split()
    if _made_of(words, _ACKS):
        return "ack_only"
    if _made_of(words, _ACKS | _GREETINGS):
        return "greeting"
    return None


def _made_of(words: list[str], phrases: frozenset[str]) -> bool:
    """Whether ``words`` is a run of whole ``phrases`` ("great thank you so much")."""
    ends = {0}  # positions a run of phrases can reach
    for start in range(len(words)):
        if start not in ends:
            continue
        for size in range(1, min(_LONGEST, len(words) - start) + 1):
            if " ".join(words[start : start + size]) in phrases:
                ends.add(start + size)
    return len(words) in ends
