"""Writing ratings: applying one finished match, the only place stored ratings change."""

from __future__ import annotations

from django.conf import settings
from django.db import models, transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, update
from ladder.ratings.models import NEVER, BotRating, RatingChange


def rating_apply(*, match: Match, params: EloParams = DEFAULT_PARAMS) -> list[RatingChange]:
    """Rate a finished match: update each seat's bot's rating for the match's ruleset and record
    a RatingChange per bot. A match already rated changes nothing and returns [].

    Runs in one transaction with the rating rows locked (in bot id order, so two matches that
    share bots cannot deadlock). The unique (match, bot) constraint on RatingChange backs the
    "already rated" check against any race.
    """
    if match.status != Match.Status.FINISHED:
        raise ValueError(f"{match} is not finished; only finished matches are rated")
    seats = list(
        MatchSeat.objects.filter(match=match).select_related("bot_version").order_by("seat")
    )
    if any(seat.place is None for seat in seats):
        raise ValueError(f"{match} has seats without a place")
    bot_ids = [seat.version.bot_id for seat in seats]
    now = timezone.now()
    with transaction.atomic():
        for bot_id in sorted(bot_ids):
            BotRating.objects.get_or_create(
                bot_id=bot_id, ruleset=match.ruleset, defaults={"mu": params.initial}
            )
        rows = {
            row.bot_id: row
            for row in BotRating.objects.select_for_update()
            .filter(bot_id__in=bot_ids, ruleset=match.ruleset)
            .order_by("bot_id")
        }
        # Checked under the locks: a second call for this match waits above, then stops here.
        if RatingChange.objects.filter(match=match).exists():
            return []
        before = [Rating(rows[bot_id].mu, rows[bot_id].games) for bot_id in bot_ids]
        peaks = [_peak(rows[bot_id]) for bot_id in bot_ids]
        places = [seat.place for seat in seats if seat.place is not None]
        after = update(before, places, params)
        changes = [
            RatingChange(
                match=match,
                bot_id=bot_id,
                ruleset=match.ruleset,
                place=place,
                before=old.mu,
                after=new.mu,
                delta=new.mu - old.mu,
                games_before=old.games,
                created=now,
                peak_before=peak,
            )
            for bot_id, place, old, new, peak in zip(
                bot_ids, places, before, after, peaks, strict=True
            )
        ]
        RatingChange.objects.bulk_create(changes)
        for bot_id, place, new, peak in zip(bot_ids, places, after, peaks, strict=True):
            row = rows[bot_id]
            row.mu, row.games, row.updated = new.mu, new.games, now
            row.peak = max(peak, new.mu)
            if place == 1:
                row.wins += 1
        BotRating.objects.bulk_update(rows.values(), ["mu", "games", "wins", "updated", "peak"])
    return changes


def _peak(row: BotRating) -> float:
    """The best rating the row has had (its current one before its first rated game)."""
    return row.mu if row.peak is None else row.peak


def ladder_rulesets() -> list[str]:
    """The rulesets of the ladder's tables (GRASS_LADDER_TABLES), each once."""
    return sorted({ruleset for ruleset, _ in settings.GRASS_LADDER_TABLES})


def rating_pool_join(
    *,
    bot_id: int,
    rulesets: list[str] | None = None,
    rating_model: type[BotRating] = BotRating,
    params: EloParams = DEFAULT_PARAMS,
) -> None:
    """Give a bot that may play a rating row in each ladder ruleset it has none in (the
    starting rating, no games): the matchmaker reads only these rows, through two indexes, so
    every bot it may seat must have one. No-op for the rows that exist. Called when a version
    passes validation (`rating_pool_enter`), and by the migration that introduced the pool."""
    for ruleset in rulesets if rulesets is not None else ladder_rulesets():
        rating_model.objects.get_or_create(
            bot_id=bot_id, ruleset=ruleset, defaults={"mu": params.initial}
        )


def rating_pool_enter(*, bot_id: int) -> None:
    """A version of the bot has just passed validation (`bots.services.bot_version_validate`
    calls it in the transaction that marks it valid, so a bot is never valid without its rows):
    the bot joins the matchmaker's pool where it is not in it yet, at its head (a newcomer)."""
    rating_pool_join(bot_id=bot_id)
    rating_pool_newcomer(bot_id=bot_id)


def rating_pool_newcomer(*, bot_id: int) -> int:
    """Put a bot whose new version has just passed validation back at the head of the
    matchmaker's pool in every ruleset (`last_queued` NEVER, as a bot never seated): its first
    game of the home page's ruleset goes to the fast lane
    (`ladder.matchmaking.services.matchmaker_first_games`), so its author sees the new version
    rated within a tick, not after a background game ends; in the others it is the first
    the background seats. Returns the rows changed."""
    return BotRating.objects.filter(bot_id=bot_id, ruleset__in=ladder_rulesets()).update(
        last_queued=NEVER
    )


def rating_peaks_recount(
    *, rating_model: type[BotRating] = BotRating, change_model: type[RatingChange] = RatingChange
) -> int:
    """Set every rated BotRating's `peak` to the best of its history (its first `before` and
    every `after`); returns the number set. For the migration that added `peak` (hence the
    model arguments), or a repair."""
    best = {
        (bot_id, ruleset): max(top_before, top_after)
        for bot_id, ruleset, top_before, top_after in change_model.objects.order_by()
        .values("bot_id", "ruleset")
        .annotate(b=models.Max("before"), a=models.Max("after"))
        .values_list("bot_id", "ruleset", "b", "a")
    }
    rows = list(rating_model.objects.filter(games__gt=0))
    for row in rows:
        row.peak = best.get((row.bot_id, row.ruleset), row.mu)
    rating_model.objects.bulk_update(rows, ["peak"], batch_size=2000)
    return len(rows)


def rating_wins_recount(
    *, rating_model: type[BotRating] = BotRating, change_model: type[RatingChange] = RatingChange
) -> int:
    """Set every BotRating's `wins` to its number of RatingChange rows with place 1 in the same
    ruleset, in one UPDATE; returns the number of ratings updated.

    The migration that added `wins` runs this with its historical models (hence the model
    arguments); it also repairs the column should it ever disagree with the changes.
    """
    firsts = (
        change_model.objects.filter(
            bot_id=models.OuterRef("bot_id"), ruleset=models.OuterRef("ruleset"), place=1
        )
        .order_by()
        .values("bot_id")
        .annotate(n=models.Count("id"))
        .values("n")
    )
    return rating_model.objects.update(
        wins=Coalesce(models.Subquery(firsts, output_field=models.IntegerField()), 0)
    )
