"""`manage.py bench_verdict`: how long an upload waits for its verdict on an idle ladder, and on
one whose every match slot is busy.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_verdict \\
    GRASS_BENCH_BROKER_URL=redis://127.0.0.1:6379/13 \\
        .venv/bin/python manage.py bench_verdict      # --rounds 3 --uploads 2 --layout both

For each layout the bench starts real Celery processes on a database and a Redis database of
their own, as `make run` does (Procfile):

- `split` (what `make run` and deploy/systemd run): a match pool (`-Q matches`,
  --match-processes, 2) and a quick pool (`-Q celery`, --quick-processes, 2), and beat;
- `shared` (what `make run` ran before issue 25): one worker taking both queues with
  --match-processes, and beat.

Beat runs the site's own schedule (the matchmaker every 5 s, the sweeps), with `auto` match
capacity: two matches queued or running per match process. The ladder is --ladder-bots example
bots of the bench user (strong, greedy, random, ...: strong's search keeps a core busy), each
validated once and reused by later runs.

Each round has two phases. *Idle*: the ladder bots are disabled (the matchmaker queues
nothing), queued matches are dropped and the running ones finish. *Busy*: the ladder bots play,
and the bench waits until every match process plays a match. In each phase it uploads a
Python bot (the greedy example, a new version of a probe bot each time) through
`bot_version_submit`, what the upload API calls (store the file, enqueue the validation on
commit), and times it until the version is no longer pending (polled every 0.1 s). It also
reads how long the validation task itself ran (the worker's log) and how many matches were
running when the verdict came. The probe bot is disabled after each verdict, so the
matchmaker never seats it. Phases alternate (idle first, then busy first, ...), so a load on
the machine that rises or falls weighs on both.

Reported: per layout and phase the median, min and max seconds from upload to verdict and of
the validation task alone, and busy median / idle median (goal: 2.0 or less for `split`); the
machine's load average before and after. The last line is JSON.

Safety: the database's name must contain "bench" (created if missing, migrated, filled with
bots and matches); the broker is --broker (GRASS_BENCH_BROKER_URL, else Redis database 13,
never CELERY_BROKER_URL) and must be an empty Redis database, which the bench empties again at
the end. Every process it starts is stopped (warm shutdown, then killed) however it ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from bench.management.commands.bench_pipeline import (
    bench_database_check,
    bench_database_create,
    bench_use_broker,
    bench_versions,
)
from bots.runner import sandbox
from bots.runner.botfiles import BadBot, load_bot
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_submit
from ladder.matches.models import Match

DEFAULT_BROKER = "redis://127.0.0.1:6379/13"
"""Redis database 13: neither the development default (0) nor bench_pipeline's (12)."""
GOAL_RATIO = 2.0
LADDER = ("strong", "greedy", "random")
"""The example bots the ladder is made of, in turn (--ladder-bots of them)."""
PROBE_EXAMPLE = "greedy"
PROBE_USER = "bench-uploader"
STOP_SECONDS = 10
TASK_DONE = re.compile(
    r"Task ladder\.bots\.tasks\.validate_version\[[^\]]+\] succeeded in ([\d.]+)s"
)


@dataclass(frozen=True)
class Upload:
    """One upload's figures."""

    seconds: float
    """From the call that stores the upload to the verdict in the database."""
    task_seconds: float | None
    """How long the validation task ran on its worker (its log); the rest is waiting."""
    running: int
    """Matches running when the verdict came."""
    verdict: str


@dataclass
class Phase:
    uploads: list[Upload] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        seconds = [u.seconds for u in self.uploads]
        tasks = [u.task_seconds for u in self.uploads if u.task_seconds is not None]
        return {
            "uploads": len(seconds),
            "median_s": round(statistics.median(seconds), 2) if seconds else None,
            "min_s": round(min(seconds), 2) if seconds else None,
            "max_s": round(max(seconds), 2) if seconds else None,
            "task_median_s": round(statistics.median(tasks), 2) if tasks else None,
            "running_at_verdict": [u.running for u in self.uploads],
            "verdicts": sorted({u.verdict for u in self.uploads}),
        }


