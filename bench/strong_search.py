"""Samples per planned decision of the `strong` example, today's against `strong_v1` (issue 28,
part 4), and the rollout policy's cost against greedy's on the same positions.

    .venv/bin/python -m bench.strong_search   # --games 6 --samples 20 --budget-ms 60 --strong-ms 0

Positions: seat 0's planned decisions (its turn, card not yet played, more than one card it
could play or discard) in 4-player modern games every seat plays greedy, seeds 0 to games-1.
`strong_v1` plans each with exactly `--samples` samples (its clock set aside), timed on the
CPU clock; its samples per decision is what its 60 ms budget buys at that speed. Today's
`strong` decides each as it would in a game, on its own budget (`--strong-ms`, its
BUDGET_MS by default) on the CPU clock: the figures are the samples it drew and the plans it
compared (racing drops plans as samples come in, so later samples cost less), per decision it
searched. Then greedy's `choose` on an `EngineView` and `bots.sdk.rollout.choose` are timed at
every decision of the same games. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from bots.sdk import Observation, greedy, rollout
from engine import Game, new_game, observe

EXAMPLES = Path(__file__).resolve().parents[1] / "bots" / "examples"


def load(name: str) -> ModuleType:
    """An example's `bot.py` as a module of its own (its constants can be set per run)."""
    path = EXAMPLES / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def positions(games: int) -> tuple[list[Observation], list[Game]]:
    """Seat 0's planned decisions (as the SDK gives them), and copies of every decision."""
    planned: list[Observation] = []
    every: list[Game] = []
    for seed in range(games):
        game = new_game("modern", 4, seed, limits={"max_hands": 3})
        while not game.over:
            every.append(game.clone())
            if game.to_act == 0 and game.phase.value == "turn" and not game.played:
                view = observe(game, 0)
                cards = [a for a in view["legal"] if a.startswith(("play ", "discard "))]
                if len(cards) > 1:
                    planned.append(Observation(view, tuple(view["history"]), cpu_ms=10**6))
            game.apply(rollout.choose(game))
    return planned, every


def per_sample(module: ModuleType, bot: Any, planned: list[Observation], samples: int) -> float:
    """Mean CPU seconds per sample over the planned decisions, with exactly `samples` each."""
    setattr(module, "MIN_SAMPLES", samples)  # noqa: B010 - a module loaded from its file
    setattr(module, "MAX_SAMPLES", samples)  # noqa: B010
    bot.budget_ms = 10**9
    bot.rng.seed(1)
    times: list[float] = []
    for obs in planned:
        cards = [a for a in obs.legal if a.startswith(("play ", "discard "))]
        if len(module.shortlist(obs, cards, greedy.choose(obs))) < 2:
            continue  # plan() answers at once: no sample drawn
        start = time.process_time()
        bot.plan(obs, cards)
        times.append((time.process_time() - start) / samples)
    return statistics.fmean(times)


def searched(bot: Any, planned: list[Observation], budget_ms: int) -> tuple[float, float, float]:
    """Today's `strong` at each position as in a game: mean samples, plans and CPU ms over the
    decisions where it searched (not those it answered at once)."""
    bot.budget_ms = budget_ms
    bot.rng.seed(1)
    samples: list[int] = []
    plans: list[int] = []
    spent: list[float] = []
    for seen in planned:
        # As the ladder's default clock hands it: 1 s per decision and a 30 s bank.
        obs = Observation(seen.raw, seen.history, bank_ms=30_000, cpu_ms=31_000)
        bot.rest, bot.samples = (), 0
        start = time.process_time()
        bot.choose(obs)
        if bot.samples:
            spent.append((time.process_time() - start) * 1e3)
            samples.append(bot.samples)
            plans.append(bot.plans)
    return statistics.fmean(samples), statistics.fmean(plans), statistics.fmean(spent)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--budget-ms", type=int, default=60, help="strong_v1's budget")
    parser.add_argument("--strong-ms", type=int, default=0, help="today's strong's (BUDGET_MS)")
    args = parser.parse_args(argv)
    planned, every = positions(args.games)
    print(f"{len(planned)} planned decisions, {len(every)} decisions, {args.games} games")
    budget = args.budget_ms / 1000
    print("| search | budget (ms CPU) | samples per decision | plans compared | ms/decision |")
    print("| --- | ---: | ---: | ---: | ---: |")
    module = load("strong_v1")
    bot = module.StrongV1Bot()
    cap = module.MAX_SAMPLES
    seconds = per_sample(module, bot, planned, args.samples)
    count = min(cap, budget / seconds)
    ms = count * seconds * 1e3
    print(f"| strong_v1 | {args.budget_ms} | {count:.1f} | card only | {ms:.1f} |")
    for label, settings in (
        ("strong, card only (WHOLE_TURN off)", {"WHOLE_TURN": False}),
        ("strong, whole turn", {"WHOLE_TURN": True}),
    ):
        module = load("strong")
        for key, value in settings.items():
            setattr(module, key, value)
        bot = module.StrongBot()
        strong_ms = args.strong_ms or module.BUDGET_MS
        samples, plans, ms = searched(bot, planned, strong_ms)
        print(f"| {label} | {strong_ms} | {samples:.1f} | {plans:.1f} | {ms:.1f} |")
    for label, choose in (
        ("greedy.choose(EngineView(game))", lambda g: greedy.choose(rollout.EngineView(g))),
        ("rollout.choose(game)", rollout.choose),
    ):
        start = time.process_time()
        for game in every:
            choose(game)
        spent = time.process_time() - start
        print(f"{label}: {spent / len(every) * 1e6:.2f} µs per decision over {len(every)}")


if __name__ == "__main__":
    main()
