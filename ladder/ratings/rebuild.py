"""Rebuilding a ruleset's ratings from its matches (named rebuild: `ladder.ratings.recompute` is
the pure `elo.recompute` the package exports): after a change of the Elo constants, or once
a match has been voided (its `rated` flag cleared in the admin).

The live path (`services.rating_apply`) and this one rate each game with the same
`elo.rate_game`, so on an untouched ladder a rebuild finds nothing to change; `manage.py
ratings_rebuild` without `--apply` is that check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby

from django.db import connection, models, transaction
from django.utils import timezone

from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, rate_game
from ladder.ratings.models import BotRating, RatingChange

CHUNK = 2000
"""Matches whose seats are read (and changes written) per query."""
SAME = 1e-6
"""Ratings closer than this count as unchanged (floating-point noise)."""


@dataclass(frozen=True)
class Difference:
    """A bot whose stored rating is not what its matches give."""

    bot_id: int
    stored: Rating | None
    rebuilt: Rating


@dataclass(frozen=True)
class Rebuild:
    ruleset: str
    matches: int
    bots: int
    differences: list[Difference] = field(default_factory=list)
    applied: bool = False


def rated_matches(*, ruleset: str) -> list[tuple[int, datetime]]:
    """The finished, rated matches of `ruleset` in the order they are rated: the order the live
    ratings were applied in (their first RatingChange), then matches never rated yet (a match
    whose `rated` flag was set again) in finishing order. Ids and finishing times (now for a
    match without one, which only hand-made data has)."""
    rows = (
        Match.objects.filter(ruleset=ruleset, status=Match.Status.FINISHED, rated=True)
        .annotate(first_change=models.Min("rating_changes__id"))
        .order_by(models.F("first_change").asc(nulls_last=True), "finished", "id")
        .values_list("id", "finished")
    )
    now = timezone.now()
    return [(match_id, finished or now) for match_id, finished in rows]


def _games(matches: list[tuple[int, datetime]]) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """(match id, [(bot id, place), ...] by seat) for each match, in the given order."""
    for start in range(0, len(matches), CHUNK):
        ids = [match_id for match_id, _ in matches[start : start + CHUNK]]
        seats = (
            MatchSeat.objects.filter(match_id__in=ids)
            .order_by("match_id", "seat")
            .values_list("match_id", "bot_version__bot_id", "place")
        )
        by_match = {
            match_id: [(bot_id, place) for _, bot_id, place in rows]
            for match_id, rows in groupby(seats, key=lambda row: row[0])
        }
        for match_id in ids:
            seated = by_match.get(match_id, [])
            results = [(bot_id, place) for bot_id, place in seated if place is not None]
            if len(results) < 2 or len(results) != len(seated):
                raise ValueError(f"match {match_id} is finished but its seats have no places")
            yield match_id, results


def rating_rebuild(
    *,
    ruleset: str,
    apply: bool = False,
    params: EloParams = DEFAULT_PARAMS,
    on_match: Callable[[], None] | None = None,
) -> Rebuild:
    """Rate every rated match of `ruleset` again from scratch and compare with the stored table.

    With `apply`, the ruleset's RatingChange rows and BotRating rows are replaced by the rebuilt
    ones in one transaction, with both tables locked against writers (PostgreSQL) so a match
    finishing meanwhile waits and is then rated on top of the new table. A bot whose matches are
    all voided goes back to the starting rating with no games.
    """
    with transaction.atomic():
        if apply and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    f"LOCK TABLE {BotRating._meta.db_table}, {RatingChange._meta.db_table} "
                    "IN SHARE ROW EXCLUSIVE MODE"
                )
        matches = rated_matches(ruleset=ruleset)
        finished = dict(matches)
        table: dict[int, Rating] = {}
        wins: dict[int, int] = {}
        last: dict[int, datetime] = {}
        pending: list[RatingChange] = []
        if apply:
            RatingChange.objects.filter(ruleset=ruleset).delete()
        for match_id, results in _games(matches):
            changes = rate_game(table, results, params)
            for change in changes:
                table[change.player] = change.after
                wins[change.player] = wins.get(change.player, 0) + (change.place == 1)
                last[change.player] = finished[match_id]
            if apply:
                pending.extend(
                    RatingChange(
                        match_id=match_id,
                        bot_id=change.player,
                        ruleset=ruleset,
                        place=change.place,
                        before=change.before.mu,
                        after=change.after.mu,
                        delta=change.delta,
                        games_before=change.before.games,
                        created=finished[match_id],
                    )
                    for change in changes
                )
                if len(pending) >= CHUNK:
                    RatingChange.objects.bulk_create(pending)
                    pending = []
            if on_match:
                on_match()
        stored = {row.bot_id: row for row in BotRating.objects.filter(ruleset=ruleset)}
        differences = []
        for bot_id in sorted(set(stored) | set(table)):
            row = stored.get(bot_id)
            before = Rating(row.mu, row.games) if row else None
            after = table.get(bot_id, params.new_rating())
            if before is None or before.games != after.games or abs(before.mu - after.mu) > SAME:
                differences.append(Difference(bot_id, before, after))
        if apply:
            RatingChange.objects.bulk_create(pending)
            _ratings_store(ruleset, stored, table, wins, last, params)
    return Rebuild(ruleset, len(matches), len(table), differences, applied=apply)


def _ratings_store(
    ruleset: str,
    stored: dict[int, BotRating],
    table: dict[int, Rating],
    wins: dict[int, int],
    last: dict[int, datetime],
    params: EloParams,
) -> None:
    fresh: list[BotRating] = []
    for bot_id in sorted(set(stored) | set(table)):
        rating = table.get(bot_id, params.new_rating())
        row = stored.get(bot_id) or BotRating(bot_id=bot_id, ruleset=ruleset)
        row.mu, row.games, row.wins = rating.mu, rating.games, wins.get(bot_id, 0)
        if bot_id in last:
            row.updated = last[bot_id]
        if row.pk is None:
            fresh.append(row)
    BotRating.objects.bulk_update(
        stored.values(), ["mu", "games", "wins", "updated"], batch_size=CHUNK
    )
    BotRating.objects.bulk_create(fresh)


def matches_void(*, match_ids: list[int]) -> list[Rebuild]:
    """Stop counting these matches for ratings (their result and log stay) and rebuild the
    ratings of each ruleset they were in, in one transaction."""
    with transaction.atomic():
        matches = Match.objects.filter(pk__in=match_ids)
        rulesets = sorted(set(matches.values_list("ruleset", flat=True)))
        matches.update(rated=False)
        return [rating_rebuild(ruleset=ruleset, apply=True) for ruleset in rulesets]
