"""What the match runner spends on each request, per protocol version: `grass bench --runner`.

The runner pays, at every decision of every match, for the seat's observation and its
encoding as the `act` line (`bots.runner.feed`: version 1 sends the whole observation, version
2 what changed since the seat's previous request). The goal (issue 14) is at most twice the
engine's own decision. Measured in one process, on seeded games of random legal play played
exactly as `grass bench` plays them (`bench.engine.random_game`), each game four ways in
interleaved rounds (best of `repeat`, CPU time):

- engine: the game alone, the unit (`grass bench`'s figure);
- bookkeeping: the same with the runner's own walk over the new events (to tell each seat a
  hand's end), which every version needs;
- v1 and v2: the same with every seat's feed as the runner drives it (`act` for the seat to
  decide, `hand_end` for every seat), so per request: (v - bookkeeping) / requests.

The size of the `act` lines (median, 90th percentile) comes from the same games, and from
games of the example bots (`greedy` and `random` through the SDK, which rebuilds its
observations from version 2 as in a match).
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bots import protocol
from bots.runner.feed import Feed, Feeds
from bots.sdk import Bot, _Driver
from engine import ENGINE_VERSION, Game, new_game
from engine.rules import ruleset_limits

CLOCKS = {"bank_ms": 30_000, "cpu_ms": 31_000, "wall_ms": 93_000}
"""The clocks an `act` carries (the ladder's defaults; their digits are part of its size)."""
EXAMPLES = Path(__file__).resolve().parent.parent / "bots" / "examples"


def _feeds(game: Game, version: int) -> list[Feed]:
    feeds = Feeds(game)
    return [feeds.for_seat(seat, version) for seat in range(game.n)]


def _tell_hand_ends(game: Game, feeds: list[Feed], walked: list[int]) -> None:
    """The runner's walk over the events logged since the last call (`Referee.play`): at a
    hand's end, every seat is sent its `hand_end`. `walked` holds [next event, hand start]."""
    events = game.table.events
    index, start = walked
    while index < len(events):
        kind = events[index]["e"]
        if kind == "hand":
            start = index
        elif kind == "hand-end":
            for feed in feeds:
                feed.hand_end(start, index)
        index += 1
    walked[:] = [index, start]


def play(players: int, seed: int, how: str, sizes: list[int] | None = None) -> int:
    """One game of random legal play (`grass bench`'s), run `how`: "engine" alone, with the
    runner's "bookkeeping", or with feeds of protocol "v1" or "v2"; returns its decisions
    (each one a request: the engine takes single-action decisions itself)."""
    game = new_game("modern", players, seed)
    rng = random.Random(seed)
    feeds = _feeds(game, int(how[1])) if how in ("v1", "v2") else []
    walk = how != "engine"
    walked = [0, 0]
    decisions = 0
    while not game.over:
        actions = game.moves
        decisions += 1
        if feeds:
            line = feeds[game.table.to_act].act(decisions, **CLOCKS)
            if sizes is not None:
                sizes.append(len(line))
        game.apply(rng.choice(list(actions)))
        if walk:
            _tell_hand_ends(game, feeds, walked)
    return decisions


def _cpu(players: int, seeds: range, how: str) -> float:
    """CPU time of playing the games `how`."""
    gc.collect()
    start = time.process_time()
    for seed in seeds:
        play(players, seed, how)
    return time.process_time() - start


def cpu_figures(players: int, seeds: range, repeat: int) -> dict[str, Any]:
    """CPU per decision of the engine and per request of each version, for `seeds` games of
    `players` seats: each way timed in turn, `repeat` rounds, the best of each kept."""
    hows = ("engine", "bookkeeping", "v1", "v2")
    best = dict.fromkeys(hows, float("inf"))
    decisions = sum(play(players, seed, "engine") for seed in seeds)
    for _ in range(repeat):
        for how in hows:
            best[how] = min(best[how], _cpu(players, seeds, how))
    engine = best["engine"] / decisions
    row: dict[str, Any] = {
        "players": players,
        "games": len(seeds),
        "decisions": decisions,
        "engine_us_per_decision": round(engine * 1e6, 2),
    }
    for version in ("v1", "v2"):
        request = (best[version] - best["bookkeeping"]) / decisions
        row[f"{version}_us_per_request"] = round(request * 1e6, 2)
        row[f"{version}_x_engine"] = round(request / engine, 2)
    return row


def _example(name: str) -> Bot:
    """Example bot `name` (its `bot.py`), as an SDK `Bot` in this process."""
    path = EXAMPLES / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"grass_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (bot,) = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
    ]
    made: Bot = bot()
    return made


