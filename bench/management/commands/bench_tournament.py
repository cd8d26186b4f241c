"""`manage.py bench_tournament`: how long one round of a 64-entrant round robin takes with 1, 2
and 4 worker processes, and how long pairing and standings take for a 1,000-entrant Swiss.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_tournament \\
        .venv/bin/python manage.py bench_tournament --entrants 64 --workers 1,2,4

For each worker count: a real Celery worker with that many prefork processes is started on the
bench's own Redis database, then a round-robin tournament of `--entrants` bots is started; its
first round (`entrants / seats` tables, each a sandboxed game) runs through the same services,
tasks and worker as the ladder's. The figure is the round's wall time, from the round's creation
to the moment the worker's progress task closes it; then the tournament is cancelled (its next
round's queued games are dropped) and the worker stopped.

The bots are the example bots (greedy and random in turn), one ladder bot per entrant. Their
versions are marked valid without a validation game: validation is not what is measured.
The database's name must contain "bench" (it is migrated and filled); it is created if missing.
"""

from __future__ import annotations

import json
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from rich.console import Console
from rich.progress import Progress
from rich.table import Table as RichTable

from bench.management.commands.bench_pipeline import (
    DEFAULT_BROKER,
    BenchWorker,
    bench_database_check,
    bench_database_create,
    bench_queue_delete,
    bench_use_broker,
)
from bench.tournament import main as pairing_bench
from bots.runner.botfiles import load_bot
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.tournaments.models import Round, Tournament
from ladder.tournaments.services import (
    tournament_cancel,
    tournament_create,
    tournament_register,
    tournament_tick,
)

QUEUES = ("celery", "matches")
"""The site's queues (CELERY_TASK_QUEUES: games on `matches`, progress tasks on `celery`), on
the bench's own Redis database, which holds nothing else."""


def _entrant_bots(count: int) -> list[Bot]:
    user, _ = get_user_model().objects.get_or_create(username="bench-entrants")
    sources = [load_bot("greedy").files["bot.py"], load_bot("random").files["bot.py"]]
    bots = []
    for index in range(count):
        name = f"entrant-{index + 1:03d}"
        bot = Bot.objects.filter(owner=user, name=name).first()
        if bot is None:
            bot = bot_create(owner=user, name=name)
            version = bot_version_upload(bot=bot, filename="bot.py", data=sources[index % 2])
            BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        bots.append(bot)
    return bots


def _round_seconds(
    *, bots: list[Bot], seats: int, max_hands: int, workers: int, broker: str, progress: Any
) -> tuple[float, int]:
    organiser, _ = get_user_model().objects.get_or_create(
        username="bench-organiser", defaults={"is_staff": True}
    )
    now = timezone.now()
    t = tournament_create(
        organiser=organiser,
        name=f"bench {workers} workers",
        format="round_robin",
        seats=seats,
        limits={"max_hands": max_hands},
        registration_opens=now - timedelta(minutes=2),
        registration_closes=now - timedelta(minutes=1),
        starts_at=now - timedelta(seconds=30),
    )
    tournament_tick(tournament_id=t.pk, now=now - timedelta(seconds=90))  # registration opens
    t.refresh_from_db()
    for bot in bots:
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    for queue in QUEUES:
        bench_queue_delete(broker, queue)
    with tempfile.TemporaryDirectory(prefix="grass-bench-") as folder:
        worker = BenchWorker(
            broker=broker,
            queue=",".join(QUEUES),
            concurrency=workers,
            log_path=Path(folder) / "w.log",
        )
        try:
            time.sleep(3)  # the worker connects; its start-up is not part of the round
            worker.check_alive()
            tournament_tick(tournament_id=t.pk)  # close registration and start: round 1
            first = Round.objects.get(tournament=t, number=1)
            tables = first.tables.count()
            bar = progress.add_task(f"{workers} worker process(es)", total=tables)
            while True:
                worker.check_alive()
                first.refresh_from_db()
                done = first.tables.filter(result__isnull=False).count()
                progress.update(bar, completed=done)
                if first.finished is not None:
                    break
                time.sleep(0.2)
            seconds = (first.finished - first.started).total_seconds()
            tournament_cancel(tournament=Tournament.objects.get(pk=t.pk), user=organiser)
        finally:
            worker.stop()
            for queue in QUEUES:
                bench_queue_delete(broker, queue)
    return seconds, tables


class Command(BaseCommand):
    help = (
        "Round time of a round-robin tournament with 1, 2, 4 worker processes, and Swiss "
        "pairing/standings time for 1,000 entrants (needs a database named *bench*)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--entrants", type=int, default=64)
        parser.add_argument("--seats", type=int, default=4)
        parser.add_argument("--workers", default="1,2,4", help="worker process counts (1,2,4)")
        parser.add_argument("--max-hands", type=int, default=5, help="hands per game (5)")
        parser.add_argument("--broker", default=DEFAULT_BROKER)
        parser.add_argument(
            "--no-pairing", action="store_true", help="skip the 1,000-entrant Swiss pairing part"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        try:
            counts = [int(n) for n in str(options["workers"]).split(",")]
        except ValueError:
            raise CommandError("--workers takes counts separated by commas, e.g. 1,2,4") from None
        if not counts or min(counts) < 1:
            raise CommandError("--workers: every count must be at least 1")
        if options["entrants"] < options["seats"]:
            raise CommandError("--entrants must be at least --seats")
        bench_database_check(database)
        bench_database_create(database)
        call_command("migrate", interactive=False, verbosity=0)
        from ladder.celery import app

        # This process only enqueues: to the bench's Redis, never the configured broker.
        bench_use_broker(app, options["broker"])
        console = Console()
        if not options["no_pairing"]:
            console.print("[bold]Swiss pairing and standings, 1,000 entrants, 6 seats[/]")
            pairing_bench(["--entrants", "1000", "--seats", "6", "--rounds", "5"])
        bots = _entrant_bots(options["entrants"])
        figures = []
        with Progress(console=console) as progress:
            for workers in counts:
                seconds, tables = _round_seconds(
                    bots=bots,
                    seats=options["seats"],
                    max_hands=options["max_hands"],
                    workers=workers,
                    broker=options["broker"],
                    progress=progress,
                )
                figures.append({"workers": workers, "tables": tables, "seconds": seconds})
        base = figures[0]["seconds"]
        table = RichTable(
            title=f"Round 1 of a {options['entrants']}-entrant round robin, "
            f"{options['seats']} seats, {options['max_hands']} hands a game"
        )
        for column in ("worker processes", "games", "round seconds", "speed-up"):
            table.add_column(column, justify="right")
        for row in figures:
            row["speedup"] = round(base / row["seconds"], 2)
            table.add_row(
                str(row["workers"]),
                str(row["tables"]),
                f"{row['seconds']:.1f}",
                f"{row['speedup']:.2f}x",
            )
        console.print(table)
        print(json.dumps({"round_robin": figures}))
