"""A bot taken off the ladder cannot be entered in a tournament, and one taken off after it
entered does not play (issue 15, point 2): it would forfeit every game."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.bots.models import Bot
from ladder.tournaments.services import TournamentError, tournament_register, tournament_tick

pytestmark = pytest.mark.django_db

REASON = "forfeited its last 5 games; the last: crashed"


def take_off(bot: Bot) -> None:
    Bot.objects.filter(pk=bot.pk).update(disabled=timezone.now(), disabled_reason=REASON)
    bot.refresh_from_db()


def test_entering_a_bot_off_the_ladder_is_refused_with_the_reason(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(seats=2, format="round_robin")
    (bot,) = entrants(1)
    take_off(bot)

    with pytest.raises(TournamentError, match="off the ladder") as refused:
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    assert REASON in str(refused.value)

    client = APIClient()
    client.force_authenticate(owner)
    answer = client.post(f"/api/tournaments/{t.pk}/entries/", {"bot": bot.pk}, format="json")
    assert answer.status_code == 400 and "off the ladder" in answer.json()["detail"]


def test_a_bot_taken_off_after_entering_is_withdrawn_at_the_start(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(seats=2, format="round_robin")
    bots = entrants(3)
    for bot in bots:
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    take_off(bots[0])

    tournament_tick(tournament_id=t.pk, now=timezone.now() + timedelta(minutes=5))

    entry = t.entries.get(bot=bots[0])
    assert entry.withdrawn is not None and entry.withdrawn_reason == "off the ladder at start"
    assert entry.version is None
