"""`manage.py bench_leaderboard`: leaderboard latency on a big ladder, measured with wrk.

    DEBUG=true DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_lb \\
        .venv/bin/python manage.py bench_leaderboard [--bots 10000] [--matches 1000000] \\
        [--seats 4] [--duration 20] [--connections 8] [--threads 2] [--workers 3] [--keep]

(DEBUG=true only spares the command a SECRET_KEY; the gunicorn it starts runs with DEBUG off.)

1. Refuses any database but a dedicated one: PostgreSQL, its name containing "bench" (the
   command empties it). Creates it if it does not exist, then runs `migrate`.
2. Loads the ladder with COPY (`bench.leaderboard.load_bench_data`): users, bots, a valid
   version each, `--matches` finished matches of `--seats` seats, a rating change per seat, the
   ratings they lead to; then VACUUM ANALYZE. With `--keep` tables whose counts already match
   are reused, and the data is kept afterwards; without it the tables are emptied before and
   after the run.
3. Prints EXPLAIN ANALYZE of the leaderboard's first and last page queries.
4. Starts gunicorn (`--workers` sync workers, DEBUG off) on a free loopback port, warms each
   target up for 2 s, then runs `wrk --latency` for `--duration` seconds on each target: the
   API's first page, its last page, and the HTML leaderboard's first page. Prints a table and
   one JSON line (`{"bench": "leaderboard", ...}`), then stops gunicorn.

Workers (default 3): a request is about 3 ms of Python CPU plus two or three short PostgreSQL
round trips, and PostgreSQL and wrk run on the same 2 cores. Two workers leave a core idle
whenever one waits on the database; three (cores + 1) keep both busy; more only add context
switches and memory, and queue the same work in the machine instead of the listen backlog.
`--workers` is there to check that on a quiet machine.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.leaderboard import (
    BenchSize,
    WrkResult,
    bench_counts,
    explain_leaderboard,
    load_bench_data,
    parse_wrk,
    vacuum_analyze,
)

API_PAGE_SIZE = 50
WARM_UP_SECONDS = 2


def check_bench_database() -> dict[str, Any]:
    """The default database's settings, if it is a dedicated bench database; else CommandError."""
    db = settings.DATABASES["default"]
    name = str(db.get("NAME") or "")
    if db["ENGINE"] != "django.db.backends.postgresql" or "bench" not in name:
        raise CommandError(
            "bench_leaderboard empties and reloads its database, so it runs only on a dedicated "
            "PostgreSQL database whose name contains 'bench', e.g. "
            "DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_lb "
            f"(this one: {db['ENGINE'].rsplit('.', 1)[-1]} {name!r})"
        )
    return db


