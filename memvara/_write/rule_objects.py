"""What the rule tier's objects look like: a place, an organisation, a name, a language,
an allergen, a liking.

``rules`` finds a first-person frame ("I live in", "my name is"); the words after it are
handed here, and each shape returns the objects it is sure of, or none:

* **Cut at an adjunct.** An object ends where a role, a place, a time, a reason or a
  companion begins: "Google as a PM" is Google, "Berlin since 2019" is Berlin, "Austin
  with my kids" is Austin.
* **Proper nouns when capitals mean something.** In a turn whose writer capitalises
  (some word other than "I" or a sentence's first is capitalised), a place, an employer or
  a name is a run of capitalised words ("Rio de Janeiro", "the Red Cross", "Jean-Luc
  Picard"); a lowercase object ("fear of spiders", "night", "not important") is not one.
* **Closed word classes when they do not.** In a turn written all in lowercase (or in
  capitals, or Title Case) any word could be a name, so an object is refused when any of
  its words is a function word, a pronoun or determiner, a time, a common noun for a kind
  of place or work ("home", "school"), an abstract noun ("fear", "denial", "the moment":
  states are not places), a gerund ("getting better") or has an abstract noun's suffix
  ("reality", "freedom").
* **Known forms for the classes that are common nouns.** A language is a known language
  name; an allergen is a concrete lowercase noun, not a time, an abstract noun, an
  activity or a proper noun ("Mondays"); a liking is a short noun phrase, not a pronoun,
  a clause ("that idea", "it when ...", "how ..."), an infinitive ("to think so"), a
  particle ("stand up") or something in the conversation ("the idea", "your style").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

__all__ = ["SHAPES", "case_blind"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---------------------------------------------------------------- the word classes

_PRONOUNS = _words(
    "i me my mine myself you your yours yourself yourselves ya u ur y'all yall he him his "
    "himself she her hers herself it its itself we us our ours ourselves they them their "
    "theirs themselves one someone somebody something somewhere anyone anybody anything "
    "anywhere everyone everybody everything everywhere nobody nothing nowhere no-one"
)
_DEICTIC = _words(
    "this that these those here there now then what which who whom whose where when why how "
    "whatever whichever whoever wherever whenever"
)
_DETERMINERS = _words("a an the some any every each no all both either neither another "
                      "such many much most few several")
_FUNCTION = _PRONOUNS | _DEICTIC | _DETERMINERS | _words(
    "to of in on at by for from with without about into onto over under up down out off "
    "around through across after before during since until till near between behind beyond "
    "against among toward towards via per and or but nor so yet as than if because though "
    "although while whether unless is am are was were be been being do does did done have "
    "has had will would can could should shall may might must not never too very really "
    "quite just only also still even again ever always often sometimes usually mostly mainly "
    "soon later today tonight tomorrow yesterday ago already lately currently recently "
    "anymore more less least better best well"
)
# Adjectives of degree and manner, never a name's first word in lowercase ("long hours").
_ADJECTIVES = _words("good bad hard long short late early full own big small great little "
                     "high low right wrong same different other odd stupid dumb boring silly "
                     "fake negative positive toxic annoying awkward constant total pure")
_TIME = _words(
    "night nights nighttime overnight day days daytime morning mornings evening evenings "
    "afternoon afternoons weekend weekends weekday weekdays week weeks month months year "
    "years dawn dusk midnight noon lunch lunchtime moment moments present past future time "
    "times hour hours shift shifts season seasons spring summer autumn fall winter monday "
    "tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays "
    "fridays saturdays sundays january february march april june july august september "
    "october november december"
)
# Common nouns for a kind of place or workplace: where, not which.
_COMMON_PLACES = _words(
    "home house flat apartment room car van tent boat office work job school college "
    "university uni church hospital clinic bank startup company firm business store shop "
    "restaurant cafe café bar pub factory farm lab library gym city town village suburb "
    "suburbs countryside country area neighbourhood neighborhood place street building "
    "world planet desk computer remote remotely abroad overseas downtown dorm campus capital "
    "region state north south east west centre center outskirts middle basement attic"
)
# Abstract nouns that idioms put after "live in", "based in", "work at/for", "allergic
# to": states, grounds and chores, not places, employers or substances.
_ABSTRACT = _words(
    "fear fears hope hopes denial dread terror horror panic anxiety worry paranoia peace "
    "harmony luxury comfort style splendour splendor opulence poverty squalor misery chaos "
    "turmoil limbo oblivion sin shame guilt regret doubt despair sorrow grief anguish "
    "suspense anticipation awe wonder bliss ignorance fantasy dream dreams dreamland "
    "make-believe reality bubble shadow shadows silence secret secrecy isolation seclusion "
    "solitude exile hiding quarantine lockdown hell heaven paradise cloud clouds head mind "
    "memory memories debt pain agony torment love hate joy fun pleasure nothing change pace "
    "speed length distance scale vain fact facts science truth evidence experience research "
    "logic theory faith principle principles data tradition history fiction myth belief "
    "beliefs effort exercise cardio commitment commitments responsibility responsibilities "
    "people humans humanity nonsense bullshit bs drama math maths homework chores housework "
    "meetings talk gossip stupidity criticism authority rules adulting deadlines feelings "
    "emotions marriage relationships bureaucracy paperwork politics taxes bills traffic "
    "noise sarcasm mud legion life "
    # garments: "I live in sweatpants" is what one wears
    "pajamas pyjamas sweatpants sweats jeans hoodies hoodie leggings shorts sneakers "
    "trainers flip-flops slippers sweaters overalls uniform"
)
_ABSTRACT_SUFFIXES = ("ness", "ity", "ment", "tion", "sion", "ism", "ship", "dom", "ance", "ence")
# Places and foods whose names end like an abstract noun, a gerund or an adverb.
_SUFFIX_EXCEPTIONS = _words("city france florence provence valence lawrence constance "
                            "italy sicily herring pudding icing dressing seasoning stuffing "
                            "frosting whiting ling")


def _gerund(low: str) -> bool:
    return len(low) > 5 and low.endswith("ing")


def _adverb(low: str) -> bool:
    return len(low) > 3 and low.endswith("ly")


# Adverbs and adjectives a lowercase name cannot be ("literally Bob", "unpronounceable").
_NAME_ADVERB = re.compile(r"...+(?:ally|ously|ently|antly|ably|ibly|ately|ively|ingly|stly|"
                          r"able|ible|ous|ful|less)$")

# Between capitalised words of one place, employer or name: "Rio de Janeiro", "Bank of
# America", "Procter & Gamble", "Lord of the Rings", "Ludwig van Beethoven".
_CONNECTORS = _words("de da do dos das del della di du la le les los las el al am an der "
                     "den van von y sur upon of & bin ibn ter ten the")
# Lowercase words that may precede a capitalised place: "central London" is London.
_PLACE_MODIFIERS = _words("central downtown north south east west northern southern "
                          "eastern western greater rural suburban outer inner upstate "
                          "coastal northeast northwest southeast southwest")
# Where an object ends: a role ("as"), a place, a time, a reason, a companion, a comment.
_CUT = _words(
    "as at in on near by with without for from since during until till after before "
    "because so but and or now too also anymore currently mostly mainly usually "
    "sometimes often always again already these this last next every each ago today "
    "tonight yesterday tomorrow recently lately still though although while when whenever "
    "where which who whom whose that than then there here full-time part-time remotely "
    "together especially like unlike plus i i'm i've i'd i'll nice pleased glad btw"
)
# An employer's name in lowercase is one word, or one and a word like these.
_ORG_SUFFIXES = _words("inc corp co ltd llc plc gmbh ag sa labs lab group bank technologies "
                       "tech systems software motors airlines foods media studios games "
                       "university college institute hospital")

_NAME_WORDS = _words(
    "important unimportant irrelevant secret private confidential unknown common rare "
    "unusual unique weird strange funny odd simple complicated difficult easy pretty boring "
    "fine ok okay cool nice terrible awful similar fake real legit spelled spelt pronounced "
    "written misspelled mispronounced listed printed famous known taken used gone correct "
    "blank missing new old crazy lazy old-fashioned naive paranoid cynical picky biased "
    "silly stupid sentimental skeptical sceptical whatever back later anytime sometime maybe "
    "please first last middle nickname username handle mud legion trouble mister sir madam"
)

_LANGUAGES = _words(
    "english french german spanish portuguese italian dutch flemish russian polish czech "
    "slovak ukrainian belarusian bulgarian serbian croatian bosnian slovenian slovene "
    "macedonian albanian greek turkish hungarian romanian moldovan finnish swedish "
    "norwegian danish icelandic faroese estonian latvian lithuanian irish welsh gaelic "
    "breton basque catalan galician occitan maltese luxembourgish hebrew yiddish arabic "
    "persian farsi dari pashto kurdish urdu hindi bengali bangla punjabi gujarati marathi "
    "tamil telugu kannada malayalam odia sinhala sinhalese nepali mandarin cantonese "
    "chinese hokkien shanghainese taiwanese japanese korean vietnamese thai lao khmer "
    "burmese malay indonesian javanese tagalog filipino cebuano swahili amharic tigrinya "
    "somali oromo yoruba igbo hausa zulu xhosa afrikaans shona wolof lingala kinyarwanda "
    "malagasy latin esperanto armenian georgian azerbaijani azeri kazakh uzbek turkmen "
    "kyrgyz tajik mongolian tibetan uyghur maori hawaiian samoan tongan quechua guarani "
    "aymara nahuatl inuktitut cherokee navajo creole asl bsl auslan"
)
# Words that may qualify a language ("Brazilian Portuguese", "Swiss German").
_LANGUAGE_QUALIFIERS = _words(
    "brazilian european canadian quebec québécois mexican castilian american british "
    "argentinian swiss austrian classical modern standard egyptian levantine moroccan "
    "gulf haitian jamaican old middle ancient biblical simplified traditional"
)
# How well, dropped before the language: "a little French", "fluent Spanish".
_FLUENCY = re.compile(
    r"\A(?:(?:a\s+(?:little|bit|few\s+words)(?:\s+bit)?(?:\s+of)?|some|fluent|basic|"
    r"conversational|broken|native|decent|good|passable|rusty|intermediate|beginner|"
    r"elementary|only|also|both|mostly|perfect|excellent|bad|poor)\b\s*)+",
    re.IGNORECASE,
)
# How well, after the language: "French fluently", "German pretty well".
_AFTER_LANGUAGE = _CUT | _words("well a pretty quite fairly ok okay badly poorly natively "
                                "decently fluently very")
# Heads that make "the X" point at something in the conversation ("the idea", "the way
# you think") rather than name a taste.
_CONTEXT_HEADS = _words(
    "idea thought way fact sound smell look feel feeling notion concept plan suggestion "
    "part bit moment point question answer vibe vibes energy thing things one ones life"
)
# Verbs whose gerund needs what follows: "going on road trips" is not "going".
_LIGHT_GERUNDS = _words(
    "being having getting going doing making taking coming keeping putting seeing finding "
    "looking trying giving bringing feeling letting hearing knowing thinking talking "
    "hanging sinking escaping curling throwing pouring living staying sitting waking "
    "listening spending"
)
# Allergens are things; these are chores and conditions ("allergic to hard work").
_ALLERGEN_REFUSED = _TIME | _ABSTRACT | _ADJECTIVES | _words(
    "work working school stress labour labor")
_QUANTIFIERS = re.compile(r"\A(?:(?:all|most|some|certain|many|several|any|the|a|an)\s+"
                          r"(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?)+", re.IGNORECASE)
# What ends an allergen because it qualifies it ("animals with fur"): not sure.
_QUALIFYING_CUTS = _words("with in from of that who which where when like")
# What ends a liking because a clause follows ("music that ..."): not sure.
_CLAUSE_CUTS = _words("that who whom which whose where when whenever how")

_TOKEN = re.compile(
    r"(?:St|Mt|Ft|Dr|Mr|Mrs|Ms|Jr|Sr)\.|(?:[A-Za-z]\.){2,}|[^\s,.;:!?()\[\]\"]+|[,.;:!?()\[\]\"]"
)
_EDGE_QUOTES = re.compile(r"^'+|(?<!s)'+$")
# Capital letters of the Latin, Greek and Cyrillic scripts (the class is built once).
_UPPER = "".join(c for c in map(chr, range(0x41, 0x530)) if c.isupper())
_LOWER = "".join(c for c in map(chr, range(0x61, 0x530)) if c.islower())
_CAPITALISED = re.compile(rf"[\w'-]*[{_UPPER}][\w'-]*")
_LOWER_INITIAL = re.compile(rf"(?<![\w'-])[{_LOWER}]")
_BEFORE_A_SENTENCE = frozenset(".!?;:\n")


def case_blind(text: str) -> bool:
    """Whether capitals in ``text`` say nothing: none but "I" and sentence starts, or
    every word capitalised (in capitals or Title Case)."""
    if _LOWER_INITIAL.search(text) is None:
        return True
    for word in _CAPITALISED.finditer(text):
        if word.group() == "I" or word.group().startswith("I'"):
            continue
        before = text[:word.start()].rstrip(" \t\"'(")
        if before and before[-1] not in _BEFORE_A_SENTENCE:
            return False
    return True


# ---------------------------------------------------------------- shared helpers

def _tokens(tail: str) -> list[str]:
    """Words and punctuation marks; quotes at a word's edges dropped (not "Macy's")."""
    out = []
    for token in _TOKEN.findall(tail):
        if "'" in token:
            token = _EDGE_QUOTES.sub("", token)
            if not token:
                continue
        out.append(token)
    return out


