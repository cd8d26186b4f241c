"""Throughput of the PettingZoo environment against the engine's own decisions, in one run.

    .venv/bin/python -m bench.rl_throughput              # --seconds 5 --players 4

Three loops play the same seeded 4-seat games with uniformly random legal actions, in
interleaved slices of CPU time (so a busy machine slows all three alike):

- `engine`: `game.apply(rng.choice(game.legal_actions()))`, the decision as `grass bench` times it;
- `env_step`: `GrassEnv.step(index)` with the index drawn from the engine's legal actions, no
  observation built: what the wrapper adds to a decision (index to text, agent bookkeeping);
- `env`: the loop a learner runs, `env.last()` (the observation vector and the action mask of
  the seat to act) then `env.step(index)` with the index drawn from the mask.

It prints JSON: decisions per second of each loop and the cost of one env step in engine
decisions (the issue's goal: at most 2).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bots.rl import GrassEnv
from bots.sdk import actions
from engine import ENGINE_VERSION, new_game

SLICE_S = 0.05


class Loop:
    """One way of playing games, a decision at a time, counting decisions and CPU time."""

    def __init__(self, name: str, players: int, step: Callable[[Any], bool]) -> None:
        self.name = name
        self.players = players
        self.step = step
        self.decisions = 0
        self.cpu = 0.0
        self.state: Any = None

    def run(self, seconds: float) -> None:
        start = time.process_time()
        end = start + seconds
        step = self.step
        count = 0
        while True:
            for _ in range(200):
                step(self)
            count += 200
            if time.process_time() >= end:
                break
        self.cpu += time.process_time() - start
        self.decisions += count


def engine_loop(players: int) -> Loop:
    rng = random.Random(1)
    seeds = iter(range(10**9))

    def step(loop: Loop) -> bool:
        game = loop.state
        if game is None or game.over:
            game = loop.state = new_game("modern", players, next(seeds))
        game.apply(rng.choice(game.legal_actions()))
        return True

    return Loop("engine", players, step)


def env_step_loop(players: int) -> Loop:
    rng = random.Random(1)
    env = GrassEnv(players=players)
    seeds = iter(range(10**9))

    def step(loop: Loop) -> bool:
        game = env.game
        if game is None or game.over:
            env.reset(seed=next(seeds))
            game = env.game
            assert game is not None
        seat = game.to_act
        env.step(actions.to_index(rng.choice(game.legal_actions()), seat, players))
        return True

    return Loop("env_step", players, step)


def env_loop(players: int) -> Loop:
    rng = np.random.default_rng(1)
    env = GrassEnv(players=players)
    seeds = iter(range(10**9))

    def step(loop: Loop) -> bool:
        game = env.game
        if game is None or game.over:
            env.reset(seed=next(seeds))
        obs, _, _, _, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        return True

    return Loop("env", players, step)


def figures(seconds: float, players: int) -> dict[str, Any]:
    loops = [engine_loop(players), env_step_loop(players), env_loop(players)]
    for loop in loops:  # warm up: caches of the action tables, first games
        loop.run(0.2)
        loop.decisions, loop.cpu = 0, 0.0
    spent = 0.0
    while spent < seconds:
        for loop in loops:
            loop.run(SLICE_S)
        spent += SLICE_S
    per = {loop.name: loop.decisions / loop.cpu for loop in loops}
    return {
        "engine": ENGINE_VERSION,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": platform.processor() or platform.machine(),
        "players": players,
        "cpu_seconds_each": seconds,
        "decisions_per_s": {name: round(value) for name, value in per.items()},
        "us_per_decision": {name: round(1e6 / value, 2) for name, value in per.items()},
        "env_step_in_engine_decisions": round(per["engine"] / per["env_step"], 2),
        "env_in_engine_decisions": round(per["engine"] / per["env"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rl_throughput", description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per loop")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args(argv)
    print(json.dumps(figures(args.seconds, args.players), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
