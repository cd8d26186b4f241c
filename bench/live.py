"""What a live table costs the referee: `python -m bench.live` (with Django's settings, e.g.
`DJANGO_SETTINGS_MODULE=ladder.settings_test`, and a Redis for the channel layer, its address
without a database in GRASS_TEST_REDIS_URL, say `redis-server --port 6390 --save ""` and
`GRASS_TEST_REDIS_URL=redis://127.0.0.1:6390`; it uses database 1).

For a few seeded four-seat games of random legal play, CPU time on the referee's thread per
decision of:

- play: the engine's `game.apply` of the decision, the unit the others are compared with;
- watch at the site's rate: `LiveTable.watch` after every decision as `play_match` calls it,
  building frames at most GRASS_LIVE_FRAMES_PER_SECOND times a second (here the game runs
  thousands of decisions a second, so nearly every call only looks at the clock);
- watch at every decision: frames built after every single decision (the worst case: a bot's
  decisions arriving no faster than the rate), with a person's seat, so two views each time;

and the mean size of a frame as sent. The table's thread sends to the channel layer meanwhile
(its CPU is not the referee thread's, but shares the process: the process's CPU is printed
too). Prints one JSON object.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any

from engine import new_game


def _measure(games: int, frames_per_second: float, people: dict[int, str]) -> dict[str, float]:
    from ladder.relay.table import LiveTable

    decisions = 0
    play = watch = 0.0
    sizes: list[int] = []
    process = time.process_time()
    for seed in range(games):
        table = LiveTable(
            match_id=10_000 + seed, people=people, frames_per_second=frames_per_second
        )
        game = new_game("modern", 4, seed, None, {"max_hands": 3})
        rng = random.Random(seed)
        table.watch(game)
        while not game.over:
            action = rng.choice(game.legal_actions())
            start = time.thread_time()
            game.apply(action)
            middle = time.thread_time()
            table.watch(game)
            watch += time.thread_time() - middle
            play += middle - start
            decisions += 1
        table.close()
        sizes += [len(text) for text in table.courier.latest.values()]
    return {
        "decisions": decisions,
        "play_us": round(play / decisions * 1e6, 2),
        "watch_us": round(watch / decisions * 1e6, 2),
        "process_cpu_us": round((time.process_time() - process) / decisions * 1e6, 2),
        "frame_bytes": round(statistics.mean(sizes)) if sizes else 0,
    }


def run(games: int = 3) -> dict[str, Any]:
    from django.conf import settings

    rate = settings.GRASS_LIVE_FRAMES_PER_SECOND
    return {
        "benchmark": "live tables: the referee thread's CPU per decision",
        "site_rate": {"frames_per_second": rate, **_measure(games, rate, {})},
        "every_decision_with_a_person": _measure(games, 1e9, {0: "person"}),
    }


if __name__ == "__main__":
    import django

    django.setup()
    print(json.dumps(run(), indent=2))
