"""Charts: the SVG renderer on plain data (well-formed, escaped, accessible, empty-safe), the
selectors on PostgreSQL against hand-worked results, and the charts on the bot, leaderboard
and tournament pages."""

from __future__ import annotations

import math
import random
import xml.etree.ElementTree as ET
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client

from ladder.charts import pages, selectors
from ladder.charts.svg import BandPoint, Bar, Point, Series, bar_chart, line_chart, nice_ticks
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.elo import Rating, band
from ladder.ratings.models import BotRating, RatingChange
from ladder.ratings.services import rating_apply
from tests.ladder.tournaments.conftest import (  # noqa: F401  (fixtures for the tournament test)
    entrants,
    make_tournament,
    organiser,
    settle_games,
)

HOSTILE = "<script>alert(1)</script>"
HOSTILE_BOT = "<script>alert(1)<\\script>"
"""A bot name cannot hold '/' (bots are shown as owner/name): the hostile name closes with a
backslash instead, and is still markup if a page forgets to escape it."""


def parse(markup: str) -> ET.Element:
    """The chart as XML: it must be well-formed (wrapped, as it may hold several elements)."""
    return ET.fromstring(f"<root>{markup}</root>")


def line(name: str, ys: list[float]) -> Series:
    return Series(name, tuple(Point(i, y) for i, y in enumerate(ys)))


def chart(series: list[Series], band_points: list[BandPoint] | None = None, **kw: Any) -> str:
    options: dict[str, Any] = {
        "ident": "c",
        "title": "Rating",
        "description": "d",
        "x_label": "Game",
        "y_label": "Elo",
    }
    return line_chart(series, band_points, **{**options, **kw})


# The renderer: no database.


def test_a_line_chart_is_well_formed_scalable_and_named_for_screen_readers() -> None:
    root = parse(chart([line("alpha", [1500, 1540, 1520, 1580])]))
    figure = root.find("figure")
    assert figure is not None and figure.get("id") == "c"
    svg = figure.find("svg")
    assert svg is not None
    assert svg.get("viewBox") == "0 0 480 260" and svg.get("width") == "100%"
    assert svg.get("role") == "img"
    assert svg.get("aria-labelledby") == "c-title" and svg.get("aria-describedby") == "c-desc"
    assert svg.findtext("title") == "Rating" and svg.findtext("desc") == "d"
    assert svg.get("height") is None  # the height follows the width, by the viewBox
    polyline = svg.find(".//polyline")
    assert polyline is not None and len(polyline.get("points", "").split()) == 4
    # Colours come from charts.css: the shapes carry classes, never a fill or stroke.
    assert "fill=" not in ET.tostring(svg, encoding="unicode").replace('fill="none"', "")
    # The numbers, for whoever cannot see the picture.
    table = figure.find("details/div/table")
    assert table is not None
    cells = [[c.text for c in row] for row in table.iter("tr")]
    assert cells[0] == ["Game", "Elo"] and cells[1:] == [
        ["0", "1500"],
        ["1", "1540"],
        ["2", "1520"],
        ["3", "1580"],
    ]


def test_the_band_is_one_shaded_polygon_around_the_line() -> None:
    points = [BandPoint(x, 1500 - 300 / (x + 1), 1500 + 300 / (x + 1)) for x in range(5)]
    root = parse(chart([line("alpha", [1500] * 5)], points, band_label="±2 deviations"))
    polygons = root.findall(".//polygon")
    assert len(polygons) == 1 and polygons[0].get("class") == "band"
    corners = [tuple(map(float, p.split(","))) for p in polygons[0].get("points", "").split()]
    assert len(corners) == 10  # the high edge forwards, the low edge back
    # It widens where the band is widest (the first game) and is symmetric about the line.
    first_x = corners[0][0]
    at_first = sorted(y for x, y in corners if x == first_x)
    at_last = sorted(y for x, y in corners if x == corners[4][0])
    assert at_first[1] - at_first[0] > at_last[1] - at_last[0] > 0
    legend = root.find("figure/ul")
    assert legend is not None and "±2 deviations" in "".join(legend.itertext())
    header = [c.text for c in root.iter("th")][:4]
    assert header == ["Game", "Elo", "±2 deviations: low", "±2 deviations: high"]


