"""The collusion detector's power curve (issue 33): prints figures, asserts nothing.

    .venv/bin/python -m bench.collusion --bank bench-collusion.jsonl --games 400 --jobs 2
    .venv/bin/python -m bench.collusion --bank bench-collusion.jsonl --trials 1000

Two steps. **Play** (`--games`): 4-seat modern games in this process on the engine, the bots
as SDK bots (no sandbox, no pipes): honest tables of the examples (random, greedy, strong with
its search cut to STRONG_MS a decision so thousands of games fit in an hour) in every
combination, and tables with the colluding pair of `bench.colluders.pair` (the feeder moving
everything, and a subtler one moving a quarter) beside two examples. Each game is kept as its
per-pair statistics (`ladder.fairplay.detect.pair_match`), not its log: the bank.

**Trials** (`--trials`): a trial is one pair's run of shared matches, drawn with replacement
from the bank's games of that pair's kind and fed match by match to the sequential test
(`ladder.fairplay.detect.PairTest`), as the ladder does after every shared match. Printed:
for the colluding pairs, the share of trials flagged within 10, 20, 30, 50, 100, 200 matches;
for each honest combination, the share flagged within 1,000. Resampling stands in for playing
1,000 x 1,000 games; the bank's size bounds what it can show (said in docs/fairplay.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import itertools
import json
import math
import multiprocessing
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.colluders.pair import Feeder, Partner
from bots.sdk import Bot, _Driver
from engine import new_game, observe
from engine.flows import PairFlow, game_flows

EXAMPLES = Path(__file__).resolve().parent.parent / "bots" / "examples"
HONEST = ("random", "greedy", "strong")
STRONG_MS = 5
"""The strong example's search budget per decision here (250 ms on the ladder)."""


def example(name: str) -> Bot:
    """An example bot's `Bot` (its bot.py loaded as a module)."""
    path = EXAMPLES / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"grass_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (cls,) = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
    ]
    maker: Any = cls
    bot: Bot = maker(STRONG_MS) if name == "strong" else maker()
    return bot


def make(kind: str) -> Bot:
    """`random`, `greedy`, `strong`, `feeder`, `partner`, `feeder25`, `partner25`."""
    if kind.startswith(("feeder", "partner")):
        share = 0.25 if kind.endswith("25") else 1.0
        return (Feeder if kind.startswith("feeder") else Partner)(share)
    return example(kind)


def play(table: Sequence[str], seed: int) -> tuple[list[dict[str, Any]], list[int]]:
    """One game in this process; (its log, the seats' places)."""
    return play_bots([make(kind) for kind in table], seed)


def play_bots(bots: Sequence[Bot], seed: int) -> tuple[list[dict[str, Any]], list[int]]:
    """One game of these bots in this process, as the SDK would run them in a match."""
    drivers = [_Driver(bot) for bot in bots]
    for seat, bot in enumerate(bots):
        bot.on_game_start({"seat": seat, "rng_seed": seed * 8 + seat})
    game = new_game("modern", len(bots), seed)
    read = [0] * len(bots)
    while not game.over:
        s = game.to_act
        view = observe(game, s, since=max(read[s], game.table.hand_start_event))
        read[s] = view["history_end"]
        message = {"observation": view, "bank_ms": 30_000, "cpu_ms": 31_000, "wall_ms": 93_000}
        game.apply(drivers[s].decide(drivers[s].observation(message)))
    assert game.result is not None
    return list(game.events), list(game.result["ranks"])


def compositions() -> list[tuple[str, ...]]:
    """Every honest 4-seat table of the examples, and the colluding pairs (full and subtle)
    beside every two examples."""
    honest: list[tuple[str, ...]] = list(itertools.combinations_with_replacement(HONEST, 4))
    colluding = [
        (f"feeder{suffix}", f"partner{suffix}", *others)
        for suffix in ("", "25")
        for others in itertools.combinations_with_replacement(HONEST, 2)
    ]
    return honest + colluding


