"""Reading what the charts show: a bot's rating history, its results by seat and by opponent,
the leaderboard's top bots over time, a tournament's standings after each round.

Each read is bounded so a page stays cheap on a ladder of a million matches: histories are
sampled to at most `MAX_POINTS` points (every k-th game, looked up by `games_before` in the
(bot, ruleset, games_before) index), results by seat and by opponent are the records kept as
matches are recorded, and only the top bots' histories are read for the leaderboard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from ladder.matches.selectors import bot_opponent_records, bot_seat_records
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, Rating, band
from ladder.ratings.models import BotRating, RatingChange
from ladder.ratings.selectors import leaderboard
from ladder.tournaments import pairing
from ladder.tournaments import standings as standings_rules
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import tournament_standings

MAX_POINTS = 200
"""Points per line at most: more than a 480-unit-wide chart can show apart."""
TOP_OPPONENTS = 10


@dataclass(frozen=True)
class HistoryPoint:
    game: int
    """Rated games played in the ruleset after this point (0: before the first)."""
    elo: float
    low: float
    high: float
    """The band's edges (elo.band: ±2 deviations) at this point."""
    when: datetime | None
    """When the game was rated (None for the starting point)."""


@dataclass(frozen=True)
class RatingHistory:
    ruleset: str
    games: int
    points: list[HistoryPoint]


def _step(games: int, limit: int) -> int:
    """Every how many games to keep one, so that about `limit` points remain."""
    return max(1, math.ceil(games / max(limit - 1, 1)))


def sampled_sql(*, bot_id: int, ruleset: str, games: int, step: int) -> tuple[str, list[Any]]:
    """PostgreSQL's query for every `step`-th rating change of the bot: a probe of the
    (bot, ruleset, games_before) index per point."""
    table = RatingChange._meta.db_table
    sql = (
        f"SELECT c.id, c.games_before, c.before, c.after, c.created "
        f"FROM unnest(%s::int[]) AS points(n) CROSS JOIN LATERAL ("
        f"  SELECT * FROM {table} WHERE bot_id = %s AND ruleset = %s "
        f"  AND games_before = points.n LIMIT 1) AS c "
        f"ORDER BY c.games_before, c.created"
    )
    return sql, [list(range(0, games, step)), bot_id, ruleset]


def _sampled_changes(*, bot_id: int, ruleset: str, games: int, limit: int) -> list[RatingChange]:
    """Every `step`-th of the bot's rating changes in `ruleset` (about `limit` of them), looked
    up by game number in the (bot, ruleset, games_before) index: the cost is the points drawn,
    not the bot's games."""
    step = _step(games, limit)
    changes = RatingChange.objects.filter(bot_id=bot_id, ruleset=ruleset)
    if step > 1 and connection.vendor == "postgresql":
        # One index probe per point, said so: with an IN list PostgreSQL prefers reading the
        # bot's whole history when it lies close together on disk (a bot with 200,000
        # games: 30-60 ms instead of 2).
        sql, params = sampled_sql(bot_id=bot_id, ruleset=ruleset, games=games, step=step)
        return list(RatingChange.objects.raw(sql, params))
    if step > 1:
        changes = changes.filter(games_before__in=range(0, games, step))
    return list(
        changes.order_by("games_before", "created").only(
            "games_before", "before", "after", "created"
        )
    )


def _point(games: int, mu: float, when: datetime | None, params: EloParams) -> HistoryPoint:
    low, high = band(Rating(mu, games), params)
    return HistoryPoint(games, mu, low, high, when)


def rating_history(
    *, bot_id: int, params: EloParams = DEFAULT_PARAMS, limit: int = MAX_POINTS
) -> list[RatingHistory]:
    """The bot's rating after each rated game (sampled to about `limit` points), with the band,
    per ruleset it has played, by ruleset name. The last point is always its current rating."""
    histories = []
    for rating in BotRating.objects.filter(bot_id=bot_id, games__gt=0).order_by("ruleset"):
        changes = _sampled_changes(
            bot_id=bot_id, ruleset=rating.ruleset, games=rating.games, limit=limit
        )
        points = [_point(c.games_before + 1, c.after, c.created, params) for c in changes]
        if changes and changes[0].games_before == 0:
            points.insert(0, _point(0, changes[0].before, None, params))
        if not points or points[-1].game != rating.games:
            points.append(_point(rating.games, rating.mu, rating.updated, params))
        histories.append(RatingHistory(rating.ruleset, rating.games, points))
    return histories


