"""manage.py bench_leaderboard: its loader, wrk's report, the database guard, and one tiny run.

No test here times anything: the figures are for the README, taken on a quiet machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from bench.leaderboard import BenchSize, bench_counts, load_bench_data, parse_wrk
from tests import redis_server

ROOT = Path(__file__).resolve().parents[3]

WRK_OUTPUT = """\
Running 20s test @ http://127.0.0.1:40123/api/leaderboard/?ruleset=modern
  2 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     9.81ms    4.02ms  61.20ms   81.00%
    Req/Sec   410.11     40.05   505.00     70.25%
  Latency Distribution
     50%    8.95ms
     75%   11.20ms
     90%   14.48ms
     99%    1.02s
  16359 requests in 20.01s, 25.10MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:    817.55
Transfer/sec:      1.25MB
"""


def test_wrk_figures_are_read_in_milliseconds() -> None:
    result = parse_wrk(WRK_OUTPUT)
    assert (result.p50_ms, result.p75_ms, result.p90_ms) == (8.95, 11.2, 14.48)
    assert result.p99_ms == pytest.approx(1020.0)
    assert result.requests == 16359 and result.seconds == pytest.approx(20.01)
    assert result.requests_per_s == 817.55
    assert result.errors == 7
    with pytest.raises(ValueError, match="--latency"):
        parse_wrk("Running 1s test @ http://127.0.0.1/\n")


def test_sizes_are_checked() -> None:
    assert BenchSize(bots=5, matches=3, seats=4).counts() == {
        "users": 3,
        "bots": 5,
        "versions": 5,
        "matches": 3,
        "seats": 12,
        "rating changes": 12,
    }
    for bad in ({"bots": 3, "matches": 1, "seats": 4}, {"bots": 9, "matches": 1, "seats": 7}):
        with pytest.raises(ValueError):
            BenchSize(**bad)


@pytest.mark.django_db
def test_the_loader_writes_a_consistent_ladder() -> None:
    from ladder.bots.models import Bot, BotVersion
    from ladder.matches.models import Match, MatchSeat
    from ladder.ratings.elo import recompute
    from ladder.ratings.models import BotRating, RatingChange
    from ladder.ratings.selectors import leaderboard
    from tests.ladder.conftest import rated_games

    size = BenchSize(bots=12, matches=150, seats=4)
    progress: Counter[str] = Counter()

    written = load_bench_data(size, progress=lambda table, rows: progress.update({table: rows}))

    assert bench_counts() == size.counts()
    assert progress == Counter(size.rows())
    assert written["rating changes"] == 600 and 0 < written["ratings"] <= 12
    assert set(Match.objects.values_list("status", flat=True)) == {Match.Status.FINISHED}
    assert set(BotVersion.objects.values_list("status", flat=True)) == {BotVersion.Status.VALID}
    version = BotVersion.objects.first()
    assert version is not None and version.file.read().startswith(b'"""The bench')
    # Every match seats 4 different bots with places 1-4, and rates exactly those seats.
    seats = {
        (s.match_id, s.bot_version.bot_id, s.place)
        for s in MatchSeat.objects.select_related("bot_version")
    }
    changes = set(RatingChange.objects.values_list("match_id", "bot_id", "place"))
    assert seats == changes and len(changes) == 600
    # The stored ratings are the Elo replay of the changes, and wins their first places.
    replay = recompute(rated_games(ruleset="modern")).ratings
    for rating in BotRating.objects.all():
        assert rating.mu == pytest.approx(replay[rating.bot_id].mu)
        assert rating.games == replay[rating.bot_id].games
        firsts = RatingChange.objects.filter(bot_id=rating.bot_id, place=1).count()
        assert rating.wins == firsts
    board = leaderboard(ruleset="modern")
    assert len(board) == written["ratings"] and board[0].rank == 1
    # Sequences moved past the loaded ids: the site can add rows.
    user = Bot.objects.get(pk=1).owner
    assert Bot.objects.create(owner=user, name="new").pk == 13


@pytest.mark.django_db
def test_the_command_refuses_a_database_not_named_bench() -> None:
    # The test database (test_grass_test...) holds no "bench".
    with pytest.raises(CommandError, match="contains 'bench'"):
        call_command("bench_leaderboard", "--bots", "4", "--matches", "1")


@pytest.mark.slow
def test_a_tiny_run_end_to_end(postgres_ready: None) -> None:
    """The whole command on its own fresh database: load, gunicorn, wrk, report (about 10 s)."""
    import shutil

    import psycopg
    from django.conf import settings

    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed")
    db = settings.DATABASES["default"]
    host, port = db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)
    user = db.get("USER") or "postgres"
    name = f"grass_bench_test_{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DEBUG": "true",
        "DATABASE_URL": f"postgres://{user}@{host}:{port}/{name}",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        # Not the developer's Redis on 127.0.0.1:6379: the run's own (tests/redis_server.py).
        **redis_server.site_env(),
    }
    command = [sys.executable, "manage.py", "bench_leaderboard", "--bots", "20"]
    command += ["--matches", "200", "--duration", "1", "--connections", "2", "--threads", "1"]
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["bots"] == 20 and report["matches"] == 200
        assert set(report["results"]) == {"api, page 1", "html, page 1"}
        for result in report["results"].values():
            assert result["requests"] > 0 and result["errors"] == 0
            assert 0 < result["p50_ms"] <= result["p90_ms"] <= result["p99_ms"]
        assert "EXPLAIN ANALYZE, leaderboard first page" in done.stdout
    finally:
        with psycopg.connect(host=host, port=port, user=user, dbname="postgres") as conn:
            conn.autocommit = True
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
