"""`manage.py bench_latency`: issue 35's goals, on a ladder whose every game slot is busy.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_bench_latency \\
    GRASS_BENCH_BROKER_URL=redis://127.0.0.1:6379/14 \\
        .venv/bin/python manage.py bench_latency      # --rounds 5

The bench starts the Procfile's layout as real Celery processes on a database and a Redis
database of their own: a match pool (`-Q matches`, --match-processes, 2), the `now` pool
(`-Q now,challenges`, --now-processes, 4: ladder/matches/lanes.py), a quick pool (`-Q celery`,
2) and beat (the matchmaker every 5 s), with `auto` capacities. The ladder is --ladder-bots
example bots of the house (strong, greedy, random, ...: strong's search keeps a core busy).

Each round waits until every match process plays a ladder game, then, one after another:

- a person's game (`person_game_create`, one hand against a random bot of the ladder): seconds
  from the request to the worker's claim (`Match.started`). The person never answers; their
  decisions time out after GRASS_PLAY_DECISION_SECONDS, which the bench sets to 2;
- a challenge (`challenge_create`, one hand, against a random bot): from the request to its
  match's claim;
- a new version (the greedy example, uploaded with `bot_version_submit`, what the upload API
  calls): from the upload to its verdict, and to the claim of its first rated game (the fast
  lane, seated by beat's matchmaker).

Each is waited for to finish before the next, so that rounds do not queue behind each other.

Reported: per kind the median, p95 (nearest rank: with fewer than 20 rounds, the slowest) and
max, against the goals (a person's game 5 s, a challenge 30 s, a first rated game 60 s), and
the ladder games running at each start; the machine's load average. The last line is JSON.

Safety: as bench_verdict (a database whose name contains "bench", an empty Redis database that
is emptied again at the end, every process stopped however the bench ends).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
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
from bench.management.commands.bench_verdict import (
    Process,
    _empty_redis,
    _ladder_plays,
    _wait,
)
from bots.runner import sandbox
from bots.runner.botfiles import BadBot, load_bot
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_submit, bot_version_upload
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.models import BotRating

DEFAULT_BROKER = "redis://127.0.0.1:6379/14"
"""Redis database 14: neither the development default (0) nor the other benches' (12, 13)."""
LADDER = ("strong", "greedy", "random")
GOALS = {"person": 5.0, "challenge": 30.0, "first_game": 60.0}
"""Issue 35's goals, p95 seconds from the request to the start."""
DECISION_SECONDS = 2
CHECKED = "this worker passed its start checks"
"""What a worker logs once its start checks passed (`ladder.matches.tasks`)."""


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summary(values: list[float], goal: float | None) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    figures: dict[str, Any] = {
        "n": len(values),
        "median_s": round(statistics.median(values), 2),
        "p95_s": round(p95(values), 2),
        "max_s": round(max(values), 2),
    }
    if goal is not None:
        figures["goal_s"] = goal
        figures["met"] = figures["p95_s"] <= goal
    return figures


def processes(*, match: int, now: int, quick: int, tables: int = 20) -> list[tuple[str, list[str]]]:
    """The Procfile's Celery processes: (name, arguments after `celery -A ladder.celery`)."""
    worker = ["worker", "--pool=prefork", "--loglevel=INFO", "--without-gossip"]
    host = ["worker", "--pool=threads", "--loglevel=INFO", "--without-gossip"]
    return [
        ("matches", [*worker, "-Q", "matches", f"--concurrency={match}", "-n", "matches@%h"]),
        ("now", [*worker, "-Q", "now,challenges", f"--concurrency={now}", "-n", "now@%h"]),
        ("tables", [*host, "-Q", "tables", f"--concurrency={tables}", "-n", "tables@%h"]),
        ("quick", [*worker, "-Q", "celery", f"--concurrency={quick}", "-n", "quick@%h"]),
        ("beat", ["beat", "--loglevel=INFO"]),
    ]


