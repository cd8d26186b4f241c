"""Many matches between the same bots (`grass match`): seat shuffling, parallel jobs, totals.

Sandboxed matches start their bots from boxes made ahead (`bots.runner.pool`), as a ladder
worker does: each match but the first finds the boxes the one before used made again, so a
bot's start-up here is what it will be on the ladder.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import util
from pathlib import Path

from bots.runner import pool
from bots.runner.botfiles import BotSource
from bots.runner.match import play_match
from bots.runner.results import MatchResult
from bots.runner.sandbox import SandboxUnavailable
from bots.runner.seats import TimeControl
from engine import Variants


@dataclass(frozen=True)
class MatchSpec:
    """One match of a series: which bot sits where, and its seed."""

    index: int
    seed: int
    order: tuple[int, ...]
    """order[seat] = index of the bot (in the series' bot list) sitting at that seat."""


@dataclass
class BotTally:
    """One bot's results over a series."""

    name: str
    games: int = 0
    wins: float = 0.0
    total_score: int = 0
    total_place: int = 0
    decisions: int = 0
    think_ms: float = 0.0
    strikes: int = 0
    forfeits: int = 0
    places: list[int] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def win_interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson score interval for the win rate (95% by default)."""
        n = self.games
        if n == 0:
            return (0.0, 0.0)
        p = self.win_rate
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (max(0.0, centre - half), min(1.0, centre + half))


def plan(bots: int, players: int, games: int, seed: int) -> list[MatchSpec]:
    """Seat each game at random (seeded): every bot plays every seat about equally often.
    With more bots than seats, each game draws `players` of them."""
    rng = random.Random(seed)
    specs = []
    for index in range(games):
        chosen = rng.sample(range(bots), players) if bots > players else list(range(bots))
        rng.shuffle(chosen)
        specs.append(MatchSpec(index, seed + index, tuple(chosen)))
    return specs


@dataclass(frozen=True)
class SeriesConfig:
    bots: tuple[BotSource, ...]
    players: int
    ruleset: str = "modern"
    variants: Variants = field(default_factory=Variants)
    limits: tuple[tuple[str, int], ...] = ()
    time_control: TimeControl = field(default_factory=TimeControl)
    sandboxed: bool = True
    logs: Path | None = None


def _run_one(config: SeriesConfig, spec: MatchSpec) -> tuple[MatchSpec, MatchResult]:
    seated = [config.bots[i] for i in spec.order]
    if config.sandboxed:
        # The boxes the last match in this process used, made again (none before its first).
        # A box that cannot be made now is made as its bot starts, which says why if it fails.
        with contextlib.suppress(SandboxUnavailable, OSError):
            pool.POOL.replenish()
    result = play_match(
        seated,
        ruleset=config.ruleset,
        variants=config.variants,
        seed=spec.seed,
        limits=dict(config.limits) or None,
        time_control=config.time_control,
        sandboxed=config.sandboxed,
    )
    if config.logs is not None:
        import gzip

        path = config.logs / f"match-{spec.seed}.jsonl.gz"
        path.write_bytes(gzip.compress(result.log_text().encode(), mtime=0))
    result.events = []  # the log is on disk; do not ship it back across processes
    return spec, result


def run_series(
    config: SeriesConfig, specs: Sequence[MatchSpec], jobs: int = 1
) -> Iterator[tuple[MatchSpec, MatchResult]]:
    """Yield each finished match (in completion order with jobs > 1)."""
    if jobs <= 1:
        for spec in specs:
            yield _run_one(config, spec)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=close_pool_at_exit) as executor:
        futures = [executor.submit(_run_one, config, spec) for spec in specs]
        for future in futures:
            yield future.result()


def close_pool_at_exit() -> None:
    """In a job process: destroy its ready boxes when it ends. A multiprocessing child leaves
    by `os._exit`, which skips `atexit` (where the pool closes in other processes), but runs
    multiprocessing's own finalizers."""
    util.Finalize(pool.POOL, pool.POOL.close, exitpriority=10)


def tally(
    names: Sequence[str],
    finished: Sequence[tuple[MatchSpec, MatchResult]],
    on_each: Callable[[MatchResult], None] | None = None,
) -> list[BotTally]:
    """Results per bot name: entries of the same bot (e.g. two greedy seats) add up."""
    by_name = {name: BotTally(name) for name in names}
    for spec, match in finished:
        winners = [seat for seat, rank in enumerate(match.ranks) if rank == 1]
        for seat, bot in enumerate(spec.order):
            entry = by_name[names[bot]]
            report = match.seats[seat]
            entry.games += 1
            if seat in winners:
                entry.wins += 1 / len(winners)
            entry.total_score += match.result["totals"][seat]
            entry.total_place += match.ranks[seat]
            entry.places.append(match.ranks[seat])
            entry.decisions += report.decisions
            entry.think_ms += report.think_ms
            entry.strikes += report.strikes
            entry.forfeits += int(report.forfeited)
        if on_each:
            on_each(match)
    return list(by_name.values())
