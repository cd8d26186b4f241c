"""What replays and observations cost beside playing the game: `grass bench --replays`.

For each of a few seeded games of random legal play (full length, up to 30 hands), in one
process, CPU time of:

- play: the engine playing the game's decisions again (a new game, `game.decision` and
  `game.apply` for every decision), the unit the others are compared with;
- replay: `engine.log.replay` of its log (every line checked);
- frames: `engine.replay_frames.document` of its log, omniscient and for seat 0 (the replay
  viewer's data: the log replayed once, checked, and the frames built as deltas);
- observe: the same play with `observe(game, seat, since=...)` for the seat to decide at every
  decision, as the README's engine example and the bot runner do.

Each figure is the best of a few runs, with the garbage collector's work on the benchmark's
own data (the logs) kept out by `gc.freeze()`.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from engine import ENGINE_VERSION, Event, new_game, observe
from engine.log import dumps, replay
from engine.replay_frames import document


def _best(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def _game(seed: int, players: int) -> tuple[list[Event], list[str]]:
    game = new_game("modern", players, seed)
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.decision.actions))
    log = [json.loads(line) for line in dumps(game.events).splitlines()]
    actions = [e["action"] for e in log if e["e"] == "act" and not e.get("auto")]
    return log, actions


def _play(seed: int, players: int, actions: list[str], watch: bool = False) -> None:
    """The game's decisions played again; with `watch`, observed as a bot runner would."""
    game = new_game("modern", players, seed)
    sent = [0] * players
    for action in actions:
        seat = game.decision.seat
        if watch:
            view = observe(game, seat, since=max(sent[seat], game.hand_start_event))
            sent[seat] = view["history_end"]
        game.apply(action)


def _figures(seed: int, players: int, repeat: int) -> dict[str, Any]:
    log, actions = _game(seed, players)
    gc.freeze()
    try:
        played = _best(lambda: _play(seed, players, actions), repeat)
        return {
            "seed": seed,
            "events": len(log),
            "decisions": len(actions),
            "play_s": round(played, 4),
            "replay_x": round(_best(lambda: replay(log), repeat) / played, 2),
            "frames_all_x": round(_best(lambda: document(log), repeat) / played, 2),
            "frames_seat0_x": round(_best(lambda: document(log, 0), repeat) / played, 2),
            "observe_since_x": round(
                _best(lambda: _play(seed, players, actions, True), repeat) / played, 2
            ),
        }
    finally:
        gc.unfreeze()


def replay_figures(games: int = 5, players: int = 4, repeat: int = 5) -> dict[str, Any]:
    rows = [_figures(seed, players, repeat) for seed in range(games)]
    summary = {
        key: {
            "median": round(statistics.median(r[key] for r in rows), 2),
            "max": max(r[key] for r in rows),
        }
        for key in ("replay_x", "frames_all_x", "frames_seat0_x", "observe_since_x")
    }
    return {
        "engine": ENGINE_VERSION,
        "players": players,
        "games": rows,
        "times_play": summary,
    }
