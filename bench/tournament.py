"""How fast are pairing and standings?  ``python -m bench.tournament`` (``--help``).

Simulates a Swiss tournament (by default 1,000 entrants at 6-seat tables for 5 rounds): every
entrant has a hidden skill, each table's money totals are skill plus noise, and the places follow
the totals.  For every round it prints one JSON line with the seconds spent pairing the round
and computing the standings after it, and how many pairs at the round's tables had already met.
Then it times building a round robin schedule (64 entrants by default) and prints its size
against the lower bound.

The goal it checks: pairing a 1,000-entrant Swiss round at 6 seats in well under a second.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from typing import Any

from ladder.tournaments.pairing import (
    Round,
    duplicate_rotations,
    pair_counts,
    round_robin_lower_bound,
    round_robin_schedule,
    swiss_round,
)
from ladder.tournaments.standings import (
    TableResult,
    duplicate_result,
    places_from_totals,
    standings,
)


def _play(
    played: Round, skill: dict[int, float], duplicate: bool, rng: random.Random
) -> list[TableResult]:
    """Random results for every table: money is skill plus noise, in thousands."""

    def totals(seats: Sequence[int]) -> dict[int, int]:
        return {e: round(1000 * (skill[e] + rng.gauss(0.0, 1.0))) for e in seats}

    results: list[TableResult] = []
    for table in played.tables:
        if duplicate:
            games = [totals(t.seats) for t in duplicate_rotations(table)]
            results.append(duplicate_result(table, games))
        else:
            money = totals(table.seats)
            results.append(TableResult(table, places=places_from_totals(money), totals=money))
    return results


def _repeats(played: Round, history: Sequence[Round]) -> int:
    before = pair_counts(history)
    return sum(1 for pair in pair_counts([played]) if pair in before)


def swiss_figures(
    entrants: int, seats: int, rounds: int, *, duplicate: bool, seed: int
) -> list[dict[str, Any]]:
    """One record per round: pairing and standings seconds, tables, byes, repeat pairs."""
    rng = random.Random(seed)
    field = list(range(1, entrants + 1))
    skill = {e: rng.gauss(0.0, 0.5) for e in field}
    points: dict[int, float] = {}
    history: list[Round] = []
    results: list[TableResult] = []
    records: list[dict[str, Any]] = []
    for number in range(1, rounds + 1):
        start = time.perf_counter()
        played = swiss_round(field, seats, points=points, history=history, rng=rng)
        pair_seconds = time.perf_counter() - start
        repeats = _repeats(played, history)
        history.append(played)
        results.extend(_play(played, skill, duplicate, rng))
        start = time.perf_counter()
        table = standings(field, results, history, seats=seats)
        standings_seconds = time.perf_counter() - start
        points = {s.entrant: s.points for s in table}
        records.append(
            {
                "round": number,
                "entrants": entrants,
                "seats": seats,
                "tables": len(played.tables),
                "byes": len(played.byes),
                "repeat_pairs": repeats,
                "pair_seconds": round(pair_seconds, 4),
                "standings_seconds": round(standings_seconds, 4),
            }
        )
    return records


def round_robin_figures(entrants: int, seats: int, *, seed: int) -> dict[str, Any]:
    """Seconds to build a round robin schedule, its rounds and busiest pair."""
    start = time.perf_counter()
    schedule = round_robin_schedule(list(range(1, entrants + 1)), seats, rng=random.Random(seed))
    seconds = time.perf_counter() - start
    counts = pair_counts(schedule)
    return {
        "round_robin_entrants": entrants,
        "seats": seats,
        "rounds": len(schedule),
        "lower_bound": round_robin_lower_bound(entrants, seats),
        "busiest_pair": max(counts.values()),
        "average_pair": round(sum(counts.values()) / len(counts), 3),
        "seconds": round(seconds, 4),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.tournament",
        description="Time Swiss pairing, standings and a round robin schedule (JSON lines).",
    )
    parser.add_argument("--entrants", type=int, default=1000, help="Swiss entrants")
    parser.add_argument("--seats", type=int, default=6, help="seats per table (2-6)")
    parser.add_argument("--rounds", type=int, default=5, help="Swiss rounds")
    parser.add_argument(
        "--duplicate", action="store_true", help="play every table as a duplicate table"
    )
    parser.add_argument(
        "--round-robin", type=int, default=64, help="round robin entrants (0 to skip)"
    )
    parser.add_argument("--seed", type=int, default=1)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    records = swiss_figures(
        args.entrants, args.seats, args.rounds, duplicate=args.duplicate, seed=args.seed
    )
    for record in records:
        print(json.dumps(record))
    slowest = max(r["pair_seconds"] for r in records)
    print(json.dumps({"slowest_pair_seconds": slowest, "under_one_second": slowest < 1.0}))
    if args.round_robin:
        print(json.dumps(round_robin_figures(args.round_robin, args.seats, seed=args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
