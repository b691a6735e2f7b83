"""The one-line text a claim is indexed and shown by, rendered from its triple."""

from __future__ import annotations

__all__ = ["render"]


def render(subject: str, predicate: str, obj: str, polarity: int) -> str:
    """The one-line text a claim is indexed and shown by: ``user lives in Berlin``, a
    participle with its verb (``user is allergic to nuts``, ``user was born in Porto``),
    and for a negative claim ``user does not live in Berlin`` (``_negated``)."""
    words = predicate.replace("_", " ")
    if polarity < 0:
        return _negated(subject, words.split(), obj)
    head = words.split(" ", 1)[0]
    if head in _PARTICIPLES:
        return f"{subject} {'was' if head == 'born' else 'is'} {words} {obj}"
    return f"{subject} {words} {obj}"


_BE = {"is": "is not", "are": "are not", "was": "was not", "were": "were not",
       "has": "does not have", "have": "does not have", "can": "cannot"}
_NOUN_ENDINGS = ("ss", "us", "is", "as")
"""Endings of words in -s that are not a verb in the third person (``address``,
``status``, ``his``, ``alias``): "has", "is" and "was" are read as forms of "be" and
"have" before this is asked."""
_PARTICIPLES = ("born", "married", "allergic", "based", "located", "engaged", "divorced",
                "working", "living", "employed", "interested", "related")


def _negated(subject: str, words: list[str], obj: str) -> str:
    """A negative claim read as a sentence: a verb in the third person takes "does not"
    and its base form (``lives in`` -> ``does not live in``), a form of "be" or "have"
    its own negation, a participle or adjective "is not" (``allergic to``, ``born in``:
    "was not"), and a noun ``name`` -> ``user name is not Ann``."""
    head, rest = words[0], " ".join(words[1:])
    tail = f" {rest}" if rest else ""
    if head in _BE:
        return f"{subject} {_BE[head]}{tail} {obj}"
    if head in _PARTICIPLES:
        return f"{subject} {'was' if head == 'born' else 'is'} not {head}{tail} {obj}"
    if head.endswith("s") and not head.endswith(_NOUN_ENDINGS):  # lives in, likes, speaks
        return f"{subject} does not {_base(head)}{tail} {obj}"
    if head.endswith("ed") and not head.endswith("eed") and len(head) > 4:  # moved to, visited
        return f"{subject} did not {_past_base(head)}{tail} {obj}"
    return f"{subject} {' '.join(words)} is not {obj}"


def _base(verb: str) -> str:
    """The base form of a verb in the third person singular: ``lives`` -> ``live``,
    ``studies`` -> ``study``, ``watches`` -> ``watch``."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


def _past_base(verb: str) -> str:
    """The base form of a regular verb in the past: ``studied`` -> ``study``, ``stopped``
    -> ``stop``, ``moved`` -> ``move``, ``graduated`` -> ``graduate``, ``visited`` ->
    ``visit`` (English spelling, approximately: a rare verb may come out misspelt)."""
    if verb.endswith("ied"):
        return verb[:-3] + "y"
    stem = verb[:-2]
    if stem[-1] == stem[-2] and stem[-1] in "bdgmnprt":  # stopped, planned, admitted
        return stem[:-1]
    if stem.endswith(("v", "c", "iz", "ys", "at", "ut", "ur", "ir", "ar", "ag", "eng", "ang", "us"))\
            and not stem.endswith(("eat", "oat", "ear", "air", "oar", "eur", "cus")):
        return stem + "e"  # moved, danced, organized, graduated, shared, engaged
    return stem