def test_a_hostile_name_is_text_not_markup_everywhere_it_is_drawn() -> None:
    markups = [
        chart([line(HOSTILE, [1, 2]), line("b", [2, 1])], title=HOSTILE, description=HOSTILE),
        bar_chart(
            [Bar(HOSTILE, 0.5, (HOSTILE,))],
            ident="b",
            title=HOSTILE,
            description=HOSTILE,
            label_header=HOSTILE,
            value_label=HOSTILE,
            headers=(HOSTILE,),
            reference=0.5,
            reference_label=HOSTILE,
        ),
        chart([], title=HOSTILE, empty=HOSTILE),
        chart([line('" onload="alert(1)', [1, 2]), line("x", [1, 1])]),
    ]
    for markup in markups:
        assert "<script" not in markup and 'onload="' not in markup
        root = parse(markup)
        assert not [e for e in root.iter() if e.tag.endswith("script")]
        assert not [e for e in root.iter() for a in e.attrib if a.startswith("on")]
    texts = "".join(parse(markups[0]).itertext()) + "".join(parse(markups[1]).itertext())
    assert HOSTILE in texts  # shown as the text it is


def test_no_data_gives_a_message_not_a_crash() -> None:
    for markup in (
        chart([]),
        chart([Series("nobody", ())]),
        bar_chart([], ident="b", title="By seat", description="", label_header="", value_label=""),
    ):
        root = parse(markup)
        assert root.find(".//svg") is None
        message = root.find("figure/p")
        assert message is not None and message.get("class") == "chart-empty"
        assert message.text == "No games yet."


def test_one_game_and_one_flat_line_still_draw() -> None:
    root = parse(chart([Series("solo", (Point(1, 1500),))]))
    assert len(root.findall(".//circle")) == 1  # a dot: one point makes no line
    assert root.find(".//polyline") is None
    root = parse(chart([line("flat", [1500, 1500, 1500])]))
    assert root.find(".//polyline") is not None


def test_many_points_are_drawn_but_the_table_keeps_a_readable_sample() -> None:
    ys = [1500 + 50 * math.sin(i / 20) for i in range(500)]
    root = parse(chart([line("long", ys)]))
    polyline = root.find(".//polyline")
    assert polyline is not None and len(polyline.get("points", "").split()) == 500
    assert root.findall(".//circle") == []  # dots only on short lines
    rows = root.findall(".//tbody/tr")
    assert len(rows) == 25
    assert rows[0][0].text == "0" and rows[-1][0].text == "499"
    caption = root.find(".//caption")
    assert caption is not None and "a sample" in (caption.text or "")


def test_series_sharing_their_x_values_get_one_table_row_each() -> None:
    series = [line("alpha", [1, 1.5, 2.5]), line("beta", [0, 0.5, 0.5])]
    root = parse(chart(series, x_label="Round", y_label="Points", y_decimals=2))
    header = [c.text for c in root.iter("th")][:4]
    assert header == ["Series", "Round 0", "Round 1", "Round 2"]
    rows = [[c.text for c in row] for row in root.findall(".//tbody/tr")]
    assert rows == [["alpha", "1", "1.5", "2.5"], ["beta", "0", "0.5", "0.5"]]
    drawing = root.find(".//svg[@class='chart-svg']")
    assert drawing is not None
    classes = [g.get("class") for g in drawing.iter("g") if "series" in (g.get("class") or "")]
    assert classes == ["series series-0", "series series-1"]


def test_dates_on_the_x_axis_are_labelled_as_dates() -> None:
    day = 86_400.0
    start = 1_767_225_600.0  # 2026-01-01 00:00 UTC
    series = Series("alpha", tuple(Point(start + i * day, 1500 + i) for i in range(10)))
    root = parse(chart([series], x_dates=True))
    labels = [t.text for t in root.iter("text")]
    assert "2026-01-01" in labels and "2026-01-10" in labels
    first_row = root.find(".//tbody/tr/th")
    assert first_row is not None and first_row.text == "2026-01-01 00:00"
    # Games seconds apart (a busy ladder, a test): the ticks tell the seconds apart.
    series = Series("alpha", tuple(Point(start + i * 10, 1500 + i) for i in range(4)))
    labels = [t.text for t in parse(chart([series], x_dates=True)).iter("text")]
    assert {"00:00:00", "00:00:10", "00:00:20", "00:00:30"} <= set(labels)
    # Within a second, a label is not repeated along the axis.
    series = Series("alpha", tuple(Point(start + i * 0.3, 1500 + i) for i in range(4)))
    labels = [t.text for t in parse(chart([series], x_dates=True)).iter("text")]
    times = [label for label in labels if label and label.count(":") == 2]
    assert times == ["00:00:00"]


