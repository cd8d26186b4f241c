"""The table host (issue 35, part 2): one Celery worker process with a pool of threads
(`-Q tables --pool=threads`, as Procfile and deploy/systemd/grass-worker-tables.service run
it) hosts many people's games at once. Simulated people (bench/tables.py: what `grass table`
does, without the terminal) start their games through `POST /api/games/` on a real ASGI server
(daphne) and play them over the games' sockets with their API tokens; the example bot plays
every other seat in its sandbox.

Every game is played to its end once and recorded once, all of them by the one process, all
of them at the same time, and while they play the host holds no database session per table
(PostgreSQL's sessions are the scarce part: a table holding one would cap the tables at
max_connections).

Host-wide group: its Celery worker sweeps the host's dead boxes as it starts (this folder's
conftest.py); Redis and the database are the run's own.
"""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from bench.tables import PersonRun, p95, play_person
from ladder.bots.models import Bot
from ladder.matches.models import Match
from tests.e2e.conftest import E2E_APPLICATION
from tests.ladder.live.conftest import (  # noqa: F401  (channel_layer: a fixture)
    channel_layer,
    layer_url,
    run_async,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready", "channel_layer"),
]

TABLES = 6
"""People playing at once: the host's threads, all of them taken."""
HOST_APPLICATION = "grass-e2e-tables"
"""The table host's database sessions' name (PGAPPNAME), counted apart from the server's."""


def _sessions(application: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [application],
        )
        return int(cursor.fetchone()[0])


@pytest.mark.timeout(900)
def test_one_process_hosts_many_peoples_tables_at_once_holding_no_session_each(
    asgi_server: str, celery: Any, valid_version: Any, django_user_model: Any
) -> None:
    examples = django_user_model.objects.create_user(username="examples")
    bot = valid_version("rob", "random").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples, name="random")
    host = celery(
        "worker",
        queues="tables",
        pool="threads",
        concurrency=TABLES,
        ready_timeout=240,
        GRASS_CHANNEL_LAYER_URL=layer_url(),
        PGAPPNAME=HOST_APPLICATION,
    )
    tokens = [
        Token.objects.create(user=django_user_model.objects.create_user(username=f"p{i}")).key
        for i in range(TABLES)
    ]
    started: list[int] = []
    seen = {"running": 0, "sessions": 0, "samples": 0}
    done = threading.Event()

    def watch() -> None:
        # While every table plays: how many run at once, and the host's sessions meanwhile.
        while not done.wait(0.2):
            running = Match.objects.filter(status=Match.Status.RUNNING).count()
            seen["running"] = max(seen["running"], running)
            if running == TABLES:
                seen["sessions"] = max(seen["sessions"], _sessions(HOST_APPLICATION))
                seen["samples"] += 1
        connection.close()

    async def everyone() -> list[PersonRun]:
        people = [
            play_person(
                site=asgi_server,
                token=token,
                name=f"p{i}",
                opponents=[bot.pk],
                hands=1,
                # Slow enough for the tables to overlap and for the watcher to see them all.
                think=lambda: random.uniform(0.3, 0.9),
                started=started.append,
                timeout=600,
                seed=i,
            )
            for i, token in enumerate(tokens)
        ]
        return await asyncio.gather(*people)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        # Not asyncio.run: Playwright's loop may run in this thread (a browser test before).
        runs = run_async(everyone(), seconds=700)
    finally:
        done.set()
        watcher.join(10)

    log = host.text()[-4000:]
    latencies = [x for run in runs for x in run.latencies]
    worst = p95(latencies) if latencies else None
    print(f"{TABLES} tables: {seen}; answer to next request, p95 of {len(latencies)}: {worst}")
    assert all(run.error is None and run.status == "finished" for run in runs), (runs, log)
    assert all(run.requests > 5 and run.latencies for run in runs), runs
    matches = list(Match.objects.filter(pk__in=started))
    assert len(matches) == TABLES
    for match in matches:
        # Played once, recorded once, unrated; by the one process of the table host.
        assert match.status == Match.Status.FINISHED and match.attempts == 1, match
        assert not match.rated and match.log
    assert len({(m.host, m.pid) for m in matches}) == 1, matches
    assert seen["running"] == TABLES, seen
    # Sessions of the host while all its tables played: a heartbeat's, now and then, never
    # one a table (before, each table's thread kept the session it claimed the match with).
    assert seen["samples"] > 0 and seen["sessions"] < TABLES // 2, seen
    assert E2E_APPLICATION != HOST_APPLICATION
    assert "Traceback" not in host.text(), log
