"""Reads for the matchmaker: who has waited longest for a table, and who is nearest a rating.

The pool is the ratings table itself: every bot that may play has a BotRating row in each
ladder ruleset (`ratings.services.rating_pool_join`, when a version passes validation; games 0
until it plays there), with `last_queued`, when the matchmaker last seated it. Both reads are
short range scans of BotRating's partial indexes, (ruleset, last_queued, bot) and (ruleset, mu,
bot) WHERE playing: a tick costs the matches it queues, not the bots on the ladder, nor the bots
taken off it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from ladder.bots.models import BotVersion
from ladder.ratings.models import NEVER, BotRating
from ladder.ratings.selectors import HOME_RULESET


@dataclass(frozen=True)
class Candidate:
    """A bot that may be matched: its rating in the ruleset and when it was last seated."""

    bot_id: int
    rating: float
    last_queued: datetime


def _pool(ruleset: str, *, newcomers: bool = True) -> QuerySet[BotRating]:
    """The ruleset's rows of bots that may play now: not taken off the ladder, with a valid
    version (a row is made when a version passes validation). That is `BotRating.playing`,
    which the database keeps exact in the transaction that changes either, so the reads need
    no join: bots that cannot play are not in the two partial indexes at all, however many."""
    pool = BotRating.objects.filter(ruleset=ruleset, playing=True)
    return pool if newcomers else pool.filter(last_queued__gt=NEVER)


def _candidates(rows: QuerySet[BotRating]) -> list[Candidate]:
    return [Candidate(*row) for row in rows.values_list("bot_id", "mu", "last_queued")]


def matchmaker_waiting(*, ruleset: str, limit: int, newcomers: bool = True) -> list[Candidate]:
    """The `limit` bots that have waited longest for a table of `ruleset` (never seated
    first), oldest first, ties in bot id order."""
    rows = _pool(ruleset, newcomers=newcomers).order_by("last_queued", "bot_id")
    return _candidates(rows[:limit])


def matchmaker_newcomers(*, ruleset: str, limit: int) -> list[Candidate]:
    """Up to `limit` bots waiting for their first table of `ruleset` since they came, or since
    their newest version did (`last_queued` NEVER: the head of the same index range as
    `matchmaker_waiting`), the one served longest ago first: by `updated`, its last rated game
    there (a new bot's: when it joined). In bot id order, an old bot whose author uploaded a
    version every few minutes took the lane's place before every new author's bot."""
    newcomers = _pool(ruleset).filter(last_queued=NEVER).order_by("updated", "bot_id")
    return _candidates(newcomers[:limit])


def matchmaker_nearest(
    *, ruleset: str, around: Candidate, limit: int, newcomers: bool = True
) -> list[Candidate]:
    """Up to `limit` bots on each side of `around` in (rating, bot id) order, and `around`
    itself, in that order: every window of `limit` + 1 neighbours that holds it."""
    mu, bot_id = around.rating, around.bot_id
    # The bare bound on mu is what the index range starts from (PostgreSQL does not use the
    # OR for it); the OR then orders equal ratings by bot id.
    pool = _pool(ruleset, newcomers=newcomers)
    below = pool.filter(mu__lte=mu).filter(Q(mu__lt=mu) | Q(mu=mu, bot_id__lt=bot_id))
    above = pool.filter(mu__gte=mu).filter(Q(mu__gt=mu) | Q(mu=mu, bot_id__gt=bot_id))
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
    return not BotRating.objects.filter(ruleset=HOME_RULESET, games__gt=0, on_ladder=True).exists()