def bank_rows(job: tuple[tuple[str, ...], int]) -> dict[str, Any]:
    """One game of a composition (seats shuffled by the seed): its places and its flows
    (what the test reads is computed from them when the bank is read)."""
    composition, seed = job
    table = list(composition)
    random.Random(seed).shuffle(table)
    events, ranks = play(table, seed)
    flows = {f"{g},{t}": flow.as_dict() for (g, t), flow in game_flows(events).items()}
    return {"table": table, "seed": seed, "ranks": ranks, "flows": flows}


def build_bank(path: Path, games: int, strong_games: int, jobs: int, first_seed: int) -> None:
    """Play `games` games of each composition (`strong_games` of those with a strong seat: its
    search is the slow part), appending to the bank at `path` as they finish; games already
    in the bank are not played again."""
    todo: list[tuple[tuple[str, ...], int]] = []
    for k, composition in enumerate(compositions()):
        count = strong_games if "strong" in composition else games
        todo += [(composition, first_seed + 10_000 * k + i) for i in range(count)]
    done = {(tuple(sorted(r["table"])), r["seed"]) for r in load_bank(path)}
    todo = [(c, s) for c, s in todo if (tuple(sorted(c)), s) not in done]
    random.Random(0).shuffle(todo)  # every composition fills in from the start
    print(f"{len(todo)} games to play on {jobs} processes", file=sys.stderr)
    start = time.time()
    with (
        multiprocessing.get_context("fork").Pool(jobs) as pool,
        path.open("a") as out,
    ):
        for n, row in enumerate(pool.imap_unordered(bank_rows, todo), start=1):
            out.write(json.dumps(row) + "\n")
            out.flush()
            if n % 50 == 0:
                print(f"{n} games, {time.time() - start:.0f} s", file=sys.stderr)


