"""The script a text is tagged with in telemetry: single scripts, mixtures, no letters."""

from __future__ import annotations

import unicodedata

import pytest

from memvara._write import scripts as _scripts
from memvara._write.scripts import SCRIPTS, letter_script, script_of


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("I live in Berlin", "latin"),
        ("Ça va très bien, Jörg", "latin"),
        ("ＦＵＬＬＷＩＤＴＨ", "latin"),
        ("Я живу в Москве", "cyrillic"),
        ("Ζω στην Αθήνα", "greek"),
        ("أعيش في القاهرة", "arabic"),
        ("אני גר בתל אביב", "hebrew"),
        ("你好，我住在北京", "han"),
        ("ひらがなとカタカナ", "japanese"),
        ("ｶﾀｶﾅ", "japanese"),
        ("저는 서울에 살아요", "hangul"),
        ("मैं दिल्ली में रहता हूँ", "devanagari"),
        ("ฉันอาศัยอยู่ที่กรุงเทพ", "thai"),
        ("Ես ապրում եմ Երևանում", "other"),
        ("მე ვცხოვრობ თბილისში", "other"),
        ("", "none"),
        ("   ", "none"),
        ("12:30 2026-11-29 +44 20 7946 0958", "none"),
        ("😀🎉 — …", "none"),
    ],
)
def test_single_scripts(text: str, script: str) -> None:
    assert script_of(text) == script


@pytest.mark.parametrize(
    ("text", "script"),
    [
        # A sentence with a foreign name in it belongs to the sentence's script.
        ("我住在Berlin", "han"),
        ("I live in 北京", "latin"),
        ("Я работаю в Google", "cyrillic"),
        # Kana make the ideographs around them Japanese, even when kanji outnumber them.
        ("私の電話は090-1234-5678です", "japanese"),
        ("東京都千代田区に住んでいます", "japanese"),
        ("東京都千代田区の", "japanese"),
        # Hangul makes them Korean.
        ("大韓民國 만세", "hangul"),
        # Digits and punctuation do not count, emoji neither.
        ("OK 😀 1234567890", "latin"),
        ("北京 2026-11-29 😀", "han"),
    ],
)
def test_mixed_texts_go_to_the_dominant_script(text: str, script: str) -> None:
    assert script_of(text) == script


def test_ties_go_to_the_script_listed_first_whatever_the_order_in_the_text() -> None:
    assert script_of("ab αβ") == script_of("αβ ab") == "latin"
    assert script_of("αβ Жж") == script_of("Жж αβ") == "cyrillic"


def test_a_cjk_character_weighs_three_letters() -> None:
    assert script_of("北 abc") == "latin"  # 3 against 3: a tie, Latin is listed first
    assert script_of("北 ab") == "han"
    assert script_of("北 abcd") == "latin"


def test_every_answer_is_in_scripts() -> None:
    samples = ["x", "Ж", "北", "の", "한", "ა", "", "1", "ℵ", "\U0001d400", "ǅ"]
    assert {script_of(s) for s in samples} <= set(SCRIPTS)
    assert len(SCRIPTS) == len(set(SCRIPTS))


@pytest.mark.parametrize(
    ("first", "last", "script"),
    [
        (0x0041, 0x005A, "latin"),
        (0x00C0, 0x024F, "latin"),
        (0xFF21, 0xFF3A, "latin"),
        (0x0391, 0x03C9, "greek"),
        (0x1F00, 0x1FFC, "greek"),
        (0x0400, 0x04FF, "cyrillic"),
        (0x05D0, 0x05EA, "hebrew"),
        (0x0621, 0x064A, "arabic"),
        (0xFE70, 0xFEFC, "arabic"),
        (0x0904, 0x0939, "devanagari"),
        (0x0E01, 0x0E30, "thai"),
        (0x4E00, 0x9FFF, "han"),
        (0x3400, 0x4DBF, "han"),
        (0x20000, 0x2A6DF, "han"),
        (0x3041, 0x3096, "japanese"),
        (0x30A1, 0x30FA, "japanese"),
        (0xFF66, 0xFF9D, "japanese"),
        (0xAC00, 0xD7A3, "hangul"),
        (0x1100, 0x1112, "hangul"),
    ],
)
def test_whole_blocks_classify_as_their_script(first: int, last: int, script: str) -> None:
    letters = [chr(cp) for cp in range(first, last + 1) if chr(cp).isalpha()]
    assert letters, "the range holds letters"
    assert {letter_script(ch) for ch in letters} == {script}


def test_iteration_marks_and_the_prolonged_sound_mark() -> None:
    assert letter_script("々") == "han"
    assert letter_script("ー") == "japanese"
    assert script_of("ラーメン") == "japanese"


def test_non_letters_have_no_script() -> None:
    for char in "0 ,.-+\n\t😀\u0301\u093f〇":  # digits, punctuation, emoji, marks, 〇 (Nl)
        assert letter_script(char) is None, unicodedata.name(char, repr(char))


def test_mathematical_and_other_named_letters_are_other() -> None:
    assert letter_script("\U0001d400") == "other"  # MATHEMATICAL BOLD CAPITAL A
    assert letter_script("ℵ") == "other"  # ALEF SYMBOL


def test_the_translate_table_stops_growing_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _scripts._Table()
    monkeypatch.setattr(_scripts, "_TABLE_LIMIT", 3)
    codes = "абвгдежз".translate(table)
    assert len(table) == 3
    assert codes == _scripts._CODE["cyrillic"] * 8  # unseen letters are still classified


def test_answers_do_not_depend_on_what_was_seen_before() -> None:
    text = "Здравствуйте, 世界 and friends"
    first = script_of(text)
    script_of("".join(chr(cp) for cp in range(0x4E00, 0x4F00)))
    assert script_of(text) == first == "cyrillic"
