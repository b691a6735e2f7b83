"""Redaction: the hook that sees every text before memvara keeps it.

``Redactor`` is the seam. Whatever it returns is what gets stored, indexed and embedded;
the original text is not kept anywhere, so a redactor is the only place PII can be
stopped on the way in. ``BasicRedactor`` is a small default that shows the shape; a
deployment with real obligations brings its own.

A redactor that stops matching fails silently: nothing raises, and the write path gets
faster. That is why, with telemetry on, every redacted text emits ``redact.inspected``
and every text the redactor altered emits ``redact.changed``, both tagged by field and
by script (see ``memvara.telemetry``). The ratio, sliced by script, is how drift shows.
"""

from __future__ import annotations

import re
from typing import Final, Protocol, runtime_checkable

__all__ = ["BasicRedactor", "Redactor"]


@runtime_checkable
class Redactor(Protocol):
    """Rewrites a text so it no longer carries what must not be stored.

    Contract: ``redact(text)`` returns a ``str`` and is a pure function of its input (the
    same text always gives the same result), because near-duplicate detection and the
    stored episode both see the redacted text. It should be idempotent, since a stored
    text may be redacted again on re-ingestion. It is applied to every text before it is
    stored, indexed or embedded; an exception it raises aborts the write that called it,
    and nothing of that write is stored.
    """

    def redact(self, text: str) -> str:
        """``text`` with anything sensitive replaced."""
        ...


# A match may not continue a longer token: not glued to an ASCII letter or digit, and
# not the tail or head of a chain like 1.2.3 or 12-34-56. Letters of other scripts are
# allowed on either side, because CJK text puts no spaces around numbers
# (私の電話は090-1234-5678です). These lookarounds also keep the scan linear: a pattern can
# only start where a token starts, not at every digit inside a long run. The brackets
# of a placeholder count as the digits they replaced, so that redacting a redacted text
# sees the same boundaries as the first pass did and changes nothing.
_BEFORE: Final = r"(?<![0-9A-Za-z\]])(?<![0-9\]][-./])"
_AFTER: Final = r"(?![0-9A-Za-z\[])(?![-./][0-9\[])"

_EMAIL_CHAR: Final = r"A-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_EMAIL: Final = re.compile(
    rf"(?<![{_EMAIL_CHAR}._%+-])"
    rf"[{_EMAIL_CHAR}._%+-]{{1,64}}"
    rf"@(?:[{_EMAIL_CHAR}-]{{1,63}}\.)+[A-Za-z]{{2,63}}"
    rf"(?![{_EMAIL_CHAR}-])"
)
"""An address with a dotted domain and an alphabetic top-level domain. The local part and
domain accept Latin letters with diacritics (jörg@beispiel.de) but not other scripts,
so an address written straight after Japanese text does not swallow the text."""