def load_bank(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a run stopped mid-line
            rows.append(json.loads(line))
    return rows


COLLUDING = {"full": ("feeder", "partner"), "quarter": ("feeder25", "partner25")}
BARS = (1, 1_000)
"""Pairs under test for the printed curves (the bar is pairs / alpha)."""
WITHIN = (10, 20, 30, 50, 100, 200)


def win_rates(bank: list[dict[str, Any]]) -> dict[tuple[tuple[str, ...], str], float]:
    """Per honest composition and bot kind: how often one seat of that kind placed first.
    Stands in for the ratings' expectation (the ladder uses the bots' ratings)."""
    firsts: dict[tuple[tuple[str, ...], str], list[int]] = {}
    for row in bank:
        table = row["table"]
        if any(k not in HONEST for k in table):
            continue
        key = tuple(sorted(table))
        for kind, rank in zip(table, row["ranks"], strict=True):
            firsts.setdefault((key, kind), []).append(rank == 1)
    return {k: sum(v) / len(v) for k, v in firsts.items()}


def flows_of(row: dict[str, Any]) -> dict[tuple[int, int], PairFlow]:
    """A bank row's flows, keyed by (giver, taker) again."""
    flows: dict[tuple[int, int], PairFlow] = {}
    for key, counts in row["flows"].items():
        giver, taker = map(int, key.split(","))
        flows[giver, taker] = PairFlow(**counts)
    return flows


def samples(bank: list[dict[str, Any]]) -> dict[str, list[tuple[Any, float]]]:
    """Per kind of pair (`greedy+strong`, ..., `full`, `quarter`): each shared match's
    statistics with the chance the pair was expected to place first."""
    from ladder.fairplay.detect import pair_match

    rates = win_rates(bank)
    by_kind: dict[str, list[tuple[Any, float]]] = {}
    for row in bank:
        table = row["table"]
        honest = [k if k in HONEST else "greedy" for k in table]  # colluders play as greedy
        key = tuple(sorted(honest))
        flows = flows_of(row)
        for a, b in itertools.combinations(range(len(table)), 2):
            kinds = (table[a], table[b])
            name = next((n for n, pair in COLLUDING.items() if set(kinds) == set(pair)), None)
            if name is None:
                if any(k not in HONEST for k in kinds) or any(k not in HONEST for k in table):
                    continue  # honest pairs are taken from honest tables only
                name = "+".join(sorted(kinds))
            rate_a = rates.get((key, honest[a]))
            rate_b = rates.get((key, honest[b]))
            if rate_a is None or rate_b is None:
                continue
            match = pair_match(flows, a, b, row["ranks"])
            by_kind.setdefault(name, []).append((match, min(1.0, rate_a + rate_b)))
    return by_kind


def run_trial(
    matches: list[tuple[Any, float]], length: int, rng: random.Random, pairs: int
) -> int | None:
    """The match count at which a pair fed `length` matches drawn from `matches` is flagged.
    The same steps as `PairTest.observe` (its bets and its bar), without building a PairTest
    per match: a million honest matches per figure."""
    from ladder.fairplay import detect

    line = detect.bar(pairs)
    flow = lift = detect.START
    for n in range(1, length + 1):
        match, expected = matches[rng.randrange(len(matches))]
        flow = detect._bet(flow, match.hit, detect.NULL_RATE)
        p = detect.lift_null(expected)
        if p < 1:
            lift = detect._bet(lift, match.first, p)
        if (detect._mean_wealth(flow) + detect._mean_wealth(lift)) / 2 >= line:
            return n
    return None


def report(bank: list[dict[str, Any]], trials: int, seed: int) -> None:
    """The power curve and the honest pairs' false flags, as Markdown tables."""
    from ladder.fairplay import detect

    by_kind = samples(bank)
    rng = random.Random(seed)
    print(
        f"bank: {len(bank)} games; host {platform.node()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print()
    print(
        "| pair | matches in bank | hits (95% interval) | flow score > threshold | "
        "asks > threshold | mean score | first (expected) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in sorted(by_kind.items()):
        n = len(rows)
        hits = sum(m.hit for m, _ in rows)
        low, high = wilson(hits, n)
        scored = sum(m.score > detect.THRESHOLD for m, _ in rows) / n
        asked = sum(max(m.asks_ab, m.asks_ba) > detect.ASK_THRESHOLD for m, _ in rows) / n
        mean = sum(m.score for m, _ in rows) / n
        firsts = sum(m.first for m, _ in rows) / n
        expected = sum(e for _, e in rows) / n
        print(
            f"| {name} | {n} | {hits / n:.1%} ({low:.1%}-{high:.1%}) | {scored:.1%} | "
            f"{asked:.1%} | {mean:.2f} | {firsts:.1%} ({expected:.1%}) |"
        )
    print()
    quiet = {
        f"{name}, asks ignored": [(replace(m, asks_ab=0, asks_ba=0), e) for m, e in rows]
        for name, rows in by_kind.items()
        if name in COLLUDING
    }
    for pairs in BARS:
        print(f"pairs under test {pairs}: flagged when evidence >= {detect.bar(pairs):,.0f}")
        print()
        print("| pair | trials | " + " | ".join(f"within {n}" for n in WITHIN) + " |")
        print("| --- | --- |" + " --- |" * len(WITHIN))
        for name, rows in [(n, by_kind[n]) for n in COLLUDING if n in by_kind] + list(
            quiet.items()
        ):
            at = [run_trial(rows, max(WITHIN), rng, pairs) for _ in range(trials)]
            cells = [sum(a is not None and a <= n for a in at) / trials for n in WITHIN]
            print(f"| {name} | {trials} | " + " | ".join(f"{c:.1%}" for c in cells) + " |")
        print()
        print("| honest pair | trials | flagged within 1,000 (95% upper bound) |")
        print("| --- | --- | --- |")
        for name, rows in sorted(by_kind.items()):
            if name in COLLUDING:
                continue
            flagged = sum(run_trial(rows, 1000, rng, pairs) is not None for _ in range(trials))
            print(
                f"| {name} | {trials} | {flagged / trials:.1%} ({wilson(flagged, trials)[1]:.1%}) |"
            )
        print()


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of k successes in n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bank", default="bench-collusion.jsonl")
    parser.add_argument("--games", type=int, default=0, help="games per composition to play")
    parser.add_argument("--strong-games", type=int, help="games per composition with strong")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trials", type=int, default=0)
    args = parser.parse_args(argv)
    path = Path(args.bank)
    if args.games:
        strong = args.games // 3 if args.strong_games is None else args.strong_games
        build_bank(path, args.games, strong, args.jobs, args.seed)
    if args.trials:
        report(load_bank(path), args.trials, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
