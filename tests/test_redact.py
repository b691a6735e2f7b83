"""The built-in redactor: what it replaces, what it must leave alone, and that it stays
linear on hostile input."""

from __future__ import annotations

import random

import pytest

from memvara.redact import BasicRedactor, Redactor

redactor = BasicRedactor()
redact = redactor.redact

PHONES = [
    # North American
    "555-123-4567",
    "(555) 123-4567",
    "(555)123-4567",
    "555.123.4567",
    "+1 555 123 4567",
    "+1 (555) 123-4567",
    "1-800-555-1234",
    # UK
    "+44 20 7946 0958",
    "+44 (0)20 7946 0958",
    "020 7946 0958",
    "0161 496 0123",
    "07700 900123",
    "07700 900 123",
    "07700900123",
    # Germany
    "+49 30 1234567",
    "+49 (30) 1234567",
    "030 1234567",
    "030/1234567",
    "(030) 1234567",
    "0151 12345678",
    # France
    "+33 1 23 45 67 89",
    "06 12 34 56 78",
    "06.12.34.56.78",
    "0612345678",
    # Japan and Korea
    "090-1234-5678",
    "03-1234-5678",
    "09012345678",
    "+81 90-1234-5678",
    "010-1234-5678",
    # India
    "+91 98765 43210",
    "98765 43210",
    # China
    "138 1234 5678",
    "13812345678",
    # E.164, any country
    "+61 2 9876 5432",
    "+4930123456",
    "+1.555.123.4567",
]

EMAILS = [
    "bob@example.com",
    "Bob.Smith+news@mail.example.co.uk",
    "first_last%x@sub-domain.example.org",
    "jörg.müller@beispiel.de",
]

CARDS = [
    "4111111111111111",  # Visa
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "4012888888881881",
    "5555 5555 5555 4444",  # Mastercard
    "2223 0031 2200 3222",  # Mastercard, 2-series
    "3782 822463 10005",  # American Express, 4-6-5
    "378282246310005",
    "3056 930902 5904",  # Diners, 4-6-4
    "6011 1111 1111 1117",  # Discover
    "3530111333300000",  # JCB
    "6200000000000005",  # UnionPay
    "4000 0000 0000 0000 006",  # 19 digits
]

UNTOUCHED = [
    "I was born in 1987.",
    "See you on 2026-11-29.",
    "29.11.2026, 11/29/2026 and 29/11/2026",
    "01.02.2026 10:30",
    "2026-11-29T10:30:00Z",
    "at 10:30 or 10:30:45",
    "I have 3 cats and 42 fish",
    "pi is 3.14159265358979",
    "SQLite 3.40.1 and numpy 1.26.4, python 3.11.7",
    "version 0.2024.11.29",
    "claim c12-1a2b3c4d was superseded",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "it cost $1,234,567.89 or 1 000 000 EUR",
    "order 1234567890123 shipped",  # 13 digits, fails Luhn
    "card-like 4111 1111 1111 1112",  # fails Luhn
    "timestamp 20261129103000",  # passes no issuer prefix
    "epoch 1764374400 and 1764374400000 ms",
    "ISBN 978-0-306-40615-7",
    "host 192.168.0.1 port 8080",
    "room 101, zip 10115 Berlin, 90210",
    "scores 12 15 18 21 24 27 30",
    "user@localhost and @mention and a@b",
    "C++ 20 and +1 vote",
    "",
]


@pytest.mark.parametrize("phone", PHONES)
def test_phone_numbers(phone: str) -> None:
    assert redact(phone) == "[phone]"
    assert redact(f"call me at {phone} tomorrow") == "call me at [phone] tomorrow"
    assert redact(f"{phone}, {phone}.") == "[phone], [phone]."


@pytest.mark.parametrize("email", EMAILS)
def test_email_addresses(email: str) -> None:
    assert redact(email) == "[email]"
    assert redact(f"write to <{email}>, thanks.") == "write to <[email]>, thanks."
    assert redact(f"mailto:{email}") == "mailto:[email]"


@pytest.mark.parametrize("card", CARDS)
def test_card_numbers(card: str) -> None:
    assert redact(card) == "[card]"
    assert redact(f"my card is {card}.") == "my card is [card]."


