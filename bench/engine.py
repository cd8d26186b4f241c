"""Engine throughput with random legal play: the figures `grass bench` prints."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from engine import Phase, new_game, observe
from engine.sampling import sample_game


def random_game(ruleset: str, players: int, seed: int) -> tuple[int, int]:
    """Play one game with uniformly random legal actions; (decisions, hands)."""
    game = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    decisions = 0
    while not game.over:
        actions = game.moves  # the legal actions, already generated for this decision
        game.apply(rng.choice(list(actions)))
        decisions += 1
    return decisions, game.hand_no


def _search_costs(ruleset: str, players: int, seed: int = 0) -> dict[str, float]:
    """CPU µs of `Game.clone()` and of `engine.sampling.sample_game` (from the seat's own
    observation) at the first turn decision after 300 decisions of random play: what a search
    bot pays for every rollout or sampled state before playing it (best of five runs of 2,000
    each)."""
    game = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    decisions = 0
    while decisions < 300 or game.phase is not Phase.TURN or game.table.played:
        game.apply(rng.choice(list(game.moves)))
        decisions += 1
    view = json.loads(json.dumps(observe(game, game.to_act)))
    costs = {}
    for name, run in (("clone", game.clone), ("sample", lambda: sample_game(view, rng))):
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            for _ in range(2000):
                run()
            best = min(best, time.process_time() - start)
        costs[f"us_per_{name}"] = round(best / 2000 * 1e6, 2)
    return costs


def engine_throughput(ruleset: str, players: int, seconds: float, seed: int = 0) -> dict[str, Any]:
    """Games, hands and decisions per second on one core, legal-action generation included."""
    games = hands = decisions = 0
    start = time.perf_counter()
    while True:
        d, h = random_game(ruleset, players, seed + games)
        games += 1
        hands += h
        decisions += d
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "seconds": round(elapsed, 3),
        "games_per_s": round(games / elapsed, 3),
        "hands_per_s": round(hands / elapsed, 2),
        "decisions_per_s": round(decisions / elapsed),
        "us_per_decision": round(1e6 * elapsed / decisions, 2),
        **_search_costs(ruleset, players, seed),
    }