def _is_proper(token: str, refused: frozenset[str]) -> bool:
    """A capitalised word, an acronym ("UBS"), a brand ("eBay", "3M"), not "I" and not an
    emphasised common word ("HOME")."""
    if token == "I" or token.startswith("I'"):
        return False
    if token.isupper() and sum(c.isalpha() for c in token) > 1:
        return token.casefold() not in refused
    return token[0].isupper() or token.lower() != token


def _plain_word(word: str, refused: frozenset[str]) -> bool:
    """A word in lowercase that could be part of a name: not in a closed class of common
    English, not a gerund, not an abstract noun by its suffix."""
    low = word.casefold()
    if low in refused or low in _FUNCTION or not any(c.isalpha() for c in low):
        return False
    if low in _SUFFIX_EXCEPTIONS:
        return True
    return not _gerund(low) and not low.endswith(_ABSTRACT_SUFFIXES)


def _proper_run(tokens: list[str], refused: frozenset[str],
                skip: frozenset[str] = frozenset()) -> list[str]:
    """The capitalised words that open ``tokens`` (after an optional "the" and lowercase
    words in ``skip``), with the connectors between them; empty when none opens it."""
    i, run = 0, []
    if tokens and tokens[0].casefold() == "the":
        run.append(tokens[0])
        i = 1
    while i < len(tokens) and tokens[i].casefold() in skip and not run:
        i += 1
    while i < len(tokens) and len(run) < 7:
        if _is_proper(tokens[i], refused):
            run.append(tokens[i])
            i += 1
            continue
        bridge = 0  # "de", "of the": connectors that lead to another capitalised word
        while i + bridge < len(tokens) and bridge < 2 \
                and tokens[i + bridge].casefold() in _CONNECTORS:
            bridge += 1
        if not bridge or len(run) < 1 + (run[0].casefold() == "the") \
                or i + bridge >= len(tokens) or not _is_proper(tokens[i + bridge], refused):
            break
        run.extend(tokens[i:i + bridge])
        i += bridge
    return [] if not run or run[-1].casefold() == "the" else run


