"""The `grass` command line: play, replay, verify and benchmark games; log in to a ladder,
submit bots, and follow their ratings, matches and logs (`bots.remote`); play the ladder's bots
yourself (`bots.table`)."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from engine import ENGINE_VERSION, RULESETS, Variants, new_game
from engine.log import LogError, read_log, replay, write_log
from engine.rules import readings
from engine.transcript import transcript


def _console() -> Console:
    """Rich console; wide enough for the results tables when output is not a terminal."""
    return Console() if sys.stdout.isatty() else Console(width=160)


def _variants(args: argparse.Namespace) -> Variants:
    try:
        return Variants.from_names(args.variant or [])
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"grass: bad --variant: {exc}") from None


def cmd_play(args: argparse.Namespace) -> int:
    console = _console()
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
    # The title goes on a line of its own: as the table's title, Rich wraps it to the width of
    # the three narrow columns, which left "1 game(s) of random players," dangling on a line.
    games = f"{args.games} game" + ("" if args.games == 1 else "s")
    console.print(f"{games} of random players, {args.ruleset} rules")
    table = Table()
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
        f"totals {game.result['totals']}; {readings(game.ruleset)}"
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from bench.engine import engine_throughput

    if args.peers:
        from bench.peers import peer_figures

        print(json.dumps(peer_figures(args.seconds, tuple(args.players)), indent=2))
        return 0
    if args.replays:
        from bench.replays import replay_figures

        print(json.dumps(replay_figures(args.games), indent=2))
        return 0
    if args.runner:
        from bench.runner import runner_figures

        print(json.dumps(runner_figures(games=args.games), indent=2))
        return 0
    if args.languages:
        from bench.sandbox import language_figures

        print(json.dumps(language_figures(rounds=min(args.rounds, 300)), indent=2))
        return 0
    if args.sandbox:
        from bench.sandbox import sandbox_figures

        print(json.dumps(sandbox_figures(rounds=args.rounds, games=args.games), indent=2))
        return 0
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


def _built(bot: Any, *, sandboxed: bool, console: Console) -> Any:
    """`bot` ready to run: compiled first, as the ladder does at upload, if its language is
    (in a build sandbox of the ladder's image; with this machine's compilers without it)."""
    from bots.runner.build import BuildUnavailable, build
    from bots.runner.languages import detect

    if not detect(bot.files).build:
        return bot
    with console.status(f"building {bot.name} ({detect(bot.files).name})"):
        try:
            built = build(bot, sandboxed=sandboxed)
        except BuildUnavailable as exc:
            raise SystemExit(f"grass match: {bot.name}: {exc}") from None
    if not built.ok:
        console.print(built.log, markup=False, highlight=False)
        raise SystemExit(f"grass match: {bot.name} did not build (the compiler's output above)")
    return built.source(bot)


def cmd_match(args: argparse.Namespace) -> int:
    from bots.runner.botfiles import BadBot, load_bot
    from bots.runner.results import InfrastructureFault
    from bots.runner.seats import TimeControl
    from bots.runner.series import SeriesConfig, plan, run_series, tally

    console = _console()
    try:
        bots = [load_bot(spec) for spec in args.bots]
    except BadBot as exc:
        raise SystemExit(f"grass match: {exc}") from None
    if args.no_sandbox:
        console.print(
            "[yellow]grass match: without the sandbox, bots run as plain processes of this "
            "machine, with its own interpreters and compilers (not the ladder's runtime "
            "image), no resource limits, no network block, no freezing off turn, and wall clocks "
            "instead of CPU clocks. Check a bot in the sandbox before you upload it.[/yellow]"
        )
    bots = [_built(bot, sandboxed=not args.no_sandbox, console=console) for bot in bots]
    players = args.players or len(bots)
    if not 2 <= players <= 6:
        raise SystemExit("grass match: a game seats 2 to 6 bots (use --players with more bots)")
    if len(bots) < players:
        raise SystemExit(f"grass match: {len(bots)} bot(s) for {players} seats")
    logs = Path(args.logs) if args.logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    config = SeriesConfig(
        bots=tuple(bots),
        players=players,
        ruleset=args.ruleset,
        variants=_variants(args),
        limits=(("max_hands", args.max_hands),) if args.max_hands else (),
        time_control=TimeControl(decision_ms=args.decision_ms, bank_ms=args.bank_ms),
        sandboxed=not args.no_sandbox,
        logs=logs,
    )
    specs = plan(len(bots), players, args.games, args.seed)
    finished = []
    try:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("matches", total=len(specs))
            for item in run_series(config, specs, jobs=args.jobs):
                finished.append(item)
                progress.advance(task)
    except InfrastructureFault as exc:
        raise SystemExit(f"grass match: {exc}") from None
    names = [b.name for b in bots]
    table = Table(
        title=f"{len(finished)} game(s), {players} seats, {args.ruleset} rules"
        + ("" if config.sandboxed else " (NOT sandboxed)"),
        caption="wins: a first place shared by n seats counts 1/n to each",
    )
    for column in (
        "bot", "games", "wins", "win rate (95% CI)", "mean score", "mean place",
        "ms/decision", "strikes", "forfeits",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    for entry in tally(names, finished):
        low, high = entry.win_interval()
        table.add_row(
            entry.name,
            str(entry.games),
            f"{entry.wins:g}" if entry.wins == int(entry.wins) else f"{entry.wins:.2f}",
            f"{entry.win_rate:.1%} ({low:.1%}-{high:.1%})",
            f"{entry.total_score / max(entry.games, 1):,.0f}",
            f"{entry.total_place / max(entry.games, 1):.2f}",
            f"{entry.think_ms / max(entry.decisions, 1):.2f}",
            str(entry.strikes),
            str(entry.forfeits),
        )
    console.print(table)
    if args.json:
        report = [
            {
                "bot": e.name,
                "games": e.games,
                "wins": e.wins,
                "win_rate": e.win_rate,
                "win_rate_ci95": e.win_interval(),
                "mean_score": e.total_score / max(e.games, 1),
                "mean_place": e.total_place / max(e.games, 1),
                "ms_per_decision": e.think_ms / max(e.decisions, 1),
                "strikes": e.strikes,
                "forfeits": e.forfeits,
            }
            for e in tally(names, finished)
        ]
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


def _remote(args: argparse.Namespace) -> int:
    """Run a ladder command; what goes wrong is one line on stderr (no traceback), exit 1."""
    from bots import remote
    from bots.client import LadderError

    console = _console()
    try:
        if args.command == "login":
            return remote.login(console, args.site, args.user, args.token)
        if args.command == "submit":
            return remote.submit(console, Path(args.path), args.bot, args.create, args.wait)
        if args.command == "status":
            return remote.status(console, args.name)
        if args.command == "matches":
            return remote.matches(console, args.name, args.last)
        if args.command == "challenge":
            return remote.challenge(
                console,
                args.bot,
                args.opponents,
                ruleset=args.ruleset,
                seating=args.seating,
                hands=args.hands,
                wait_s=args.wait,
            )
        if args.command == "table":
            from bots.table import table

            if not args.resume and not args.opponents:
                args.command_parser.error("name 1 to 5 opponents, or --resume")
            return table(
                args.opponents,
                ruleset=args.ruleset,
                seat=args.seat,
                hands=args.hands,
                resume=args.resume,
                out=sys.stdout,
            )
        return remote.logs(console, args.name, args.last, Path(args.dir), debug=args.debug)
    except LadderError as exc:
        print(f"grass {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"grass {args.command}: interrupted", file=sys.stderr)
        return 130


def _ladder_parsers(sub: Any) -> None:
    """login, submit, status, matches, logs, challenge, table: the ladder's REST API
    (`bots.client`), and for `table` the live table's socket (`bots.table`)."""
    from bots.client import DEFAULT_SITE

    login = sub.add_parser("login", help="store an API token for a ladder site")
    login.add_argument(
        "--site", default=os.environ.get("GRASS_SITE", DEFAULT_SITE), help="the site's address"
    )
    login.add_argument("--user", help="your username (asked if not given)")
    login.add_argument(
        "--token",
        nargs="?",
        const=ASK,
        metavar="TOKEN",
        help="log in with an API token (from the site's API token page) instead of the "
        "password: the token given, or asked for when left out (kept out of shell history)",
    )
    submit = sub.add_parser("submit", help="upload a new version of a bot and wait for its verdict")
    submit.add_argument("path", help="a source file, a .zip, an executable, or a folder (zipped)")
    submit.add_argument("--bot", required=True, help="the bot's name")
    submit.add_argument("--create", action="store_true", help="create the bot if you have none")
    submit.add_argument(
        "--wait", type=float, default=600, help="seconds to wait for the verdict (default 600)"
    )
    status = sub.add_parser("status", help="your bots' ratings, games and faults")
    status.add_argument("name", nargs="?", help="one bot (NAME or owner/NAME)")
    matches = sub.add_parser("matches", help="a bot's recent matches, places and rating changes")
    matches.add_argument("name", help="NAME or owner/NAME")
    matches.add_argument("--last", type=int, default=10)
    logs = sub.add_parser("logs", help="download a bot's recent match logs")
    logs.add_argument("name", help="NAME or owner/NAME")
    logs.add_argument("dir", help="folder for match-ID.jsonl.gz files")
    logs.add_argument("--last", type=int, default=20)
    logs.add_argument(
        "--debug",
        action="store_true",
        help="also your bots' debug lines (stderr per decision) as match-ID.debug.txt",
    )
    challenge = sub.add_parser(
        "challenge", help="play your bot against opponents of your choice now, unrated"
    )
    challenge.add_argument("bot", help="your bot: NAME, or NAME@vN for one of its versions")
    challenge.add_argument(
        "opponents",
        nargs="+",
        help="1 to 5: owner/NAME (as it plays on the ladder), an example's name (greedy), or "
        "NAME, NAME@vN for your own",
    )
    challenge.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
    challenge.add_argument(
        "--seating",
        choices=["random", "ordered"],
        default="random",
        help="ordered: your bot in seat 0, the opponents after it as given",
    )
    challenge.add_argument("--hands", type=int, help="at most this many hands")
    challenge.add_argument(
        "--wait",
        type=float,
        nargs="?",
        const=1800.0,
        help="follow it until it is played (at most this many seconds, default 1800)",
    )
    table = sub.add_parser(
        "table",
        help="sit at a table yourself: play the ladder's bots in this terminal",
        description="Start a game against the ladder's bots (as the site's Play page does) and "
        "play it here: at each of your decisions the table is printed with your legal actions "
        "numbered; type a number. Ctrl-C asks whether to resign; twice, leaves the game.",
    )
    table.add_argument(
        "opponents",
        nargs="*",
        help="1 to 5: owner/NAME (as it plays on the ladder), an example's name (greedy), or "
        "NAME for your own",
    )
    table.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
    table.add_argument("--seat", type=int, help="your seat, 0 to the number of opponents")
    table.add_argument("--hands", type=int, default=1, help="the game's hands (default 1)")
    table.add_argument(
        "--resume", action="store_true", help="join the game you are playing (started before)"
    )
    for command in (login, submit, status, matches, logs, challenge, table):
        command.set_defaults(run=_remote)


