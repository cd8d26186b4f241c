"""Where a waiting challenge stands (issue 35): its place among the waiting challenges in the
order the dispatcher sends them (accounts in turn), about when its match is sent, then its
match's place in the queue; in the API and on its page.

The tests' `now` pool (ladder/settings_test.py) gives challenges one place."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.bots.models import BotVersion
from ladder.challenges.models import Challenge
from ladder.challenges.selectors import challenge_get, challenge_place, challenges_next
from ladder.challenges.services import challenge_cancel, challenge_dispatch
from ladder.matches.lanes import Lane
from ladder.matches.models import Match
from ladder.matchmaking.waiting import Place
from tests.ladder.challenges.test_challenge_services import waiting_challenges

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(
    owner: Any, stranger: Any, mine: BotVersion, owned_by: Any, examples: dict[str, BotVersion]
) -> tuple[list[Challenge], list[Challenge]]:
    """Ann's three challenges, then Bo's one."""
    greedy = examples["greedy"]
    hers = waiting_challenges(owner, mine, greedy, 3)
    his = waiting_challenges(stranger, owned_by(stranger, "his"), greedy, 1)
    return hers, his


def place(challenge: Challenge) -> Place | None:
    found = challenge_get(challenge_id=challenge.pk)
    assert found is not None
    return challenge_place(found)


def ahead(challenge: Challenge) -> int | None:
    found = place(challenge)
    return None if found is None else found.ahead


def test_a_challenge_is_behind_those_the_dispatcher_sends_first(
    queue: tuple[list[Challenge], list[Challenge]],
) -> None:
    hers, his = queue
    # Accounts in turn: her first, his first (asked for after her others), her second...
    in_order = [hers[0], his[0], hers[1], hers[2]]
    assert challenges_next(limit=10) == [c.pk for c in in_order]
    assert [ahead(c) for c in in_order] == [0, 1, 2, 3]
    assert challenge_cancel(challenge=hers[1])
    assert [ahead(c) for c in (hers[0], his[0], hers[2])] == [0, 1, 2]
    assert place(hers[1]) is None  # called off: it waits no more


def test_about_when_it_is_sent_then_when_its_match_starts(
    queue: tuple[list[Challenge], list[Challenge]],
) -> None:
    hers, his = queue
    assert place(hers[0]) == Place(lane="challenge", ahead=0, estimate_s=0)  # the place is free
    assert place(his[0]) == Place(lane="challenge", ahead=1, estimate_s=None)  # none played yet
    ended = timezone.now()
    Match.objects.create(
        lane=Lane.CHALLENGE,
        status=Match.Status.FINISHED,
        started=ended - timedelta(seconds=60),
        finished=ended,
    )
    (sent,) = challenge_dispatch(capacity=2)  # the one place, hers[0]'s now
    assert sent.pk == hers[0].pk
    # Her second is her oldest waiting now, asked for before his: it goes first. Each waits
    # for the games before it and its own place to end, a minute a game.
    assert challenges_next(limit=10) == [hers[1].pk, his[0].pk, hers[2].pk]
    assert [place(c) for c in (hers[1], his[0], hers[2])] == [
        Place(lane="challenge", ahead=0, estimate_s=60),
        Place(lane="challenge", ahead=1, estimate_s=120),
        Place(lane="challenge", ahead=2, estimate_s=180),
    ]
    # Sent: its match's place in the queue, until a worker takes it.
    assert place(hers[0]) == Place(lane="challenge", ahead=0, estimate_s=0)
    Match.objects.filter(pk=sent.match_id).update(status=Match.Status.RUNNING)
    assert place(hers[0]) is None


def test_the_api_and_the_page_say_where_it_stands(
    api: Any, client: Any, owner: Any, queue: tuple[list[Challenge], list[Challenge]]
) -> None:
    hers, _ = queue
    first = api("owner").get(f"/api/challenges/{hers[0].pk}/").json()
    assert first["queue"] == {
        "position": 1,
        "ahead": 0,
        "estimate_seconds": 0,
        "lane": "challenge",
    }
    second = api("owner").get(f"/api/challenges/{hers[1].pk}/").json()
    assert second["queue"]["position"] == 3 and second["waiting_ahead"] == 2  # behind Bo's
    client.force_login(owner)
    page = client.get(f"/challenges/{hers[1].pk}/").content.decode()
    assert 'workers: <span data-queue-position="3">3rd in the queue</span>. This' in page

    (sent,) = challenge_dispatch(capacity=2)
    page = client.get(f"/challenges/{hers[0].pk}/").content.decode()
    assert f"match {sent.match_id}</a> waits for a worker, <span" in page
    assert "1st in the queue, starting in a moment</span>." in page
    queued = api("owner").get(f"/api/challenges/{hers[0].pk}/").json()
    assert queued["state"] == "queued" and queued["queue"]["position"] == 1
    Match.objects.filter(pk=sent.match_id).update(status=Match.Status.RUNNING)
    running = api("owner").get(f"/api/challenges/{hers[0].pk}/").json()
    assert running["queue"] is None and running["waiting_ahead"] is None
