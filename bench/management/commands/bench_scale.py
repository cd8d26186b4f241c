"""`manage.py bench_scale`: the ladder at 100,000 bots (half of them off the ladder) and 1M, then
10M, matches.

    DEBUG=true DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_scale_bench \\
        .venv/bin/python manage.py bench_scale [--bots 100000] [--stages 1000000,10000000] \\
        [--requests 200] [--disabled 0.5] [--keep]

(DEBUG=true only spares the command a SECRET_KEY; the pages are measured with DEBUG off.)

1. Refuses any database but a dedicated PostgreSQL one whose name contains "bench"; creates
   it, migrates it and empties the ladder's tables (unless `--keep` finds the bots there).
2. Plays a few real four-seat games of the example bots (no sandbox): one of their logs is
   the file every generated match points at, and they are the games the recording is timed
   with, and whose files are weighed.
3. For each stage: grows the ladder with `bench.scale.grow` (generated inside PostgreSQL),
   then measures, on an otherwise idle site:
   - p50/p90/p99 of each page a visitor opens, `--requests` times each, one request at a
     time (one visitor) from this process to gunicorn (one sync worker, DEBUG off) on
     loopback, the whole answer read (the match page of a different random match each time);
   - the matchmaker's tick that queues 16 four-seat matches (wall and this process's CPU),
     rolled back after each;
   - recording one played match (seats, log, records, ratings) of the bot with 200,000
     games, rolled back after each;
   - storage per match: the database's bytes per match, and the files per match (the gzipped
     log; a precomputed replay, as the site stored before, for comparison).
4. Prints a table per stage and the ratios 10M / 1M, and one JSON line.

Disk: about 25 GB of PostgreSQL at 10M matches; check `df -h` first, and drop the database
after (`DROP DATABASE grass_scale_bench`) unless you mean to keep it.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import random
import statistics
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test.utils import override_settings

from bench.leaderboard import BOTS_PER_USER
from bench.management.commands.bench_leaderboard import (
    Server,
    check_bench_database,
    create_database,
)
from bench.scale import (
    BENCH_LOG,
    RARE_RULESET,
    STAR,
    Ladder,
    disable,
    execute,
    grow,
    load_bots,
    scalar,
    session_for_bulk,
)
from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match
from ladder.pagination import keyset_cursor

PAGE = 50
TICK_MATCHES = 16


def drop_database(db: dict[str, Any]) -> None:
    """DROP DATABASE (the bench's own: `check_bench_database` said so), if it exists."""
    import psycopg
    from psycopg import sql

    connection.close()
    with psycopg.connect(
        dbname="postgres",
        autocommit=True,
        host=db.get("HOST") or "127.0.0.1",
        port=int(db.get("PORT") or 5432),
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
    ) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(db["NAME"])))


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] * 1000, 2)

    return {"p50_ms": at(0.5), "p90_ms": at(0.9), "p99_ms": at(0.99)}


def _played_games(count: int) -> list[Any]:
    """`count` real four-seat games of the example bots (no sandbox), modern rules."""
    from bots.runner.botfiles import load_bot
    from bots.runner.match import play_match
    from engine.rules import Variants

    players = [load_bot(name) for name in ("random", "greedy", "random", "greedy")]
    return [
        play_match(players, ruleset="modern", variants=Variants(), seed=seed, sandboxed=False)
        for seed in range(1, count + 1)
    ]