def _before_punctuation(tokens: list[str]) -> list[str]:
    for i, token in enumerate(tokens):
        if not any(c.isalnum() for c in token) and token != "&":
            return tokens[:i]
    return tokens


def _until_cut(tokens: list[str]) -> tuple[list[str], str]:
    """The words before the first that opens an adjunct, and that word ("" if none); an
    adverb in -ly past the first word cuts too ("porto mostly")."""
    for i, token in enumerate(tokens):
        low = token.casefold()
        if low in _CUT or (i and _adverb(low) and low not in _SUFFIX_EXCEPTIONS):
            return tokens[:i], low
    return tokens, ""


def _named(tail: str, blind: bool, refused: frozenset[str], most: int,
           skip: frozenset[str] = frozenset()) -> list[str]:
    """A proper noun: the shape a place, an employer and a name share."""
    tokens = _before_punctuation(_tokens(tail))
    if not blind:
        run = _proper_run(tokens, refused, skip)
        if run and run[-1].endswith("'s") and len(tokens) > len(run) \
                and tokens[len(run)].casefold() not in _CUT:
            return []  # "Berlin's shadow": the object is what follows the possessive
        named = sum(1 for token in run if token.casefold() not in _CONNECTORS)
        return [" ".join(run)] if run and named <= most else []
    words, _ = _until_cut(tokens)
    if words and len(words) <= most and words[0].casefold() not in _CONNECTORS \
            and words[0].casefold() not in _COMMON_PLACES \
            and words[-1].casefold() not in _CONNECTORS \
            and all(_plain_word(w, refused) or w.casefold() in _CONNECTORS for w in words):
        return [" ".join(words)]
    return []