def test_bars_scale_to_the_maximum_with_a_reference_line() -> None:
    bars = [Bar("Seat 0", 1.0, ("4",)), Bar("Seat 1", 0.25, ("4",)), Bar("Seat 2", 0.0, ("2",))]
    root = parse(
        bar_chart(
            bars,
            ident="seats",
            title="By seat",
            description="d",
            label_header="Seat",
            value_label="Opponents beaten",
            headers=("Games",),
            reference=0.5,
            reference_label="even",
        )
    )
    widths = [float(r.get("width", "")) for r in root.iter("rect") if r.get("class") == "bar"]
    assert widths[0] > 0 and widths[1] == pytest.approx(widths[0] / 4) and widths[2] == 0
    values = [t.text for t in root.iter("text") if t.get("class") == "bar-value"]
    assert values == ["100%", "25%", "0%"]
    assert root.find(".//g[@class='reference']") is not None
    rows = [[c.text for c in row] for row in root.findall(".//tbody/tr")]
    assert rows == [["Seat 0", "100%", "4"], ["Seat 1", "25%", "4"], ["Seat 2", "0%", "2"]]


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="chart id"):
        chart([line("a", [1, 2])], ident='x" onclick="y')
    with pytest.raises(ValueError, match="finite"):
        chart([line("a", [1, math.nan])])
    with pytest.raises(ValueError, match="one cell per header"):
        bar_chart(
            [Bar("a", 0.5)],
            ident="b",
            title="",
            description="",
            label_header="",
            value_label="",
            headers=("Games",),
        )


def test_ticks_are_round_numbers_covering_the_range() -> None:
    assert nice_ticks(1432, 1618) == [1400, 1450, 1500, 1550, 1600, 1650]
    assert nice_ticks(0, 1) == [0, 0.25, 0.5, 0.75, 1]
    assert nice_ticks(0, 9, count=6, steps=(1, 2, 5)) == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(1500, 1500) == [1499, 1499.5, 1500, 1500.5, 1501]


# The selectors, on PostgreSQL.


@pytest.fixture
def three(valid_version: Any) -> list[Any]:
    return [valid_version(name) for name in ("alpha", "beta", "gamma")]


def play(finished_match: Any, versions: list[Any], places: list[int]) -> Any:
    match = finished_match(versions, places)
    rating_apply(match=match)
    return match


@pytest.mark.django_db
def test_rating_history_follows_every_change_with_its_band(
    three: list[Any], finished_match: Any
) -> None:
    a, b, c = three
    for places in ([1, 2, 3], [2, 1, 3], [1, 3, 2]):
        play(finished_match, [a, b, c], places)
    [history] = selectors.rating_history(bot_id=a.bot_id)
    changes = list(RatingChange.objects.filter(bot_id=a.bot_id).order_by("id"))
    assert history.ruleset == "modern" and history.games == 3
    assert [p.game for p in history.points] == [0, 1, 2, 3]
    assert [p.elo for p in history.points] == [1500.0, *(ch.after for ch in changes)]
    for point in history.points:
        assert (point.low, point.high) == band(Rating(point.elo, point.game))
    assert history.points[0].when is None and history.points[-1].when == changes[-1].created
    assert history.points[-1].elo == BotRating.objects.get(bot_id=a.bot_id, games__gt=0).mu


