"""Rebuilding a ruleset's ratings from its matches (named rebuild: `ladder.ratings.recompute` is
the pure `elo.recompute` the package exports): after a change of the Elo constants, or once
a match has been voided (its `rated` flag cleared in the admin).

The live path (`services.rating_apply`) and this one rate each game with the same
`elo.rate_game`, so on an untouched ladder a rebuild finds nothing to change; `manage.py
ratings_rebuild` without `--apply` is that check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from itertools import groupby

from django.db import connection, models, transaction
from django.utils import timezone

from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, rate_game
from ladder.ratings.models import BotRating, RatingChange

CHUNK = 2000
"""Matches whose seats are read (and changes written, and ids streamed) per query."""
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


def rated_matches(*, ruleset: str, up_to: int | None = None) -> Iterator[tuple[int, datetime]]:
    """The finished, rated matches of `ruleset` in the order they are rated, streamed (a
    server-side cursor: no list of every id is held here): the order the live ratings were
    applied in (their first RatingChange), then matches never rated yet (a match whose `rated`
    flag was set again) in finishing order. With `up_to`, only matches first rated at or
    before that change id (and the never-rated ones). Ids and finishing times (now for a match
    without one, which only hand-made data has)."""
    rows = (
        Match.objects.filter(ruleset=ruleset, status=Match.Status.FINISHED, rated=True)
        .annotate(first_change=models.Min("rating_changes__id"))
        .order_by(models.F("first_change").asc(nulls_last=True), "finished", "id")
    )
    if up_to is not None:
        rows = rows.filter(models.Q(first_change__lte=up_to) | models.Q(first_change=None))
    now = timezone.now()
    for match_id, finished in rows.values_list("id", "finished").iterator(chunk_size=CHUNK):
        yield match_id, finished or now


def _chunks(
    matches: Iterator[tuple[int, datetime]],
) -> Iterator[list[tuple[int, datetime]]]:
    chunk: list[tuple[int, datetime]] = []
    for match in matches:
        chunk.append(match)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _games(
    matches: Iterator[tuple[int, datetime]],
) -> Iterator[tuple[int, datetime, list[tuple[int, int]]]]:
    """(match id, finished, [(bot id, place), ...] by seat) for each match, in the given
    order, the seats read a chunk of matches at a time."""
    for chunk in _chunks(matches):
        ids = [match_id for match_id, _ in chunk]
        seats = (
            MatchSeat.objects.filter(match_id__in=ids)
            .order_by("match_id", "seat")
            .values_list("match_id", "bot_id", "place")
        )
        by_match = {
            match_id: [(bot_id, place) for _, bot_id, place in rows]
            for match_id, rows in groupby(seats, key=lambda row: row[0])
        }
        for match_id, finished in chunk:
            seated = by_match.get(match_id, [])
            results = [(bot_id, place) for bot_id, place in seated if place is not None]
            if len(results) < 2 or len(results) != len(seated):
                raise ValueError(f"match {match_id} is finished but its seats have no places")
            yield match_id, finished, results


@dataclass
class _Table:
    """The rebuilt ratings, per bot: what BotRating holds."""

    params: EloParams
    ratings: dict[int, Rating] = field(default_factory=dict)
    wins: dict[int, int] = field(default_factory=dict)
    peaks: dict[int, float] = field(default_factory=dict)
    last: dict[int, datetime] = field(default_factory=dict)

    def rate(
        self, match_id: int, finished: datetime, results: list[tuple[int, int]], ruleset: str
    ) -> list[RatingChange]:
        """Rate one game on the table; returns its rating changes (not saved)."""
        changes = rate_game(self.ratings, results, self.params)
        rows = []
        for change in changes:
            bot = change.player
            peak = self.peaks.get(bot, change.before.mu)
            rows.append(
                RatingChange(
                    match_id=match_id,
                    bot_id=bot,
                    ruleset=ruleset,
                    place=change.place,
                    before=change.before.mu,
                    after=change.after.mu,
                    delta=change.delta,
                    games_before=change.before.games,
                    created=finished,
                    peak_before=peak,
                )
            )
            self.ratings[bot] = change.after
            self.wins[bot] = self.wins.get(bot, 0) + (change.place == 1)
            self.peaks[bot] = max(peak, change.after.mu)
            self.last[bot] = finished
        return rows


REBUILD_LOCK = 0x677261
"""The advisory lock key (with the ruleset's) that makes rebuilds of one ruleset take turns."""
REBUILT = "grass_rebuilt_matches"
"""A temporary table of the matches a rebuild has rated (in the database, not in memory)."""


def _boundary(ruleset: str) -> int:
    """The last rating change of `ruleset` committed before the rebuild: every change at or
    below it is committed, every later one gets a higher id. On PostgreSQL the ratings are
    locked for the moment it takes to read it (in-flight recordings finish first)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {BotRating._meta.db_table} IN SHARE ROW EXCLUSIVE MODE")
        found = RatingChange.objects.filter(ruleset=ruleset).aggregate(m=models.Max("id"))["m"]
    return int(found or 0)


@contextmanager
def _rebuild_turn(ruleset: str, apply: bool) -> Iterator[None]:
    """Rebuilds that write take turns per ruleset (a session advisory lock on PostgreSQL)."""
    if not (apply and connection.vendor == "postgresql"):
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", [REBUILD_LOCK, ruleset])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", [REBUILD_LOCK, ruleset])


def _note_rebuilt(match_ids: list[int]) -> None:
    if not match_ids:
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {REBUILT} (match_id) VALUES (%s)", [(m,) for m in match_ids]
        )


def rating_rebuild(
    *,
    ruleset: str,
    apply: bool = False,
    params: EloParams = DEFAULT_PARAMS,
    on_match: Callable[[], None] | None = None,
) -> Rebuild:
    """Rate every rated match of `ruleset` again from scratch and compare with the stored table.

    The matches are streamed (`rated_matches`), so memory holds the bots' ratings, not the
    matches. Without `apply` nothing is written or locked; a match recorded meanwhile may show
    as a difference.

    With `apply`, the ruleset's history and table are replaced in one transaction without
    keeping matches from being recorded meanwhile: the changes committed before the rebuild
    began are deleted and the rebuilt ones inserted with no table locked (recording goes on,
    rating new matches on the old table and inserting their own changes); only at the end are
    the ratings locked, for as long as it takes to rate again, on the rebuilt table, the
    matches recorded meanwhile and to store the table. A bot whose matches are all voided goes
    back to the starting rating with no games. Two rebuilds of one ruleset take turns.
    """
    table = _Table(params)
    matches = 0
    postgres = connection.vendor == "postgresql"
    with _rebuild_turn(ruleset, apply):
        mark = _boundary(ruleset) if apply else None
        with transaction.atomic():
            if apply:
                with connection.cursor() as cursor:
                    cursor.execute(f"DROP TABLE IF EXISTS {REBUILT}")
                    cursor.execute(
                        f"CREATE TEMPORARY TABLE {REBUILT} (match_id bigint PRIMARY KEY)"
                    )
                RatingChange.objects.filter(ruleset=ruleset, id__lte=mark).delete()
            pending: list[RatingChange] = []
            rated: list[int] = []
            for match_id, finished, results in _games(rated_matches(ruleset=ruleset, up_to=mark)):
                rows = table.rate(match_id, finished, results, ruleset)
                matches += 1
                if apply:
                    pending.extend(rows)
                    rated.append(match_id)
                    if len(rated) >= CHUNK:
                        RatingChange.objects.bulk_create(pending)
                        _note_rebuilt(rated)
                        pending, rated = [], []
                if on_match:
                    on_match()
            if apply:
                RatingChange.objects.bulk_create(pending)
                _note_rebuilt(rated)
                if postgres:
                    # From here to the commit, rating_apply waits: the matches rated meanwhile
                    # are rated again on the rebuilt table, then the table is stored.
                    with connection.cursor() as cursor:
                        cursor.execute(
                            f"LOCK TABLE {BotRating._meta.db_table} IN SHARE ROW EXCLUSIVE MODE"
                        )
                assert mark is not None
                matches += _catch_up(table, ruleset=ruleset, mark=mark)
            stored = {row.bot_id: row for row in BotRating.objects.filter(ruleset=ruleset)}
            differences = []
            for bot_id in sorted(set(stored) | set(table.ratings)):
                row = stored.get(bot_id)
                before = Rating(row.mu, row.games) if row else None
                after = table.ratings.get(bot_id, params.new_rating())
                if (
                    before is None
                    or before.games != after.games
                    or abs(before.mu - after.mu) > SAME
                ):
                    differences.append(Difference(bot_id, before, after))
            if apply:
                _ratings_store(ruleset, stored, table)
                with connection.cursor() as cursor:
                    cursor.execute(f"DROP TABLE {REBUILT}")
    return Rebuild(ruleset, matches, len(table.ratings), differences, applied=apply)


def _catch_up(table: _Table, *, ruleset: str, mark: int) -> int:
    """Rate again, on the rebuilt table, the matches first rated after `mark` (recorded while
    the rebuild ran: their changes are past it and their match is not among the rebuilt), in
    the order they were rated; returns how many. Their changes are replaced."""
    late = (
        RatingChange.objects.filter(ruleset=ruleset, id__gt=mark)
        .extra(where=[f"match_id NOT IN (SELECT match_id FROM {REBUILT})"])
        .values("match_id")
        .annotate(first=models.Min("id"))
        .order_by("first")
        .values_list("match_id", flat=True)
    )
    ids = list(late)
    if not ids:
        return 0
    finished = dict(Match.objects.filter(pk__in=ids, rated=True).values_list("id", "finished"))
    RatingChange.objects.filter(match_id__in=ids).delete()
    now = timezone.now()
    rows: list[RatingChange] = []
    for match_id, when, results in _games(
        iter([(m, finished[m] or now) for m in ids if m in finished])
    ):
        rows.extend(table.rate(match_id, when, results, ruleset))
    RatingChange.objects.bulk_create(rows)
    return len(finished)


def _ratings_store(ruleset: str, stored: dict[int, BotRating], table: _Table) -> None:
    fresh: list[BotRating] = []
    changed: list[BotRating] = []
    for bot_id in sorted(set(stored) | set(table.ratings)):
        rating = table.ratings.get(bot_id, table.params.new_rating())
        row = stored.get(bot_id) or BotRating(bot_id=bot_id, ruleset=ruleset)
        new = (rating.mu, rating.games, table.wins.get(bot_id, 0), table.peaks.get(bot_id))
        if row.pk is not None and (row.mu, row.games, row.wins, row.peak) == new:
            continue
        row.mu, row.games, row.wins, row.peak = new
        if bot_id in table.last:
            row.updated = table.last[bot_id]
        (changed if row.pk is not None else fresh).append(row)
    BotRating.objects.bulk_update(
        changed, ["mu", "games", "wins", "peak", "updated"], batch_size=CHUNK
    )
    BotRating.objects.bulk_create(fresh)


def matches_void(*, match_ids: list[int]) -> list[str]:
    """Stop counting these matches for ratings (their result and log stay) and have the
    ratings of each ruleset they were in rebuilt by a task (`ratings.tasks.rebuild_ratings`),
    sent once this commits: a rebuild reads every match of the ruleset, far too long for a
    web request. Returns the rulesets to be rebuilt."""
    from ladder.ratings.tasks import rebuild_ratings

    with transaction.atomic():
        matches = Match.objects.filter(pk__in=match_ids)
        rulesets = sorted(set(matches.values_list("ruleset", flat=True)))
        matches.update(rated=False)
        for ruleset in rulesets:
            transaction.on_commit(partial(rebuild_ratings.delay, ruleset))
    return rulesets
