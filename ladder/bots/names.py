"""What a bot's name may hold, and how a bot is named to others.

A name is what people trust on a leaderboard, so every character in it must be one they can
see: a right-to-left override (U+202E) shows `evil` as `live`, a zero-width space makes two
names that look alike differ. Such characters are refused with a message naming them, never
dropped silently (the owner would not know the name they typed is not the name they got).

Names are unique per owner only, so a bot is shown to others as `owner/bot` (`display_name`):
two users' `greedy` read differently everywhere, at every width.
"""

from __future__ import annotations

import unicodedata

from django.core.exceptions import ValidationError

INVISIBLE: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),
    (0x007F, 0x00A0),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x1680, 0x1680),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x206F),
    (0x2800, 0x2800),
    (0x3000, 0x3000),
    (0x3164, 0x3164),
    (0xD800, 0xDFFF),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""The code points a bot's name may not hold, as ranges: control, format and surrogate
characters (categories Cc, Cf, Cs: bidi overrides and isolates, zero-width spaces and joiners,
the byte order mark), separators other than the plain space (no-break and ideographic spaces,
line and paragraph separators), Unicode's Default_Ignorable_Code_Point (drawn as nothing
whatever their category: the Hangul fillers are letters, variation selectors marks) and the
blank Braille pattern U+2800. Written out (Unicode 14, Python 3.11's) so the schema's pattern
is the same list; tests/ladder/bots/test_bot_names.py derives it again from those rules."""

SEPARATOR = "/"
"""Between the owner and the bot in a display name; usernames cannot hold it, nor bot names."""


def _class_range(low: int, high: int) -> str:
    def escape(point: int) -> str:
        return f"\\u{point:04X}"

    return escape(low) if low == high else f"{escape(low)}-{escape(high)}"


_CLASS = SEPARATOR + "".join(
    _class_range(low, high) for low, high in INVISIBLE if high < 0xD800 or 0xDFFF < low <= 0xFFFF
)
NAME_PATTERN = f"^[^{_CLASS}]*[^ {_CLASS}][^{_CLASS}]*$"
"""The same rules as `validate_bot_name`, as a regular expression for the API schema: visible
characters other than `/`, at least one of them not a space (spaces at the ends or in a row are
tidied by `tidy_spaces`, not refused). ECMA 262 syntax, as JSON
Schema asks, which without its `u` flag has no escape for a character beyond U+FFFF: the few
invisible ones up there (Unicode tags, the variation selectors supplement, a few format
controls) are refused by `validate_bot_name` without being named here. Lone surrogates are left
out: no UTF-8 JSON text holds one."""


def invisible_character(name: str) -> str | None:
    """The first character of `name` that a reader could not see (see INVISIBLE), or None."""
    for char in name:
        point = ord(char)
        if any(low <= point <= high for low, high in INVISIBLE):
            return char
    return None


def describe(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`: how an error message names a character it refuses
    (never the character itself, which would do to the message what it did to the name)."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"


def tidy_spaces(name: str) -> str:
    """`name` without spaces at its ends and with one space where it had several in a row:
    `greedy ` and `greedy` would look the same on a page."""
    return " ".join(part for part in name.split(" ") if part)


def validate_bot_name(name: str) -> None:
    """Raise ValidationError saying what is wrong with `name` (tidied by `tidy_spaces`): an
    invisible character (named by its code point) or a `/`."""
    char = invisible_character(name)
    if char is not None:
        raise ValidationError(
            f"The name holds {describe(char)}, which cannot be seen: a bot's name may use "
            "visible characters and single spaces only.",
            code="invisible",
        )
    if SEPARATOR in name:
        raise ValidationError(
            f"A bot's name may not hold {SEPARATOR!r}: bots are shown as owner{SEPARATOR}bot.",
            code="separator",
        )
    if name != tidy_spaces(name):
        raise ValidationError(
            "A bot's name may not start or end with a space, nor hold two in a row.",
            code="spaces",
        )


def display_name(*, owner: str, bot: str) -> str:
    """How a bot is shown to others: `owner/bot`, unique on the whole site."""
    return f"{owner}{SEPARATOR}{bot}"
