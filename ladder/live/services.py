"""Writes of people's games: a person asks for a game against bots, to be played in the
browser on a worker like any match (`ladder.matches.services.match_create`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from engine.rules import RULESETS
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_version_playing
from ladder.live.selectors import person_games_active
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_create

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class PlayError(ValueError):
    """A game that cannot be made as asked; the message says why, for the person."""


def person_game_create(
    *,
    user: User,
    ruleset: str,
    opponents: Sequence[int],
    seat: int | None,
    hands: int,
) -> Match:
    """A game of `user` against the bots `opponents` (ids: 1 to 5 bots on the ladder, each
    playing its newest valid version), queued on the people's queue (GRASS_PLAY_QUEUE).

    `seat` is the person's seat (None: at random); the bots take the others in a random
    order. The game is never rated. Its decisions give the person GRASS_PLAY_DECISION_SECONDS
    each, and it lasts at most `hands` hands (1 to GRASS_PLAY_MAX_HANDS). A person has at
    most GRASS_PLAY_GAMES_AT_ONCE games queued or running: counted under a lock on their
    account row, so two requests at once cannot both pass.
    """
    if ruleset not in RULESETS:
        raise PlayError(f"unknown ruleset {ruleset!r}")
    if not 1 <= len(opponents) <= 5:
        raise PlayError("choose 1 to 5 opponents")
    if len(set(opponents)) != len(opponents):
        raise PlayError("a bot can hold only one seat")
    if not 1 <= hands <= settings.GRASS_PLAY_MAX_HANDS:
        raise PlayError(f"a game has 1 to {settings.GRASS_PLAY_MAX_HANDS} hands")
    seats = len(opponents) + 1
    if seat is not None and not 0 <= seat < seats:
        raise PlayError(f"there are seats 0 to {seats - 1}")
    bots = {bot.pk: bot for bot in Bot.objects.filter(pk__in=opponents, disabled__isnull=True)}
    versions = []
    for bot_id in opponents:
        bot = bots.get(bot_id)
        version = None if bot is None else bot_version_playing(bot=bot)
        if version is None:
            raise PlayError(f"bot {bot_id} is not on the ladder (no valid version)")
        versions.append(version)
    if seat is None:
        seat = random.SystemRandom().randrange(seats)
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if person_games_active(user=user) >= settings.GRASS_PLAY_GAMES_AT_ONCE:
            raise PlayError("you have a game queued or being played: finish it (or resign) first")
        return match_create(
            versions=versions,
            people={seat: user},
            ruleset=ruleset,
            limits={"max_hands": hands},
            rated=False,
            time_control={"remote_decision_ms": settings.GRASS_PLAY_DECISION_SECONDS * 1000},
            enqueue=True,
        )


def person_game_abandon(*, match_id: int, user: User) -> bool:
    """End a person's game that no worker has started yet (the person resigned while it was
    queued: no worker listens to them then). Returns whether it was ended here.

    A conditional update on the queued status: a worker that claims the game first wins, and
    the resignation then reaches it as any other. The game is failed with all its attempts
    spent, so nothing queues it again, and it no longer counts against the person's games at
    once (GRASS_PLAY_GAMES_AT_ONCE).
    """
    if not MatchSeat.objects.filter(match_id=match_id, player_id=user.pk).exists():
        return False
    ended = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).update(
        status=Match.Status.FAILED,
        failure_reason=f"{user.get_username()} resigned before the game started",
        attempts=settings.GRASS_MATCH_MAX_ATTEMPTS,
        finished=timezone.now(),
    )
    return ended == 1
