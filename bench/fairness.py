"""Are bots' clocks fair on a busy worker? Prints figures; never a timed test.

    .venv/bin/python -m bench.fairness              # the full run (about an hour on 2 cores)
    .venv/bin/python -m bench.fairness --games 20   # a quick look

Two conditions, one after the other: **idle** (nothing else running) and **loaded** (two CPU
hogs outside the sandbox, one per core of a 2-core machine, plus a match of CPU-hungry bots
running beside, in boxes of their own). In each:

1. Probes: a bot that thinks until its clock says stop, 800 ms a decision, for its first ten
   decisions of a few games. `cpu-probe` budgets by CPU time (`time.process_time`, the clock
   the runner counts); `wall-probe` by wall time, as bots had to before. Printed: the CPU each
   got per decision. Goal: `cpu-probe` idle and loaded within 10% of each other.
2. `strong` against three `greedy` on the same seeds (seat rotated by seed). Printed: strong's
   win rate with its 95% interval. Goal: the two conditions within each other's intervals.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bots.runner.botfiles import BotSource, load_bot
from bots.runner.match import play_match
from bots.runner.seats import TimeControl

PROBE = """
import json, sys, time
from bots.sdk import Bot, run

CLOCK = {clock!r}
BUDGET = 0.8


class Probe(Bot):
    name = "probe"
    thought = 0
    got = []

    def choose(self, obs):
        if self.thought < 10:
            self.thought += 1
            cpu = time.process_time()
            now = cpu if CLOCK == "cpu" else time.perf_counter()
            clock = time.process_time if CLOCK == "cpu" else time.perf_counter
            while clock() - now < BUDGET:
                pass
            self.got.append(time.process_time() - cpu)
            if self.thought == 10:
                sys.stderr.write("PROBE " + json.dumps(self.got) + "\\n")
                sys.stderr.flush()
        return obs.legal[0]


run(Probe())
"""

HUNGRY = """
import time
from bots.sdk import Bot, run


class Hungry(Bot):
    name = "hungry"

    def choose(self, obs):
        while obs.cpu_left() > 0.1:  # every decision: all the CPU it may use
            pass
        return obs.legal[0]


run(Hungry())
"""

PROBE_TIME = TimeControl(decision_ms=1_000, bank_ms=0)


def probe(clock: str) -> BotSource:
    return BotSource(f"{clock}-probe", {"bot.py": PROBE.format(clock=clock).encode()})


def probe_cpu_ms(games: int) -> dict[str, list[float]]:
    """CPU per thinking decision of each probe, over `games` games against two greedy."""
    got: dict[str, list[float]] = {"cpu": [], "wall": []}
    for seed in range(games):
        match = play_match(
            [probe("cpu"), probe("wall"), load_bot("greedy"), load_bot("greedy")],
            seed=seed,
            limits={"max_hands": 3},
            time_control=PROBE_TIME,
        )
        for seat in match.seats[:2]:
            for line in seat.stderr.splitlines():
                if line.startswith("PROBE "):
                    got[seat.name.split("-")[0]] += [1000 * x for x in json.loads(line[6:])]
    return got


def strong_vs_greedy(seeds: range, progress: Progress, label: str) -> tuple[int, int]:
    """(wins, games) of strong against three greedy; strong's seat rotates with the seed."""
    wins = 0
    task = progress.add_task(label, total=len(seeds))
    for seed in seeds:
        bots = [load_bot("greedy") for _ in range(3)]
        seat = seed % 4
        bots.insert(seat, load_bot("strong"))
        match = play_match(bots, seed=seed)
        wins += match.ranks[seat] == 1
        progress.advance(task)
    return wins, len(seeds)


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return centre - half, centre + half


def _noisy_matches(stop: Any) -> None:
    """Matches of four CPU-hungry bots, one after another, until `stop` is set."""
    hungry = BotSource("hungry", {"bot.py": HUNGRY.encode()})
    seed = 0
    while not stop.is_set():
        play_match([hungry] * 4, seed=seed, limits={"max_hands": 1})
        seed += 1