def _items(tail: str) -> Iterator[tuple[list[str], bool]]:
    """The members of a list ("dust, pollen and cats"), each with whether the list runs on
    past it; the list ends at punctuation other than a comma."""
    item: list[str] = []
    for token in _tokens(tail):
        low = token.casefold()
        if token in (",", "&") or low in ("and", "or", "plus"):
            if item:
                yield item, True
            item = []
        elif not any(c.isalnum() for c in token):
            break
        else:
            item.append(token)
    if item:
        yield item, False


# ---------------------------------------------------------------- the shapes

_PLACE_REFUSED = _TIME | _ABSTRACT | _ADJECTIVES
# "Work for peanuts / a living / free / myself": pay and manner, not an employer.
_ORG_REFUSED = _TIME | _ABSTRACT | _ADJECTIVES | _words(
    "peanuts pennies scraps money free living cash tips food charity pay hire commission wage "
    "wages salary minimum exposure passion glory fame respect")
_NAME_REFUSED = _NAME_WORDS | _TIME


def place(tail: str, blind: bool) -> list[str]:
    """A town, city, region or country: "Rio de Janeiro", "The Hague", "porto"."""
    return _named(tail, blind, _PLACE_REFUSED, 4, _PLACE_MODIFIERS)


def organisation(tail: str, blind: bool) -> list[str]:
    """An employer: "Goldman Sachs", "the Red Cross", "IBM", "google"."""
    found = _named(tail, blind, _ORG_REFUSED, 4)
    if blind and found and " " in found[0]:
        words = found[0].split()  # in lowercase, "google" or "acme labs", not "long hours"
        return found if len(words) == 2 and words[1].casefold() in _ORG_SUFFIXES else []
    return found


