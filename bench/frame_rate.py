"""Replay frames per second of this checkout: `python -m bench.frame_rate [label]`.

`engine.replay_frames.document` of three seeded full-length 4-seat modern games of random
legal play, omniscient and for seat 0, best of five (CPU time). Made to compare two checkouts
A B A B in one run (issue 34): run it from each in turn, with `PYTHONPATH` set to the
checkout, since an installed `engine` would otherwise be the one measured.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import time

import engine
from engine import Event, new_game
from engine.log import dumps
from engine.replay_frames import document


def _log(seed: int, players: int = 4) -> list[Event]:
    game = new_game("modern", players, seed)
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.decision.actions))
    return [json.loads(line) for line in dumps(game.events).splitlines()]


def frame_rate(games: int = 3, repeat: int = 5) -> dict[str, int]:
    logs = [_log(seed) for seed in range(games)]
    events = sum(len(log) for log in logs)
    gc.freeze()
    rates: dict[str, int] = {}
    for view in (None, 0):
        best = float("inf")
        for _ in range(repeat):
            gc.collect()
            start = time.process_time()
            for log in logs:
                document(log, view)
            best = min(best, time.process_time() - start)
        rates["all" if view is None else "seat0"] = round(events / best)
    return rates


if __name__ == "__main__":
    label = sys.argv[1] if len(sys.argv) > 1 else ""
    print(label, engine.__file__, "frames/s", frame_rate(), flush=True)