@pytest.mark.parametrize("text", UNTOUCHED)
def test_false_positive_guards(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("私の電話は090-1234-5678です", "私の電話は[phone]です"),
        ("電話番号：03-1234-5678まで", "電話番号：[phone]まで"),
        ("メールはtaro.yamada@example.co.jpまで", "メールは[email]まで"),
        ("カード番号は4111-1111-1111-1111です", "カード番号は[card]です"),
        ("我的电话是13812345678，邮箱wang@example.cn。", "我的电话是[phone]，邮箱[email]。"),
        ("제 번호는 010-1234-5678입니다", "제 번호는 [phone]입니다"),
        ("Мой номер +7 912 345-67-89.", "Мой номер [phone]."),
    ],
)
def test_inside_text_without_spaces_or_in_other_scripts(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_card_is_found_among_neighbouring_numbers() -> None:
    assert redact("4111 1111 1111 1111 12/25") == "[card] 12/25"
    assert redact("4111 1111 1111 1111 2025") == "[card] 2025"
    assert redact("qty 2 4111 1111 1111 1111") == "qty 2 [card]"
    assert redact("4111111111111111 4111111111111111") == "[card] [card]"


def test_a_number_glued_to_letters_is_part_of_an_id() -> None:
    assert redact("id x555-123-4567") == "id x555-123-4567"
    assert redact("ref 4111111111111111z") == "ref 4111111111111111z"
    assert redact("v1.555.123.4567") == "v1.555.123.4567"


def test_digits_inside_an_address_are_not_taken_for_a_phone() -> None:
    assert redact("mail 5551234567@example.com") == "mail [email]"


def test_everything_in_one_message() -> None:
    text = (
        "Hi, I'm Ana (ana@example.pt), call +351 912 345 678 or 555-123-4567; "
        "card 4111 1111 1111 1111, order 1234567890123, see you 2026-11-29 at 10:30."
    )
    assert redact(text) == (
        "Hi, I'm Ana ([email]), call [phone] or [phone]; "
        "card [card], order 1234567890123, see you 2026-11-29 at 10:30."
    )


def test_redacting_twice_changes_nothing() -> None:
    for text in PHONES + EMAILS + CARDS + UNTOUCHED:
        once = redact(text)
        assert redact(once) == once, text


def test_it_is_a_redactor_and_any_object_with_redact_is_one() -> None:
    class Upper:
        def redact(self, text: str) -> str:
            return text.upper()

    assert isinstance(redactor, Redactor)
    assert isinstance(Upper(), Redactor)
    assert not isinstance(object(), Redactor)


def test_docstring_says_it_is_an_example_and_names_the_telemetry_pair() -> None:
    doc = BasicRedactor.__doc__ or ""
    assert "best-effort example" in doc and "not compliance-grade" in doc
    assert "redact.inspected" in doc and "redact.changed" in doc


# --- linear time ---------------------------------------------------------------------
# Each input is a megabyte built to make a backtracking pattern retry at every position.
# The assertions are on the result; a quadratic pattern would simply not finish.

MEGABYTE = 1 << 20


def test_a_megabyte_of_digits_and_separators_is_left_alone() -> None:
    for unit in ("1-", "0 ", "9-99 ", "123 ", "12345"):
        text = (unit * (MEGABYTE // len(unit) + 1))[:MEGABYTE]
        assert redact(text) == text, unit


def test_a_megabyte_run_without_an_at_sign_is_left_alone() -> None:
    text = ("a.b_c-" * (MEGABYTE // 6 + 1))[:MEGABYTE]
    assert redact(text) == text
    text = "x@" + "a-" * (MEGABYTE // 2)  # a domain that never reaches a dot
    assert redact(text) == text


def test_a_megabyte_of_card_groups_is_redacted_card_by_card() -> None:
    text = " ".join(["4111 1111 1111 1111"] * (MEGABYTE // 20))
    assert redact(text) == " ".join(["[card]"] * (MEGABYTE // 20))


def test_a_megabyte_of_plus_signs_and_phone_numbers() -> None:
    short = "+12 " * (MEGABYTE // 4)  # every + starts an attempt that falls short
    assert redact(short) == short
    phones = "+44 20 7946 0958 " * (MEGABYTE // 17)
    assert redact(phones) == "[phone] " * (MEGABYTE // 17)


def test_a_random_megabyte_of_phone_characters_is_redacted_stably() -> None:
    chars = "0123456789" * 2 + " -./()+@ab.c"
    text = "".join(random.Random(20261129).choices(chars, k=MEGABYTE))
    once = redact(text)
    assert redact(once) == once
    assert all(p in once for p in ("[phone]", "[card]", "[email]"))