def example_game(names: list[str], seed: int, sizes: dict[str, list[int]]) -> None:
    """A game of the example bots `names`, each deciding through the SDK from the version 2
    lines (rebuilt as in a match); the `act` lines of both versions are measured."""
    game = new_game("modern", len(names), seed)
    v1, v2 = _feeds(game, 1), _feeds(game, 2)
    drivers = []
    for seat, name in enumerate(names):
        bot = _example(name)
        hello = protocol.hello(
            seat=seat,
            players=list(game.names),
            ruleset=game.ruleset.name,
            variants=game.variants.as_dict(),
            limits=ruleset_limits(game.ruleset),
            decision_ms=1000,
            bank_ms=30_000,
            protocols=protocol.PROTOCOLS,
        )
        hello["rng_seed"] = seed * 10 + seat
        bot.on_game_start(hello)
        driver = _Driver(bot)
        driver.start(hello)
        drivers.append(driver)
    walked1, walked2 = [0, 0], [0, 0]
    request = 0
    while not game.over:
        seat = game.table.to_act
        request += 1
        sizes["v1"].append(len(v1[seat].act(request, **CLOCKS)))
        line = v2[seat].act(request, **CLOCKS)
        sizes["v2"].append(len(line))
        driver = drivers[seat]
        game.apply(driver.decide(driver.observation(json.loads(line))))
        _tell_hand_ends(game, v1, walked1)
        _tell_hand_ends(game, v2, walked2)


def _spread(sizes: list[int]) -> dict[str, int]:
    ordered = sorted(sizes)
    return {
        "requests": len(ordered),
        "median": int(statistics.median(ordered)),
        "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
    }


def _machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": len(os.sched_getaffinity(0)), "cpu": model, "python": sys.version.split()[0]}


def runner_figures(
    games: int = 3, players: tuple[int, ...] = (2, 4, 6), repeat: int = 3
) -> dict[str, Any]:
    """Everything `grass bench --runner` prints."""
    rows = [cpu_figures(n, range(games), repeat) for n in players]
    random_sizes: dict[str, list[int]] = {"v1": [], "v2": []}
    for n in players:
        for seed in range(games):
            for version in ("v1", "v2"):
                play(n, seed, version, random_sizes[version])
    bot_sizes: dict[str, list[int]] = {"v1": [], "v2": []}
    for seed in range(games):
        example_game(["greedy", "random", "greedy", "random"], seed, bot_sizes)
    engine = sum(r["engine_us_per_decision"] * r["decisions"] for r in rows)
    decisions = sum(r["decisions"] for r in rows)
    summary: dict[str, Any] = {"engine_us_per_decision": round(engine / decisions, 2)}
    for version in ("v1", "v2"):
        spent = sum(r[f"{version}_us_per_request"] * r["decisions"] for r in rows) / decisions
        summary[f"{version}_us_per_request"] = round(spent, 2)
        summary[f"{version}_x_engine"] = round(spent * decisions / engine, 2)
    return {
        "engine": ENGINE_VERSION,
        "machine": _machine(),
        "cpu": {"by_players": rows, "all": summary},
        "act_bytes": {
            "random_play": {v: _spread(s) for v, s in random_sizes.items()},
            "greedy_and_random_bots": {v: _spread(s) for v, s in bot_sizes.items()},
        },
        "goals": {
            "v2_at_most_2x_engine": summary["v2_x_engine"] <= 2.0,
            "v2_median_act_under_1500_bytes": max(
                _spread(random_sizes["v2"])["median"], _spread(bot_sizes["v2"])["median"]
            )
            < 1500,
        },
    }