_PHONE_FORMATS: Final = (
    # North American: 555-123-4567, (555) 123-4567, +1 555 123 4567, 1-800-555-1234.
    # Separators are required: a bare ten-digit run is as likely an id or a timestamp.
    r"(?:\+?1[ .-]?)?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}",
    # International with a trunk zero or area code in brackets: +44 (0)20 7946 0958.
    r"\+[1-9][0-9]{0,2}[ .-]?\([0-9]{1,4}\)[ .-]?[0-9](?:[ ./-]?[0-9]){5,12}",
    # E.164: a plus, then 8 to 15 digits with single separators: +44 20 7946 0958,
    # +49 30 1234567, +33 1 23 45 67 89, +91 98765 43210, +819012345678.
    r"\+[1-9](?:[ ./-]?[0-9]){7,14}",
    # India, national: 98765 43210, 098765-43210.
    r"0?[6-9][0-9]{4}[ -][0-9]{5}",
    # China, mobile: 138 1234 5678, 138-1234-5678, 13812345678.
    r"1[3-9][0-9](?:[ -]?[0-9]{4}){2}",
    # Mobile numbers written without separators, where the prefix is distinctive enough:
    # Japan and Korea 070/080/090/010 + 8, UK 07 + 9, France 06/07 + 8.
    r"0[1789]0[0-9]{8}|07[0-9]{9}|0[67][0-9]{8}",
    # Trunk-zero national numbers with the area code in brackets: (030) 1234567.
    r"(?P<paren>\(0[0-9]{1,4}\) ?[0-9]{2,8}(?:[ -][0-9]{2,8}){0,2})",
    # Trunk-zero national numbers in groups with one kind of separator, checked for their
    # length in _phone(): UK 020 7946 0958, 07700 900123; Germany 030 1234567,
    # 030/1234567; France 06 12 34 56 78, 01.23.45.67.89; Japan 090-1234-5678,
    # 03-1234-5678; Korea 010-1234-5678; Australia 02 9876 5432.
    r"(?P<national>0[0-9]{1,4}(?P<sep>[ ./-])[0-9]{1,8}(?:(?P=sep)[0-9]{1,8}){0,3})",
)
_PHONE: Final = re.compile(_BEFORE + "(?:" + "|".join(_PHONE_FORMATS) + ")" + _AFTER)
_NATIONAL_DIGITS: Final = range(9, 13)
"""A trunk-zero national number has 9 to 12 digits, the zero included. Shorter runs are
dates (01.02.2026) and versions; this is the check that tells them apart."""

_NUMBER_RUN: Final = re.compile(
    r"(?<![0-9A-Za-z\]])(?<![0-9\]][.,])(?=(?:[0-9][ -]?){13})[0-9]{3,}(?:[ -][0-9]{3,})*"
    r"(?![0-9A-Za-z\[])"
)
"""Groups of three or more digits joined by single spaces or dashes, with at least 13
digits ahead; the candidates for a card number, searched for one in ``_cards``. The
digit-count lookahead keeps years, prices and phone numbers from reaching Python code at
all, and since a card is never printed with a group shorter than three, runs of small
numbers (12 15 18 21 ...) do not either. The lookbehind keeps the decimals of a
fraction out."""
_DIGIT_GROUP: Final = re.compile(r"[0-9]+")
_CARD_LENGTHS: Final = range(13, 20)


