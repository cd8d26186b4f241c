"""The owner sees what their bot did (issue 15, point 3): each seat's stderr is kept for every
match and shown to its bot's owner (and staff) only; the match API gives the limits the game
was played under."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.core.files.base import ContentFile

from engine.rules import RULESETS, ruleset_limits
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_create, match_run

pytestmark = pytest.mark.django_db

CHATTY = b"""
import sys
from bots.sdk import Bot, Observation, run


class Chatty(Bot):
    def choose(self, obs: Observation) -> str:
        print(f"thinking about {len(obs.legal)} moves", file=sys.stderr, flush=True)
        return obs.legal[0]


if __name__ == "__main__":
    run(Chatty())
"""


@pytest.fixture
def played(valid_version: Any, finished_match: Any, stranger: Any) -> Match:
    """A finished match of ann's `mine` against bo's `theirs`, each seat with its stderr."""
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload

    mine = valid_version("mine")
    bot = bot_create(owner=stranger, name="theirs")
    theirs = bot_version_upload(bot=bot, filename="bot.py", data=mine.file.open("rb").read())
    BotVersion.objects.filter(pk=theirs.pk).update(status=BotVersion.Status.VALID)
    match = finished_match([mine, theirs], [1, 2])
    match.log = "logs/none.jsonl.gz"
    match.save(update_fields=["log"])
    MatchSeat.objects.filter(match=match, seat=0).update(stderr="Traceback: ann's secret line")
    MatchSeat.objects.filter(match=match, seat=1).update(stderr="bo's own debugging")
    return match


def test_a_played_match_keeps_each_seats_stderr(valid_version: Any, settings: Any) -> None:
    settings.GRASS_SANDBOXED = False  # the plain runner: this test is about what is stored
    chatty = valid_version("chatty")
    chatty.file.save("bot.py", ContentFile(CHATTY), save=False)
    chatty.sha256, chatty.size = hashlib.sha256(CHATTY).hexdigest(), len(CHATTY)
    chatty.save()
    match = match_create(versions=[chatty, valid_version("quiet")], limits={"max_hands": 1})

    match_run(match_id=match.pk)

    seat = MatchSeat.objects.get(match=match, bot_version=chatty)
    assert "thinking about" in seat.stderr


def test_the_api_shows_a_seats_stderr_to_its_owner_only(api: Any, played: Match) -> None:
    def stderr(persona: str) -> list[Any]:
        seats = api(persona).get(f"/api/matches/{played.pk}/").json()["seats"]
        return [seat["stderr"] for seat in seats]

    assert stderr("owner") == ["Traceback: ann's secret line", None]
    assert stderr("stranger") == [None, "bo's own debugging"]
    assert stderr("anonymous") == [None, None]


def test_the_match_page_links_the_owners_stderr_and_only_theirs(
    client: Any, played: Match, owner: Any, stranger: Any
) -> None:
    mine = f"/matches/{played.pk}/seats/0/stderr/"
    theirs = f"/matches/{played.pk}/seats/1/stderr/"

    assert mine not in client.get(f"/matches/{played.pk}/").content.decode()
    assert client.get(mine).status_code == 302  # to the log-in page

    client.force_login(owner)
    page = client.get(f"/matches/{played.pk}/").content.decode()
    assert f'href="{mine}"' in page and theirs not in page
    text = client.get(mine)
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    assert "ann's secret line" in text.content.decode()
    assert client.get(theirs).status_code == 403

    client.force_login(stranger)
    assert client.get(mine).status_code == 403
    assert "bo's own debugging" in client.get(theirs).content.decode()


def test_the_match_api_gives_the_limits_the_game_was_played_under(api: Any, played: Match) -> None:
    full = api("anonymous").get(f"/api/matches/{played.pk}/").json()["limits"]
    Match.objects.filter(pk=played.pk).update(limits={"max_hands": 3})
    short = api("anonymous").get(f"/api/matches/{played.pk}/").json()["limits"]

    defaults = ruleset_limits(RULESETS["modern"])
    assert full == defaults and full["max_hands"] > 3
    assert short == {**defaults, "max_hands": 3}
