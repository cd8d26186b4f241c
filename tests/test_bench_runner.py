"""`grass bench --runner` (bench/runner.py): a smoke test. Its CPU figures are printed, never
checked (a busy machine would fail them); what must hold on any machine is checked: the
figures are there, the games are the same whichever way they are run, and the sizes."""

from __future__ import annotations

import pytest

from bench.runner import play, runner_figures
from bots.cli import parser


def test_every_way_plays_the_same_game() -> None:
    """The engine alone, with the runner's bookkeeping, and with either version's feeds: the
    same decisions, so the differences in CPU are the runner's alone."""
    sizes: dict[str, list[int]] = {"v1": [], "v2": []}
    decisions = {how: play(2, 5, how) for how in ("engine", "bookkeeping")}
    for version in ("v1", "v2"):
        decisions[version] = play(2, 5, version, sizes[version])
    assert len(set(decisions.values())) == 1
    assert len(sizes["v1"]) == len(sizes["v2"]) == decisions["engine"]
    assert sum(sizes["v2"]) * 3 < sum(sizes["v1"])


@pytest.mark.slow
def test_runner_figures_have_every_figure() -> None:
    figures = runner_figures(games=1, players=(2,), repeat=1)
    (row,) = figures["cpu"]["by_players"]
    for key in ("engine_us_per_decision", "v1_us_per_request", "v2_us_per_request"):
        assert row[key] > 0 and figures["cpu"]["all"][key] > 0
    assert figures["machine"]["nproc"] >= 1
    for games in figures["act_bytes"].values():
        assert games["v2"]["median"] < games["v1"]["median"]
        assert games["v2"]["requests"] == games["v1"]["requests"] > 0
    assert set(figures["goals"]) == {"v2_at_most_2x_engine", "v2_median_act_under_1500_bytes"}


def test_the_command_line_has_the_flag() -> None:
    args = parser().parse_args(["bench", "--runner", "--games", "2"])
    assert args.runner and args.games == 2
