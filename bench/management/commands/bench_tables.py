"""How many people's tables one table host holds, and what a table costs (issue 35, part 2).

    DEBUG=true DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_tables \\
        .venv/bin/python manage.py bench_tables --tables 200

The site as `make run` serves it, with its own broker and channel layer (two empty Redis
databases): the ASGI server (daphne, `runserver`) and one table host (`celery worker -Q tables
--pool=threads --concurrency=N`, as Procfile and deploy/systemd run it), every bot sandboxed.
`--tables` simulated people (bench/tables.py: the API and the socket with an API token, as
`grass table`) each start a game against `--bots` example bots (`random`: the bots' own
thinking is not what is measured), their starts spread over `--ramp` seconds, and play it,
thinking `--think` seconds (a range) before each answer.

Printed, as lines and one JSON object: the tables playing at once (at most and when measured),
the seconds from a person's answer to the next request of their seat (median, p95, max: issue
35's goal is 0.2 s p95 at 200 tables), the memory then (the table host's process, the boxes'
processes, the machine's available memory before and at the peak) and per table, the load
average, and every person whose game did not finish, with why. People think far faster here
than at a real table (120 s a decision allowed): the host's load is higher than it would be.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench.management.commands.bench_pipeline import (
    bench_database_check,
    bench_database_create,
    bench_versions,
)
from bench.management.commands.bench_verdict import Process, _empty_redis, _wait
from bench.tables import PersonRun, p95, play_person, process_memory, tree_memory
from bots.runner import sandbox
from bots.runner.botfiles import BadBot, load_bot
from ladder.matches.models import Match

DEFAULT_BROKER = "redis://127.0.0.1:6379/11"
DEFAULT_LAYER = "redis://127.0.0.1:6379/12"
"""Redis databases 11 and 12: neither the development defaults (0, 1) nor bench_latency's."""
GOAL_S = 0.2
"""Issue 35: every action of a person reaches the next request in under 200 ms, p95."""
CHECKED = "this worker passed its start checks"
PERSON = "bench-person-"


def table_host(tables: int) -> list[str]:
    """The Procfile's table host: arguments after `celery -A ladder.celery`."""
    return ["worker", "-Q", "tables", "--pool=threads", f"--concurrency={tables}",
            "--loglevel=INFO", "--without-gossip", "-n", "tables@%h"]  # fmt: skip