@dataclass(frozen=True)
class SeatResult:
    seat: int
    games: int
    wins: int
    """Games finished first (a shared first counts)."""
    average_place: float
    score: float
    """Share of the opponents at its tables it finished ahead of (ties count half): 0.5 is
    even whatever the table size, unlike the win rate."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


@dataclass(frozen=True)
class OpponentResult:
    bot_id: int
    name: str
    games: int
    """Finished matches the two bots shared."""
    ahead: int
    tied: int
    behind: int

    @property
    def score(self) -> float:
        """The head-to-head score: finished ahead of the opponent, ties counting half."""
        return (self.ahead + 0.5 * self.tied) / self.games if self.games else 0.0


@dataclass(frozen=True)
class BotResults:
    seats: list[SeatResult]
    """By the seat index the bot held (0 first)."""
    opponents: list[OpponentResult]
    """The bots it met most often, most often first."""


def bot_results(*, bot_id: int, opponents: int = TOP_OPPONENTS) -> BotResults:
    """The bot's finished games (every ruleset) by the seat it held and against the
    `opponents` bots it met most often: read from the records kept as each match is recorded
    (`matches.records.bot_records_add`), a few rows whatever the bot's history."""
    seats = [
        SeatResult(
            seat=record.seat,
            games=record.games,
            wins=record.wins,
            average_place=record.places / record.games,
            score=record.beaten / record.opponents if record.opponents else 0.0,
        )
        for record in bot_seat_records(bot_id=bot_id)
    ]
    return BotResults(
        seats=seats,
        opponents=[
            OpponentResult(
                record.opponent_id,
                record.opponent.display_name,
                record.games,
                record.ahead,
                record.tied,
                record.games - record.ahead - record.tied,
            )
            for record in bot_opponent_records(bot_id=bot_id, limit=opponents)
        ],
    )


@dataclass(frozen=True)
class BotLine:
    bot_id: int
    name: str
    points: list[tuple[datetime, float]]
    """(when rated, Elo after) in time order, sampled; the last is the current rating."""


def top_bots(*, ruleset: str, n: int = 5) -> list[tuple[int, str, float, int]]:
    """The leaderboard's top `n` as (bot id, name, mu, games): one index range scan."""
    return [(r[0], r[1], r[3], r[4]) for r in leaderboard(ruleset=ruleset).rows()[:n]]


def rating_lines(*, ruleset: str, bot_ids: list[int], limit: int = MAX_POINTS) -> list[BotLine]:
    """The rating over time of each of `bot_ids` in `ruleset`, best (current rating) first.

    One query for the ratings, then one per bot over its own (bot, ruleset, created) index
    range, sampled in the database to about `limit` rows: the cost does not grow with the
    ladder, only with these bots' own game counts.
    """
    lines = []
    ratings = BotRating.objects.filter(bot_id__in=bot_ids, ruleset=ruleset, games__gt=0)
    for rating in ratings.select_related("bot__owner").order_by("-mu", "bot_id"):
        changes = _sampled_changes(
            bot_id=rating.bot_id, ruleset=ruleset, games=rating.games, limit=limit
        )
        points = [(c.created, c.after) for c in changes]
        if not points or points[-1][0] != rating.updated:
            points.append((rating.updated, rating.mu))
        lines.append(BotLine(rating.bot_id, rating.bot.display_name, points))
    return lines


@dataclass(frozen=True)
class EntrantLine:
    entry_id: int
    bot_id: int
    name: str
    points: list[float]
    """Tournament points after each round of `StandingsProgress.rounds`."""


@dataclass(frozen=True)
class StandingsProgress:
    rounds: list[int]
    lines: list[EntrantLine]
    """Best first (by the current standings)."""


def standings_progress(*, tournament: Tournament, limit: int = 8) -> StandingsProgress:
    """Each entrant's points after each round with a settled table (or a bye), for the
    current standings' top `limit`.

    Rebuilt here from the tables' stored results, round by round, with the same
    `standings.standings` the tournament uses, so the last column equals the standings table.
    """
    entries = {
        e.pk: e
        for e in tournament.entries.filter(version__isnull=False)
        .select_related("bot__owner")
        .order_by("id")
    }
    results: list[standings_rules.TableResult] = []
    byes: dict[int, int] = {}
    rounds: list[int] = []
    after: list[dict[int, float]] = []
    current: list[standings_rules.Standing] = []
    for r in tournament.rounds.prefetch_related("tables").order_by("number"):
        settled = [table for table in r.tables.all() if table.result is not None]
        if not settled and not r.byes:
            continue
        for pk in r.byes:
            byes[pk] = byes.get(pk, 0) + 1
        for table in settled:
            result = table.result or {}
            results.append(
                standings_rules.TableResult(
                    table=pairing.Table(tuple(table.seats)),
                    places={int(k): v for k, v in result["places"].items()},
                    totals={int(k): v for k, v in result["totals"].items()},
                )
            )
        current = standings_rules.standings(list(entries), results, byes, seats=tournament.seats)
        rounds.append(r.number)
        after.append({s.entrant: s.points for s in current})
    # The lines shown are the standings table's top: its order, which in a single elimination
    # puts the rounds advanced before points.
    top = (
        [s.entrant for s in tournament_standings(tournament) if s.entrant in entries]
        if current
        else []
    )
    lines = [
        EntrantLine(
            entry_id=pk,
            bot_id=entries[pk].bot_id,
            name=entries[pk].bot.display_name,
            points=[points.get(pk, 0.0) for points in after],
        )
        for pk in top[:limit]
    ]
    return StandingsProgress(rounds, lines)
