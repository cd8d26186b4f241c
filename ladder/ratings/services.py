"""Writing ratings: applying one finished match, the only place stored ratings change."""

from __future__ import annotations

from django.db import models, transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, update
from ladder.ratings.models import BotRating, RatingChange


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
    bot_ids = [seat.bot_version.bot_id for seat in seats]
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
            )
            for bot_id, place, old, new in zip(bot_ids, places, before, after, strict=True)
        ]
        RatingChange.objects.bulk_create(changes)
        for bot_id, place, new in zip(bot_ids, places, after, strict=True):
            row = rows[bot_id]
            row.mu, row.games, row.updated = new.mu, new.games, now
            if place == 1:
                row.wins += 1
        BotRating.objects.bulk_update(rows.values(), ["mu", "games", "wins", "updated"])
    return changes


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