class Command(BaseCommand):
    help = (
        "Seconds from a request to the start of a person's game, a challenge and a new "
        "version's first rated game while every match slot plays a ladder game (needs a "
        "database named *bench* and an empty Redis database)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rounds", type=int, default=5, help="rounds (5)")
        parser.add_argument("--match-processes", type=int, default=2, help="match pool (2)")
        parser.add_argument("--now-processes", type=int, default=4, help="now pool (4)")
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
        if min(options["rounds"], options["match_processes"], options["now_processes"]) < 1:
            raise CommandError("--rounds and the pools' processes must be at least 1")
        try:
            sandbox.check()
            probe = load_bot("greedy").files["bot.py"]
            sources = [load_bot(LADDER[i % len(LADDER)]) for i in range(options["ladder_bots"])]
        except (sandbox.SandboxUnavailable, BadBot) as exc:
            raise CommandError(str(exc)) from None
        client = _empty_redis(options["broker"])
        if bench_database_create(database):
            self.stdout.write(f"created database {database['NAME']}")
        call_command("migrate", interactive=False, verbosity=0)
        names = [f"{source.name}-{n}" for n, source in enumerate(sources, 1)]
        ladder = bench_versions(sources, names, log=self.stdout.write)
        opponent = next(v.bot_id for v in ladder if v.bot.name.startswith("random"))
        from ladder.celery import app

        bench_use_broker(app, options["broker"])
        # Read by person_game_create in this process: the person's clock, stored on the game.
        settings.GRASS_PLAY_DECISION_SECONDS = DECISION_SECONDS
        load_before = os.getloadavg()
        try:
            figures = self._run(options, ladder=[v.bot_id for v in ladder], opponent=opponent,
                                probe=probe)  # fmt: skip
        finally:
            client.flushdb()
            client.close()
        report: dict[str, Any] = {
            "command": "manage.py bench_latency " + " ".join(sys.argv[2:]),
            "cores": len(os.sched_getaffinity(0)),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "match_processes": options["match_processes"],
            "now_processes": options["now_processes"],
            "ladder_bots": options["ladder_bots"],
            "person": summary(figures["person"], GOALS["person"]),
            "challenge": summary(figures["challenge"], GOALS["challenge"]),
            "first_game": summary(figures["first_game"], GOALS["first_game"]),
            "verdict": summary(figures["verdict"], None),
            "ladder_games_running_at_starts": figures["running"],
        }
        for kind in ("person", "challenge", "first_game", "verdict"):
            s = report[kind]
            goal = ""
            if "goal_s" in s:
                goal = f" (goal p95 {s['goal_s']} s: {'met' if s['met'] else 'NOT met'})"
            self.stdout.write(
                f"{kind:10}: median {s.get('median_s')} s, p95 {s.get('p95_s')} s, max "
                f"{s.get('max_s')} s over {s['n']}{goal}"
            )
        self.stdout.write(
            f"{report['cores']} cores, load average before {report['loadavg_before']}, after "
            f"{report['loadavg_after']}; ladder games running at each start: {figures['running']}"
        )
        self.stdout.write(json.dumps(report))

    def _run(
        self, options: dict[str, Any], *, ladder: list[int], opponent: int, probe: bytes
    ) -> dict[str, Any]:
        folder = Path(tempfile.mkdtemp(prefix="grass-bench-latency-"))
        env = {
            **os.environ,
            "CELERY_BROKER_URL": options["broker"],
            "GRASS_SANDBOXED": "true",
            "GRASS_MATCH_CAPACITY": "auto",
            "GRASS_NOW_CAPACITY": "auto",
            "DEBUG": "false",
            "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
            # The shared cache, with keys of this run's own, read by this process too: a
            # person's request here reads the workers' size the ticks keep, as the web does.
            "GRASS_CACHE_KEY_PREFIX": folder.name,
            "PYTHONUNBUFFERED": "1",
        }
        from django.core.cache import cache

        cache.key_prefix = folder.name
        # No worker runs yet: whatever is queued or running was left by an earlier run.
        Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).update(
            status=Match.Status.FAILED, attempts=99, failure_reason="bench: left by a stop"
        )
        asker, newcomer = _bench_bots(opponent_bot=opponent, data=probe)
        # An established ladder: its bots have been seated before (the fast lane is for the
        # newcomer's versions), and so has the challenger's bot.
        BotRating.objects.exclude(bot=newcomer).update(last_queued=timezone.now())
        figures: dict[str, Any] = {
            "person": [], "challenge": [], "first_game": [], "verdict": [], "running": [],
        }  # fmt: skip
        started: list[Process] = []
        timeout = options["timeout"]
        slots = options["match_processes"]
        try:
            for name, argv in processes(
                match=slots, now=options["now_processes"], quick=options["quick_processes"]
            ):
                if name == "beat":
                    argv = [*argv, f"--schedule={folder / 'beat-schedule'}"]
                started.append(Process(name, argv, env, folder))
            # The start checks (a proof of every language) run after "ready.": a match taken
            # before they pass waits for a proof of its own, as after any worker's start.
            _wait(lambda: all(CHECKED in p.text() for p in started if p.name != "beat"),
                  what="the workers' start checks", timeout=240, alive=started)  # fmt: skip
            _ladder_plays(ladder, True)

            def busy() -> bool:
                return _ladder_running() >= int(slots)

            def step(kind: str, start: Callable[[], Match], since: float | None = None) -> Match:
                """Ask for `kind` once every match slot is busy (`since`: when it was asked
                for, if before), time it to its claim, and wait for it to end."""
                if since is None:
                    _wait(busy, what="every match slot busy", timeout=timeout, alive=started)
                    since = time.time()
                match = start()
                _wait(lambda: _started(match.pk), what=f"the {kind} to start", timeout=timeout,
                      alive=started, pause=0.05)  # fmt: skip
                match.refresh_from_db()
                assert match.started is not None
                seconds = match.started.timestamp() - since
                figures[kind].append(seconds)
                figures["running"].append(_ladder_running())
                self.stdout.write(f"{kind}: started {seconds:.2f} s after it was asked for")
                _wait(lambda: _ended(match.pk), what=f"the {kind} to end", timeout=timeout,
                      alive=started)  # fmt: skip
                return match

            for number in range(options["rounds"]):
                self.stdout.write(f"round {number + 1}")
                step("person", partial_person(number, opponent))
                step("challenge", partial_challenge(asker, opponent))
                _wait(busy, what="every match slot busy", timeout=timeout, alive=started)
                asked = time.time()
                uploaded = bot_version_submit(bot=newcomer, filename="bot.py", data=probe).pk
                _wait(partial(_judged, uploaded), what="the verdict", timeout=timeout,
                      alive=started, pause=0.05)  # fmt: skip
                figures["verdict"].append(time.time() - asked)
                step("first_game", partial(_first_game, uploaded, timeout, started), asked)
        finally:
            for process in reversed(started):  # beat first
                process.stop()
            _ladder_plays(ladder, False)
            sandbox.sweep()
        shutil.rmtree(folder, ignore_errors=True)
        return figures


