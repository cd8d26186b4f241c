"""A name means one bot (issue 15, point 2): two owners' bots of one name are told apart as
owner/bot on every page and in the API; a bot off the ladder is marked and holds no rank."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from ladder.bots.models import Bot
from ladder.bots.services import bot_create, bot_version_upload
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_greedies(
    valid_version: Any, stranger: Any, example_file: Any, finished_match: Any
) -> list[Any]:
    """ann/greedy and bo/greedy (plus ann/other), with one rated game between them."""
    from ladder.bots.models import BotVersion

    mine = valid_version("greedy")
    other = valid_version("other")
    bot = bot_create(owner=stranger, name="greedy")
    theirs = bot_version_upload(bot=bot, filename="bot.py", data=example_file("greedy"))
    BotVersion.objects.filter(pk=theirs.pk).update(status=BotVersion.Status.VALID)
    match = finished_match([mine, theirs, other], [1, 2, 3])
    rating_apply(match=match)
    return [mine, theirs, other, match]


def test_the_leaderboard_page_and_api_show_owner_slash_bot(client: Any, two_greedies: Any) -> None:
    page = client.get("/").content.decode()
    rows = client.get("/api/leaderboard/").json()["results"]

    # Owner and name with a line-break opportunity between them (the `owner_name` filter).
    assert ">ann/<wbr>greedy</a>" in page and ">bo/<wbr>greedy</a>" in page
    assert {row["display_name"] for row in rows} == {"ann/greedy", "bo/greedy", "ann/other"}


def test_the_match_page_and_api_show_owner_slash_bot(client: Any, two_greedies: Any) -> None:
    match = two_greedies[-1]
    page = client.get(f"/matches/{match.pk}/").content.decode()
    seats = client.get(f"/api/matches/{match.pk}/").json()["seats"]
    listed = client.get("/api/matches/").json()["results"][0]["seats"]

    # Owner and name with a line-break opportunity between them (the `owner_name` filter).
    assert ">ann/<wbr>greedy</a>" in page and ">bo/<wbr>greedy</a>" in page
    assert {s["display_name"] for s in seats} == {"ann/greedy", "bo/greedy", "ann/other"}
    assert {s["display_name"] for s in listed} == {"ann/greedy", "bo/greedy", "ann/other"}


def test_the_bot_page_is_titled_owner_slash_bot(client: Any, two_greedies: Any) -> None:
    theirs = two_greedies[1]
    page = client.get(f"/bots/{theirs.bot_id}/").content.decode()

    assert "<h1>bo/<wbr>greedy</h1>" in page


def test_a_match_plays_its_bots_under_their_owner_slash_names(two_greedies: Any) -> None:
    from ladder.bots.selectors import bot_version_source

    assert bot_version_source(version=two_greedies[1]).name == "bo/greedy"


def test_a_bot_off_the_ladder_holds_no_rank_and_is_shown_apart(
    client: Any, two_greedies: Any
) -> None:
    mine = two_greedies[0]
    Bot.objects.filter(pk=mine.bot_id).update(
        disabled=timezone.now(), disabled_reason="forfeited its last 5 games"
    )

    rows = client.get("/api/leaderboard/").json()["results"]
    page = client.get("/").content.decode()
    listed = client.get("/api/bots/").json()["results"]

    assert [row["display_name"] for row in rows] == ["bo/greedy", "ann/other"]
    assert [row["rank"] for row in rows] == [1, 2]
    board, off = page.split('id="off-ladder"')
    assert "ann/<wbr>greedy" not in board and "bo/<wbr>greedy" in board
    assert "ann/<wbr>greedy" in off and "off the ladder" in off and "forfeited its last 5" in off
    marked = {bot["display_name"]: bot["disabled"] for bot in listed}
    assert marked["ann/greedy"] is not None and marked["bo/greedy"] is None