class BasicRedactor:
    """A best-effort example redactor: e-mail addresses, phone numbers and card numbers.

    **This is not compliance-grade.** It is a handful of regular expressions that catch
    the common written forms of three kinds of PII, shipped so the redaction seam has a
    working default and a shape to copy. It does not find names, street addresses,
    national ids, IBANs or anything written in words, and new formats will get past it.
    A deployment with legal obligations should supply its own ``Redactor``. With
    telemetry on, the ``redact.inspected`` / ``redact.changed`` pair exists to catch this
    one silently ceasing to match as the data drifts.

    What it replaces:

    - **E-mail addresses** become ``[email]``.
    - **Payment card numbers** become ``[card]``: 13 to 19 digits, contiguous or in
      groups of 3 to 6 after a first group of 4 (4111 1111 1111 1111, 3782 822463 10005),
      separated by spaces or dashes, and only when the Luhn checksum passes and the first
      digits belong to a card issuer (2221-2720, or a first digit from 3 to 6), so an
      order number or a timestamp is left alone.
    - **Phone numbers** become ``[phone]``: North American (555-123-4567,
      (555) 123-4567, +1 555 123 4567); anything in E.164 form (a plus and 8 to 15 digits
      with separators); national numbers that start with a trunk zero and are written in
      groups (UK 07700 900123, Germany 030 1234567, France 06 12 34 56 78, Japan
      090-1234-5678); Indian 98765 43210; Chinese mobiles; and a few unmistakable mobile
      prefixes written as one run of digits.

    It leaves alone years, dates (2026-11-29, 29.11.2026), times, small numbers, version
    strings (3.40.1), ids like ``c12-1a2b3c4d``, and numbers glued to ASCII letters. It
    works inside CJK text with no spaces: ``私の電話は090-1234-5678です`` becomes
    ``私の電話は[phone]です``.

    Every pattern is precompiled and can only start at the beginning of a token, so the
    cost is linear in the length of the text. The placeholders hold no digits and no
    ``@``, so redacting a redacted text changes nothing.
    """

    EMAIL: Final = "[email]"
    PHONE: Final = "[phone]"
    CARD: Final = "[card]"

    def redact(self, text: str) -> str:
        """``text`` with e-mail addresses, card numbers and phone numbers replaced.

        Addresses go first, so digits inside one are not taken for a phone number; card
        numbers before phone numbers, so a card's groups are not read as one.
        """
        if "@" in text:
            text = _EMAIL.sub(self.EMAIL, text)
        text = _NUMBER_RUN.sub(self._cards, text)
        return _PHONE.sub(self._phone, text)

    def _phone(self, match: re.Match[str]) -> str:
        found = match.group()
        if match.group("national") is not None or match.group("paren") is not None:
            digits = sum(c.isdigit() for c in found)
            if digits not in _NATIONAL_DIGITS:
                return found
            if match.group("sep") == "." and not _dotted_pairs(found):
                return found
        return self.PHONE

    def _cards(self, match: re.Match[str]) -> str:
        """Replace each card number found inside one run of digit groups.

        A run can hold more than a card ("4111 1111 1111 1111 2025", a quantity before
        it), so windows of whole groups are tried, the longest first from each group.
        """
        run = match.group()
        spans = [g.span() for g in _DIGIT_GROUP.finditer(run)]
        digits = "".join(run[a:b] for a, b in spans)
        offsets = [0]  # offsets[i]: where group i starts in ``digits``
        for a, b in spans:
            offsets.append(offsets[-1] + b - a)
        pieces: list[str] = []
        done = 0  # how much of ``run`` is already in ``pieces``
        i = 0
        while i < len(spans):
            end = _card_window(digits, offsets, i)
            if end is None:
                i += 1
                continue
            pieces += (run[done:spans[i][0]], self.CARD)
            done = spans[end - 1][1]
            i = end
        if not pieces:
            return run
        pieces.append(run[done:])
        return "".join(pieces)


def _dotted_pairs(number: str) -> bool:
    """Dots separate a phone number only in the French style, pairs after the trunk
    prefix (01.23.45.67.89); other dotted runs starting with zero are versions."""
    return all(len(part) == 2 for part in number.split(".")[1:])


def _card_window(digits: str, offsets: list[int], first: int) -> int | None:
    """The end (exclusive) of the longest card-shaped window of groups starting at group
    ``first``, or ``None``. A window is one group of 13-19 digits, or a group of 4
    followed by groups of 3 to 6; group ``i`` is ``digits[offsets[i]:offsets[i + 1]]``."""
    start = offsets[first]
    size = offsets[first + 1] - start
    if size in _CARD_LENGTHS:
        return first + 1 if _is_card(digits[start:start + size]) else None
    if size != 4:
        return None
    ends: list[int] = []
    for k in range(first + 1, min(first + 6, len(offsets) - 1)):
        size = offsets[k + 1] - offsets[k]
        length = offsets[k + 1] - start
        if not 3 <= size <= 6 or length >= _CARD_LENGTHS.stop:
            break
        if length in _CARD_LENGTHS:
            ends.append(k + 1)
    for end in reversed(ends):
        if _is_card(digits[start:offsets[end]]):
            return end
    return None


def _is_card(digits: str) -> bool:
    """Whether ``digits`` could be a payment card number: an issuer's prefix and a
    passing Luhn checksum. Only about one random number in ten passes Luhn; the prefix
    rule keeps timestamps (2026...) and most order numbers out as well."""
    if not ("3" <= digits[0] <= "6" or "2221" <= digits[:4] <= "2720"):
        return False
    kept = sum(map(int, digits[-1::-2]))
    doubled = sum(map(_LUHN_DOUBLED.__getitem__, digits[-2::-2]))
    return (kept + doubled) % 10 == 0


_LUHN_DOUBLED: Final = {str(d): d * 2 - 9 if d > 4 else d * 2 for d in range(10)}
"""Luhn doubles every second digit from the right and adds the digits of the product."""