class Command(BaseCommand):
    help = "Build a 100k-bot ladder of 1M then 10M matches and time what visitors open."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bots", type=int, default=100_000)
        parser.add_argument("--stages", default="1000000,10000000")
        parser.add_argument("--requests", type=int, default=200, help="per page and stage")
        parser.add_argument("--games", type=int, default=12, help="real games played")
        parser.add_argument("--keep", action="store_true", help="keep a ladder already there")
        parser.add_argument(
            "--disabled",
            type=float,
            default=0.5,
            help="share of the bots taken off the ladder (default half: issue 36's goal)",
        )

    def say(self, text: str) -> None:
        self.stderr.write(f"[{datetime.now(UTC):%H:%M:%S}] {text}")

    def handle(self, *args: Any, **options: Any) -> None:
        db = check_bench_database()
        if not options["keep"]:
            self.say(f"dropping and creating the database {db['NAME']}")
            drop_database(db)
        create_database(db)
        call_command("migrate", verbosity=0)
        stages = [int(n) for n in options["stages"].split(",")]
        if stages != sorted(stages) or stages[0] < 1:
            raise CommandError("--stages: increasing match counts, e.g. 1000000,10000000")
        bots = options["bots"]
        # One real game's log is the file every generated match points at. The games that
        # recording is timed with are played after the pages are measured, and dropped after:
        # a heap of their events would make this process's garbage collections, and so the
        # pages' tail latencies, longer than a web worker's.
        log = gzip.compress(_played_games(1)[0].log_text().encode(), mtime=0)
        if default_storage.exists(BENCH_LOG):
            default_storage.delete(BENCH_LOG)
        default_storage.save(BENCH_LOG, ContentFile(log))

        session_for_bulk()
        existing = Match.objects.count() if options["keep"] else 0
        if not options["keep"] or Bot.objects.count() != bots:
            if options["keep"]:
                raise CommandError("--keep: the database holds another ladder; run without it")
            load_bots(bots)
            off = disable(bots, options["disabled"])
            self.say(f"{off:,} of {bots:,} bots off the ladder")
            existing = 0
        ladder = Ladder(bots, existing)
        results: dict[int, dict[str, Any]] = {}
        build_seconds = 0.0
        for stage in stages:
            if stage > ladder.matches:
                self.say(f"growing to {stage:,} matches")
                started = time.monotonic()
                ladder = grow(ladder, to=stage, total=stages[-1], say=self.say)
                build_seconds += time.monotonic() - started
                self.say(f"  built in {time.monotonic() - started:.0f} s")
            execute("SET session_replication_role = DEFAULT")
            self.say(f"measuring at {stage:,} matches")
            results[stage] = self._measure(ladder, options["games"], options["requests"])
            results[stage]["build_seconds_so_far"] = round(build_seconds)
            self._table(stage, results[stage])
            session_for_bulk()
        self._ratios(results)
        self.stdout.write(
            json.dumps(
                {
                    "bench": "scale",
                    "bots": bots,
                    "load": os.getloadavg(),
                    "results": {str(k): v for k, v in results.items()},
                }
            )
        )

    # ---------------------------------------------------------------- measuring

    def _measure(self, ladder: Ladder, played: int, requests: int) -> dict[str, Any]:
        from ladder.ratings.selectors import leaderboard

        rated = len(leaderboard(ruleset="modern"))
        last = -(-rated // PAGE)
        newest = int(scalar("SELECT max(id) FROM matches_match"))
        star_newest = int(
            scalar("SELECT max(match_id) FROM matches_matchseat WHERE bot_id = %s", [STAR])
        )
        rng = random.Random(7)
        deep = keyset_cursor(position=newest // 2)
        star_deep = keyset_cursor(position=star_newest // 2)
        middle = scalar("SELECT created FROM matches_match WHERE id = %s", [newest // 2])
        before = urllib.parse.quote(middle.isoformat())
        bots_deep = keyset_cursor(position=ladder.bots // 2)
        pages: dict[str, Callable[[], str]] = {
            "home (leaderboard, page 1)": lambda: "/",
            f"home, last page ({last})": lambda: f"/?page={last}",
            "API leaderboard, page 1": lambda: "/api/leaderboard/?ruleset=modern",
            "API leaderboard, last page": lambda: f"/api/leaderboard/?ruleset=modern&page={last}",
            "bot page, 200k games": lambda: f"/bots/{STAR}/",
            "match page (random match)": lambda: f"/matches/{rng.randint(1, newest)}/",
            "API matches, first page": lambda: "/api/matches/",
            "API matches, deep page (cursor)": lambda: f"/api/matches/?cursor={deep}",
            "API matches of the 200k bot, first page": lambda: f"/api/matches/?bot={STAR}",
            "API matches of the 200k bot, deep page": lambda: (
                f"/api/matches/?bot={STAR}&cursor={star_deep}"
            ),
            "API matches ?before= (the middle)": lambda: f"/api/matches/?before={before}",
            f"API matches ?ruleset={RARE_RULESET} (rare)": lambda: (
                f"/api/matches/?ruleset={RARE_RULESET}"
            ),
            "API matches of the 200k bot, rare ruleset": lambda: (
                f"/api/matches/?bot={STAR}&ruleset={RARE_RULESET}"
            ),
            "API bots, first page": lambda: "/api/bots/",
            "API bots, deep page (cursor)": lambda: f"/api/bots/?cursor={bots_deep}",
        }
        figures: dict[str, Any] = {"pages": {}}
        with tempfile.TemporaryDirectory(prefix="grass-bench-scale-") as folder:
            server = Server(workers=1, log=Path(folder) / "gunicorn.log")
            try:
                server.wait("/api/leaderboard/")
                for name, url in pages.items():
                    # What beat's "leaderboards" entry does every 30 s (one target's requests
                    # take seconds): the board's count and anchors kept in the shared cache.
                    leaderboard(ruleset="modern").keep()
                    for _ in range(3):  # warm
                        self._get(server, url())
                    samples = []
                    for _ in range(requests):
                        started = time.perf_counter()
                        self._get(server, url())
                        samples.append(time.perf_counter() - started)
                    figures["pages"][name] = _percentiles(samples)
            finally:
                server.stop()
        with override_settings(DEBUG=False, ALLOWED_HOSTS=["*"]):
            figures["matchmaker_tick"] = self._tick()
            self.say(f"  playing {played} real games to record")
            games = _played_games(played)
            figures["record_match"] = self._record(games)
        figures["storage"] = self._storage(games, ladder)
        del games
        gc.collect()
        figures["load_after"] = os.getloadavg()[0]
        return figures

    @staticmethod
    def _get(server: Server, path: str) -> None:
        """One visitor's request, its whole answer read (a new connection each, as urllib)."""
        try:
            with urllib.request.urlopen(server.url(path), timeout=30) as response:
                response.read()
        except urllib.error.HTTPError as exc:
            raise CommandError(f"{path}: {exc.code} {exc.read()[:300]!r}") from None

    def _tick(self, runs: int = 10) -> dict[str, float]:
        from ladder.matchmaking.services import matchmaker_fill

        walls, cpus = [], []
        for run in range(runs):
            with transaction.atomic():
                started, cpu = time.perf_counter(), time.process_time()
                created = matchmaker_fill(
                    ruleset="modern", seats=4, capacity=TICK_MATCHES, rng=random.Random(run)
                )
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
                if len(created) != TICK_MATCHES:
                    raise CommandError(f"the tick queued {len(created)} matches")
                transaction.set_rollback(True)
        return {
            "matches": TICK_MATCHES,
            "wall_p50_ms": round(statistics.median(walls) * 1000, 1),
            "wall_max_ms": round(max(walls) * 1000, 1),
            "cpu_p50_ms": round(statistics.median(cpus) * 1000, 1),
            "cpu_max_ms": round(max(cpus) * 1000, 1),
        }

    def _record(self, games: list[Any]) -> dict[str, float]:
        from ladder.matches.claims import match_claim
        from ladder.matches.recording import _match_record
        from ladder.matches.selectors import match_seats
        from ladder.matches.services import match_create

        star = BotVersion.objects.get(bot_id=STAR)
        # Bots of three other owners: a table of one owner's bots is recorded unrated (a rated
        # table seats one bot per seating circle), with no rating to apply.
        other_owners = [STAR + BOTS_PER_USER * k for k in (1, 2, 3)]
        others = list(BotVersion.objects.filter(bot_id__in=other_owners).order_by("bot_id"))
        walls, cpus = [], []
        for played in games:
            with transaction.atomic():
                match = match_create(versions=[star, *others], shuffle=False)
                claim = match_claim(match_id=match.pk)
                if claim is None:
                    raise CommandError(f"match {match.pk} could not be claimed")
                seats = list(match_seats(match_id=match.pk))
                started, cpu = time.perf_counter(), time.process_time()
                recorded = _match_record(claim=claim, seats=seats, played=played)
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
                if recorded.status != Match.Status.FINISHED:
                    raise CommandError(f"recording failed: {recorded.failure_reason}")
                name = recorded.log.name
                transaction.set_rollback(True)
            default_storage.delete(name)
        return {
            "wall_p50_ms": round(statistics.median(walls) * 1000, 1),
            "wall_max_ms": round(max(walls) * 1000, 1),
            "cpu_p50_ms": round(statistics.median(cpus) * 1000, 1),
        }

    def _storage(self, games: list[Any], ladder: Ladder) -> dict[str, Any]:
        from engine.replay_frames import document
        from ladder.matches.files import replay_pack

        logs = [len(gzip.compress(g.log_text().encode(), mtime=0)) for g in games]
        replays = [len(replay_pack(document(g.events, None))) for g in games]
        database = int(
            scalar(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "WHERE c.relkind = 'r' AND c.relname IN ('matches_match', 'matches_matchseat', "
                "'ratings_ratingchange', 'matches_botopponentrecord', 'matches_botseatrecord')"
            )
        )
        return {
            "database_bytes_per_match": round(database / ladder.matches),
            "database_gb": round(database / 1e9, 2),
            "log_gz_bytes_mean": round(statistics.mean(logs)),
            "files_per_match_bytes": round(statistics.mean(logs)),
            "files_per_log": 1.0,
            "replay_gz_bytes_mean_if_stored": round(statistics.mean(replays)),
            "replay_to_log": round(statistics.mean(replays) / statistics.mean(logs), 2),
        }

    # ---------------------------------------------------------------- reporting

    def _table(self, stage: int, figures: dict[str, Any]) -> None:
        off = Bot.objects.filter(disabled__isnull=False).count()
        self.stdout.write(
            f"\n{stage:,} matches, {off:,} bots off the ladder, "
            f"{settings.DATABASES['default']['NAME']}"
        )
        self.stdout.write(f"{'target':<44} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9}")
        for name, row in figures["pages"].items():
            self.stdout.write(
                f"{name:<44} {row['p50_ms']:>9} {row['p90_ms']:>9} {row['p99_ms']:>9}"
            )
        self.stdout.write(f"matchmaker tick (16 matches): {figures['matchmaker_tick']}")
        self.stdout.write(f"record one match of the 200k bot: {figures['record_match']}")
        self.stdout.write(f"storage: {figures['storage']}")

    def _ratios(self, results: dict[int, dict[str, Any]]) -> None:
        if len(results) < 2:
            return
        small, big = min(results), max(results)
        self.stdout.write(
            f"\nratios {big:,} / {small:,} (pages: p50, p99; tick and recording: wall p50)"
        )
        for name in results[big]["pages"]:
            ratios = [
                results[big]["pages"][name][key] / results[small]["pages"][name][key]
                for key in ("p50_ms", "p99_ms")
            ]
            self.stdout.write(f"{name:<44} {ratios[0]:>6.2f} {ratios[1]:>6.2f}")
        for key in ("matchmaker_tick", "record_match"):
            a, b = results[small][key]["wall_p50_ms"], results[big][key]["wall_p50_ms"]
            self.stdout.write(f"{key:<44} {b / a:>6.2f}")
