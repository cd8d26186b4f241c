"""`manage.py bench_pipeline`: games per minute through the whole ladder pipeline, against the
same games played by `grass match` in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_pipe DEBUG=true \\
        .venv/bin/python manage.py bench_pipeline        # --games 40 --rounds 3 --workers 2

1. *Direct*: the N games of a `grass match` series (bots/runner/series.py: its seeded seatings,
   seeds seed..seed+N-1), played in a pool of `--workers` processes forked from this one,
   exactly as `grass match --jobs 2` plays them.
2. *Pipeline*: the same N games as Match rows (same seeds, same seats, same ruleset) in
   PostgreSQL, each sent with `run_match` through Redis to a real Celery worker started for the
   bench: ONE worker with `--concurrency=<workers>`, i.e. `--workers` prefork processes that
   each play one match at a time, as a production worker host runs it (deploy/systemd/
   grass-worker.service); two separate single-process workers would add a second consumer
   process but play no differently. The clock runs from the first enqueue to the last match's
   `finished` time, so it holds the broker, the claim, reading the bots from storage, storing
   the log and applying ratings. The worker is started (and answers a ping) before the clock.

`--rounds` repeats both, in alternating order (direct first, then pipeline first, ...), so a
load on the machine that rises or falls during the run weighs on both paths alike; the
overhead is computed over all rounds, `1 - pipeline rate / direct rate` (goal: under 20%).
Both paths play in the OS sandbox with the same per-seat bot seeds, so they play the same games
move for move; the report says how many results agree.

Safety: the database's name must contain "bench" (the bench migrates it and fills it with
matches; it is created if missing) and must be PostgreSQL. The broker is `--broker`, by default
GRASS_BENCH_BROKER_URL or `redis://127.0.0.1:6379/12` (never CELERY_BROKER_URL, which may be a
live ladder's), and the matches go to a queue of the bench's own (`grass-bench-<pid>`) that
only the bench's worker reads, so even a shared Redis loses no task to the bench and gives it
none; the queue is removed at the end. The worker runs with DEBUG off (a throw-away
SECRET_KEY if none is set) and is stopped (warm shutdown, then killed after 30 s) however the
bench ends.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections, transaction
from django.db.models import Max
from django.utils import timezone
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import bots.runner.match as runner_match
from bots.runner import sandbox
from bots.runner.botfiles import BadBot, BotSource, load_bot
from bots.runner.series import MatchSpec, SeriesConfig, plan, run_series
from engine.rules import RULESETS
from ladder.accounts.services import account_house_set
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload, bot_version_validate
from ladder.matches.models import Match, MatchSeat

BENCH_USER = "bench"
DEFAULT_BROKER = "redis://127.0.0.1:6379/12"
"""Redis database 12: not the development default (0), so the bench never meets a dev queue."""
GOAL_OVERHEAD_PCT = 20.0
WORKER_STOP_SECONDS = 30
ZIP_TIME = (2000, 1, 1, 0, 0, 0)
"""Fixed member times: the same bot zips to the same bytes, so its version is reused."""


@dataclass(frozen=True)
class Figures:
    """One path's throughput."""

    games: int
    seconds: float
    failed: int = 0

    @property
    def games_per_minute(self) -> float:
        return 60.0 * self.games / self.seconds if self.seconds > 0 else 0.0


def overhead_pct(direct: Figures, pipeline: Figures) -> float:
    """How much of the direct rate the pipeline loses, in percent (negative: it was faster)."""
    if direct.games_per_minute <= 0:
        raise ValueError("the direct path finished no games")
    return 100.0 * (1.0 - pipeline.games_per_minute / direct.games_per_minute)


def bench_database_check(database: dict[str, Any]) -> None:
    """Refuse any database but a PostgreSQL one named for benchmarks."""
    name = str(database.get("NAME") or "")
    if "bench" not in name.lower():
        raise CommandError(
            f"the bench fills its database with matches, and {name!r} does not look like a "
            "benchmark database: set DATABASE_URL to one whose name contains 'bench', e.g. "
            "postgres://postgres@127.0.0.1:5432/grass_bench_pipe"
        )
    if database.get("ENGINE") != "django.db.backends.postgresql":
        raise CommandError("the pipeline bench runs on PostgreSQL, as the ladder does")


