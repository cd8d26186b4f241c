"""People's games have their own cap, as challenges have their share (issue 35): on the table
hosts (the default) as many as their tables (GRASS_TABLES_CAPACITY, or their threads); with
GRASS_PLAY_QUEUE=now, GRASS_PLAY_SHARE percent of the `now` pool (at least one game while a
worker is up); GRASS_PLAY_GAMES_MAX games when set. A game past it is refused, saying why, and
the place is free again once a game ends."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from ladder.bots.models import Bot
from ladder.live.services import PlayError, person_game_create
from ladder.matches.models import Match
from ladder.matchmaking.capacity import person_places

pytestmark = pytest.mark.django_db


@pytest.fixture
def example(valid_version: Any) -> Bot:
    """An example bot (owned by `examples`, as the Play page offers them)."""
    bot = valid_version("greedy", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=_person("examples"))
    return Bot.objects.get(pk=bot.pk)


def _person(name: str) -> Any:
    return get_user_model().objects.create_user(username=name)


def _ask(user: Any, bot: Bot) -> Match:
    return person_game_create(user=user, ruleset="modern", opponents=[bot.pk], seat=0, hands=1)


def test_the_tables_are_the_table_hosts_or_a_share_of_the_now_pool_or_the_fixed_number(
    settings: Any,
) -> None:
    def places(**fixed: int) -> list[int]:
        found = []
        for name, value in fixed.items():
            setattr(settings, name, value)
            found.append(person_places())
        return found

    # The table hosts' tables, whatever the `now` pool holds.
    assert places(GRASS_TABLES_CAPACITY=0, GRASS_NOW_CAPACITY=8) == [0, 0]
    assert places(GRASS_TABLES_CAPACITY=200, GRASS_NOW_CAPACITY=0) == [200, 200]
    # On the `now` pool: a share of it, at least one while it is up.
    settings.GRASS_PLAY_QUEUE = "now"
    settings.GRASS_PLAY_SHARE = 25
    assert [places(GRASS_NOW_CAPACITY=c)[0] for c in (0, 1, 4, 8, 40)] == [0, 1, 1, 2, 10]
    settings.GRASS_PLAY_GAMES_MAX = 6  # a fixed number, wherever they are played
    assert [places(GRASS_NOW_CAPACITY=c)[0] for c in (0, 4, 40)] == [6, 6, 6]
    settings.GRASS_PLAY_QUEUE = "tables"
    assert places(GRASS_TABLES_CAPACITY=200) == [6]


def test_a_persons_game_past_the_share_is_refused_saying_why_until_one_ends(
    settings: Any, example: Bot
) -> None:
    settings.GRASS_TABLES_CAPACITY = 2  # two tables for people
    first, second = _ask(_person("p1"), example), _ask(_person("p2"), example)
    third = _person("p3")
    with pytest.raises(PlayError, match="all 2 of the site's tables for people are taken"):
        _ask(third, example)
    assert Match.objects.count() == 2
    Match.objects.filter(pk=first.pk).update(status=Match.Status.RUNNING)
    with pytest.raises(PlayError, match="are taken"):
        _ask(third, example)  # running counts as queued does
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED)
    assert _ask(third, example).pk not in (first.pk, second.pk)


def test_with_no_worker_up_a_persons_game_is_refused_saying_so(settings: Any, example: Bot) -> None:
    settings.GRASS_TABLES_CAPACITY = 0  # no table host up (a `now` pool is: not theirs)
    with pytest.raises(PlayError, match="no worker is up"):
        _ask(_person("p1"), example)
    assert not Match.objects.exists()


def test_the_page_shows_the_refusal(client: Any, settings: Any, example: Bot) -> None:
    settings.GRASS_PLAY_GAMES_MAX = 1
    _ask(_person("p1"), example)
    client.force_login(_person("p2"))
    form = {"ruleset": "modern", "hands": "1", "opponent_1": str(example.pk)}
    response = client.post("/play/", form)
    assert response.status_code == 400
    assert "all 1 of the site&#x27;s tables for people are taken" in response.content.decode()
