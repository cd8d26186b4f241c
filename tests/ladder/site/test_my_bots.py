"""The signed-in person's own bots: a page of them, in the menu (a newcomer found a bot again
only through the leaderboard, once it was rated)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from ladder.bots.services import bot_create
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


def test_my_bots_lists_mine_with_their_verdicts_and_ratings(
    client: Client, owner: Any, stranger: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("alpha"), valid_version("beta")
    rating_apply(match=finished_match([a, b], [1, 2]))
    bot_create(owner=owner, name="fresh")  # no version yet
    bot_create(owner=stranger, name="theirs")
    client.force_login(owner)

    html = client.get("/").content.decode()
    assert 'href="/account/bots/">My bots</a>' in html  # in the menu
    page = client.get("/account/bots/").content.decode()
    names = re.findall(r'<th scope="row"><a href="/bots/\d+/">([^<]+)</a>', page)
    assert names == ["fresh", "beta", "alpha"]  # newest first, mine only
    assert "v1: valid" in page and "none yet" in page
    assert re.search(r"modern \d+ \(1\)", page)
    assert f'href="/bots/{a.bot_id}/upload/"' in page


def test_my_bots_pages_by_key_and_asks_anonymous_visitors_to_log_in(
    client: Client, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.bots import views

    monkeypatch.setattr(views, "MY_BOTS_PAGE", 2)
    made = [bot_create(owner=owner, name=f"b{i}").pk for i in range(3)]
    assert client.get("/account/bots/").status_code == 302  # to the login page
    client.force_login(owner)
    first = client.get("/account/bots/").content.decode()
    assert f'href="?before={made[1]}"' in first
    older = client.get("/account/bots/", {"before": made[1]}).content.decode()
    assert re.findall(r'<a href="/bots/\d+/">(b\d)</a>', older) == ["b0"]
    assert "Older bots" not in older
    assert client.get("/account/bots/", {"before": "x1"}).status_code == 404


def test_a_person_with_no_bot_is_told_how_to_begin(client: Client, stranger: Any) -> None:
    client.force_login(stranger)
    page = client.get("/account/bots/").content.decode()
    assert "You have no bot yet" in page and 'href="/write-a-bot/"' in page
