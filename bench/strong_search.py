"""Samples per planned decision of the `strong` example, today's against `strong_v1` (issue 28,
part 4), and the rollout policy's cost against greedy's on the same positions.

    .venv/bin/python -m bench.strong_search            # --games 6 --samples 20 --budget-ms 60

Positions: seat 0's planned decisions (its turn, card not yet played, more than one card it
could play or discard) in 4-player modern games every seat plays greedy, seeds 0 to games-1.
At each, each bot plans with exactly `--samples` samples (its clock set aside), timed on the
CPU clock; samples per decision is what its budget buys at that speed, capped as the bot caps
it (MAX_SAMPLES). Then greedy's `choose` on an `EngineView` and `bots.sdk.rollout.choose` are
timed at every decision of the same games. Prints figures; asserts nothing.
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--budget-ms", type=int, default=60)
    args = parser.parse_args(argv)
    planned, every = positions(args.games)
    print(f"{len(planned)} planned decisions, {len(every)} decisions, {args.games} games")
    budget = args.budget_ms / 1000
    rows = []
    for label, name, settings in (
        ("strong_v1 (greedy on EngineView)", "strong_v1", {}),
        ("strong, rollout, uniform samples", "strong", {"BELIEF": False}),
        ("strong, rollout, belief samples", "strong", {"BELIEF": True}),
    ):
        module = load(name)
        for key, value in settings.items():
            setattr(module, key, value)
        cap = module.MAX_SAMPLES
        bot = next(v() for k, v in vars(module).items() if k.endswith("Bot") and k != "Bot")
        seconds = per_sample(module, bot, planned, args.samples)
        rows.append((label, seconds * 1e3, min(cap, budget / seconds)))
    print(f"| search | ms/sample | samples per {args.budget_ms} ms decision (cap 200) |")
    print("| --- | ---: | ---: |")
    for label, ms, count in rows:
        print(f"| {label} | {ms:.3f} | {count:.1f} |")
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
