"""Reading ratings: the leaderboard, and each match's changes in play order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q

from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, band
from ladder.ratings.models import BotRating, RatingChange


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    bot_id: int
    bot: str
    owner: str
    elo: int
    band_low: int
    band_high: int
    games: int
    win_rate: float
    """Share of rated games finished in first place (shared firsts count)."""
    last_game: datetime


def leaderboard(*, ruleset: str, params: EloParams = DEFAULT_PARAMS) -> list[LeaderboardRow]:
    """Every bot rated in `ruleset`, best first (equal ratings in bot id order)."""
    ratings = (
        BotRating.objects.filter(ruleset=ruleset, games__gt=0)
        .select_related("bot__owner")
        .annotate(
            wins=Count(
                "bot__rating_changes",
                filter=Q(bot__rating_changes__ruleset=ruleset, bot__rating_changes__place=1),
            )
        )
        .order_by("-mu", "bot_id")
    )
    rows = []
    for rank, rating in enumerate(ratings, start=1):
        low, high = band(Rating(rating.mu, rating.games), params)
        rows.append(
            LeaderboardRow(
                rank=rank,
                bot_id=rating.bot_id,
                bot=rating.bot.name,
                owner=rating.bot.owner.get_username(),
                elo=round(rating.mu),
                band_low=round(low),
                band_high=round(high),
                games=rating.games,
                win_rate=round(rating.wins / rating.games, 4),
                last_game=rating.updated,
            )
        )
    return rows


def rating_history(*, ruleset: str) -> list[list[tuple[int, int]]]:
    """Every rated match in `ruleset` in the order it was rated, as `elo.recompute` takes it:
    one list of (bot id, place) per match."""
    games: dict[int, list[tuple[int, int]]] = {}
    changes = RatingChange.objects.filter(ruleset=ruleset).order_by("id")
    for change in changes.only("match_id", "bot_id", "place"):
        games.setdefault(change.match_id, []).append((change.bot_id, change.place))
    return list(games.values())


@dataclass(frozen=True)
class BotRatingRow:
    ruleset: str
    elo: int
    band_low: int
    band_high: int
    games: int
    updated: datetime


def bot_ratings(*, bot_id: int, params: EloParams = DEFAULT_PARAMS) -> list[BotRatingRow]:
    """The bot's rating in each ruleset it has played, by ruleset name, with its band."""
    rows = []
    for rating in BotRating.objects.filter(bot_id=bot_id).order_by("ruleset"):
        low, high = band(Rating(rating.mu, rating.games), params)
        rows.append(
            BotRatingRow(
                ruleset=rating.ruleset,
                elo=round(rating.mu),
                band_low=round(low),
                band_high=round(high),
                games=rating.games,
                updated=rating.updated,
            )
        )
    return rows