def person_name(tail: str, blind: bool) -> list[str]:
    """A person's name: "Priya", "Jean-Luc Picard"; not "not important", "on the list"."""
    found = _named(tail, blind, _NAME_REFUSED, 3)
    if blind and found and any(_NAME_ADVERB.match(w.casefold()) for w in found[0].split()):
        return []
    return found


def language(tail: str, blind: bool) -> list[str]:
    """Known language names: "French and German", "a little Japanese", "Brazilian
    Portuguese"; not "from experience", "my mind", "too fast"."""
    found = []
    for words, more in _items(tail):
        words = _FLUENCY.sub("", " ".join(words)).split()
        low = [w.casefold() for w in words]
        size = 0
        if low[:1] and low[0] in _LANGUAGES:
            size = 2 if low[1:2] == ["language"] or (low[1:2] and low[1] in _LANGUAGES) else 1
        elif low[1:2] and low[0] in _LANGUAGE_QUALIFIERS and low[1] in _LANGUAGES:
            size = 2
        elif low[:2] == ["sign", "language"]:
            size = 2
        rest = low[size:]
        if not size or (rest and rest[0] not in _AFTER_LANGUAGE and not _adverb(rest[0])):
            break
        found.append(" ".join(words[:size]))
        # "Spanish fluently, and French" runs on; "Spanish at home and ..." does not.
        if not more or any(w in _CUT for w in rest):
            break
    return found


def allergen(tail: str, blind: bool) -> list[str]:
    """Concrete things one is allergic to: "dust, pollen and cats", "penicillin"; not
    "Mondays", "work", "commitment", "it"."""
    found = []
    for words, more in _items(tail):
        words, cut = _until_cut(_QUANTIFIERS.sub("", " ".join(words)).split())
        if not words or len(words) > 3 or cut in _QUALIFYING_CUTS or not all(
                _plain_word(w, _ALLERGEN_REFUSED) and (blind or w.islower()) for w in words):
            break
        found.append(" ".join(words))
        if cut or not more:
            break
    return found


def liking(tail: str, blind: bool) -> list[str]:
    """What one likes: short noun phrases ("jazz", "hiking", "the Beatles", "tennis and
    chess", "Lord of the Rings"); not "you", "that idea", "it when ...", "to think so",
    "up for long", "the way you think"."""
    found = []
    for words, more in _items(tail):
        run = [] if blind else _proper_run(words, frozenset())
        if run:  # a title or a name: "the Beatles", "Game of Thrones"
            rest, cut = _until_cut(words[len(run):])
            if rest:
                break
            words = run[1:] if run[0].casefold() == "the" else run
        else:
            words, cut = _until_cut(words)
            low = [w.casefold() for w in words]
            if not words or cut in _CLAUSE_CUTS or len(words) > 3 \
                    or any(w in _FUNCTION or w in _CONTEXT_HEADS for w in low) \
                    or (cut and (low[0] in _LIGHT_GERUNDS or low[-1] in _LIGHT_GERUNDS)):
                break  # "going on road trips" is not "going"
        found.append(" ".join(words))
        if cut or not more:
            break
    return found


SHAPES: dict[str, Callable[[str, bool], list[str]]] = {
    "lives_in": place,
    "works_at": organisation,
    "name": person_name,
    "speaks": language,
    "allergic_to": allergen,
    "likes": liking,
    "dislikes": liking,
}