@pytest.mark.django_db
def test_a_long_history_is_sampled_in_the_database_and_ends_at_the_current_rating(
    three: list[Any], finished_match: Any
) -> None:
    a, b, _ = three
    for i in range(9):
        play(finished_match, [a, b], [1 + i % 2, 2 - i % 2])
    [history] = selectors.rating_history(bot_id=a.bot_id, limit=4)
    # Every 3rd game (games_before 0, 3, 6) plus the start and the current rating.
    assert [p.game for p in history.points] == [0, 1, 4, 7, 9]
    assert history.points[-1].elo == BotRating.objects.get(bot_id=a.bot_id, games__gt=0).mu
    [line_] = selectors.rating_lines(ruleset="modern", bot_ids=[a.bot_id], limit=4)
    assert len(line_.points) == 4 and line_.points[-1][1] == history.points[-1].elo


@pytest.mark.django_db
def test_the_sampled_history_is_looked_up_by_game_number_in_an_index(
    three: list[Any], finished_match: Any
) -> None:
    a, b, _ = three
    for i in range(12):
        play(finished_match, [a, b], [1 + i % 2, 2 - i % 2])
    [history] = selectors.rating_history(bot_id=a.bot_id, limit=4)
    assert [p.game for p in history.points] == [0, 1, 5, 9, 12]
    sql, params = selectors.sampled_sql(bot_id=a.bot_id, ruleset="modern", games=12, step=4)
    with connection.cursor() as cursor:
        # A table of a few rows is read whole whatever the indexes; forbid that to see the
        # plan PostgreSQL uses on a real ladder (there it reads only the points drawn).
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "rating_change_game" in plan, plan


@pytest.mark.django_db
def test_results_by_seat_and_by_opponent_count_each_pair_once(
    valid_version: Any, finished_match: Any
) -> None:
    a, b, c, d = (valid_version(name) for name in ("alpha", "beta", "gamma", "delta"))
    # a's seat is its index in the list: seat 0 twice, seat 1 once, seat 2 once.
    finished_match([a, b, c], [1, 2, 3])  # a ahead of b and c
    finished_match([a, b, d], [2, 1, 2])  # a behind b, tied with d
    finished_match([b, a, c], [1, 2, 3])  # a behind b, ahead of c
    finished_match([c, d, a], [1, 1, 3])  # a behind both
    running = Match.objects.create(status="running")  # not counted: not finished
    MatchSeat.objects.create(match=running, seat=0, bot_version=a, bot_id=a.bot_id)

    by_seat = {s.seat: s for s in selectors.bot_results(bot_id=a.bot_id).seats}
    assert set(by_seat) == {0, 1, 2}
    assert (by_seat[0].games, by_seat[0].wins, by_seat[0].average_place) == (2, 1, 1.5)
    assert by_seat[0].score == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    assert by_seat[0].win_rate == 0.5
    assert by_seat[1].score == 0.5 and by_seat[1].average_place == 2
    assert by_seat[2].score == 0 and by_seat[2].wins == 0

    opponents = selectors.bot_results(bot_id=a.bot_id).opponents
    assert [(o.name, o.games, o.ahead, o.tied, o.behind) for o in opponents] == [
        ("ann/beta", 3, 1, 0, 2),
        ("ann/gamma", 3, 2, 0, 1),
        ("ann/delta", 2, 0, 1, 1),
    ]
    assert opponents[2].score == 0.25
    assert selectors.bot_results(bot_id=a.bot_id, opponents=1).opponents[0].name == "ann/beta"


@pytest.mark.django_db
def test_the_top_over_time_follows_the_leaderboard_order(
    valid_version: Any, finished_match: Any
) -> None:
    versions = [valid_version(f"bot{i}") for i in range(7)]
    for i in range(6):
        play(finished_match, [versions[i], versions[i + 1]], [1, 2])
    top = selectors.top_bots(ruleset="modern", n=5)
    lines = selectors.rating_lines(ruleset="modern", bot_ids=[row[0] for row in top])
    assert len(lines) == 5
    assert [line_.bot_id for line_ in lines] == [row[0] for row in top]
    for line_ in lines:
        rating = BotRating.objects.get(bot_id=line_.bot_id, ruleset="modern")
        assert line_.points[-1] == (rating.updated, rating.mu)
        assert [w for w, _ in line_.points] == sorted(w for w, _ in line_.points)
    assert selectors.rating_lines(ruleset="classic", bot_ids=[row[0] for row in top]) == []


