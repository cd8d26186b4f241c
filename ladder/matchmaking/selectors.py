"""Reads for the matchmaker: who has waited longest for a table, and who is nearest a rating.

The pool is the ratings table itself: every bot that may play has a BotRating row in each
ladder ruleset (`ratings.services.rating_pool_join`, when a version passes validation; games 0
until it plays there), with `last_queued`, when the matchmaker last seated it. Both reads are
short range scans of BotRating's indexes, (ruleset, last_queued, bot) and (ruleset, mu, bot):
a tick costs the matches it queues, not the bots on the ladder.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet

from ladder.bots.models import BotVersion
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import HOME_RULESET


@dataclass(frozen=True)
class Candidate:
    """A bot that may be matched: its rating in the ruleset and when it was last seated."""

    bot_id: int
    rating: float
    last_queued: datetime


def _pool(ruleset: str) -> QuerySet[BotRating]:
    """The ruleset's rows of bots that may play now: not taken off the ladder, with a valid
    version (a row is made when a version passes validation; the check also keeps out a bot
    rated in a game it played before it had one, which only tests and tournaments make)."""
    valid = BotVersion.objects.filter(bot_id=OuterRef("bot_id"), status=BotVersion.Status.VALID)
    return BotRating.objects.filter(ruleset=ruleset, bot__disabled__isnull=True).filter(
        Exists(valid)
    )


def _candidates(rows: QuerySet[BotRating]) -> list[Candidate]:
    return [Candidate(*row) for row in rows.values_list("bot_id", "mu", "last_queued")]


def matchmaker_waiting(*, ruleset: str, limit: int) -> list[Candidate]:
    """The `limit` bots that have waited longest for a table of `ruleset` (never seated
    first), oldest first, ties in bot id order."""
    return _candidates(_pool(ruleset).order_by("last_queued", "bot_id")[:limit])


def matchmaker_nearest(*, ruleset: str, around: Candidate, limit: int) -> list[Candidate]:
    """Up to `limit` bots on each side of `around` in (rating, bot id) order, and `around`
    itself, in that order: every window of `limit` + 1 neighbours that holds it."""
    mu, bot_id = around.rating, around.bot_id
    # The bare bound on mu is what the index range starts from (PostgreSQL does not use the
    # OR for it); the OR then orders equal ratings by bot id.
    below = _pool(ruleset).filter(mu__lte=mu).filter(Q(mu__lt=mu) | Q(mu=mu, bot_id__lt=bot_id))
    above = _pool(ruleset).filter(mu__gte=mu).filter(Q(mu__gt=mu) | Q(mu=mu, bot_id__gt=bot_id))
    lower = _candidates(below.order_by("-mu", "-bot_id")[:limit])
    upper = _candidates(above.order_by("mu", "bot_id")[:limit])
    return [*reversed(lower), around, *upper]


def matchmaker_versions(*, bot_ids: list[int]) -> dict[int, BotVersion]:
    """The version that plays for each of `bot_ids`: its newest valid one."""
    playing: dict[int, BotVersion] = {}
    for version in BotVersion.objects.filter(
        bot_id__in=bot_ids, status=BotVersion.Status.VALID
    ).order_by("bot_id", "number"):
        playing[version.bot_id] = version  # newest last, so the newest is kept
    return playing


def home_board_empty() -> bool:
    """Whether the leaderboard the home page shows (HOME_RULESET) has no rated game yet."""
    return not BotRating.objects.filter(ruleset=HOME_RULESET, games__gt=0).exists()