def create_database(db: dict[str, Any]) -> bool:
    """CREATE DATABASE if it does not exist yet; True if it was created."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        dbname="postgres",
        autocommit=True,
        host=db.get("HOST") or "127.0.0.1",
        port=int(db.get("PORT") or 5432),
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
    ) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]
        ).fetchone()
        if exists:
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """gunicorn serving the site on 127.0.0.1:`port` against the current database."""

    def __init__(self, *, workers: int, log: Path) -> None:
        self.port = free_port()
        self.log = log
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            "DATABASE_URL": os.environ["DATABASE_URL"],
            "DEBUG": "false",
            "SECRET_KEY": secrets.token_urlsafe(48),
            "ALLOWED_HOSTS": "127.0.0.1",
        }
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.process = subprocess.Popen(
            [
                str(gunicorn) if gunicorn.exists() else "gunicorn",
                "ladder.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--worker-class",
                "sync",
                "--error-logfile",
                str(log),
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait(self, path: str, timeout: float = 60.0) -> bytes:
        """Wait until `path` answers 200; its body."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise CommandError(f"gunicorn exited ({self.process.returncode}):\n{self._log()}")
            try:
                with urllib.request.urlopen(self.url(path), timeout=10) as response:
                    return bytes(response.read())
            # A read that times out (the first page of a worker still starting, on a loaded
            # machine) is asked again until the deadline, like a refused connection.
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if isinstance(exc, urllib.error.HTTPError) or time.monotonic() > deadline:
                    raise CommandError(f"{path} does not answer: {exc}\n{self._log()}") from None
                time.sleep(0.2)

    def _log(self) -> str:
        try:
            return self.log.read_text()[-3000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_wrk(url: str, *, threads: int, connections: int, seconds: float) -> WrkResult:
    wrk = shutil.which("wrk")
    if wrk is None:
        raise CommandError("wrk is not installed (apt-get install wrk)")
    command = [wrk, f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--latency", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    if done.returncode != 0:
        raise CommandError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    return parse_wrk(done.stdout)


class Command(BaseCommand):
    help = "Leaderboard latency (p50/p90/p99, requests/s) with wrk on a dedicated bench database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bots", type=int, default=10_000)
        parser.add_argument("--matches", type=int, default=1_000_000)
        parser.add_argument("--seats", type=int, default=4)
        parser.add_argument("--duration", type=float, default=20.0, help="seconds per target")
        parser.add_argument("--connections", type=int, default=8)
        parser.add_argument("--threads", type=int, default=2)
        parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--keep",
            action="store_true",
            help="reuse loaded data whose counts match, and keep the data after the run",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        db = check_bench_database()
        try:
            size = BenchSize(options["bots"], options["matches"], options["seats"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        # The stubs type OutputWrapper's forwarded attributes as callables; `_out` is its stream.
        console = Console(file=self.stdout._out)  # type: ignore[arg-type]
        if create_database(db):
            console.print(f"created database {db['NAME']}")
        call_command("migrate", interactive=False, verbosity=0)

        load_seconds: float | None = None
        counts = bench_counts()
        if options["keep"] and counts == size.counts():
            console.print(f"reusing the loaded data: {_counts_text(counts)}")
        else:
            if any(counts.values()):
                console.print(f"emptying the bench database ({_counts_text(counts)})")
                call_command("flush", interactive=False, verbosity=0)
            load_seconds = self._load(console, size, options["seed"])
        for offset, label in ((0, "first"), (_last_offset(size.bots, API_PAGE_SIZE), "last")):
            console.print(f"[bold]EXPLAIN ANALYZE, leaderboard {label} page[/bold]")
            console.print(explain_leaderboard(offset=offset, limit=API_PAGE_SIZE), markup=False)
        connection.close()  # gunicorn's workers open their own

        try:
            results = self._measure(console, size, options)
        finally:
            if not options["keep"]:
                call_command("flush", interactive=False, verbosity=0)
                console.print("emptied the bench database (--keep keeps the data)")
        self._report(console, size, options, load_seconds, results)

    def _load(self, console: Console, size: BenchSize, seed: int) -> float:
        started = time.perf_counter()
        with Progress(
            TextColumn("{task.description:>15}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            tasks = {
                table: progress.add_task(table, total=rows) for table, rows in size.rows().items()
            }
            tasks["vacuum analyze"] = progress.add_task("vacuum analyze", total=1)
            load_bench_data(
                size, seed=seed, progress=lambda table, rows: progress.advance(tasks[table], rows)
            )
            vacuum_analyze()
            progress.advance(tasks["vacuum analyze"])
        seconds = time.perf_counter() - started
        console.print(f"loaded in {seconds:.1f} s: {_counts_text(bench_counts())}")
        return seconds

    def _measure(
        self, console: Console, size: BenchSize, options: dict[str, Any]
    ) -> dict[str, WrkResult]:
        last_page = max(1, math.ceil(size.bots / API_PAGE_SIZE))
        targets = {"api, page 1": "/api/leaderboard/?ruleset=modern"}
        if last_page > 1:
            targets[f"api, page {last_page}"] = f"/api/leaderboard/?ruleset=modern&page={last_page}"
        targets["html, page 1"] = "/?ruleset=modern"
        with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as tmp:
            server = Server(workers=options["workers"], log=Path(tmp) / "gunicorn.log")
            try:
                body = json.loads(server.wait(targets["api, page 1"]))
                if body["count"] == 0:
                    raise CommandError("the leaderboard is empty")
                console.print(
                    f"gunicorn: {options['workers']} sync workers on {server.url('/')}; "
                    f"leaderboard has {body['count']} bots"
                )
                results = {}
                for name, path in targets.items():
                    wrk = {"threads": options["threads"], "connections": options["connections"]}
                    run_wrk(server.url(path), seconds=WARM_UP_SECONDS, **wrk)
                    console.print(f"wrk {options['duration']:g} s: {name} ({path})")
                    results[name] = run_wrk(server.url(path), seconds=options["duration"], **wrk)
            finally:
                server.stop()
        return results

    def _report(
        self,
        console: Console,
        size: BenchSize,
        options: dict[str, Any],
        load_seconds: float | None,
        results: dict[str, WrkResult],
    ) -> None:
        table = Table(
            title=(
                f"Leaderboard, {size.bots:,} bots, {size.matches:,} matches of {size.seats}; "
                f"wrk -t{options['threads']} -c{options['connections']} "
                f"-d{options['duration']:g}s, {options['workers']} gunicorn workers"
            )
        )
        for column in ("target", "p50 ms", "p90 ms", "p99 ms", "requests/s", "errors"):
            table.add_column(column, justify="left" if column == "target" else "right")
        for name, result in results.items():
            table.add_row(
                name,
                f"{result.p50_ms:.2f}",
                f"{result.p90_ms:.2f}",
                f"{result.p99_ms:.2f}",
                f"{result.requests_per_s:,.0f}",
                str(result.errors),
            )
        console.print(table)
        line = {
            "bench": "leaderboard",
            "bots": size.bots,
            "matches": size.matches,
            "seats": size.seats,
            "load_seconds": None if load_seconds is None else round(load_seconds, 1),
            "workers": options["workers"],
            "wrk": {
                "threads": options["threads"],
                "connections": options["connections"],
                "seconds": options["duration"],
            },
            "results": {name: asdict(result) for name, result in results.items()},
        }
        self.stdout.write(json.dumps(line))
        if any(result.errors for result in results.values()):
            raise CommandError("some requests failed (see the errors column)")


def _last_offset(rows: int, page_size: int) -> int:
    return max(0, (math.ceil(rows / page_size) - 1) * page_size)


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{count:,} {name}" for name, count in counts.items())
