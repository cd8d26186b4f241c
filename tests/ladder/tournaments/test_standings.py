"""Tournament points and standings (ladder.tournaments.standings): known answers and
properties.  Pure functions: no database, no Django settings."""

from __future__ import annotations

import doctest
import itertools
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.tournaments import standings as standings_module
from ladder.tournaments.pairing import Round, Table, duplicate_rotations
from ladder.tournaments.standings import (
    ELIMINATION_RANKING,
    RANKING,
    TIE_BREAKS,
    Standing,
    TableResult,
    bye_points,
    duplicate_result,
    places_from_totals,
    standings,
    table_points,
)
from tests.tiers import examples


def result(seats: Sequence[int], totals: Sequence[int]) -> TableResult:
    """A table whose places follow the money, most first."""
    money = dict(zip(seats, totals, strict=True))
    return TableResult(Table(tuple(seats)), places=places_from_totals(money), totals=money)


def test_doctests() -> None:
    assert doctest.testmod(standings_module).failed == 0


# --- points -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
def test_win_is_one_and_last_is_zero_at_any_size(size: int) -> None:
    seats = list(range(1, size + 1))
    points = table_points(result(seats, [1000 - 10 * i for i in range(size)]))
    assert points[1] == 1.0
    assert points[size] == 0.0
    assert sum(points.values()) == pytest.approx(size / 2)


def test_points_of_a_four_seat_table() -> None:
    points = table_points(result([1, 2, 3, 4], [900, 500, 500, 100]))
    # 2 and 3 beat 4 and tie each other: (1 + 0.5) / 3.
    assert points == {1: 1.0, 2: 0.5, 3: 0.5, 4: 0.0}
    points = table_points(result([1, 2, 3], [100, 100, 100]))
    assert points == {1: 0.5, 2: 0.5, 3: 0.5}


def test_bye_is_an_average_result() -> None:
    assert all(bye_points(seats) == 0.5 for seats in range(2, 7))
    with pytest.raises(ValueError):
        bye_points(1)


def test_table_result_must_name_the_table() -> None:
    with pytest.raises(ValueError, match="exactly the table's entrants"):
        TableResult(Table((1, 2)), places={1: 1}, totals={1: 5, 2: 3})
    with pytest.raises(ValueError, match="start at 1"):
        TableResult(Table((1, 2)), places={1: 0, 2: 1}, totals={1: 5, 2: 3})


# --- duplicate --------------------------------------------------------------------------------


def test_duplicate_result_sums_rotations() -> None:
    table = Table((1, 2, 3))
    games = [{1: 100, 2: 50, 3: 0}, {1: 0, 2: 90, 3: 10}, {1: 40, 2: 0, 3: 60}]
    combined = duplicate_result(table, games)
    assert combined.totals == {1: 140, 2: 140, 3: 70}
    assert combined.places == {1: 1, 2: 1, 3: 3}
    assert table_points(combined) == {1: 0.75, 2: 0.75, 3: 0.0}
    assert len(duplicate_rotations(table)) == len(games)


def test_duplicate_result_checks_each_rotation() -> None:
    with pytest.raises(ValueError, match="rotation 1"):
        duplicate_result(Table((1, 2)), [{1: 1, 2: 2}, {1: 1, 3: 2}])
    with pytest.raises(ValueError, match="at least one"):
        duplicate_result(Table((1, 2)), [])


# --- standings --------------------------------------------------------------------------------


def test_standings_order_and_tie_breaks() -> None:
    # Round 1: 1 beats 2, 3 beats 4.  Round 2: 1 beats 3, 4 beats 2.  5 had two byes.
    results = [
        result([1, 2], [300, 100]),
        result([3, 4], [200, 150]),
        result([1, 3], [500, 100]),
        result([4, 2], [120, 110]),
    ]
    table = standings([1, 2, 3, 4, 5], results, {5: 2}, seats=2)
    assert [s.entrant for s in table] == [1, 3, 4, 5, 2]
    assert [s.rank for s in table] == [1, 2, 3, 4, 5]
    assert [s.points for s in table] == [2.0, 1.0, 1.0, 1.0, 0.0]
    by_entrant = {s.entrant: s for s in table}
    # 3, 4 and 5 have one point each: 3 met 4 (1) and 1 (2) for Buchholz 3; 4 met 3 and 2: 1;
    # 5 never played, so it has no opponents' points and comes last of the three.
    assert by_entrant[3].tiebreak == (3.0, 300, 1)
    assert by_entrant[4].tiebreak == (1.0, 270, 1)
    assert by_entrant[5] == Standing(
        rank=4, entrant=5, points=1.0, tiebreak=(0.0, 0, 0), games=0, byes=2
    )
    assert len(TIE_BREAKS) == len(by_entrant[1].tiebreak)


def test_standings_money_then_wins_then_id() -> None:
    results = [result([1, 2], [300, 300]), result([3, 4], [200, 200])]
    table = standings([4, 3, 2, 1], results)
    # All on 0.5 points with 0.5 Buchholz: money splits the pairs, the id each pair.
    assert [s.entrant for s in table] == [1, 2, 3, 4]


