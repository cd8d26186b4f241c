"""A provisional rating: fewer than GRASS_PROVISIONAL_GAMES rated games, of the bot or of its
newest valid version (`elo.provisional`), marked on the leaderboard, the bot's page and the API."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from ladder.ratings.elo import DEFAULT_PARAMS, provisional
from ladder.ratings.selectors import bot_ratings, leaderboard
from ladder.ratings.services import rating_apply


def test_the_rule() -> None:
    assert provisional(0, threshold=15) and provisional(14, threshold=15)
    assert not provisional(15, threshold=15)
    # A new version's few games mark an established rating; None: not read, games decide.
    assert provisional(40, 3, threshold=15) and provisional(40, 0, threshold=15)
    assert not provisional(40, 15, threshold=15) and not provisional(40, None, threshold=15)
    assert provisional(3, 15, threshold=15)
    assert not provisional(0, 0, threshold=0)  # 0: nothing is provisional
    with pytest.raises(ValueError):
        provisional(3, threshold=-1)


def test_the_default_lasts_as_long_as_the_rating_moves_fast() -> None:
    """15 = 3 * k_games: the first game at which K is down to a quarter of a first game's and the
    deviation to half of a new bot's (the band no wider than the ladder's spread, sigma0)."""
    from ladder import settings

    games = settings.GRASS_PROVISIONAL_GAMES
    assert games == 3 * DEFAULT_PARAMS.k_games == 15
    assert DEFAULT_PARAMS.k_factor(games) == DEFAULT_PARAMS.k0 / 4
    assert DEFAULT_PARAMS.deviation(games) == pytest.approx(DEFAULT_PARAMS.sigma0 / 2)
    assert DEFAULT_PARAMS.k_factor(games - 1) > DEFAULT_PARAMS.k0 / 4


def _new_version(version: Any) -> Any:
    """A second valid version of `version`'s bot: the newest, the one that plays."""
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_version_upload

    newer = bot_version_upload(bot=version.bot, filename="bot.py", data=b"# v2\n")
    BotVersion.objects.filter(pk=newer.pk).update(status=BotVersion.Status.VALID)
    newer.refresh_from_db()
    return newer


@pytest.mark.django_db
def test_a_new_version_is_provisional_until_it_has_played_its_games(
    valid_version: Any, finished_match: Any, settings: Any, django_assert_num_queries: Any
) -> None:
    settings.GRASS_PROVISIONAL_GAMES = 3
    a, b = valid_version("alpha"), valid_version("beta")
    for _ in range(2):
        rating_apply(match=finished_match([a, b], [1, 2]))
    assert [(r.games, r.provisional) for r in bot_ratings(bot_id=a.bot_id)] == [(2, True)]
    rating_apply(match=finished_match([a, b], [1, 2]))
    # A classic game too: each ruleset counts its own games (the version has none there).
    rating_apply(match=finished_match([a, b], [1, 2], ruleset="classic"))
    (classic, modern) = bot_ratings(bot_id=a.bot_id)
    assert (classic.games, classic.provisional, classic.version_games) == (1, True, None)
    assert (modern.games, modern.provisional, modern.version_games) == (3, False, 3)

    a2 = _new_version(a)
    # Its ratings (1), its newest valid version (1), at most 3 changes of the modern board (1).
    with django_assert_num_queries(3):
        modern = bot_ratings(bot_id=a.bot_id)[1]
    assert (modern.games, modern.provisional, modern.version_games) == (3, True, 0)
    for played in (1, 2, 3):
        rating_apply(match=finished_match([a2, b], [2, 1]))
        modern = bot_ratings(bot_id=a.bot_id)[1]
        assert (modern.version_games, modern.provisional) == (played, played < 3)
    # Counted up to the threshold, never past it.
    rating_apply(match=finished_match([a2, b], [2, 1]))
    assert bot_ratings(bot_id=a.bot_id)[1].version_games == 3

    # The leaderboard marks by games only (one query a page, whatever its rows).
    with django_assert_num_queries(1):
        rows = leaderboard(ruleset="modern")[0:50]
    assert [(r.bot, r.provisional) for r in rows] == [("beta", False), ("alpha", False)]

    detail = APIClient().get(f"/api/bots/{a.bot_id}/").json()
    assert [(r["ruleset"], r["provisional"]) for r in detail["ratings"]] == [
        ("classic", True),
        ("modern", False),
    ]


@pytest.mark.django_db
def test_the_api_says_which_ratings_are_provisional(
    valid_version: Any, finished_match: Any, settings: Any
) -> None:
    settings.GRASS_PROVISIONAL_GAMES = 2
    a, b, c = valid_version("alpha"), valid_version("beta"), valid_version("gamma")
    rating_apply(match=finished_match([a, b], [1, 2]))
    rating_apply(match=finished_match([a, c], [1, 2]))
    client = APIClient()
    rows = client.get("/api/leaderboard/", {"ruleset": "modern"}).json()["results"]
    assert {r["bot"]: (r["games"], r["provisional"]) for r in rows} == {
        "alpha": (2, False),
        "beta": (1, True),
        "gamma": (1, True),
    }
    _new_version(a)
    detail = client.get(f"/api/bots/{a.bot_id}/").json()
    assert [(r["games"], r["provisional"]) for r in detail["ratings"]] == [(2, True)]


@pytest.mark.django_db
def test_the_pages_mark_a_provisional_rating_and_say_why(
    valid_version: Any, finished_match: Any, settings: Any
) -> None:
    from django.test import Client

    settings.GRASS_PROVISIONAL_GAMES = 2
    a, b = valid_version("alpha"), valid_version("beta")
    rating_apply(match=finished_match([a, b], [1, 2]))
    rating_apply(match=finished_match([a, b], [1, 2]))
    c = valid_version("gamma")
    rating_apply(match=finished_match([a, c], [1, 2]))
    client = Client()

    board = client.get("/").content.decode()
    elo = {row.bot: row.elo for row in leaderboard(ruleset="modern")}
    mark = '<abbr class="provisional" title="provisional: {} rated game{} so far">?</abbr>'
    assert f"{elo['gamma']}{mark.format(1, '')}" in board
    assert f"{elo['beta']}{mark.format(2, 's')}" not in board  # 2 games: settled
    assert board.count('class="provisional"') == 1
    assert "is provisional: fewer than 2 rated games, so it still moves fast" in board

    page = client.get(f"/bots/{a.bot_id}/").content.decode()
    assert 'class="provisional"' not in page and "is provisional" not in page
    _new_version(a)
    page = client.get(f"/bots/{a.bot_id}/").content.decode()
    assert 'title="provisional: its newest version has played 0 rated games so far">?' in page
    assert "the bot, or its newest version, has played fewer than 2 rated games" in page
