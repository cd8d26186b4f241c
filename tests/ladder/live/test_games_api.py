"""POST and GET /api/games/: a person's game started with an API token, as the Play page
starts one (the same service, limits and refusals), answered with the match's page and the
WebSocket to play it on."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from ladder.bots.models import Bot
from ladder.matches.models import Match

pytestmark = pytest.mark.django_db


@pytest.fixture
def example(valid_version: Any) -> Bot:
    """An example bot (owned by `examples`, as `manage.py ladder_examples` makes them)."""
    examples = get_user_model().objects.create_user(username="examples")
    bot = valid_version("greedy", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples)
    return Bot.objects.get(pk=bot.pk)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The games sent to the workers (none leaves the test)."""
    from ladder.matches import tasks

    got: list[Any] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda *a, **k: got.append((a, k)))
    return got


def test_a_person_starts_a_game_with_a_token_and_is_told_where_to_play_it(
    api: Any,
    stranger: Any,
    example: Bot,
    sent: list[Any],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GRASS_PLAY_DECISION_SECONDS = 90
    body = {"ruleset": "classic", "opponents": [example.pk], "seat": 1, "hands": 2}
    with django_capture_on_commit_callbacks(execute=True):
        response = api("stranger").post("/api/games/", body, format="json")
    assert response.status_code == 201, response.json()
    match = Match.objects.get()
    assert response.json() == {
        "id": match.pk,
        "status": "queued",
        "ruleset": "classic",
        "created": response.json()["created"],
        "seat": 1,
        "players": ["examples/greedy", "bo"],
        "hands": 2,
        "decision_seconds": 90,
        "match_url": f"/matches/{match.pk}/",
        "socket_url": f"ws://testserver/ws/matches/{match.pk}/",
    }
    assert not match.rated and match.limits == {"max_hands": 2}
    assert [s.player for s in match.seats.order_by("seat")] == [None, stranger]
    assert len(sent) == 1

    # Listed as the person's game (only theirs: the owner of the bot has none).
    listed = api("stranger").get("/api/games/")
    assert listed.status_code == 200 and listed.json() == [response.json()]
    assert api("owner").get("/api/games/").json() == []

    # One game at a time: 429, saying why.
    again = api("stranger").post("/api/games/", body, format="json")
    assert again.status_code == 429
    assert "you have a game queued" in again.json()["detail"]
    assert Match.objects.count() == 1


def test_a_secure_site_answers_a_wss_socket(api: Any, example: Bot, sent: list[Any]) -> None:
    response = api("stranger").post(
        "/api/games/", {"opponents": [example.pk]}, format="json", secure=True
    )
    assert response.status_code == 201
    game = response.json()
    assert game["socket_url"] == f"wss://testserver/ws/matches/{game['id']}/"
    # The defaults: modern, one hand, a seat drawn.
    assert (game["ruleset"], game["hands"], game["seat"] in (0, 1)) == ("modern", 1, True)


def test_signed_out_is_401_and_nothing_is_made(api: Any, example: Bot) -> None:
    from rest_framework.test import APIClient

    body = {"opponents": [example.pk]}
    anonymous = api("anonymous")
    assert anonymous.post("/api/games/", body, format="json").status_code == 401
    assert anonymous.get("/api/games/").status_code == 401
    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert forged.post("/api/games/", body, format="json").status_code == 401
    assert not Match.objects.exists()


@pytest.mark.parametrize(
    ("body", "status", "why"),
    [
        ({"opponents": []}, 400, "opponents"),
        ({"opponents": ["greedy"]}, 400, "opponents"),
        ({"opponents": [1, 2, 3, 4, 5, 6]}, 400, "opponents"),
        ({"opponents": "EXAMPLE", "ruleset": "poker"}, 400, "ruleset"),
        ({"opponents": "EXAMPLE", "hands": 0}, 400, "hands"),
        ({"opponents": "EXAMPLE", "hands": 99}, 400, "hands"),
        ({"opponents": "EXAMPLE", "seat": 6}, 400, "seat"),
        ({"opponents": "EXAMPLE", "seat": 2}, 409, "there are seats 0 to 1"),
        ({"opponents": [123456]}, 409, "bot 123456 is not on the ladder"),
        ({"opponents": "TWICE"}, 409, "a bot can hold only one seat"),
    ],
)
def test_a_game_that_cannot_be_made_is_refused_saying_why(
    api: Any, example: Bot, sent: list[Any], body: dict[str, Any], status: int, why: str
) -> None:
    """Malformed (what the schema says) is 400 by field; well formed but not playable (the
    ladder's state, a seat past this game's) is 409 with the service's words."""
    given = dict(body)
    if given["opponents"] == "EXAMPLE":
        given["opponents"] = [example.pk]
    elif given["opponents"] == "TWICE":
        given["opponents"] = [example.pk, example.pk]
    response = api("stranger").post("/api/games/", given, format="json")
    assert response.status_code == status, response.json()
    assert why in str(response.json())
    assert not Match.objects.exists() and not sent


def test_a_full_site_is_429_with_when_to_ask_again(
    api: Any, example: Bot, sent: list[Any], settings: Any, owner: Any
) -> None:
    from ladder.live.services import person_game_create

    settings.GRASS_PLAY_GAMES_MAX = 1
    person_game_create(user=owner, ruleset="modern", opponents=[example.pk], seat=0, hands=1)
    response = api("stranger").post("/api/games/", {"opponents": [example.pk]}, format="json")
    assert response.status_code == 429
    assert "tables for people are taken" in response.json()["detail"]
    assert response["Retry-After"] == "60"
    settings.GRASS_TABLES_CAPACITY = 0  # no table host up
    settings.GRASS_PLAY_GAMES_MAX = 0
    response = api("stranger").post("/api/games/", {"opponents": [example.pk]}, format="json")
    assert response.status_code == 429 and "no worker is up" in response.json()["detail"]


def test_the_bots_sit_in_the_order_of_opponents(
    api: Any, valid_version: Any, sent: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on the Play page: `opponents` is the bots' order around the person's seat (any
    shuffle here reverses the list: a game that shuffled its bots could not pass by luck)."""
    import random

    monkeypatch.setattr(random.SystemRandom, "shuffle", lambda self, items: items.reverse())
    a, b, c = (valid_version(name).bot for name in ("ann", "ben", "cy"))
    body = {"opponents": [b.pk, c.pk, a.pk], "seat": 0}
    response = api("stranger").post("/api/games/", body, format="json")
    assert response.status_code == 201, response.json()
    names = ["bo", b.display_name, c.display_name, a.display_name]
    assert response.json()["players"] == names
    seats = Match.objects.get().seats.order_by("seat")
    assert [s.bot_id for s in seats] == [None, b.pk, c.pk, a.pk]