def test_standings_counts_byes_from_rounds() -> None:
    rounds = [
        Round(tables=(Table((1, 2)),), byes=(3,)),
        Round(tables=(Table((1, 3)),), byes=(2,)),
    ]
    results = [result([1, 2], [5, 1]), result([1, 3], [1, 5])]
    table = standings([1, 2, 3], results, rounds, seats=2)
    assert {s.entrant: (s.points, s.byes, s.games) for s in table} == {
        1: (1.0, 0, 2),
        2: (0.5, 1, 1),
        3: (1.5, 1, 1),
    }


def test_withdrawn_opponent_still_counts_for_buchholz() -> None:
    results = [result([1, 9], [5, 1]), result([9, 2], [5, 1]), result([2, 1], [5, 1])]
    table = standings([1, 2], results)
    assert {s.entrant: s.tiebreak[0] for s in table} == {1: 2.0, 2: 2.0}


def test_standings_reject_duplicates() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        standings([1, 1], [])


def test_thirds_add_up_exactly() -> None:
    # Three second places at 4-seat tables (2/3 each) equal two wins and a last place, and
    # both Buchholz sums are 4 made of thirds: the ranking must see two exact ties and go on
    # to money, not decide on a rounding error.
    results = [
        result([1, 10, 11, 12], [5, 9, 1, 0]),
        result([1, 13, 14, 15], [5, 9, 1, 0]),
        result([1, 16, 17, 18], [5, 9, 1, 0]),
        result([2, 20, 21, 22], [9, 0, 0, 0]),
        result([2, 23, 24, 25], [9, 0, 0, 0]),
        result([2, 26, 27, 28], [0, 9, 9, 9]),
    ]
    table = {s.entrant: s for s in standings([1, 2], results)}
    assert table[1].points == table[2].points == 2.0
    # 1 met (1 + 1/3 + 0) three times; 2 met six entrants on 1/3 and three on 2/3.
    assert table[1].tiebreak == (4.0, 15, 0)
    assert table[2].tiebreak == (4.0, 18, 2)
    assert table[2].rank == 1


def test_elimination_ranks_by_rounds_advanced_before_points() -> None:
    # Round 1: 1 has a bye; 2 wins (2, 3, 4) and 5 wins (5, 6, 7).  The final (1, 2, 5): 1 and
    # 2 share first and 1, the better seed, advances.  On points 2 leads (1 + 0.75 against
    # 0.5 + 0.75), but 1 is the champion and must rank first.
    results = [
        result([2, 3, 4], [900, 100, 0]),
        result([5, 6, 7], [900, 800, 0]),
        result([1, 2, 5], [500, 500, 0]),
    ]
    by_points = standings(range(1, 8), results, {1: 1}, seats=3)
    assert [s.entrant for s in by_points][:2] == [2, 1]  # what points alone would say

    advanced = {1: 2, 2: 1, 5: 1}
    table = standings(range(1, 8), results, {1: 1}, seats=3, advanced=advanced)
    assert [s.entrant for s in table] == [1, 2, 5, 3, 6, 4, 7]  # 3 over 6 on Buchholz
    assert [s.advanced for s in table] == [2, 1, 1, 0, 0, 0, 0]
    assert table[0].points < table[1].points
    assert by_points[0].advanced is None
    assert ELIMINATION_RANKING[1:] == RANKING == ("Points", *TIE_BREAKS)


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[list[int], list[TableResult], dict[int, int]]:
    count = draw(st.integers(2, 30))
    entrants = list(range(1, count + 1))
    rng = random.Random(draw(st.integers(0, 2**32)))
    results: list[TableResult] = []
    byes: dict[int, int] = {}
    for _ in range(draw(st.integers(0, 6))):
        order = list(entrants)
        rng.shuffle(order)
        while len(order) >= 2:
            size = min(len(order), rng.randint(2, 6))
            seats, order = order[:size], order[size:]
            results.append(result(seats, [rng.randrange(5) * 100 for _ in seats]))
        for e in order:
            byes[e] = byes.get(e, 0) + 1
    return entrants, results, byes


@settings(max_examples=examples(60), deadline=None)
@given(tournaments())
def test_standings_properties(
    tournament: tuple[list[int], list[TableResult], dict[int, int]],
) -> None:
    entrants, results, byes = tournament
    table = standings(entrants, results, byes)
    assert sorted(s.entrant for s in table) == entrants
    assert [s.rank for s in table] == list(range(1, len(entrants) + 1))
    for better, worse in itertools.pairwise(table):
        assert better.points >= worse.points
    for a in table:
        for b in table:
            if a.points > b.points:
                assert a.rank < b.rank
    assert sum(s.games for s in table) == sum(len(r.table.seats) for r in results)
    expected = sum(len(r.table.seats) / 2 for r in results) + 0.5 * sum(byes.values())
    assert sum(s.points for s in table) == pytest.approx(expected)
