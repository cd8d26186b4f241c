"""The challenge pages: the form (examples and your versions ticked, others typed), a
challenge's page while it waits and once played, the rematch button on the match page, the
links from the bot page and the menu; other users see none of it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.challenges.models import Challenge
from ladder.challenges.services import challenge_dispatch
from ladder.matches.models import Match

pytestmark = pytest.mark.django_db


def form(version: BotVersion, **fields: Any) -> dict[str, Any]:
    return {
        "version": f"{version.bot_id}:{version.number}",
        "ruleset": "modern",
        "seating": "random",
        **fields,
    }


def test_the_page_is_for_signed_in_authors(client: Any, owner: Any, mine: BotVersion) -> None:
    answer = client.get("/challenges/")
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")
    client.force_login(owner)
    page = client.get("/challenges/").content.decode()
    assert 'href="/challenges/">Challenges</a>' in page  # in the menu


def test_asking_with_ticked_and_typed_opponents(
    client: Any, owner: Any, mine: BotVersion, examples: dict[str, BotVersion]
) -> None:
    client.force_login(owner)
    page = client.get(f"/challenges/?bot={mine.bot_id}&opponent=examples/random").content.decode()
    assert f'value="{mine.bot_id}:1" selected' in page
    assert 'value="examples/greedy"' in page and 'value="ann/mine@v1"' in page
    assert "examples/random</textarea>" in page
    answer = client.post(
        "/challenges/",
        form(mine, picks=["examples/greedy"], others="examples/random\n", max_hands="2"),
    )
    challenge = Challenge.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/challenges/{challenge.pk}/"
    assert [s.version for s in challenge.seats.order_by("position")] == [
        mine,
        examples["greedy"],
        examples["random"],
    ]
    assert challenge.max_hands == 2


def test_an_unknown_opponent_and_the_quota_are_said_on_the_form(
    client: Any, owner: Any, mine: BotVersion, examples: dict[str, BotVersion], settings: Any
) -> None:
    client.force_login(owner)
    unknown = client.post("/challenges/", form(mine, others="nobody/nothing"))
    assert unknown.status_code == 200 and "No bot is named" in unknown.content.decode()
    none = client.post("/challenges/", form(mine))
    assert "Choose 1 to 5 opponents" in none.content.decode()
    settings.GRASS_CHALLENGES_PER_DAY = 1
    assert client.post("/challenges/", form(mine, picks=["examples/greedy"])).status_code == 302
    refused = client.post("/challenges/", form(mine, picks=["examples/greedy"]))
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many challenges" in refused.content.decode()
    assert Challenge.objects.count() == 1


def test_a_challenge_page_follows_it_and_offers_a_rematch(
    client: Any, owner: Any, stranger: Any, mine: BotVersion, examples: dict[str, BotVersion]
) -> None:
    client.force_login(owner)
    client.post("/challenges/", form(mine, picks=["examples/greedy"]))
    challenge = Challenge.objects.get()
    url = f"/challenges/{challenge.pk}/"
    waiting = client.get(url).content.decode()
    assert '<meta http-equiv="refresh" content="3">' in waiting
    assert 'data-state="waiting"' in waiting and "Call it off" in waiting
    assert "Rematch" not in waiting

    (sent,) = challenge_dispatch(capacity=4)
    Match.objects.filter(pk=sent.match_id).update(status=Match.Status.FINISHED)
    played = client.get(url).content.decode()
    assert 'http-equiv="refresh"' not in played and 'data-state="finished"' in played
    assert f'href="/matches/{sent.match_id}/">watch match {sent.match_id}</a>' in played
    again = client.post(f"/challenges/{challenge.pk}/rematch/")
    rematch = Challenge.objects.exclude(pk=challenge.pk).get()
    assert again["Location"] == f"/challenges/{rematch.pk}/" and rematch.rematch_of == challenge

    # The match page: the author's rematch button; others see whose challenge it was.
    match_page = client.get(f"/matches/{sent.match_id}/").content.decode()
    assert f'action="/challenges/{challenge.pk}/rematch/"' in match_page
    assert "A challenge of yours: unrated" in match_page
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    assert client.post(f"/challenges/{challenge.pk}/rematch/").status_code == 404
    assert client.post(f"/challenges/{challenge.pk}/cancel/").status_code == 404
    theirs = client.get(f"/matches/{sent.match_id}/").content.decode()
    assert "A challenge by ann: unrated" in theirs and "/rematch/" not in theirs
    assert Challenge.objects.count() == 2


def test_the_bot_page_links_to_a_challenge_with_or_against_the_bot(
    client: Any, owner: Any, stranger: Any, mine: BotVersion
) -> None:
    client.force_login(owner)
    own = client.get(f"/bots/{mine.bot_id}/").content.decode()
    assert f'href="/challenges/?bot={mine.bot_id}">Challenge with this bot</a>' in own
    client.force_login(stranger)
    other = client.get(f"/bots/{mine.bot_id}/").content.decode()
    assert re.search(r'href="/challenges/\?opponent=ann/mine">Challenge this bot</a>', other)
    client.logout()
    assert "Challenge" not in client.get(f"/bots/{mine.bot_id}/").content.decode()
