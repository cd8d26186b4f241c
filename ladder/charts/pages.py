"""The charts of each page, drawn from the selectors' data and marked safe for the templates.

`svg.py` escapes every piece of text it draws, which is what makes `mark_safe` right here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from ladder import shared_cache
from ladder.charts import selectors, svg
from ladder.tournaments.models import Tournament

TOP_N = 5
TOP_CACHE_SECONDS = 60
"""The leaderboard's chart is drawn at most once a minute per ruleset while its top bots do
not change; a rated game of one of them changes the cache key, so it is never stale."""


@dataclass(frozen=True)
class BotCharts:
    ratings: list[SafeString]
    """One rating-history chart per ruleset the bot is rated in."""
    seats: SafeString
    opponents: SafeString


def bot_charts(*, bot_id: int) -> BotCharts:
    """The bot page's charts: rating history with its band per ruleset, results by seat
    position and by opponent."""
    ratings = []
    for history in selectors.rating_history(bot_id=bot_id):
        last = history.points[-1]
        line = svg.Series(
            f"Elo ({history.ruleset})",
            tuple(svg.Point(p.game, p.elo) for p in history.points),
        )
        ratings.append(
            mark_safe(
                svg.line_chart(
                    [line],
                    [svg.BandPoint(p.game, p.low, p.high) for p in history.points],
                    ident=f"rating-{slugify(history.ruleset) or 'ruleset'}",
                    title=f"Rating history, {history.ruleset} rules",
                    description=(
                        f"Elo after each of {history.games} rated games"
                        f"{' (a sample)' if len(history.points) < history.games else ''}, "
                        f"now {last.elo:.0f}; the shaded band is ±2 deviations, "
                        f"now {last.low:.0f} to {last.high:.0f}, and narrows with games."
                    ),
                    x_label="Rated games",
                    y_label="Elo",
                    band_label="band: ±2 deviations",
                )
            )
        )

    results = selectors.bot_results(bot_id=bot_id)
    seats = results.seats
    by_seat = svg.bar_chart(
        [
            svg.Bar(
                f"Seat {s.seat}",
                s.score,
                (str(s.games), f"{s.win_rate * 100:.0f}%", f"{s.average_place:.2f}"),
            )
            for s in seats
        ],
        ident="results-by-seat",
        title="Results by seat position",
        description=(
            "For each seat index (0 deals first), the share of opponents the bot finished "
            "ahead of, ties counting half; 50% is even at any table size. "
            + "; ".join(f"seat {s.seat}: {s.score * 100:.0f}% in {s.games} games" for s in seats)
        ),
        label_header="Seat",
        value_label="Opponents beaten",
        headers=("Games", "Win rate", "Average place"),
        reference=0.5,
        reference_label="even",
    )

    opponents = results.opponents
    by_opponent = svg.bar_chart(
        [
            svg.Bar(o.name, o.score, (str(o.games), str(o.ahead), str(o.tied), str(o.behind)))
            for o in opponents
        ],
        ident="results-by-opponent",
        title="Head-to-head, most frequent opponents",
        description=(
            "For the bots it met most often, the share of shared games it finished ahead "
            "of them, ties counting half. "
            + "; ".join(f"{o.name}: {o.score * 100:.0f}% in {o.games} games" for o in opponents)
        ),
        label_header="Opponent",
        value_label="Finished ahead",
        headers=("Games", "Ahead", "Tied", "Behind"),
        reference=0.5,
        reference_label="even",
    )
    return BotCharts(ratings, mark_safe(by_seat), mark_safe(by_opponent))


def leaderboard_chart(*, ruleset: str, n: int = TOP_N) -> SafeString:
    """The ratings over time of the leaderboard's current top `n`, cached (see TOP_CACHE_SECONDS).

    The key is made from the top bots' ids, names, ratings and game counts (one index range
    scan of the board), so the cache only saves the histories' queries and the drawing.
    """
    top = selectors.top_bots(ruleset=ruleset, n=n)
    digest = hashlib.sha256(repr(top).encode()).hexdigest()[:32]
    key = f"charts:top:{ruleset}:{n}:{digest}"
    # The cache down, the chart is drawn for this request (fail open: it is the database's).
    cached = shared_cache.get(key)
    if isinstance(cached, str):
        return mark_safe(cached)
    drawn = _top_chart(ruleset=ruleset, n=n, bot_ids=[row[0] for row in top])
    shared_cache.put(key, drawn, TOP_CACHE_SECONDS)
    return mark_safe(drawn)


def _top_chart(*, ruleset: str, n: int, bot_ids: list[int]) -> str:
    lines = selectors.rating_lines(ruleset=ruleset, bot_ids=bot_ids)
    return svg.line_chart(
        [
            svg.Series(line.name, tuple(svg.Point(w.timestamp(), elo) for w, elo in line.points))
            for line in lines
        ],
        ident=f"top-{slugify(ruleset) or 'ruleset'}",
        title=f"The top {len(lines) or n} over time, {ruleset} rules",
        description=(
            f"Elo over time of the {len(lines)} best-rated bots now: "
            + "; ".join(f"{line.name} {line.points[-1][1]:.0f}" for line in lines)
            + "."
        ),
        x_label="Date (UTC)",
        y_label="Elo",
        x_dates=True,
        series_label="Bot",
        empty="No rated games yet.",
    )


def tournament_chart(*, tournament: Tournament) -> SafeString:
    """Points after each round of the current standings' leaders."""
    progress = selectors.standings_progress(tournament=tournament)
    leaders = ", ".join(
        f"{line.name} {line.points[-1]:g}" for line in progress.lines if line.points
    )
    return mark_safe(
        svg.line_chart(
            [
                svg.Series(
                    line.name,
                    tuple(
                        svg.Point(r, p) for r, p in zip(progress.rounds, line.points, strict=True)
                    ),
                )
                for line in progress.lines
            ],
            ident="standings-by-round",
            title="Standings by round",
            description=(
                f"Points after each of {len(progress.rounds)} rounds of the "
                f"{len(progress.lines)} leading entrants: {leaders}."
            ),
            x_label="Round",
            y_label="Points",
            y_decimals=2,
            series_label="Bot",
            empty="No round has a result yet.",
        )
    )