def bench_database_create(database: dict[str, Any]) -> bool:
    """Create the bench database if the server lacks it; returns whether it did."""
    import psycopg
    from psycopg import sql

    name = str(database["NAME"])
    with psycopg.connect(
        host=database.get("HOST") or "127.0.0.1",
        port=int(database.get("PORT") or 5432),
        user=database.get("USER") or "postgres",
        password=database.get("PASSWORD") or None,
        dbname="postgres",
        connect_timeout=5,
        autocommit=True,
    ) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return True


def bot_upload_bytes(source: BotSource) -> tuple[str, bytes]:
    """A bot's files as an author uploads them: `bot.py` alone, else a zip of every file."""
    if set(source.files) == {"bot.py"}:
        return "bot.py", source.files["bot.py"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(source.files):
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), source.files[name])
    return "bot.zip", buffer.getvalue()


def bench_bot_names(entries: Sequence[str]) -> list[str]:
    """One ladder bot per entry (a bot never holds two seats): `random-1`, `random-2`, ..."""
    seen: dict[str, int] = {}
    names = []
    for entry in entries:
        base = Path(entry).stem if entry.endswith((".py", ".zip")) else Path(entry).name
        seen[base] = seen.get(base, 0) + 1
        names.append(f"{base}-{seen[base]}")
    return names


