"""A bot that forfeits its last GRASS_DISABLE_AFTER_FORFEITS ladder games is taken off the
ladder, its owner is told, and a new valid version puts it back."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from ladder.bots.models import Bot
from ladder.bots.signals import bot_disabled
from ladder.matches.models import Match, MatchSeat
from ladder.matches.recording import bot_disable_if_failing
from ladder.matchmaking.selectors import matchmaker_waiting

pytestmark = pytest.mark.django_db


def _games(version: Any, other: Any, forfeits: list[bool]) -> None:
    for forfeited in forfeits:
        match = Match.objects.create(status=Match.Status.FINISHED, finished=timezone.now())
        MatchSeat.objects.create(
            match=match,
            seat=0,
            bot_version=version,
            bot_id=version.bot_id,
            place=2 if forfeited else 1,
            forfeited=forfeited,
            forfeit_reason="crashed: exit status 1" if forfeited else "",
        )
        MatchSeat.objects.create(
            match=match, seat=1, bot_version=other, bot_id=other.bot_id, place=1
        )


def test_five_forfeits_in_a_row_disable_the_bot_and_tell_its_owner(
    valid_version: Any, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.GRASS_DISABLE_AFTER_FORFEITS = 5
    crasher, steady = valid_version("crasher"), valid_version("steady")
    heard: list[tuple[int, str]] = []
    listener = lambda sender, bot_id, reason, **_: heard.append((bot_id, reason))  # noqa: E731
    bot_disabled.connect(listener)
    try:
        _games(crasher, steady, [True, False, True, True, True, True])
        assert not bot_disable_if_failing(bot_id=crasher.bot_id)  # a clean game among the 5
        _games(crasher, steady, [True])
        with django_capture_on_commit_callbacks(execute=True):
            assert bot_disable_if_failing(bot_id=crasher.bot_id)
            assert not bot_disable_if_failing(bot_id=crasher.bot_id)  # once
    finally:
        bot_disabled.disconnect(listener)

    bot = Bot.objects.get(pk=crasher.bot_id)
    assert bot.disabled is not None
    assert bot.disabled_reason == "forfeited its last 5 games; the last: crashed: exit status 1"
    assert heard == [(bot.pk, bot.disabled_reason)]
    playing = {c.bot_id for c in matchmaker_waiting(ruleset="modern", limit=10)}
    assert playing == {steady.bot_id}


def test_a_new_version_that_passes_validation_puts_the_bot_back(
    valid_version: Any, example_file: Any, sandbox_ready: None, client: Any, owner: Any
) -> None:
    from ladder.bots.services import bot_version_submit

    version = valid_version("crasher")
    Bot.objects.filter(pk=version.bot_id).update(disabled=timezone.now(), disabled_reason="x")
    client.force_login(owner)
    assert "Off the ladder since" in client.get(f"/bots/{version.bot_id}/").content.decode()

    bot_version_submit(bot=version.bot, filename="bot.py", data=example_file("greedy"))
    assert Bot.objects.get(pk=version.bot_id).disabled is None
    assert client.get(f"/api/bots/{version.bot_id}/").json()["disabled"] is None


def test_a_version_that_passes_validation_puts_its_bot_in_the_matchmakers_pool(
    owner: Any, example_file: Any, sandbox_ready: None, settings: Any
) -> None:
    """The matchmaker reads only the pool's rows (a rating row per ladder ruleset), so the
    verdict that lets a bot play must make them, in its own transaction."""
    from ladder.bots.services import bot_create, bot_version_submit
    from ladder.ratings.models import BotRating

    settings.GRASS_LADDER_TABLES = [("modern", 4), ("classic", 3)]
    bot = bot_create(owner=owner, name="newcomer")
    assert not BotRating.objects.filter(bot=bot).exists()
    bot_version_submit(bot=bot, filename="bot.py", data=example_file("greedy"))
    rows = BotRating.objects.filter(bot=bot).order_by("ruleset")
    assert [(r.ruleset, r.games) for r in rows] == [("classic", 0), ("modern", 0)]
    assert {c.bot_id for c in matchmaker_waiting(ruleset="classic", limit=5)} == {bot.pk}


def test_the_owner_gets_a_bot_disabled_delivery(
    valid_version: Any, owner: Any, django_capture_on_commit_callbacks: Any, monkeypatch: Any
) -> None:
    from ladder.notifications.models import Delivery, Webhook
    from ladder.notifications.tasks import deliver

    monkeypatch.setattr(deliver, "delay", lambda *a, **k: None)
    Webhook.objects.create(owner=owner, url="https://hooks.example.org/x", secret="s")
    version = valid_version("crasher")
    with django_capture_on_commit_callbacks(execute=True):
        bot_disabled.send(sender=Bot, bot_id=version.bot_id, reason="forfeited its last 5 games")
    delivery = Delivery.objects.get(event="bot.disabled")
    assert delivery.payload["reason"] == "forfeited its last 5 games"
    assert delivery.payload["bot"]["id"] == version.bot_id


def test_a_ladder_match_with_a_crash_checks_the_crashing_bot(
    valid_version: Any, owner: Any, owners: Any, sandbox_ready: None, settings: Any
) -> None:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload
    from ladder.matches.services import match_create, match_run

    settings.GRASS_DISABLE_AFTER_FORFEITS = 1
    broken = bot_version_upload(
        bot=bot_create(owner=owner, name="broken"), filename="bot.py", data=b"raise SystemExit(3)"
    )
    BotVersion.objects.filter(pk=broken.pk).update(status=BotVersion.Status.VALID)
    match = match_create(
        versions=[BotVersion.objects.get(pk=broken.pk), valid_version("steady", by=owners(1)[0])],
        limits={"max_hands": 1},
    )
    match_run(match_id=match.pk)

    assert Match.objects.get(pk=match.pk).status == Match.Status.FINISHED
    assert Bot.objects.get(pk=broken.bot_id).disabled is not None
    assert Bot.objects.get(name="steady").disabled is None