class Command(BaseCommand):
    help = (
        "People's tables on one table host: the time from a person's answer to their next "
        "request, and the memory a table costs (needs a database named *bench* and two empty "
        "Redis databases)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tables", type=int, default=200, help="people at once (200)")
        parser.add_argument("--bots", type=int, default=1, help="bots at each table (1)")
        parser.add_argument("--hands", type=int, default=1, help="hands a game (1)")
        parser.add_argument("--ramp", type=float, default=60.0, help="starts spread over (60 s)")
        parser.add_argument(
            "--think", type=float, nargs=2, default=(2.0, 6.0), metavar=("MIN", "MAX"),
            help="a person's seconds before each answer, at random in this range (2 6)",
        )  # fmt: skip
        parser.add_argument(
            "--broker",
            default=os.environ.get("GRASS_BENCH_BROKER_URL") or DEFAULT_BROKER,
            help=f"an empty Redis database ({DEFAULT_BROKER})",
        )
        parser.add_argument(
            "--layer",
            default=DEFAULT_LAYER,
            help=f"an empty Redis database for the channel layer ({DEFAULT_LAYER})",
        )
        parser.add_argument("--timeout", type=float, default=3600.0, help="longest game (3600 s)")

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        bench_database_check(database)
        if not settings.GRASS_SANDBOXED:
            raise CommandError("the bench needs GRASS_SANDBOXED=true: bots play in their boxes")
        tables, bots = options["tables"], options["bots"]
        if not 1 <= bots <= 5 or tables < 1:
            raise CommandError("--tables must be at least 1, --bots 1 to 5")
        try:
            sandbox.check()
            source = load_bot("random")
        except (sandbox.SandboxUnavailable, BadBot) as exc:
            raise CommandError(str(exc)) from None
        clients = [_empty_redis(options["broker"]), _empty_redis(options["layer"])]
        if bench_database_create(database):
            self.stdout.write(f"created database {database['NAME']}")
        call_command("migrate", interactive=False, verbosity=0)
        versions = bench_versions([source] * bots, [f"random-{n}" for n in range(1, bots + 1)],
                                  log=self.stdout.write)  # fmt: skip
        opponents = [v.bot_id for v in versions]
        tokens = _people(tables)
        # Whatever is queued or running was left by an earlier run's stop.
        Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).update(
            status=Match.Status.FAILED, attempts=99, failure_reason="bench: left by a stop"
        )
        # Each table holds pipes to its bots and connections to Redis, and each person a
        # socket: past a shell's 1,024 (the unit sets LimitNOFILE). Children inherit it.
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        load_before = os.getloadavg()
        available_before = _available()
        try:
            figures = self._run(options, opponents=opponents, tokens=tokens)
        finally:
            for client in clients:
                client.flushdb()
                client.close()
        runs: list[PersonRun] = figures.pop("runs")
        latencies = [x for run in runs for x in run.latencies]
        peak = figures["peak"]
        at_once = max(1, peak["tables"])
        host_rss = peak["host_rss"] - figures["host_rss_idle"]
        report: dict[str, Any] = {
            "command": "manage.py bench_tables " + " ".join(sys.argv[2:]),
            "cores": len(os.sched_getaffinity(0)),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_peak": peak["loadavg"],
            "tables": tables,
            "bots_per_table": bots,
            "tables_at_once_max": peak["tables"],
            "finished": sum(run.status == "finished" for run in runs),
            "requests": sum(run.requests for run in runs),
            # A person's request that timed out: a strike (the bench's people always answer
            # within seconds, so each is a request or an answer lost on its way).
            "person_strikes": _person_strikes([run.match_id for run in runs if run.match_id]),
            "sockets_opened_again": sum(run.reconnects for run in runs),
            "answer_to_next_request": _summary(latencies),
            "memory_at_peak_mib": {
                "table_host_process": _mib(peak["host_rss"]),
                "table_host_process_idle": _mib(figures["host_rss_idle"]),
                "boxes": _mib(peak["boxes_rss"]),
                "box_processes": peak["box_processes"],
                "machine_used": _mib(available_before - peak["available"]),
            },
            "memory_per_table_mib": {
                "table_host_process": round(host_rss / at_once / 2**20, 2),
                "boxes": round(peak["boxes_rss"] / at_once / 2**20, 2),
                "machine": round((available_before - peak["available"]) / at_once / 2**20, 2),
            },
            "not_finished": [
                {
                    "person": run.name,
                    "match": run.match_id,
                    "status": run.status,
                    "error": run.error,
                }
                for run in runs
                if run.status != "finished"
            ][:20],
        }
        answer = report["answer_to_next_request"]
        self.stdout.write(
            f"{report['finished']} of {tables} games finished; {peak['tables']} tables at once "
            f"at most; {report['requests']} requests; {report['person_strikes']} people's "
            f"requests timed out; {report['sockets_opened_again']} sockets opened again after "
            "a silence"
        )
        self.stdout.write(
            f"answer to next request: median {answer.get('median_s')} s, p95 "
            f"{answer.get('p95_s')} s, max {answer.get('max_s')} s over {answer['n']} (goal p95 "
            f"{GOAL_S} s: {'met' if answer.get('met') else 'NOT met'})"
        )
        memory, per = report["memory_at_peak_mib"], report["memory_per_table_mib"]
        self.stdout.write(
            f"memory at the peak: table host {memory['table_host_process']} MiB (idle "
            f"{memory['table_host_process_idle']}), boxes {memory['boxes']} MiB in "
            f"{memory['box_processes']} processes, machine {memory['machine_used']} MiB; per "
            f"table: host {per['table_host_process']}, boxes {per['boxes']}, machine "
            f"{per['machine']} MiB"
        )
        self.stdout.write(
            f"{report['cores']} cores, load average before {report['loadavg_before']}, at the "
            f"peak {report['loadavg_peak']}"
        )
        self.stdout.write(json.dumps(report))

    def _run(
        self, options: dict[str, Any], *, opponents: list[int], tokens: list[str]
    ) -> dict[str, Any]:
        folder = Path(tempfile.mkdtemp(prefix="grass-bench-tables-"))
        env = {
            **os.environ,
            "CELERY_BROKER_URL": options["broker"],
            "GRASS_CHANNEL_LAYER_URL": options["layer"],
            "GRASS_SANDBOXED": "true",
            "GRASS_TABLES_CAPACITY": "auto",
            "DEBUG": "true",  # runserver serves the pages' static files only then
            "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
            "GRASS_CACHE_KEY_PREFIX": folder.name,
            "PYTHONUNBUFFERED": "1",
        }
        port = _free_port()
        site = f"http://127.0.0.1:{port}"
        host = Process("tables", table_host(options["tables"]), env, folder)
        started: list[Process] = [host]
        server_log = (folder / "daphne.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=settings.BASE_DIR, env=env, stdout=server_log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        sampler_stop = threading.Event()
        try:
            _wait(lambda: CHECKED in host.text(), what="the table host's start checks",
                  timeout=300, alive=started)  # fmt: skip
            _wait(lambda: _listening(port), what="the ASGI server", timeout=120, alive=started)
            time.sleep(2.0)  # the host's first broadcast of its size reaches the web's cache
            idle = process_memory([host.popen.pid])
            peak: dict[str, Any] = {"tables": 0}

            def sample() -> None:
                while not sampler_stop.wait(1.0):
                    running = Match.objects.filter(status=Match.Status.RUNNING).count()
                    if running < peak["tables"]:
                        continue
                    boxes, box_processes = tree_memory(host.popen.pid)
                    peak.update(
                        tables=running,
                        host_rss=process_memory([host.popen.pid]),
                        boxes_rss=boxes,
                        box_processes=box_processes,
                        available=_available(),
                        loadavg=[round(x, 2) for x in os.getloadavg()],
                    )
                from django.db import connection

                connection.close()

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            low, high = options["think"]
            ramp = options["ramp"]

            async def one(index: int, token: str) -> PersonRun:
                await asyncio.sleep(ramp * index / len(tokens))
                rng = random.Random(index)
                return await play_person(
                    site=site, token=token, name=f"{PERSON}{index}", opponents=opponents,
                    hands=options["hands"], think=lambda: rng.uniform(low, high),
                    timeout=options["timeout"], seed=index,
                )  # fmt: skip

            async def everyone() -> list[PersonRun]:
                return await asyncio.gather(*(one(i, t) for i, t in enumerate(tokens)))

            self.stdout.write(f"{len(tokens)} people sit down over {ramp:.0f} s...")
            runs = asyncio.run(everyone())
            sampler_stop.set()
            sampler.join(10)
            peak.setdefault("host_rss", idle)
            peak.setdefault("boxes_rss", 0)
            peak.setdefault("box_processes", 0)
            peak.setdefault("available", _available())
            peak.setdefault("loadavg", [round(x, 2) for x in os.getloadavg()])
            return {"runs": runs, "peak": peak, "host_rss_idle": idle}
        finally:
            sampler_stop.set()
            host.stop()
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(10)
                except subprocess.TimeoutExpired:
                    server.kill()
            server_log.close()
            sandbox.sweep()
            shutil.rmtree(folder, ignore_errors=True)


def _people(count: int) -> list[str]:
    """API tokens of `count` bench accounts (made once, reused by later runs)."""
    from rest_framework.authtoken.models import Token

    tokens = []
    for index in range(count):
        user, created = get_user_model().objects.get_or_create(username=f"{PERSON}{index}")
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        tokens.append(Token.objects.get_or_create(user=user)[0].key)
    return tokens


def _person_strikes(match_ids: list[int]) -> int:
    from django.db.models import Sum

    from ladder.matches.models import MatchSeat

    seats = MatchSeat.objects.filter(match_id__in=match_ids, player__isnull=False)
    return int(seats.aggregate(total=Sum("strikes"))["total"] or 0)


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    worst = p95(ordered)
    return {
        "n": len(ordered),
        "median_s": round(ordered[len(ordered) // 2], 3),
        "p95_s": round(worst, 3),
        "max_s": round(ordered[-1], 3),
        "goal_s": GOAL_S,
        "met": worst <= GOAL_S,
    }


def _available() -> int:
    """MemAvailable, bytes."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _mib(value: int) -> float:
    return round(value / 2**20, 1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