@contextmanager
def load(hogs: int) -> Iterator[None]:
    """`hogs` spinning processes outside the sandbox and a noisy match beside."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(hogs)
    ]
    stop = multiprocessing.Event()
    noisy = multiprocessing.Process(target=_noisy_matches, args=(stop,), daemon=True)
    noisy.start()
    try:
        time.sleep(1.0)  # let the load settle
        yield
    finally:
        stop.set()
        for spinner in spinners:
            os.killpg(spinner.pid, signal.SIGKILL)
            spinner.wait()
        noisy.join(timeout=120)
        if noisy.is_alive():
            noisy.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fairness", description=__doc__)
    parser.add_argument("--games", type=int, default=200, help="strong vs greedy seeds")
    parser.add_argument("--probe-games", type=int, default=3, help="games per probe run")
    parser.add_argument("--hogs", type=int, default=2, help="CPU hogs in the loaded condition")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    figures: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "cpu": _cpu_model(),
            "python": platform.python_version(),
        },
        "command": "python -m bench.fairness " + " ".join(argv or sys.argv[1:]),
    }
    with Progress(console=console, transient=True) as progress:
        for condition in ("idle", "loaded"):
            context = load(args.hogs) if condition == "loaded" else _nothing()
            with context:
                task = progress.add_task(f"{condition}: probes", total=None)
                probes = probe_cpu_ms(args.probe_games)
                progress.remove_task(task)
                wins, games = strong_vs_greedy(
                    range(args.games), progress, f"{condition}: strong vs 3 greedy"
                )
            figures[condition] = {
                "cpu_probe_ms": _summary(probes["cpu"]),
                "wall_probe_ms": _summary(probes["wall"]),
                "strong_wins": wins,
                "strong_games": games,
                "strong_win_rate": round(wins / games, 4),
                "strong_interval": [round(x, 4) for x in wilson(wins, games)],
            }
    idle, loaded = figures["idle"], figures["loaded"]
    figures["cpu_probe_loaded_over_idle"] = round(
        loaded["cpu_probe_ms"]["mean"] / idle["cpu_probe_ms"]["mean"], 3
    )
    figures["wall_probe_loaded_over_idle"] = round(
        loaded["wall_probe_ms"]["mean"] / idle["wall_probe_ms"]["mean"], 3
    )
    a, b = idle["strong_interval"], loaded["strong_interval"]
    figures["win_rates_within_each_others_intervals"] = (
        a[0] <= loaded["strong_win_rate"] <= a[1] and b[0] <= idle["strong_win_rate"] <= b[1]
    )
    print(json.dumps(figures, indent=2))
    if not args.json:
        _table(console, figures)
    return 0


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0, "mean": float("nan"), "min": float("nan"), "max": float("nan")}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 1),
        "min": round(min(values), 1),
        "max": round(max(values), 1),
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _table(console: Console, figures: dict[str, Any]) -> None:
    table = Table(title="Fair clocks: idle vs loaded")
    for column in ("", "idle", "loaded", "loaded / idle"):
        table.add_column(column)
    rows = (
        ("cpu_probe_ms", "cpu-probe: CPU per decision (ms)"),
        ("wall_probe_ms", "wall-probe: CPU per decision (ms)"),
    )
    for key, label in rows:
        idle, loaded = figures["idle"][key]["mean"], figures["loaded"][key]["mean"]
        table.add_row(label, f"{idle:.0f}", f"{loaded:.0f}", f"{loaded / idle:.2f}")
    table.add_row(
        "strong vs 3 greedy: win rate [95%]",
        _rate(figures["idle"]),
        _rate(figures["loaded"]),
        "",
    )
    console.print(table)


def _rate(condition: dict[str, Any]) -> str:
    low, high = condition["strong_interval"]
    return f"{condition['strong_win_rate']:.1%} [{low:.1%}, {high:.1%}]"


if __name__ == "__main__":
    raise SystemExit(main())
