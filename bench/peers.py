"""The engine beside other card games' engines, in one process: `grass bench --peers`.

Every engine plays random legal games; what is measured is CPU time per decision (choosing a
legal action uniformly and applying it, new games and their deals included), in interleaved
slices so that every engine runs under the same conditions (the other processes on the
machine, its clock, its caches). Peers, when installed (`pip install -e '.[bench]'`):

- RLCard (pure Python with numpy): UNO and Leduc Hold'em, at the game level (`UnoGame`,
  `LeducholdemGame`: `get_legal_actions`, `step`), without the RL environment around them.
- OpenSpiel (C++ behind pybind11): Crazy Eights with its default parameters (5 players;
  `legal_actions`, `apply_action`; chance nodes, the cards dealt and drawn, are played out and
  not counted as decisions).

A peer that is not installed is listed as unavailable; the figures of the others stand.
"""

from __future__ import annotations

import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from engine import ENGINE_VERSION, new_game

Step = Callable[[], None]
"""Makes one decision of random legal play (starting a new game when one ends)."""


def grass(players: int, ruleset: str = "modern", seed: int = 0) -> Step:
    """Grass through the engine's public API: `game.decision`, then `game.apply`."""
    rng = random.Random(seed)
    games = [seed]
    game = new_game(ruleset, players, seed)

    def step() -> None:
        nonlocal game
        if game.over:
            games.append(games[-1] + 1)
            game = new_game(ruleset, players, games[-1])
        decision = game.decision
        game.apply(rng.choice(decision.actions))

    return step


def rlcard_uno(seed: int = 0) -> Step:
    from rlcard.games.uno.game import UnoGame

    rng = random.Random(seed)
    game = UnoGame(num_players=2)
    game.np_random.seed(seed)
    game.init_game()

    def step() -> None:
        if game.is_over():
            game.init_game()
        game.step(rng.choice(game.get_legal_actions()))

    return step


def rlcard_leduc(seed: int = 0) -> Step:
    from rlcard.games.leducholdem.game import LeducholdemGame

    rng = random.Random(seed)
    game = LeducholdemGame()
    game.np_random.seed(seed)
    game.init_game()

    def step() -> None:
        if game.is_over():
            game.init_game()
        game.step(rng.choice(game.get_legal_actions()))

    return step


def openspiel_crazy_eights(seed: int = 0) -> Step:
    import pyspiel

    rng = random.Random(seed)
    game = pyspiel.load_game("crazy_eights")
    state = game.new_initial_state()

    def step() -> None:
        nonlocal state
        while True:
            if state.is_terminal():
                state = game.new_initial_state()
            elif state.is_chance_node():
                # Crazy Eights' chance outcomes (cards dealt and drawn) are all equally likely.
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                break
        state.apply_action(rng.choice(state.legal_actions()))

    return step


PEERS: dict[str, Callable[[], Step]] = {
    "rlcard uno": rlcard_uno,
    "rlcard leduc": rlcard_leduc,
    "openspiel crazy_eights (C++)": openspiel_crazy_eights,
}


def interleaved(steps: dict[str, Step], seconds: float, slice_s: float = 0.05) -> dict[str, Any]:
    """CPU time per decision of each engine: `seconds` of CPU each, in turns of `slice_s`."""
    spent = dict.fromkeys(steps, 0.0)
    made = dict.fromkeys(steps, 0)
    while min(spent.values()) < seconds:
        for name, step in steps.items():
            start = time.process_time()
            count = 0
            while True:
                for _ in range(32):
                    step()
                count += 32
                elapsed = time.process_time() - start
                if elapsed >= slice_s:
                    break
            spent[name] += elapsed
            made[name] += count
    return {
        name: {
            "decisions": made[name],
            "cpu_s": round(spent[name], 3),
            "us_per_decision": round(1e6 * spent[name] / made[name], 2),
        }
        for name in steps
    }


def machine() -> dict[str, Any]:
    import os

    model = ""
    try:
        with open("/proc/cpuinfo") as info:
            model = next(
                (line.split(":", 1)[1].strip() for line in info if "model name" in line), ""
            )
    except OSError:
        pass
    return {
        "cpu": model or platform.processor(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def peer_figures(seconds: float = 5.0, players: tuple[int, ...] = (2, 4, 6)) -> dict[str, Any]:
    """Grass and every installed peer, side by side; the goals' ratios when they apply."""
    steps: dict[str, Step] = {f"grass {n} players": grass(n) for n in players}
    unavailable: dict[str, str] = {}
    for name, make in PEERS.items():
        try:
            steps[name] = make()
        except ImportError as exc:
            unavailable[name] = f"not installed ({exc.name or exc}); pip install -e '.[bench]'"
    for step in steps.values():  # warm up: imports, caches, first games
        for _ in range(200):
            step()
    results = interleaved(steps, seconds)
    per = {name: figures["us_per_decision"] for name, figures in results.items()}
    ratios: dict[str, float] = {}
    four, two, six = (per.get(f"grass {n} players") for n in (4, 2, 6))
    uno, eights = per.get("rlcard uno"), per.get("openspiel crazy_eights (C++)")
    if four and uno:
        ratios["grass 4 / rlcard uno (goal <= 1)"] = round(four / uno, 2)
    if four and eights:
        ratios["grass 4 / openspiel crazy_eights (stretch <= 0.5)"] = round(four / eights, 2)
    if two and six:
        ratios["grass 6 / grass 2 (goal <= 1.5)"] = round(six / two, 2)
    return {
        "engine": ENGINE_VERSION,
        "machine": machine(),
        "seconds_each": seconds,
        "results": results,
        "ratios": ratios,
        "unavailable": unavailable,
    }