@pytest.mark.django_db
def test_standings_by_round_end_at_the_standings_table(
    client: Client,
    make_tournament: Any,  # noqa: F811
    entrants: Any,  # noqa: F811
    owner: Any,
) -> None:
    from ladder.tournaments.selectors import tournament_detail
    from ladder.tournaments.services import (
        tournament_progress,
        tournament_register,
        tournament_tick,
    )

    t = make_tournament(format="swiss", seats=3, swiss_rounds=3)
    for bot in entrants(7):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    assert selectors.standings_progress(tournament=t).rounds == []
    rng = random.Random(4)
    for _ in range(10):
        settle_games(t, rng)
        tournament_progress(tournament_id=t.pk)
        t.refresh_from_db()
        if t.status != "running":
            break
    assert t.status == "finished"

    progress = selectors.standings_progress(tournament=t, limit=5)
    assert progress.rounds == [1, 2, 3]
    final = tournament_detail(tournament=t).standings
    assert [(line_.entry_id, line_.points[-1]) for line_ in progress.lines] == [
        (row.entry.pk, row.points) for row in final[:5]
    ]
    for line_ in progress.lines:
        # Points only grow, by at most one a round (a table win).
        steps = [b - a for a, b in zip([0.0, *line_.points], line_.points, strict=False)]
        assert all(0 <= step <= 1 for step in steps), line_

    html = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert 'id="standings-by-round"' in html
    root = parse(str(pages.tournament_chart(tournament=t)))
    drawing = root.find(".//svg[@class='chart-svg']")
    assert drawing is not None
    assert len([g for g in drawing.iter("g") if "series-" in (g.get("class") or "")]) == 7


# The pages.


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()


@pytest.mark.django_db
def test_the_bot_page_shows_its_rating_history_and_results(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    a, b, c = valid_version(HOSTILE_BOT), valid_version("beta"), valid_version("gamma")
    play(finished_match, [a, b, c], [1, 2, 3])
    play(finished_match, [c, b, a], [1, 2, 3])
    html = client.get(f"/bots/{a.bot_id}/").content.decode()
    assert "/static/ladder/charts.css" in html
    for ident in ("rating-modern", "results-by-seat", "results-by-opponent"):
        assert f'id="{ident}"' in html
    assert html.count("<svg") >= 3 and 'class="band"' in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html

    # The opponent's page names the hostile bot in its head-to-head chart, escaped too.
    html = client.get(f"/bots/{b.bot_id}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;\\script&gt;" in html and "<script>alert(1)" not in html

    html = client.get(f"/bots/{valid_version('new').bot_id}/").content.decode()
    assert "rating-modern" not in html and html.count("No games yet.") == 2


@pytest.mark.django_db
def test_the_leaderboard_shows_the_top_over_time_and_caches_it(
    client: Client,
    valid_version: Any,
    finished_match: Any,
    django_assert_num_queries: Any,
) -> None:
    a, b, c = valid_version(HOSTILE_BOT), valid_version("beta"), valid_version("gamma")
    play(finished_match, [a, b, c], [1, 2, 3])
    html = client.get("/").content.decode()
    assert 'id="top-modern"' in html and "/static/ladder/charts.css" in html
    assert "<script>alert(1)" not in html
    assert html.index("<table") < html.index('id="top-modern"')  # under the table
    assert 'id="top-classic"' not in client.get("/", {"ruleset": "classic"}).content.decode()

    with django_assert_num_queries(1):  # the top bots, for the key; the chart is cached
        first = pages.leaderboard_chart(ruleset="modern")
    assert first.count("<polyline") + first.count("<circle") >= 3
    play(finished_match, [a, b, c], [3, 2, 1])
    second = pages.leaderboard_chart(ruleset="modern")
    assert second != first  # a rated game of a top bot changes the key


@pytest.mark.django_db
def test_the_tournament_page_has_no_chart_before_its_first_round(
    client: Client,
    make_tournament: Any,  # noqa: F811
) -> None:
    t = make_tournament(format="swiss", seats=3, swiss_rounds=3)
    html = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert 'id="standings-by-round"' not in html  # no rounds yet: nothing to chart
    assert "/static/ladder/charts.css" in html