ASK = "-"
"""`grass login --token` without a value: the token is asked for."""


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

    match = sub.add_parser(
        "match", help="play bots against each other in the sandbox, as the ladder does"
    )
    match.add_argument("bots", nargs="+", help="example names (random, greedy, strong) or paths")
    match.add_argument("--games", type=int, default=10)
    match.add_argument("--players", type=int, help="seats per game (default: one per bot)")
    match.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
    match.add_argument("--variant", action="append", help="as for `grass play`")
    match.add_argument("--seed", type=int, default=0)
    match.add_argument("--logs", help="directory for each match's .jsonl.gz log")
    match.add_argument("--jobs", type=int, default=1, help="matches played in parallel")
    match.add_argument("--max-hands", type=int, help="end each game after this many hands")
    match.add_argument("--decision-ms", type=int, default=1000)
    match.add_argument("--bank-ms", type=int, default=30000)
    match.add_argument("--json", help="also write the results table as JSON to this file")
    match.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run bots as plain subprocesses (for machines without root; never on the ladder)",
    )
    match.set_defaults(run=cmd_match)

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
    bench.add_argument(
        "--sandbox",
        action="store_true",
        help="measure bot start-up, round trips and games, sandboxed vs plain subprocesses",
    )
    bench.add_argument(
        "--peers",
        action="store_true",
        help="CPU per decision beside RLCard and OpenSpiel games (pip install -e '.[bench]')",
    )
    bench.add_argument(
        "--replays",
        action="store_true",
        help="replay frames and observations, in times the game's play (--games games)",
    )
    bench.add_argument(
        "--languages",
        action="store_true",
        help="per language: start-up and round trip of its starter bot, sandboxed vs plain",
    )
    bench.add_argument(
        "--runner",
        action="store_true",
        help="the runner's CPU per request and act sizes, protocol 1 vs 2, beside the engine",
    )
    bench.add_argument("--rounds", type=int, default=2000, help="round trips (with --sandbox)")
    bench.add_argument(
        "--games", type=int, default=3, help="games per mode (--sandbox, --replays, --runner)"
    )
    bench.set_defaults(run=cmd_bench)
    _ladder_parsers(sub)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args, unknown = parser().parse_known_args(argv)
    if unknown:
        # The command's own usage, not the top level's list of commands (argparse's default).
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        result: int = args.run(args)
    except BrokenPipeError:  # `grass replay LOG | head` is normal use
        sys.stderr.close()
        return 0
    return result


if __name__ == "__main__":
    sys.exit(main())