def partial_person(number: int, opponent: int) -> Callable[[], Match]:
    from ladder.live.services import person_game_create

    def start() -> Match:
        user, _ = get_user_model().objects.get_or_create(username=f"bench-person-{number}")
        return person_game_create(user=user, ruleset="modern", opponents=[opponent], seat=0,
                                  hands=1)  # fmt: skip

    return start


def partial_challenge(asker: Bot, opponent: int) -> Callable[[], Match]:
    from ladder.challenges.services import challenge_create
    from ladder.challenges.specs import Opponent

    def start() -> Match:
        challenge = challenge_create(
            requester=asker.owner, bot_id=asker.pk, opponents=[Opponent(opponent)], max_hands=1
        )
        # Sent by the dispatch task (on the quick pool) once the request commits.
        deadline = time.monotonic() + 120
        while (match_id := _challenge_match(challenge.pk)) is None:
            if time.monotonic() > deadline:
                raise CommandError("the challenge was not sent within 120 s")
            time.sleep(0.05)
        return Match.objects.get(pk=match_id)

    return start


def _challenge_match(challenge_id: int) -> int | None:
    from ladder.challenges.models import Challenge

    return Challenge.objects.filter(pk=challenge_id).values_list("match_id", flat=True).first()


def _first_game(version_id: int, timeout: float, alive: list[Process]) -> Match:
    """The version's first rated match, once beat's matchmaker has seated it."""
    found: list[int] = []

    def seated() -> bool:
        seat = MatchSeat.objects.filter(bot_version_id=version_id, match__rated=True).first()
        if seat is not None:
            found.append(seat.match_id)
        return seat is not None

    _wait(seated, what="the new version's first game", timeout=timeout, alive=alive, pause=0.05)
    return Match.objects.get(pk=found[0])


def _bench_bots(*, opponent_bot: int, data: bytes) -> tuple[Bot, Bot]:
    """The challenger's bot (a valid greedy, of an account of its own) and the newcomer's
    (whose new versions are the uploads), both made once and reused."""
    from ladder.bots.services import bot_version_validate

    def account(name: str) -> Any:
        user, created = get_user_model().objects.get_or_create(username=name)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        return user

    challenger = account("bench-challenger")
    asker = Bot.objects.filter(owner=challenger, name="asker").first()
    if asker is None:
        asker = bot_create(owner=challenger, name="asker")
        version = bot_version_validate(
            version=bot_version_upload(bot=asker, filename="bot.py", data=data)
        )
        if version.status != BotVersion.Status.VALID:
            raise CommandError(f"the challenger's bot is invalid: {version.validation_error}")
    owner = account("bench-newcomer")
    newcomer = Bot.objects.filter(owner=owner, name="newcomer").first() or bot_create(
        owner=owner, name="newcomer"
    )
    return asker, newcomer


def _ladder_running() -> int:
    return Match.objects.filter(status=Match.Status.RUNNING, lane=None).count()


def _started(match_id: int) -> bool:
    return Match.objects.filter(pk=match_id, started__isnull=False).exists()


def _ended(match_id: int) -> bool:
    return not Match.objects.filter(
        pk=match_id, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).exists()


def _judged(version_id: int) -> bool:
    status = BotVersion.objects.filter(pk=version_id).values_list("status", flat=True).get()
    if status == BotVersion.Status.INVALID:
        raise CommandError(f"version {version_id} was judged invalid")
    return bool(status != BotVersion.Status.PENDING)
