"""Reads for the matchmaker: who may be matched, at what rating, with how many recent games."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count

from ladder.bots.models import BotVersion
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import HOME_RULESET


@dataclass(frozen=True)
class Candidate:
    """A bot that may be matched: the version it plays, its rating, its recent games."""

    version: BotVersion
    rating: float
    recent_games: int
    """Seats in matches created since the given time (queued, running or finished)."""


def matchmaker_candidates(*, ruleset: str, since: datetime) -> list[Candidate]:
    """Every bot that is not disabled and has a playable version (its newest valid one), in bot
    id order, with its
    rating in `ruleset` (the initial rating if it has none yet) and its games since `since`."""
    playing: dict[int, BotVersion] = {}
    # Newest last, so the newest valid version of each bot is the one kept.
    for version in BotVersion.objects.filter(
        status=BotVersion.Status.VALID, bot__disabled__isnull=True
    ).order_by("bot_id", "number"):
        playing[version.bot_id] = version
    ratings = dict(
        BotRating.objects.filter(ruleset=ruleset, bot_id__in=playing).values_list("bot_id", "mu")
    )
    recent = dict(
        MatchSeat.objects.filter(bot_version__bot_id__in=playing, match__created__gte=since)
        .exclude(match__status=Match.Status.FAILED)
        .values("bot_version__bot_id")
        .annotate(games=Count("id"))
        .values_list("bot_version__bot_id", "games")
    )
    return [
        Candidate(
            version=version,
            rating=ratings.get(bot_id, DEFAULT_PARAMS.initial),
            recent_games=recent.get(bot_id, 0),
        )
        for bot_id, version in playing.items()
    ]


def home_board_empty() -> bool:
    """Whether the leaderboard the home page shows (HOME_RULESET) has no rated game yet."""
    return not BotRating.objects.filter(ruleset=HOME_RULESET, games__gt=0).exists()