def ratio(idle: Phase, busy: Phase) -> float | None:
    """busy median / idle median (None without figures)."""
    if not idle.uploads or not busy.uploads:
        return None
    base = statistics.median(u.seconds for u in idle.uploads)
    return statistics.median(u.seconds for u in busy.uploads) / base if base > 0 else None


class Process:
    """A `celery` process of the bench: a process group of its own, its output in a file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], folder: Path) -> None:
        self.name = name
        self.log_path = folder / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "ladder.celery", *argv],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            tail = "\n".join(self.text().splitlines()[-30:])
            raise CommandError(f"{self.name} exited ({self.popen.returncode}):\n{tail}")

    def stop(self) -> None:
        """SIGTERM (a worker's warm shutdown), then SIGKILL to whatever of its group is left
        after STOP_SECONDS: a match in play is cut short (the bench sweeps its boxes)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(STOP_SECONDS)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        self._log.close()


def layout_processes(layout: str, *, match: int, quick: int) -> list[tuple[str, list[str]]]:
    """The Celery processes of a layout: (name, arguments after `celery -A ladder.celery`)."""
    worker = ["worker", "--pool=prefork", "--loglevel=INFO", "--without-gossip"]
    if layout == "split":
        workers = [
            ("matches", [*worker, "-Q", "matches", f"--concurrency={match}", "-n", "matches@%h"]),
            ("quick", [*worker, "-Q", "celery", f"--concurrency={quick}", "-n", "quick@%h"]),
        ]
    elif layout == "shared":
        workers = [("shared", [*worker, f"--concurrency={match}", "-n", "shared@%h"])]
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return [*workers, ("beat", ["beat", "--loglevel=INFO"])]


class Command(BaseCommand):
    help = (
        "Seconds from upload to verdict on an idle ladder and with every match slot busy, "
        "with the quick pool of its own and with one shared pool (needs a database named "
        "*bench* and an empty Redis database)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--layout", choices=["split", "shared", "both"], default="both")
        parser.add_argument("--rounds", type=int, default=3, help="idle+busy rounds (3)")
        parser.add_argument("--uploads", type=int, default=2, help="uploads per phase (2)")
        parser.add_argument("--match-processes", type=int, default=2, help="match pool (2)")
        parser.add_argument("--quick-processes", type=int, default=2, help="quick pool (2)")
        parser.add_argument("--ladder-bots", type=int, default=8, help="ladder bots (8)")
        parser.add_argument(
            "--broker",
            default=os.environ.get("GRASS_BENCH_BROKER_URL") or DEFAULT_BROKER,
            help=f"an empty Redis database (GRASS_BENCH_BROKER_URL, else {DEFAULT_BROKER})",
        )
        parser.add_argument(
            "--timeout", type=float, default=900.0, help="longest wait for any one step (900 s)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        database = settings.DATABASES["default"]
        bench_database_check(database)
        if settings.GRASS_VALIDATE_INLINE or not settings.GRASS_SANDBOXED:
            raise CommandError("the bench needs GRASS_VALIDATE_INLINE=false, GRASS_SANDBOXED=true")
        if min(options["rounds"], options["uploads"], options["match_processes"]) < 1:
            raise CommandError("--rounds, --uploads and --match-processes must be at least 1")
        try:
            sandbox.check()
            probe = load_bot(PROBE_EXAMPLE).files["bot.py"]
            sources = [load_bot(LADDER[i % len(LADDER)]) for i in range(options["ladder_bots"])]
        except (sandbox.SandboxUnavailable, BadBot) as exc:
            raise CommandError(str(exc)) from None
        broker = options["broker"]
        client = _empty_redis(broker)
        if bench_database_create(database):
            self.stdout.write(f"created database {database['NAME']}")
        call_command("migrate", interactive=False, verbosity=0)
        names = [f"{source.name}-{n}" for n, source in enumerate(sources, 1)]
        ladder = [v.bot_id for v in bench_versions(sources, names, log=self.stdout.write)]
        probe_bot = _probe_bot()
        from ladder.celery import app

        bench_use_broker(app, broker)
        layouts = ["split", "shared"] if options["layout"] == "both" else [options["layout"]]
        load_before = os.getloadavg()
        results: dict[str, dict[str, Phase]] = {}
        try:
            for layout in layouts:
                results[layout] = self._layout(
                    layout, options=options, ladder=ladder, probe=(probe_bot, probe)
                )
        finally:
            client.flushdb()
            client.close()
        load_after = os.getloadavg()
        report: dict[str, Any] = {
            "command": "manage.py bench_verdict " + " ".join(sys.argv[2:]),
            "cores": len(os.sched_getaffinity(0)),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
            "match_processes": options["match_processes"],
            "quick_processes": options["quick_processes"],
            "ladder_bots": options["ladder_bots"],
            "goal_ratio": GOAL_RATIO,
        }
        for layout, phases in results.items():
            report[layout] = {
                "idle": phases["idle"].summary(),
                "busy": phases["busy"].summary(),
                "busy_over_idle": _round(ratio(phases["idle"], phases["busy"])),
            }
        self._print(report)
        self.stdout.write(json.dumps(report))

    def _layout(
        self,
        layout: str,
        *,
        options: dict[str, Any],
        ladder: list[int],
        probe: tuple[Bot, bytes],
    ) -> dict[str, Phase]:
        folder = Path(tempfile.mkdtemp(prefix=f"grass-bench-verdict-{layout}-"))
        env = {
            **os.environ,
            "CELERY_BROKER_URL": options["broker"],
            "GRASS_SANDBOXED": "true",
            "GRASS_MATCH_CAPACITY": "auto",
            "DEBUG": "false",
            "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
            # The shared cache (GRASS_CACHE_URL, if set, else the site's default), with keys of
            # this run's own.
            "GRASS_CACHE_KEY_PREFIX": folder.name,
            "PYTHONUNBUFFERED": "1",
        }
        _ladder_plays(ladder, False)
        # No worker runs yet: whatever is queued or running was left by an earlier run or layout.
        Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).update(
            status=Match.Status.FAILED, attempts=99, failure_reason="bench: left by a stop"
        )
        started: list[Process] = []
        phases = {"idle": Phase(), "busy": Phase()}
        try:
            for name, argv in layout_processes(
                layout, match=options["match_processes"], quick=options["quick_processes"]
            ):
                if name == "beat":
                    argv = [*argv, f"--schedule={folder / 'beat-schedule'}"]
                started.append(Process(name, argv, env, folder))
            _wait(lambda: all("ready." in p.text() for p in started if p.name != "beat"),
                  what="the workers", timeout=120, alive=started)  # fmt: skip
            validator = started[1] if layout == "split" else started[0]
            for number in range(options["rounds"]):
                order = ["idle", "busy"] if number % 2 == 0 else ["busy", "idle"]
                for phase in order:
                    self._phase(
                        phase,
                        phases[phase],
                        options=options,
                        ladder=ladder,
                        probe=probe,
                        validator=validator,
                        alive=started,
                        label=f"{layout} round {number + 1} {phase}",
                    )
        finally:
            for process in reversed(started):  # beat first
                process.stop()
            _ladder_plays(ladder, False)
            sandbox.sweep()  # the boxes of the matches the stop cut short
        shutil.rmtree(folder, ignore_errors=True)  # kept when the layout failed: its logs
        return phases

    def _phase(
        self,
        phase: str,
        into: Phase,
        *,
        options: dict[str, Any],
        ladder: list[int],
        probe: tuple[Bot, bytes],
        validator: Process,
        alive: list[Process],
        label: str,
    ) -> None:
        timeout = options["timeout"]
        slots = options["match_processes"]
        if phase == "idle":
            _ladder_plays(ladder, False)
            _drain(timeout=timeout, alive=alive)
        else:
            _ladder_plays(ladder, True)
            _wait(lambda: _running() >= slots, what="every match slot busy", timeout=timeout,
                  alive=alive)  # fmt: skip
        bot, data = probe
        for _ in range(options["uploads"]):
            if phase == "busy":
                _wait(lambda: _running() >= slots, what="every match slot busy",
                      timeout=timeout, alive=alive)  # fmt: skip
            done_before = len(TASK_DONE.findall(validator.text()))
            began = time.perf_counter()
            version = bot_version_submit(bot=bot, filename="bot.py", data=data)
            _wait(partial(_judged, version.pk), what="the verdict", timeout=timeout,
                  alive=alive, pause=0.1)  # fmt: skip
            seconds = time.perf_counter() - began
            running = _running()
            Bot.objects.filter(pk=bot.pk).update(disabled=timezone.now())
            task = None
            try:
                _wait(partial(_logged, validator, done_before), what="the task's log line",
                      timeout=10, alive=alive)  # fmt: skip
                task = float(TASK_DONE.findall(validator.text())[done_before])
            except CommandError:
                pass
            upload = Upload(seconds, task, running, _status(version.pk))
            into.uploads.append(upload)
            self.stdout.write(
                f"{label}: verdict {upload.verdict} after {seconds:.2f} s (task "
                f"{task if task is not None else '?'} s), {running} matches running"
            )

    def _print(self, report: dict[str, Any]) -> None:
        self.stdout.write(
            f"{report['cores']} cores, load average before {report['loadavg_before']}, after "
            f"{report['loadavg_after']}; {report['match_processes']} match processes, "
            f"{report['quick_processes']} quick processes, {report['ladder_bots']} ladder bots"
        )
        for layout in ("split", "shared"):
            if layout not in report:
                continue
            figures = report[layout]
            for phase in ("idle", "busy"):
                s = figures[phase]
                self.stdout.write(
                    f"{layout:6} {phase}: upload to verdict median {s['median_s']} s (min "
                    f"{s['min_s']}, max {s['max_s']}; validation task {s['task_median_s']} s) "
                    f"over {s['uploads']} uploads; running at verdict {s['running_at_verdict']}"
                )
            met = figures["busy_over_idle"] is not None and figures["busy_over_idle"] <= GOAL_RATIO
            self.stdout.write(
                f"{layout:6} busy / idle: {figures['busy_over_idle']}"
                + (
                    f" (goal {GOAL_RATIO}: {'met' if met else 'NOT met'})"
                    if layout == "split"
                    else ""
                )
            )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _empty_redis(url: str) -> Any:
    import redis

    if url == getattr(settings, "CELERY_BROKER_URL", None) and "CELERY_BROKER_URL" in os.environ:
        raise CommandError("--broker is the site's CELERY_BROKER_URL: give the bench its own")
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        keys = client.dbsize()
    except redis.RedisError as exc:
        raise CommandError(f"no Redis at {url}: {exc}") from None
    if keys:
        raise CommandError(
            f"{url} holds {keys} keys: the bench needs an empty Redis database of its own "
            "(it empties it at the end)"
        )
    return client


def _probe_bot() -> Bot:
    user, created = get_user_model().objects.get_or_create(username=PROBE_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    bot = Bot.objects.filter(owner=user, name="probe").first() or bot_create(
        owner=user, name="probe"
    )
    Bot.objects.filter(pk=bot.pk).update(disabled=timezone.now())
    return bot


def _ladder_plays(bot_ids: list[int], plays: bool) -> None:
    Bot.objects.filter(pk__in=bot_ids).update(
        disabled=None if plays else timezone.now(), disabled_reason="" if plays else "bench idle"
    )


def _running() -> int:
    return Match.objects.filter(status=Match.Status.RUNNING).count()


def _judged(version_id: int) -> bool:
    return _status(version_id) != BotVersion.Status.PENDING


def _logged(validator: Process, before: int) -> bool:
    return len(TASK_DONE.findall(validator.text())) > before


def _status(version_id: int) -> str:
    return str(BotVersion.objects.filter(pk=version_id).values_list("status", flat=True).get())


def _drain(*, timeout: float, alive: list[Process] | None = None) -> None:
    """No match queued or running: queued ones are dropped (failed with no attempts left, so
    no sweep sends them again), running ones finish."""
    Match.objects.filter(status=Match.Status.QUEUED).update(
        status=Match.Status.FAILED, attempts=99, failure_reason="bench: dropped for an idle phase"
    )
    _wait(
        lambda: (
            not Match.objects.filter(
                status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
            ).exists()
        ),
        what="the running matches to finish",
        timeout=timeout,
        alive=alive or [],
    )


def _wait(
    check: Callable[[], object],
    *,
    what: str,
    timeout: float,
    alive: list[Process],
    pause: float = 0.5,
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        for process in alive:
            process.check_alive()
        if time.monotonic() > deadline:
            raise CommandError(f"waited {timeout:.0f} s for {what}")
        time.sleep(pause)
