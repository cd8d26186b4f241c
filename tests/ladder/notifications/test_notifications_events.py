"""Events from the rest of the ladder: a settled match (`match_settled`) and a tournament's
start and end (`tournament_status_changed`) become deliveries with the right payloads."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.matches.models import Match
from ladder.matches.signals import match_settled
from ladder.notifications.models import Delivery
from ladder.notifications.services import webhook_create
from ladder.ratings.models import BotRating
from ladder.ratings.services import rating_apply
from ladder.tournaments.models import Entry, Tournament
from ladder.tournaments.signals import (
    tournament_status_changed,
    tournament_status_changed_on_commit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def hooked(owner: Any, stranger: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The owner's webhook (never called here: the tests read the recorded deliveries), and
    the stranger's, which must get nothing of the owner's bots."""
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = True
    settings.GRASS_SITE_URL = "https://ladder.example.org"
    webhook_create(owner=stranger, url="http://127.0.0.1:9/stranger")
    return webhook_create(owner=owner, url="http://127.0.0.1:9/owner")


def _deliveries(event: str) -> list[Delivery]:
    return list(Delivery.objects.filter(event=event).order_by("id"))


def test_a_finished_match_tells_each_seats_owner_with_place_and_rating(
    hooked: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b, c = valid_version("alpha"), valid_version("beta"), valid_version("gamma")
    match = finished_match([a, b, c], [1, 2, 3])
    match.seats.filter(seat=0).update(total=30_000)
    rating_apply(match=match)

    match_settled.send(sender=Match, match_id=match.pk, status="finished")

    finished = _deliveries("match.finished")
    assert len(finished) == 3 and {d.webhook_id for d in finished} == {hooked.pk}
    first = next(d.payload for d in finished if d.payload["bot"]["name"] == "alpha")
    change = match.rating_changes.get(bot=a.bot)
    assert first == {
        "match": {
            "id": match.pk,
            "ruleset": "modern",
            "rated": True,
            "url": f"https://ladder.example.org/matches/{match.pk}/",
        },
        "bot": {
            "id": a.bot_id,
            "name": "alpha",
            "url": f"https://ladder.example.org/bots/{a.bot_id}/",
        },
        "version": 1,
        "seat": 0,
        "place": 1,
        "seats": 3,
        "total": 30_000,
        "forfeited": False,
        "rating": {
            "ruleset": "modern",
            "before": 1500.0,
            "after": round(change.after, 1),
            "delta": round(change.delta, 1),
        },
    }
    assert _deliveries("bot.crashed") == []


def test_a_forfeit_is_a_crash_with_its_reason(
    hooked: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("alpha"), valid_version("beta")
    match = finished_match([a, b], [1, 2])
    match.seats.filter(seat=1).update(
        forfeited=True,
        forfeit_reason="3 strikes (last: timeout: no answer in 1000 ms)",
        faults={"timeout": 3},
    )

    match_settled.send(sender=Match, match_id=match.pk, status="finished")

    (crash,) = _deliveries("bot.crashed")
    assert crash.payload["bot"]["name"] == "beta"
    assert crash.payload["reason"] == "3 strikes (last: timeout: no answer in 1000 ms)"
    assert crash.payload["faults"] == {"timeout": 3}
    assert crash.payload["match"]["id"] == match.pk
    # Unrated here (no rating_apply): the finished events say so.
    assert {d.payload["rating"] is None for d in _deliveries("match.finished")} == {True}


def test_a_failed_match_tells_nobody(hooked: Any, valid_version: Any) -> None:
    from ladder.matches.services import match_create

    match = match_create(versions=[valid_version("alpha"), valid_version("beta")])
    Match.objects.filter(pk=match.pk).update(status=Match.Status.FAILED)
    match_settled.send(sender=Match, match_id=match.pk, status="failed")
    assert not Delivery.objects.exists()


def test_a_rating_reaching_a_new_hundred_is_a_milestone_once(
    hooked: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("alpha"), valid_version("beta")
    # Established ratings (small K), as if after 40 games each.
    BotRating.objects.update_or_create(
        bot=a.bot, ruleset="modern", defaults={"mu": 1599.0, "games": 40}
    )
    BotRating.objects.update_or_create(
        bot=b.bot, ruleset="modern", defaults={"mu": 1500.0, "games": 40}
    )

    def play(places: list[int]) -> None:
        match = finished_match([a, b], places)
        rating_apply(match=match)
        match_settled.send(sender=Match, match_id=match.pk, status="finished")

    play([1, 2])  # alpha passes 1600
    (milestone,) = _deliveries("rating.milestone")
    assert milestone.payload["milestone"] == 1600
    assert milestone.payload["bot"]["name"] == "alpha" and milestone.payload["rating"] > 1600

    play([2, 1])  # alpha back below 1600, beta back above 1500 where it started
    play([1, 2])
    assert BotRating.objects.get(bot=a.bot, ruleset="modern").mu > 1600
    # Alpha above 1600 again, but not for the first time; beta never above its start's peak.
    assert len(_deliveries("rating.milestone")) == 1


def test_the_milestone_check_reads_no_rating_history(
    hooked: Any, valid_version: Any, finished_match: Any
) -> None:
    """The peak before a change is kept on it (`peak_before`): the receiver reads the match's
    own changes, never the bot's history (155-270 ms a match for a bot with 200k games)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ladder.notifications.receivers import match_events

    a, b = valid_version("alpha"), valid_version("beta")
    for places in ([1, 2], [2, 1], [1, 2]):
        match = finished_match([a, b], places)
        rating_apply(match=match)
    with CaptureQueriesContext(connection) as captured:
        match_events(match_id=match.pk)
    history = [
        q["sql"] for q in captured if "ratings_ratingchange" in q["sql"] and "MAX(" in q["sql"]
    ]
    assert history == []


def test_a_receiver_error_never_breaks_the_match(
    hooked: Any, valid_version: Any, finished_match: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.notifications import receivers

    def broken(**_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(receivers, "match_events", broken)
    match = finished_match([valid_version("alpha"), valid_version("beta")], [1, 2])
    match_settled.send(sender=Match, match_id=match.pk, status="finished")  # does not raise


def _tournament(owner: Any, stranger: Any, bots: list[Any], status: str) -> Tournament:
    now = timezone.now()
    t = Tournament.objects.create(
        name="Friday cup",
        organiser=stranger,
        registration_opens=now - timedelta(hours=2),
        registration_closes=now - timedelta(hours=1),
        starts_at=now,
        status=status,
        started=now,
        seats=2,
    )
    for bot in bots:
        Entry.objects.create(tournament=t, bot=bot, version=bot.versions.get())
    return t


def test_a_tournament_starting_tells_each_entrants_owner_once(
    hooked: Any, owner: Any, stranger: Any, valid_version: Any
) -> None:
    bots = [valid_version("alpha").bot, valid_version("beta").bot, valid_version("gamma").bot]
    t = _tournament(owner, stranger, bots, Tournament.Status.RUNNING)
    Entry.objects.filter(bot=bots[2]).update(withdrawn=timezone.now())

    tournament_status_changed.send(sender=Tournament, tournament_id=t.pk, status="running")

    (starting,) = _deliveries("tournament.starting")
    assert starting.owner_id == owner.pk
    assert starting.payload["tournament"]["name"] == "Friday cup"
    assert starting.payload["tournament"]["url"] == (
        f"https://ladder.example.org/tournaments/{t.pk}/"
    )
    assert starting.payload["bots"] == [
        {"id": bots[0].pk, "name": "alpha"},
        {"id": bots[1].pk, "name": "beta"},
    ]
    # Other statuses (registration opening, pausing...) are not events.
    tournament_status_changed.send(sender=Tournament, tournament_id=t.pk, status="paused")
    assert Delivery.objects.count() == 1


def test_a_finished_tournament_tells_ranks_after_commit(
    hooked: Any,
    owner: Any,
    stranger: Any,
    valid_version: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    bots = [valid_version("alpha").bot, valid_version("beta").bot]
    t = _tournament(owner, stranger, bots, Tournament.Status.FINISHED)

    with django_capture_on_commit_callbacks(execute=True):
        tournament_status_changed_on_commit(tournament_id=t.pk, status="finished")
        assert not Delivery.objects.exists()  # nothing before the commit

    (finished,) = _deliveries("tournament.finished")
    assert finished.payload["tournament"]["status"] == "finished"
    ranked = {bot["name"]: bot for bot in finished.payload["bots"]}
    assert set(ranked) == {"alpha", "beta"}
    assert all("rank" in bot and "points" in bot for bot in ranked.values())


def test_bot_disabled_payload_names_the_bot_and_the_reason(
    hooked: Any, owner: Any, valid_version: Any
) -> None:
    from ladder.notifications.events import Event
    from ladder.notifications.payloads import bot_disabled_payload
    from ladder.notifications.services import notify

    bot = valid_version("alpha").bot
    payload = bot_disabled_payload(bot=bot, reason="crashed in 10 games in a row")
    (delivery,) = notify(event=Event.BOT_DISABLED, owner=owner, payload=payload)
    assert delivery.payload == {
        "bot": {"id": bot.pk, "name": "alpha", "url": f"https://ladder.example.org/bots/{bot.pk}/"},
        "reason": "crashed in 10 games in a row",
    }


def test_a_bot_disabled_for_its_forfeits_tells_its_owner_after_commit(
    hooked: Any,
    settings: Any,
    valid_version: Any,
    finished_match: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from ladder.matches.recording import bot_disable_if_failing

    settings.GRASS_DISABLE_AFTER_FORFEITS = 2
    alpha, beta = valid_version("alpha"), valid_version("beta")
    for _ in range(2):
        match = finished_match([alpha, beta], [2, 1])
        match.seats.filter(seat=0).update(forfeited=True, forfeit_reason="crashed")

    with django_capture_on_commit_callbacks(execute=True):
        assert bot_disable_if_failing(bot_id=alpha.bot_id)
        assert not Delivery.objects.exists()  # nothing before the commit

    (disabled,) = _deliveries("bot.disabled")
    assert disabled.webhook_id == hooked.pk
    assert disabled.payload["bot"]["name"] == "alpha"
    assert disabled.payload["reason"].startswith("forfeited its last 2 games")
