"""The simulation: Plackett-Luce games, Kendall tau, and a small run of all three systems."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest

from bench.simulate import (
    SYSTEMS,
    Scenario,
    kendall_tau,
    main,
    plackett_luce_places,
    run_scenario,
    simulate_games,
)


@pytest.fixture
def baselines() -> None:
    """The comparison needs the dev dependencies openskill and trueskill."""
    pytest.importorskip("openskill")
    pytest.importorskip("trueskill")


def test_kendall_tau_known_values() -> None:
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # Pairs (1,2) and (1,3) concordant, (2,3) discordant.
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    # tau-b with a tie in x: 3 comparable pairs, all concordant, 3 untied in y.
    # (C - D) / sqrt(untied_x * untied_y) = 2 / sqrt(2 * 3).
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert math.isnan(kendall_tau([1, 1], [1, 2]))
    with pytest.raises(ValueError, match="equal length"):
        kendall_tau([1, 2], [1])


def test_plackett_luce_places_are_a_permutation() -> None:
    rng = random.Random(1)
    for n in range(2, 7):
        places = plackett_luce_places(rng, [rng.gauss(0, 1) for _ in range(n)])
        assert sorted(places) == list(range(1, n + 1))


def test_plackett_luce_win_and_pair_probabilities() -> None:
    """First place goes with probability s_i / sum(s); i ahead of j with s_i / (s_i + s_j)."""
    rng = random.Random(2)
    strengths = [1.0, 2.0, 3.0, 4.0]
    skills = [math.log(s) for s in strengths]
    draws = 20_000
    winners: Counter[int] = Counter()
    first_ahead_of_last = 0
    for _ in range(draws):
        places = plackett_luce_places(rng, skills)
        winners[places.index(1)] += 1
        first_ahead_of_last += places[0] < places[3]
    for i, s in enumerate(strengths):
        assert winners[i] / draws == pytest.approx(s / sum(strengths), abs=0.015)
    assert first_ahead_of_last / draws == pytest.approx(1 / 5, abs=0.015)


def test_simulate_games_respects_the_scenario() -> None:
    scenario = Scenario(players=12, games=300, min_seats=2, max_seats=6, seeds=1)
    skills, history = simulate_games(random.Random(3), scenario)
    assert len(skills) == 12 and len(history) == 300
    assert {len(game) for game in history} == {2, 3, 4, 5, 6}
    for game in history:
        players = [p for p, _ in game]
        assert len(set(players)) == len(players)
        assert sorted(place for _, place in game) == list(range(1, len(game) + 1))


def test_scenario_validation() -> None:
    with pytest.raises(ValueError, match="seats"):
        Scenario(min_seats=1, max_seats=4)
    with pytest.raises(ValueError, match="seats"):
        Scenario(min_seats=4, max_seats=7)
    with pytest.raises(ValueError, match="at least 6 players"):
        Scenario(players=5, min_seats=2, max_seats=6)


@pytest.mark.parametrize(("low", "high"), [(4, 4), (2, 6)])
@pytest.mark.usefixtures("baselines")
def test_small_run_ranks_well_and_reports_all_systems(low: int, high: int) -> None:
    scenario = Scenario(players=20, games=400, min_seats=low, max_seats=high, seeds=2)
    report = run_scenario(scenario)
    assert set(report.tau) == set(SYSTEMS) == {"elo", "openskill", "trueskill"}
    assert len(report.seeds) == 2
    for seed in report.seeds:
        for name in SYSTEMS:
            assert -1.0 <= seed.tau[name] <= 1.0
        assert 0.0 <= seed.band_coverage <= 1.0
    # Each player has about 80 games: any sensible rating ranks them well.
    assert report.tau["elo"].mean > 0.7
    assert report.tau["elo"].min > 0.6
    # The other systems were really run on the same games, not copied from ours.
    assert report.tau["openskill"].mean > 0.6 and report.tau["trueskill"].mean > 0.6
    assert len({report.tau[name].mean for name in SYSTEMS}) == 3
    assert report.elo_minus_trueskill is not None
    assert report.elo_minus_trueskill.mean == pytest.approx(
        report.tau["elo"].mean - report.tau["trueskill"].mean
    )


@pytest.mark.usefixtures("baselines")
def test_parallel_seeds_give_the_same_results() -> None:
    scenario = Scenario(players=10, games=60, min_seats=2, max_seats=6, seeds=3)
    serial = run_scenario(scenario, jobs=1)
    parallel = run_scenario(scenario, jobs=2)
    assert [s.tau for s in parallel.seeds] == [s.tau for s in serial.seeds]
    assert parallel.tau == serial.tau


@pytest.mark.usefixtures("baselines")
def test_main_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--players", "12", "--games", "150", "--seeds", "2", "--seats", "3", "2-6"]
    argv += ["--jobs", "1", "--json"]
    assert main(argv) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [(r["scenario"]["min_seats"], r["scenario"]["max_seats"]) for r in reports] == [
        (3, 3),
        (2, 6),
    ]
    for report in reports:
        assert set(report["tau"]) == {"elo", "openskill", "trueskill"}
        assert set(report["tau"]["elo"]) == {"mean", "sd", "min", "max"}
        assert report["params"]["k0"] > 0


@pytest.mark.usefixtures("baselines")
def test_main_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--players", "10", "--games", "100", "--seeds", "1", "--k0", "64", "--jobs", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for label in ("our Elo", "OpenSkill PL", "TrueSkill", "band coverage", "100 games of 4 seats"):
        assert label in out
    assert "K = max(4, 64 /" in out


def test_main_rejects_bad_seats() -> None:
    with pytest.raises(SystemExit):
        main(["--seats", "1-7"])


@pytest.mark.slow
@pytest.mark.usefixtures("baselines")
def test_our_elo_ranks_at_least_as_well_as_trueskill_on_the_issues_scenario() -> None:
    """The issue's scenario (50 bots, 2,000 four-seat games) on seeds that were neither tuned on
    (101-120) nor reported (1-10): the goal the constants were tuned for holds on fresh games."""
    report = run_scenario(Scenario(seeds=4, first_seed=21), jobs=2)
    assert report.elo_minus_trueskill is not None
    assert report.elo_minus_trueskill.mean >= 0.0
    assert report.tau["elo"].mean > report.tau["openskill"].mean
