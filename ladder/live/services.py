"""Writes of people's games: a person asks for a game against bots, to be played in the
browser on a worker like any match (`ladder.matches.services.match_create`).

The cap, as challenges have their share: people's games, queued or running, never hold more
tables than the live table hosts have (`capacity.person_places`: their threads; or
GRASS_PLAY_SHARE percent of the `now` pool when a site sends people's games there), or
GRASS_PLAY_GAMES_MAX games when a site sets it. A game past it is refused with the reason;
each person also has at most GRASS_PLAY_GAMES_AT_ONCE of their own.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from engine.rules import RULESETS
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_version_playing
from ladder.live.selectors import person_games_active, person_games_site_active
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_create
from ladder.matchmaking.capacity import person_places

if TYPE_CHECKING:
    from django.contrib.auth.models import User


PLAY_LOCK = 0x706C6179
"""The PostgreSQL advisory lock key that makes people's requests count the share in turn
("play")."""


class PlayError(ValueError):
    """A game that cannot be made as asked; the message says why, for the person."""


class PlayLimited(PlayError):
    """A game refused for now by a limit (the person's games at once, the site's tables for
    people, no worker up): the same request may pass later. `wait` is when to ask again, in
    seconds, when there is a sensible guess."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


PLAY_RETRY_S = 60
"""When to ask again after a refusal for the site's tables (a short game ends in about this)."""


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

    `seat` is the person's seat (None: at random); the bots take the others in the order
    given (the order the person chose them in), from seat 0 on. The game is never rated. Its
    decisions give the person GRASS_PLAY_DECISION_SECONDS each, and it lasts at most `hands`
    hands (1 to GRASS_PLAY_MAX_HANDS). A person has at most GRASS_PLAY_GAMES_AT_ONCE games
    queued or running: counted under a lock on their account row, so two requests at once
    cannot both pass; and the site holds at most `capacity.person_places` people's games,
    counted under an advisory lock (PostgreSQL), so two people's requests cannot both take
    the last place.
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
    slots = person_places(waiting=True)  # before the locks
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if person_games_active(user=user) >= settings.GRASS_PLAY_GAMES_AT_ONCE:
            raise PlayLimited("you have a game queued or being played: finish it (or resign) first")
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PLAY_LOCK])
        if slots <= 0:
            raise PlayLimited(
                "no worker is up to play games now: try again in a few minutes", wait=300
            )
        if person_games_site_active() >= slots:
            raise PlayLimited(
                f"all {slots} of the site's tables for people are taken: try again in a "
                "minute or two, when a game ends",
                wait=PLAY_RETRY_S,
            )
        return match_create(
            versions=versions,
            people={seat: user},
            ruleset=ruleset,
            limits={"max_hands": hands},
            rated=False,
            shuffle=False,  # the bots sit in the order the person chose them
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
