"""A name means one bot (issue 15, point 2): invisible characters are refused with a message
naming them, and bots are shown as owner/bot in the API."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from ladder.bots.names import INVISIBLE, invisible_character, tidy_spaces

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("\u202eevil\u202c", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("gree\u200bdy", "U+200B ZERO WIDTH SPACE"),
        ("\ufeffgreedy", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("greedy\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("a\u3164b", "U+3164 HANGUL FILLER"),
        ("\u2800", "U+2800 BRAILLE PATTERN BLANK"),
        ("x\u00a0y", "U+00A0 NO-BREAK SPACE"),
        ("greedy\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A"),
        ("bell\x07", "U+0007"),
    ],
)
def test_an_invisible_character_in_a_name_is_refused_and_named(
    api: Any, name: str, named: str
) -> None:
    response = api("owner").post("/api/bots/", {"name": name}, format="json")

    assert response.status_code == 400
    (message,) = response.json()["name"]
    assert named in message and "cannot be seen" in message
    assert name not in message  # the character is named, never echoed


def test_the_bot_page_form_refuses_it_too(client: Any, owner: Any) -> None:
    client.force_login(owner)
    response = client.post("/bots/new/", {"name": "\u202eevil\u202c"})

    assert response.status_code == 200
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in response.content.decode()


def test_visible_names_in_any_script_are_kept_with_their_spaces_tidied(api: Any) -> None:
    for name, stored in [("Grün 日本 ☘", "Grün 日本 ☘"), ("  my   bot ", "my bot")]:
        response = api("owner").post("/api/bots/", {"name": name}, format="json")
        assert response.status_code == 201, response.json()
        assert response.json()["name"] == stored


def test_a_slash_is_refused_it_separates_owner_and_bot(api: Any) -> None:
    response = api("owner").post("/api/bots/", {"name": "ann/greedy"}, format="json")

    assert response.status_code == 400 and "owner/bot" in response.json()["name"][0]


def test_the_list_of_invisible_characters_follows_its_rules() -> None:
    """INVISIBLE is written out (the schema's pattern is made from it); derive it again."""
    ignorable = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160)]
    ignorable += [(0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E)]
    ignorable += [(0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF)]
    ignorable += [(0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A)]
    ignorable += [(0xE0000, 0xE0FFF)]

    def refused(point: int) -> bool:
        char = chr(point)
        category = unicodedata.category(char)
        return (
            category in ("Cc", "Cf", "Cs")
            or (category.startswith("Z") and char != " ")
            or point == 0x2800
            or any(low <= point <= high for low, high in ignorable)
        )

    for point in range(0x110000):
        assert refused(point) == (invisible_character(chr(point)) is not None), hex(point)
    assert INVISIBLE[0] == (0, 0x1F)


def test_tidy_spaces() -> None:
    assert tidy_spaces("  a  b ") == "a b"


def test_the_api_shows_bots_as_owner_slash_name(api: Any, valid_version: Any) -> None:
    version = valid_version("greedy")
    bot_id = version.bot_id

    listed = api("anonymous").get("/api/bots/").json()["results"]
    detail = api("anonymous").get(f"/api/bots/{bot_id}/").json()

    assert [b["display_name"] for b in listed] == ["ann/greedy"]
    assert detail["display_name"] == "ann/greedy"