def bench_versions(
    sources: Sequence[BotSource], names: Sequence[str], *, log: Callable[[str], None] = print
) -> list[BotVersion]:
    """The bench user's bot versions for `sources`: uploaded and validated (a sandboxed game)
    through the ladder's services, or reused from an earlier run when the same file is stored."""
    import hashlib

    user, created = get_user_model().objects.get_or_create(username=BENCH_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    # The bench's ladder is the house's, as the site's examples are: each bot a seating circle
    # of its own, or the matchmaker (issue 33) never seats two of them at one table.
    account_house_set(user_id=user.pk)
    versions = []
    for source, name in zip(sources, names, strict=True):
        filename, data = bot_upload_bytes(source)
        bot = Bot.objects.filter(owner=user, name=name).first() or bot_create(owner=user, name=name)
        version = (
            BotVersion.objects.filter(
                bot=bot, status=BotVersion.Status.VALID, sha256=hashlib.sha256(data).hexdigest()
            )
            .order_by("-number")
            .first()
        )
        if version is not None and version.file.storage.exists(version.file.name):
            versions.append(version)
            continue
        version = bot_version_validate(
            version=bot_version_upload(bot=bot, filename=filename, data=data)
        )
        if version.status != BotVersion.Status.VALID:
            raise CommandError(f"{name} failed its validation game: {version.validation_error}")
        log(f"{name}: version {version.number} uploaded and validated")
        versions.append(version)
    return versions


def bench_matches_create(
    versions: Sequence[BotVersion],
    specs: Sequence[MatchSpec],
    *,
    ruleset: str,
    limits: dict[str, int],
) -> list[Match]:
    """Queued matches with the specs' seeds and seats (spec.order[seat] indexes `versions`).

    Not `match_create`: it seats bots in a random order on purpose, and the bench needs the
    series' seating so both paths play the same games. The rows are the ones it would write.
    """
    matches = []
    with transaction.atomic():
        for spec in specs:
            match = Match.objects.create(ruleset=ruleset, limits=limits, seed=spec.seed)
            MatchSeat.objects.bulk_create(
                MatchSeat(
                    match=match, seat=seat, bot_version=versions[bot], bot_id=versions[bot].bot_id
                )
                for seat, bot in enumerate(spec.order)
            )
            matches.append(match)
    return matches


def run_direct(
    config: SeriesConfig,
    specs: Sequence[MatchSpec],
    *,
    jobs: int,
    on_each: Callable[[], None] | None = None,
) -> tuple[Figures, dict[int, list[int]]]:
    """Play the specs as `grass match --jobs` does; the rate and each seed's final totals."""
    totals: dict[int, list[int]] = {}
    started = time.perf_counter()
    for spec, result in run_series(config, specs, jobs=jobs):
        totals[spec.seed] = list(result.result["totals"])
        if on_each:
            on_each()
    return Figures(games=len(totals), seconds=time.perf_counter() - started), totals


def bench_use_broker(app: Any, broker: str) -> None:
    """Point this process's Celery app at the bench's Redis. Celery reads `CELERY_BROKER_URL`
    from the environment before its configuration, so the variable is set too: otherwise a
    machine that sets it would have the bench enqueue onto the production broker."""
    os.environ["CELERY_BROKER_URL"] = broker
    app.conf["broker_url"] = broker


def bench_queue_delete(broker: str, queue: str) -> None:
    """Remove the bench's queue from Redis: its list and kombu's two binding sets for it (the
    names are kombu's Redis transport's), so runs leave nothing behind."""
    import redis

    client = redis.Redis.from_url(broker)
    try:
        client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    finally:
        client.close()


class BenchWorker:
    """The Celery worker the bench starts: one process group of its own, stopped on exit."""

    def __init__(self, *, broker: str, queue: str, concurrency: int, log_path: Path) -> None:
        self.name = f"bench-{os.getpid()}@%h"
        env = dict(os.environ)
        env.update(
            CELERY_BROKER_URL=broker,
            GRASS_SANDBOXED="true",
            # Production settings (no DEBUG query log); a key is needed only to start.
            DEBUG="false",
            SECRET_KEY=env.get("SECRET_KEY") or secrets.token_urlsafe(50),
        )
        self.log_path = log_path
        self._log = log_path.open("wb")
        argv = [
            sys.executable, "-m", "celery", "-A", "ladder.celery", "worker",
            "--pool=prefork", f"--concurrency={concurrency}", "--queues", queue,
            "--hostname", self.name, "--loglevel=WARNING",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            argv,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise CommandError(
                f"the Celery worker exited ({self.process.returncode}):\n{self.log_tail()}"
            )

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Warm shutdown (finish the running task, take no new one), then kill the group."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(WORKER_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()


class Command(BaseCommand):
    help = (
        "Games per minute through Redis, PostgreSQL and a Celery worker, against the same "
        "games played by `grass match --jobs` in the same run (needs a database named *bench*)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--games", type=int, default=40, help="games per path (40)")
        parser.add_argument("--seats", type=int, default=4, help="seats per game (4)")
        parser.add_argument(
            "--bots",
            default="random,random,greedy,greedy",
            help="comma-separated example names or paths; each is a ladder bot of its own",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=2,
            help="processes: `grass match --jobs` and the worker's --concurrency (2)",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=3,
            help="rounds of --games games on each path, in alternating order (3)",
        )
        parser.add_argument("--seed", type=int, default=0, help="the series' seed (0)")
        parser.add_argument("--ruleset", choices=sorted(RULESETS), default="modern")
        parser.add_argument("--max-hands", type=int, help="end each game after this many hands")
        parser.add_argument(
            "--broker",
            default=os.environ.get("GRASS_BENCH_BROKER_URL") or DEFAULT_BROKER,
            help=f"Redis for the bench (GRASS_BENCH_BROKER_URL, else {DEFAULT_BROKER})",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=300.0,
            help="give up when no match has finished for this long (s; 300)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        bench_database_check(database)
        entries = [b.strip() for b in options["bots"].split(",") if b.strip()]
        games, seats, workers = options["games"], options["seats"], options["workers"]
        if not 2 <= seats <= 6:
            raise CommandError("--seats must be between 2 and 6")
        if len(entries) < seats:
            raise CommandError(f"{len(entries)} bot(s) for {seats} seats")
        if min(games, workers, options["rounds"]) < 1:
            raise CommandError("--games, --workers and --rounds must be at least 1")
        if not settings.GRASS_SANDBOXED:
            raise CommandError("the bench compares sandboxed games: unset GRASS_SANDBOXED")
        try:
            sandbox.check()
            sources = [load_bot(entry) for entry in entries]
        except (sandbox.SandboxUnavailable, BadBot) as exc:
            raise CommandError(str(exc)) from None
        # Both paths must give each seat's bot the same seed, so the games repeat move for move:
        # one key for this process (the direct path's pool forks from it) and for the worker,
        # which reads it from the environment. The runner read its key when it was imported.
        if not os.environ.get("GRASS_BOT_SEED_KEY"):
            os.environ["GRASS_BOT_SEED_KEY"] = secrets.token_hex(32)
            runner_match._SEED_KEY = os.environ["GRASS_BOT_SEED_KEY"].encode()

        console = Console() if sys.stdout.isatty() else Console(width=120)
        if bench_database_create(database):
            console.print(f"created database {database['NAME']}")
        call_command("migrate", interactive=False, verbosity=0)
        names = bench_bot_names(entries)
        versions = bench_versions(sources, names, log=console.print)

        limits = {"max_hands": options["max_hands"]} if options["max_hands"] else {}
        specs = plan(len(entries), seats, games, options["seed"])
        config = SeriesConfig(
            bots=tuple(sources),
            players=seats,
            ruleset=options["ruleset"],
            limits=tuple(limits.items()),
            sandboxed=True,
        )
        from ladder.celery import app

        # This process only enqueues: it talks to the bench's Redis, never the configured one.
        bench_use_broker(app, options["broker"])
        queue = f"grass-bench-{os.getpid()}"
        worker = BenchWorker(
            broker=options["broker"],
            queue=queue,
            concurrency=workers,
            log_path=Path(tempfile.gettempdir()) / f"{queue}-worker.log",
        )
        rounds: list[tuple[Figures, Figures]] = []
        same, reasons, done = 0, [], True
        try:
            self._wait_ready(app, worker)
            for number in range(options["rounds"]):
                # Direct, pipeline, then pipeline, direct, ...: a load on the machine that rises
                # or falls during the run weighs on both paths alike.
                first_direct = number % 2 == 0
                if first_direct:
                    direct, direct_totals = self._direct(config, specs, workers, console)
                pipeline, pipeline_totals, why, done = self._pipeline(
                    app,
                    worker,
                    queue,
                    versions,
                    specs,
                    options=options,
                    limits=limits,
                    console=console,
                )
                if not first_direct:
                    direct, direct_totals = self._direct(config, specs, workers, console)
                rounds.append((direct, pipeline))
                reasons += why
                same += sum(1 for seed, t in pipeline_totals.items() if direct_totals[seed] == t)
                if not done:
                    break
        finally:
            worker.stop()
            bench_queue_delete(options["broker"], queue)
        if done:
            worker.log_path.unlink(missing_ok=True)

        direct = Figures(
            games=sum(d.games for d, _ in rounds), seconds=sum(d.seconds for d, _ in rounds)
        )
        pipeline = Figures(
            games=sum(p.games for _, p in rounds),
            seconds=sum(p.seconds for _, p in rounds),
            failed=sum(p.failed for _, p in rounds),
        )
        report = {
            "games": games,
            "rounds": len(rounds),
            "seats": seats,
            "bots": entries,
            "workers": workers,
            "ruleset": options["ruleset"],
            "max_hands": options["max_hands"],
            "direct_seconds": round(direct.seconds, 3),
            "direct_games_per_min": round(direct.games_per_minute, 2),
            "pipeline_seconds": round(pipeline.seconds, 3),
            "pipeline_games_per_min": round(pipeline.games_per_minute, 2),
            "pipeline_failed": pipeline.failed,
            "overhead_pct": round(overhead_pct(direct, pipeline), 2),
            "round_overheads_pct": [round(overhead_pct(d, p), 2) for d, p in rounds],
            # A load spike from another process spoils one round; the median shrugs it off.
            "median_round_overhead_pct": round(
                statistics.median(overhead_pct(d, p) for d, p in rounds), 2
            ),
            "goal_pct": GOAL_OVERHEAD_PCT,
            "same_results": same,
        }
        self._print(console, report, rounds, (direct, pipeline), reasons)
        self.stdout.write(json.dumps(report))

    @staticmethod
    def _direct(
        config: SeriesConfig, specs: list[MatchSpec], workers: int, console: Console
    ) -> tuple[Figures, dict[int, list[int]]]:
        # The pool forks from this process: no database connection may be shared with it.
        connections.close_all()
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task(f"grass match --jobs {workers}", total=len(specs))
            return run_direct(config, specs, jobs=workers, on_each=lambda: progress.advance(bar))

    def _pipeline(
        self,
        app: Any,
        worker: BenchWorker,
        queue: str,
        versions: list[BotVersion],
        specs: list[MatchSpec],
        *,
        options: dict[str, Any],
        limits: dict[str, int],
        console: Console,
    ) -> tuple[Figures, dict[int, list[int]], list[str], bool]:
        """One round through the worker: the rate, each seed's totals, failures, and whether
        every match ended (False: none finished for --timeout seconds)."""
        from ladder.matches.tasks import run_match

        matches = bench_matches_create(versions, specs, ruleset=options["ruleset"], limits=limits)
        ids = [m.pk for m in matches]
        started = timezone.now()
        for match_id in ids:
            run_match.apply_async((match_id,), queue=queue)
        done = self._wait_done(ids, worker, console=console, timeout=options["timeout"])
        rows = Match.objects.filter(pk__in=ids)
        last: datetime | None = rows.aggregate(last=Max("finished"))["last"]
        seconds = (last - started).total_seconds() if last else 0.0
        finished = rows.filter(status=Match.Status.FINISHED)
        totals = {
            seed: result["totals"]
            for seed, result in finished.values_list("seed", "result")
            if result is not None  # always set on a finished match
        }
        reasons = list(
            rows.filter(status=Match.Status.FAILED).values_list("failure_reason", flat=True)
        )
        if not done:
            reasons.append(
                f"no match finished for {options['timeout']:.0f} s; worker log "
                f"{worker.log_path} ends:\n{worker.log_tail()}"
            )
        return (
            Figures(games=len(totals), seconds=seconds, failed=len(ids) - len(totals)),
            totals,
            reasons,
            done,
        )

    @staticmethod
    def _wait_ready(app: Any, worker: BenchWorker, timeout: float = 60.0) -> None:
        """Until the worker answers a ping (it has connected and its pool is up)."""
        hostname = worker.name.replace("%h", socket.gethostname())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            worker.check_alive()
            if app.control.ping(destination=[hostname], timeout=0.5):
                return
        raise CommandError(f"the Celery worker did not answer in {timeout:.0f} s")

    @staticmethod
    def _wait_done(
        ids: list[int], worker: BenchWorker, *, console: Console, timeout: float
    ) -> bool:
        """Until every match has finished or failed (True), or none has for `timeout` s."""
        over = (Match.Status.FINISHED, Match.Status.FAILED)
        count, progressed = 0, time.monotonic()
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task("pipeline (Redis, PostgreSQL, Celery)", total=len(ids))
            while time.monotonic() - progressed < timeout:
                now = Match.objects.filter(pk__in=ids, status__in=over).count()
                if now > count:
                    count, progressed = now, time.monotonic()
                    progress.update(bar, completed=count)
                if count == len(ids):
                    return True
                worker.check_alive()
                time.sleep(0.2)
        return False

    @staticmethod
    def _print(
        console: Console,
        report: dict[str, Any],
        rounds: list[tuple[Figures, Figures]],
        totals: tuple[Figures, Figures],
        reasons: list[str],
    ) -> None:
        table = Table(
            title=f"{report['games']} games x {report['rounds']} round(s), {report['seats']} "
            f"seats ({', '.join(report['bots'])}), {report['workers']} processes, sandboxed"
        )
        for column in ("round", "path", "games", "failed", "seconds", "games/min"):
            table.add_column(column, justify="right")
        direct_label = f"grass match --jobs {report['workers']}"
        pipeline_label = "Redis + PostgreSQL + Celery worker"
        rows = [(str(n), pair) for n, pair in enumerate(rounds, 1)]
        if len(rounds) > 1:
            rows.append(("all", totals))
        for number, (direct, pipeline) in rows:
            for label, figures in ((direct_label, direct), (pipeline_label, pipeline)):
                table.add_row(
                    number,
                    label,
                    str(figures.games),
                    str(figures.failed),
                    f"{figures.seconds:.1f}",
                    f"{figures.games_per_minute:.1f}",
                )
        console.print(table)
        verdict = "met" if report["overhead_pct"] < report["goal_pct"] else "NOT met"
        per_round = ", ".join(f"{o:.1f}%" for o in report["round_overheads_pct"])
        console.print(
            f"platform overhead: {report['overhead_pct']:.1f}% of throughput over all rounds "
            f"(goal under {report['goal_pct']:.0f}%: {verdict}); rounds: {per_round}, median "
            f"{report['median_round_overhead_pct']:.1f}%; same results in both paths: "
            f"{report['same_results']}/{report['games'] * report['rounds']}"
        )
        for reason in reasons[:5]:
            console.print(f"[red]failed:[/red] {reason}")
