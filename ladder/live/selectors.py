"""Reads of live tables and people's games: who holds which seat of a match, a tournament's
running tables, the bots a person may play against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Prefetch, QuerySet

from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.selectors import leaderboard
from ladder.tournaments.models import TableGame

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

EXAMPLES_USER = "examples"
"""The owner of the example bots (`manage.py ladder_examples`)."""


@dataclass(frozen=True)
class LiveSeat:
    """A visitor of a match's live table: the match's status and the seat they hold (None:
    they watch)."""

    status: str
    seat: int | None


def live_seat(*, match_id: int, user: User | AnonymousUser) -> LiveSeat | None:
    """The match's status and `user`'s seat in it, or None when there is no such match."""
    status = Match.objects.filter(pk=match_id).values_list("status", flat=True).first()
    if status is None:
        return None
    seat = None
    if user.is_authenticated:
        seat = (
            MatchSeat.objects.filter(match_id=match_id, player_id=user.pk)
            .values_list("seat", flat=True)
            .first()
        )
    return LiveSeat(status=status, seat=seat)


def tournament_running_tables(*, tournament_id: int, limit: int) -> list[int]:
    """Ids of the tournament's matches being played now, oldest first, at most `limit`."""
    return list(
        TableGame.objects.filter(
            table__round__tournament_id=tournament_id, match__status=Match.Status.RUNNING
        )
        .order_by("match_id")
        .values_list("match_id", flat=True)[:limit]
    )


@dataclass(frozen=True)
class Opponent:
    bot_id: int
    display_name: str


def play_opponents(*, user: User, per_board: int = 40) -> list[Opponent]:
    """Bots a person may pick on the Play page: the examples, the person's own bots, then the
    best of each ruleset's leaderboard (`per_board` each): a list bounded whatever the
    ladder's size. Each is on the ladder (not disabled) with a valid version."""
    playable = (
        Bot.objects.filter(disabled__isnull=True, versions__status=BotVersion.Status.VALID)
        .distinct()
        .select_related("owner")
        .order_by("pk")
    )
    chosen: dict[int, str] = {}
    for bots in (
        playable.filter(owner__username=EXAMPLES_USER),
        playable.filter(owner=user)[:per_board],
    ):
        for bot in bots:
            chosen.setdefault(bot.pk, bot.display_name)
    for ruleset in ("modern", "classic"):
        for row in leaderboard(ruleset=ruleset)[:per_board]:
            chosen.setdefault(row.bot_id, row.display_name)
    return [Opponent(pk, name) for pk, name in chosen.items()]


def person_games_active(*, user: User) -> int:
    """The person's games queued or running."""
    return MatchSeat.objects.filter(
        player=user, match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()


def person_games_site_active() -> int:
    """People's games queued or running on the whole site: what GRASS_PLAY_SHARE holds now
    (read from the active matches, which the capacity keeps few)."""
    return (
        Match.objects.filter(
            status__in=[Match.Status.QUEUED, Match.Status.RUNNING], seats__player__isnull=False
        )
        .distinct()
        .count()
    )


def person_games(*, user: User, limit: int = 10) -> list[Match]:
    """The person's latest games, newest first."""
    return list(Match.objects.filter(seats__player=user).order_by("-created", "-id")[:limit])


def _seated(user: User) -> QuerySet[Match]:
    """The person's games, newest first, with their seats, holders and bots read in two more
    queries whatever the number of games (the games API names every seat's holder)."""
    return (
        Match.objects.filter(seats__player=user)
        .order_by("-created", "-id")
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=MatchSeat.objects.select_related(
                    "player", "bot_version__bot__owner"
                ).order_by("seat"),
            )
        )
    )


def person_games_seated(*, user: User, limit: int = 10) -> list[Match]:
    """The person's latest games with their seats (`person_games`, for the games API)."""
    return list(_seated(user)[:limit])


def person_game_seated(*, user: User, match_id: int) -> Match | None:
    """One game of the person's with its seats, or None (no such game, or not theirs)."""
    return _seated(user).filter(pk=match_id).first()
