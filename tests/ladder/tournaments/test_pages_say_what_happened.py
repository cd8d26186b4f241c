"""Tournaments say what happened (issue 15, point 5): the table sizes really played, final
standings once finished, and a list that says when a tournament finished or started."""

from __future__ import annotations

import html
import random
import re
from typing import Any

import pytest

from ladder.tournaments.models import Tournament
from ladder.tournaments.services import (
    tournament_progress,
    tournament_register,
    tournament_tick,
)
from tests.ladder.tournaments.conftest import settle_games

pytestmark = pytest.mark.django_db


def run_to_the_end(t: Tournament) -> Tournament:
    rng = random.Random(3)
    for _ in range(50):
        t.refresh_from_db()
        if t.status == Tournament.Status.FINISHED:
            return t
        settle_games(t, rng)
        tournament_progress(tournament_id=t.pk)
    raise AssertionError("the tournament did not finish")


def test_a_round_robin_page_says_the_table_size_played_and_final_standings(
    client: Any, make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(format="round_robin", seats=4)
    for bot in entrants(6):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at)
    sizes = {len(table.seats) for r in t.rounds.all() for table in r.tables.all()}
    assert sizes == {3}  # six entrants at up to four seats: two tables of three

    page = html.unescape(client.get(f"/tournaments/{t.pk}/").content.decode())
    assert "4 seats a table" not in page
    assert "tables of 3 seats (at most 4 asked; 6 entrants split evenly)" in page
    assert "Standings after the tables played so far" in page or "No games yet." in page

    run_to_the_end(t)
    page = html.unescape(client.get(f"/tournaments/{t.pk}/").content.decode())
    assert "<caption>Final standings</caption>" in page
    assert "played so far" not in page
    # The money tie-break is written as money is everywhere: $25,000, not 25000.
    rows = page[page.index("<caption>Final standings") : page.index("</table>")]
    money = re.findall(r"<td>[\d.]+, (-?\$[\d,]+), \d+</td>", rows)
    assert len(money) == 6, rows


def test_the_list_says_when_a_tournament_finished_or_started(
    client: Any, make_tournament: Any, entrants: Any, owner: Any
) -> None:
    done = make_tournament(name="Done cup", format="round_robin", seats=2)
    for bot in entrants(2):
        tournament_register(tournament=done, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=done.pk, now=done.starts_at)
    done = run_to_the_end(done)
    upcoming = make_tournament(name="Later cup", format="swiss", seats=2)

    page = html.unescape(client.get("/tournaments/").content.decode())
    finished_line = page[page.index("Done cup") :].split("</li>")[0]
    upcoming_line = page[page.index("Later cup") :].split("</li>")[0]
    assert "finished; starts" not in page
    assert f"finished {done.finished:%Y-%m-%d %H:%M} UTC" in finished_line
    assert f"starts {upcoming.starts_at:%Y-%m-%d %H:%M} UTC" in upcoming_line
