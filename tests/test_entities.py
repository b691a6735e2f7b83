"""The entity fold: one key for every spelling of a name, and nothing cleverer."""

from __future__ import annotations

import pytest

from memvara import InvalidArgumentError, entity_key


def test_spec_example() -> None:
    assert entity_key("Acme Corp.") == entity_key("ACME, Inc.") == entity_key("acme") == "acme"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Café Noir", "cafe noir"),
        ("Müller GmbH", "muller"),
        ("Acme Co., Ltd.", "acme"),
        ("  New   York  ", "new york"),
        ("ＡＣＭＥ", "acme"),  # full-width letters fold under NFKD
        ("O'Brien & Sons", "o brien sons"),
        ("ǅ", "dž"),
    ],
)
def test_spellings_that_fold_together(a: str, b: str) -> None:
    assert entity_key(a) == entity_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("Stark", "Stark Industries"), ("Big Blue", "IBM"), ("Paris", "Paris Hilton")],
)
def test_different_names_stay_different(a: str, b: str) -> None:
    assert entity_key(a) != entity_key(b)


def test_a_legal_suffix_alone_is_kept() -> None:
    assert entity_key("Inc.") == "inc"
    assert entity_key("Co") == "co"


def test_marks_that_are_vowels_in_other_scripts_are_kept() -> None:
    assert entity_key("किताब") != entity_key("कतब")
    assert entity_key("東京") == "東京"


def test_combining_marks_on_letters_of_other_scripts_are_kept() -> None:
    # A virama (Devanagari) or a vowel point (Hebrew) is a combining mark, like an
    # accent, but on a letter past the Latin, Greek and Cyrillic blocks it is spelling.
    assert entity_key("हिन्दी") == "हिन्दी" != entity_key("हिनदी")
    assert entity_key("שָׁלוֹם") == "שָׁלוֹם" != entity_key("שלום")
    assert entity_key("Ёлка") == entity_key("елка")  # while a Cyrillic accent folds away


def test_punctuation_only_names_still_get_a_key() -> None:
    assert entity_key("!!!") == "!!!"
    assert entity_key("?! ?!") == "?! ?!"


def test_the_fold_is_idempotent() -> None:
    for name in ["Acme Corp.", "Café Noir", "ＡＣＭＥ", "!!!", "Müller GmbH"]:
        assert entity_key(entity_key(name)) == entity_key(name)


def test_non_strings_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="name"):
        entity_key(42)  # type: ignore[arg-type]


def test_the_ascii_fast_path_agrees_with_the_unicode_path() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from memvara._domain.entities import _strip_accents

    import unicodedata

    def slow(text: str) -> list[str]:
        chars = [" " if unicodedata.category(ch)[0] in "PSZC" else ch
                 for ch in _strip_accents(unicodedata.normalize("NFKD", text)).casefold()]
        return "".join(chars).split()

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(max_codepoint=127)))
    def check(text: str) -> None:
        from memvara._domain.entities import _tokens
        assert _tokens(text) == slow(text)

    check()
