"""The `grass` command line: play, replay, verify and benchmark games."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from engine import ENGINE_VERSION, RULESETS, Variants, new_game
from engine.log import LogError, read_log, replay, write_log
from engine.transcript import transcript


def _variants(args: argparse.Namespace) -> Variants:
    try:
        return Variants.from_names(args.variant or [])
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"grass: bad --variant: {exc}") from None


def cmd_play(args: argparse.Namespace) -> int:
    console = Console()
    variants = _variants(args)
    if not 2 <= args.players <= 6:
        raise SystemExit("grass: --players must be between 2 and 6")
    logs = Path(args.logs) if args.logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    wins = [0.0] * args.players
    totals = [0] * args.players
    with Progress(console=console, transient=True, disable=args.games < 5) as progress:
        task = progress.add_task("playing", total=args.games)
        for index in range(args.games):
            seed = args.seed + index
            game = new_game(args.ruleset, args.players, seed, variants)
            rng = random.Random(seed)
            while not game.over:
                game.apply(rng.choice(game.legal_actions()))
            assert game.result is not None
            for seat in game.result["winners"]:
                wins[seat] += 1 / len(game.result["winners"])
            totals = [a + b for a, b in zip(totals, game.result["totals"], strict=True)]
            if logs:
                write_log(game, logs / f"game-{seed}.jsonl.gz")
            if args.games == 1:
                console.print(
                    f"seed {seed}: {game.hand_no} hands, totals {game.result['totals']}, "
                    f"ranks {game.result['ranks']} ({game.result['reason']})"
                )
            progress.advance(task)
    table = Table(title=f"{args.games} game(s) of random players, {args.ruleset} rules")
    for column in ("seat", "wins", "mean total"):
        table.add_column(column, justify="right")
    for seat in range(args.players):
        table.add_row(f"seat{seat}", f"{wins[seat]:g}", f"{totals[seat] / args.games:,.0f}")
    console.print(table)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        events = read_log(args.log)
    except (OSError, LogError) as exc:
        print(f"grass replay: {args.log}: {exc}", file=sys.stderr)
        return 1
    for line in transcript(events):
        print(line)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    try:
        game = replay(read_log(args.log))
    except OSError as exc:
        print(f"grass verify: {args.log}: {exc}", file=sys.stderr)
        return 1
    except LogError as exc:
        print(f"grass verify: {args.log}: REJECTED at {exc}", file=sys.stderr)
        return 1
    assert game.result is not None
    print(
        f"{args.log}: OK, {len(game.events)} lines, {game.hand_no} hands, "
        f"totals {game.result['totals']}"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from bots.bench import engine_throughput

    results = [engine_throughput(args.ruleset, players, args.seconds) for players in args.players]
    per = {r["players"]: r["us_per_decision"] for r in results}
    report = {
        "engine": ENGINE_VERSION,
        "python": sys.version.split()[0],
        "results": results,
    }
    if 2 in per and 6 in per:
        report["six_vs_two_per_decision"] = round(per[6] / per[2], 3)
    print(json.dumps(report, indent=2))
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="grass", description="Grass rules engine and bot tools.")
    sub = top.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="play games between built-in random players")
    play.add_argument("--players", type=int, default=4)
    play.add_argument("--games", type=int, default=1)
    play.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
    play.add_argument(
        "--variant",
        action="append",
        help="give-me-five, hidden-deals, lucky-or-not, learning-hands, target=500000 (repeatable)",
    )
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--logs", help="directory to write each game's .jsonl.gz log into")
    play.set_defaults(run=cmd_play)

    rep = sub.add_parser("replay", help="print a readable transcript of a game log")
    rep.add_argument("log")
    rep.set_defaults(run=cmd_replay)

    ver = sub.add_parser("verify", help="replay a log through the engine and check every line")
    ver.add_argument("log")
    ver.set_defaults(run=cmd_verify)

    bench = sub.add_parser("bench", help="print engine throughput as JSON")
    bench.add_argument("--seconds", type=float, default=5.0, help="per player count")
    bench.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
    bench.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    bench.set_defaults(run=cmd_bench)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except BrokenPipeError:  # `grass replay LOG | head` is normal use
        sys.stderr.close()
        return 0
    return result


if __name__ == "__main__":
    sys.exit(main())
