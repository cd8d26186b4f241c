"""Known answers and properties of the multiplayer Elo in ladder.ratings.elo."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ladder.ratings import (
    DEFAULT_PARAMS,
    EloParams,
    Rating,
    band,
    deviation,
    expected_score,
    k_factor,
    pair_score,
    rate_game,
    recompute,
    update,
)

#: Classic Elo: K = 32 whatever the number of games.
FIXED_K32 = EloParams(k0=32.0, k_min=32.0)


def mus(ratings: list[Rating]) -> list[float]:
    return [r.mu for r in ratings]


# --- two players: the textbook numbers -------------------------------------------------------


def test_expected_score_textbook_values() -> None:
    assert expected_score(1500, 1500) == 0.5
    # 200 points ahead: 1 / (1 + 10 ** -0.5).
    assert expected_score(1600, 1400) == pytest.approx(0.7597469)
    assert expected_score(1400, 1600) == pytest.approx(0.2402531)
    # 400 points ahead means 10:1 odds.
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)


def test_two_equal_players_k32() -> None:
    after = update([Rating(1500, 50), Rating(1500, 50)], [1, 2], FIXED_K32)
    assert mus(after) == pytest.approx([1516.0, 1484.0])
    assert [r.games for r in after] == [51, 51]


def test_two_players_favourite_wins_and_upset_k32() -> None:
    favourite_wins = update([Rating(1600, 50), Rating(1400, 50)], [1, 2], FIXED_K32)
    assert mus(favourite_wins) == pytest.approx([1607.688, 1392.312], abs=1e-3)
    upset = update([Rating(1600, 50), Rating(1400, 50)], [2, 1], FIXED_K32)
    assert mus(upset) == pytest.approx([1575.688, 1424.312], abs=1e-3)


def test_two_players_draw_k32() -> None:
    after = update([Rating(1600, 50), Rating(1400, 50)], [1, 1], FIXED_K32)
    assert mus(after) == pytest.approx([1591.688, 1408.312], abs=1e-3)


def test_first_game_with_default_params() -> None:
    """Two new bots: K = k0 = 200, so the winner gains 100 and the loser loses 100."""
    new = DEFAULT_PARAMS.new_rating()
    assert new == Rating(1500.0, 0)
    after = update([new, new], [2, 1])
    assert mus(after) == pytest.approx([1400.0, 1600.0])


# --- ties ------------------------------------------------------------------------------------


def test_pair_score() -> None:
    assert pair_score(1, 2) == 1.0
    assert pair_score(3, 2) == 0.0
    assert pair_score(2, 2) == 0.5


def test_all_tied_equal_players_do_not_move() -> None:
    ratings = [Rating(1500, 10)] * 4
    assert mus(update(ratings, [1, 1, 1, 1])) == pytest.approx([1500.0] * 4)


def test_tie_for_second_among_four_equal_players() -> None:
    """Winner: 3 wins against 1.5 expected, K / 3 each: +K/2.  Tied pair: 1.5 = expected."""
    k = 30.0
    params = EloParams(k0=k, k_min=k)
    after = update([Rating(1500, 10)] * 4, [1, 2, 2, 4], params)
    assert mus(after) == pytest.approx([1500 + k / 2, 1500, 1500, 1500 - k / 2])


def test_tie_pulls_towards_each_other() -> None:
    """A tie between a strong and a weak bot moves the strong one down, the weak one up."""
    after = update([Rating(1700, 30), Rating(1300, 30), Rating(1500, 30)], [1, 1, 3])
    assert after[0].mu - 1700 < after[1].mu - 1300


def test_only_the_order_of_places_matters() -> None:
    ratings = [Rating(1550, 3), Rating(1480, 12), Rating(1500, 0), Rating(1620, 40)]
    assert update(ratings, [1, 2, 2, 4]) == update(ratings, [1, 2, 2, 3])
    assert update(ratings, [2, 2, 4, 4]) == update(ratings, [1, 1, 3, 3])


# --- six players -----------------------------------------------------------------------------


def test_six_equal_players_known_answer() -> None:
    """Equal ratings, places 1..6: S - E = (6 - place) - 2.5, times K / 5."""
    k = 40.0
    params = EloParams(k0=k, k_min=k)
    after = update([Rating(1500, 7)] * 6, [1, 2, 3, 4, 5, 6], params)
    expected = [1500 + k / 5 * ((6 - place) - 2.5) for place in range(1, 7)]
    assert mus(after) == pytest.approx(expected)
    assert expected[0] == 1520 and expected[-1] == 1480


def test_six_players_zero_sum_winner_gains_loser_loses() -> None:
    before = [Rating(mu, 25) for mu in (1420.0, 1710.0, 1500.0, 1388.0, 1605.0, 1550.0)]
    places = [3, 6, 1, 2, 5, 4]
    after = update(before, places)
    deltas = [a.mu - b.mu for a, b in zip(after, before, strict=True)]
    assert sum(deltas) == pytest.approx(0.0, abs=1e-9)
    assert deltas[2] > 0  # the winner gains
    assert deltas[1] < 0  # the last loses
    assert all(a.games == 26 for a in after)


def test_changes_are_not_zero_sum_when_k_differs() -> None:
    """A provisional bot moves more than an established one: that is the point of shrinking K."""
    after = update([Rating(1500, 0), Rating(1500, 500)], [1, 2])
    assert after[0].mu - 1500 > 1500 - after[1].mu > 0


def test_seat_order_does_not_matter() -> None:
    before = [Rating(1450, 3), Rating(1600, 20), Rating(1500, 9)]
    places = [2, 3, 1]
    forward = update(before, places)
    backward = update(before[::-1], places[::-1])
    assert forward == backward[::-1]


# --- provisional K and the uncertainty band --------------------------------------------------


def test_k_shrinks_with_games_to_the_floor() -> None:
    p = DEFAULT_PARAMS
    ks = [p.k_factor(g) for g in range(0, 2000)]
    assert ks[0] == p.k0
    assert p.k_factor(round(p.k_games)) == pytest.approx(p.k0 / 2)
    assert all(a >= b for a, b in itertools.pairwise(ks))
    assert ks[-1] == p.k_min
    assert min(ks) == p.k_min
    assert k_factor(Rating(1500, 0)) == p.k0


def test_provisional_bot_moves_more_for_the_same_result() -> None:
    opponent = Rating(1500, 100)
    moves = [
        update([Rating(1500, games), opponent], [1, 2])[0].mu - 1500 for games in (0, 5, 20, 100)
    ]
    assert moves == sorted(moves, reverse=True)
    assert moves[0] > 4 * moves[-1]


def test_deviation_shrinks_with_games() -> None:
    p = DEFAULT_PARAMS
    devs = [deviation(Rating(1500, g)) for g in range(0, 1000)]
    assert devs[0] == p.sigma0
    assert all(a >= b for a, b in itertools.pairwise(devs))
    assert devs[100] < devs[10] < devs[1] < devs[0]
    # Exactly sigma0 * sqrt(K / k0): early on sigma0 / sqrt(1 + games / k_games) ...
    assert devs[20] == pytest.approx(p.sigma0 / math.sqrt(1 + 20 / p.k_games))
    # ... and a floor once K reaches k_min.
    assert devs[-1] == pytest.approx(p.sigma0 * math.sqrt(p.k_min / p.k0))


def test_band_is_mu_plus_minus_two_deviations() -> None:
    rating = Rating(1612.5, 30)
    low, high = band(rating)
    dev = deviation(rating)
    assert (low, high) == pytest.approx((1612.5 - 2 * dev, 1612.5 + 2 * dev))
    assert band(rating, z=1.0) == pytest.approx((1612.5 - dev, 1612.5 + dev))
    narrow = band(Rating(1612.5, 300))
    assert narrow[1] - narrow[0] < high - low
    with pytest.raises(ValueError, match="z must be non-negative"):
        band(rating, z=-1.0)


# --- live rating and recomputation -----------------------------------------------------------


def random_history(seed: int, players: int = 9, games: int = 120) -> list[list[tuple[str, int]]]:
    rng = random.Random(seed)
    history = []
    for _ in range(games):
        seats = rng.sample([f"bot{i}" for i in range(players)], rng.randint(2, 6))
        history.append([(bot, rng.randint(1, len(seats))) for bot in seats])
    return history


def test_recompute_equals_sequential_updates() -> None:
    history = random_history(7)
    table: dict[str, Rating] = {}
    for game in history:
        before = [table.get(bot, DEFAULT_PARAMS.new_rating()) for bot, _ in game]
        after = update(before, [place for _, place in game])
        table.update({bot: rating for (bot, _), rating in zip(game, after, strict=True)})
    result = recompute(history)
    assert result.ratings == table
    assert len(result.games) == len(history)


def test_recompute_records_each_game_for_the_history_chart() -> None:
    history = random_history(11)
    result = recompute(history)
    last_seen: dict[str, Rating] = {}
    for game, changes in zip(history, result.games, strict=True):
        assert [(c.player, c.place) for c in changes] == game
        for change in changes:
            assert change.before == last_seen.get(change.player, DEFAULT_PARAMS.new_rating())
            assert change.delta == change.after.mu - change.before.mu
            assert change.after.games == change.before.games + 1
            last_seen[change.player] = change.after
    assert last_seen == result.ratings


def test_recompute_with_other_params_and_live_rating_agree() -> None:
    params = EloParams(k0=64.0, k_min=8.0, k_games=10.0)
    history = random_history(3, games=40)
    live: dict[str, Rating] = {}
    for game in history:
        for change in rate_game(live, game, params):
            live[change.player] = change.after
    assert recompute(history, params).ratings == live


def test_recompute_of_nothing() -> None:
    result = recompute([])
    assert result.ratings == {} and result.games == []


def test_rate_game_does_not_modify_the_table() -> None:
    table = {"a": Rating(1550.0, 12)}
    changes = rate_game(table, [("a", 2), ("b", 1)])
    assert table == {"a": Rating(1550.0, 12)}
    assert changes[1].before == DEFAULT_PARAMS.new_rating()
    assert changes[1].delta > 0 > changes[0].delta


# --- validation ------------------------------------------------------------------------------


def test_places_must_match_players() -> None:
    with pytest.raises(ValueError, match="got 3 places for 2 players"):
        update([Rating(1500), Rating(1500)], [1, 2, 3])


@pytest.mark.parametrize("n", [0, 1, 7])
def test_game_needs_two_to_six_players(n: int) -> None:
    with pytest.raises(ValueError, match=f"needs 2 to 6 players, got {n}"):
        update([Rating(1500)] * n, list(range(1, n + 1)))


@pytest.mark.parametrize(
    ("places", "message"),
    [
        ([0, 1], "place #0 must be between 1 and 2"),
        ([1, 3], "place #1 must be between 1 and 2"),
        ([1, -2], "place #1 must be between 1 and 2"),
        ([1.0, 2], "place #0 must be an integer"),
        ([True, 2], "place #0 must be an integer"),
    ],
)
def test_places_must_be_integers_in_range(places: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        update([Rating(1500), Rating(1500)], places)


def test_a_player_cannot_hold_two_seats() -> None:
    with pytest.raises(ValueError, match="cannot hold two seats"):
        rate_game({}, [("a", 1), ("a", 2)])


def test_recompute_says_which_game_is_bad() -> None:
    history = [[("a", 1), ("b", 2)], [("a", 1)]]
    with pytest.raises(ValueError, match=r"game #1 of the history: .*needs 2 to 6 players, got 1"):
        recompute(history)


def test_rating_validation() -> None:
    with pytest.raises(ValueError, match="finite"):
        Rating(math.nan)
    with pytest.raises(ValueError, match="non-negative integer"):
        Rating(1500, -1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scale": 0.0},
        {"k0": 0.0},
        {"k_min": -1.0},
        {"k0": 10.0, "k_min": 20.0},
        {"k_games": 0.0},
        {"sigma0": 0.0},
        {"initial": math.inf},
    ],
)
def test_params_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="EloParams"):
        EloParams(**kwargs)


# --- properties ------------------------------------------------------------------------------

mu_values = st.floats(min_value=800.0, max_value=2400.0, allow_nan=False)


@st.composite
def games(draw: st.DrawFn) -> tuple[list[float], list[int]]:
    n = draw(st.integers(min_value=2, max_value=6))
    ratings = draw(st.lists(mu_values, min_size=n, max_size=n))
    places = draw(st.lists(st.integers(min_value=1, max_value=n), min_size=n, max_size=n))
    return ratings, places


@given(game=games(), played=st.integers(min_value=0, max_value=1000))
def test_changes_sum_to_zero_when_everybody_has_the_same_games(
    game: tuple[list[float], list[int]], played: int
) -> None:
    ratings, places = game
    before = [Rating(mu, played) for mu in ratings]
    after = update(before, places)
    assert sum(a.mu - b.mu for a, b in zip(after, before, strict=True)) == pytest.approx(
        0.0, abs=1e-7
    )


@given(
    places=st.integers(min_value=2, max_value=6).flatmap(
        lambda n: st.lists(st.integers(min_value=1, max_value=n), min_size=n, max_size=n)
    ),
    mu=mu_values,
    played=st.integers(min_value=0, max_value=1000),
)
def test_equal_priors_end_in_finishing_order(places: list[int], mu: float, played: int) -> None:
    after = update([Rating(mu, played)] * len(places), places)
    for i, place_i in enumerate(places):
        for j, place_j in enumerate(places):
            if place_i < place_j:
                assert after[i].mu > after[j].mu
            elif place_i == place_j:
                assert after[i].mu == after[j].mu


@given(game=games(), played=st.lists(st.integers(min_value=0, max_value=500), min_size=6))
def test_no_change_exceeds_k_and_winners_never_lose(
    game: tuple[list[float], list[int]], played: list[int]
) -> None:
    ratings, places = game
    before = [Rating(mu, g) for mu, g in zip(ratings, played, strict=False)]
    after = update(before, places)
    for b, a, place in zip(before, after, places, strict=True):
        assert abs(a.mu - b.mu) <= k_factor(b)
        assert a.games == b.games + 1
        if place == min(places) and places.count(place) == 1:
            assert a.mu > b.mu
        if place == max(places) and places.count(place) == 1:
            assert a.mu < b.mu
