"""Real Celery workers through the faults of issue 25's part 2: the database connections cut
while a match is played (what a PostgreSQL restart does to every client; the server here is
shared, so the sessions are terminated from the server side instead of restarting it), and a
worker started without the site's shared media. (A worker killed mid-match is in
test_pipeline.py, a broker restart in test_broker_restart.py.)"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import E2E_APPLICATION, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

DAWDLE_SECONDS = 6
DAWDLING_BOT = f'''
"""dawdler: random moves, 0.2 s each for its first {DAWDLE_SECONDS} s, then at once."""
import random
import time

from bots.sdk import Bot, Observation, run

STARTED = time.monotonic()


class Dawdler(Bot):
    name = "dawdler"

    def choose(self, obs: Observation) -> str:
        if time.monotonic() - STARTED < {DAWDLE_SECONDS}:
            time.sleep(0.2)
        return random.choice(obs.legal)


run(Dawdler())
'''.encode()


def _dawdling_match(valid_version: Any, owner: Any) -> Any:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload
    from ladder.matches.services import match_create

    version = bot_version_upload(
        bot=bot_create(owner=owner, name="dawdler"), filename="bot.py", data=DAWDLING_BOT
    )
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    versions = [BotVersion.objects.get(pk=version.pk), valid_version("r1"), valid_version("r2")]
    return match_create(versions=versions, limits={"max_hands": 2})


def _match(match_id: int) -> Any:
    from ladder.matches.models import Match

    return Match.objects.get(pk=match_id)


def _workers_sessions() -> list[int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [E2E_APPLICATION],
        )
        return [row[0] for row in cursor.fetchall()]


def _cut(pids: list[int]) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for pid in pids:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_match_in_play_when_the_database_drops_every_connection_is_recorded_once(
    celery: Any, valid_version: Any, owner: Any
) -> None:
    """Once both matches in flight during a PostgreSQL restart played to the end, failed at
    the save on a dead connection, and were played again. Every session of the workers is
    cut by the server while the bots play. The worker holds none then (match_run lets go of
    the one it claimed the match with before the game: a table host's tables would hold one
    each, issue 35), so the cut meets at most a heartbeat's, which opens one per beat; the
    match is recorded and rated once. (A connection cut in the middle of the recording is
    tests/ladder/matches/test_match_recovery.py's.)"""
    from ladder.matches.tasks import run_match
    from ladder.ratings.models import BotRating, RatingChange

    match = _dawdling_match(valid_version, owner)
    worker = celery("worker", GRASS_MATCH_HEARTBEAT_SECONDS="1", GRASS_MATCH_SILENT_SECONDS="3")
    run_match.delay(match.pk)
    wait_until(lambda: _match(match.pk).status == "running", timeout=60, what="the match")
    time.sleep(1.5)  # the bots play
    # A session held through the game would be in both looks; a beat's lives milliseconds.
    first = _workers_sessions()
    time.sleep(0.4)
    second = _workers_sessions()
    assert not set(first) & set(second), f"the worker holds a session while it plays: {first}"
    _cut(second)
    assert _match(match.pk).status == "running", "the match ended before the cut"

    wait_until(lambda: _match(match.pk).status != "running", timeout=120, what="the match")
    played = _match(match.pk)
    assert (played.status, played.attempts) == ("finished", 1), played.failure_reason
    assert RatingChange.objects.filter(match=played).count() == 3
    rated = BotRating.objects.filter(ruleset=played.ruleset)
    assert sorted(rated.values_list("games", flat=True)) == [1, 1, 1]
    text = worker.text()
    assert "Traceback" not in text, text[-3000:]


def test_a_worker_without_the_shared_media_refuses_matches_at_start(
    celery: Any, valid_version: Any, request: Any
) -> None:
    """Today it reported ready and failed every match with a raw FileNotFoundError on the
    bots' files. Now it says why at ERROR, takes no match (the match waits, unclaimed, for a
    worker that can play it) and counts for no match capacity."""
    from ladder.matches.services import match_create
    from ladder.matches.tasks import run_match
    from ladder.matchmaking.capacity import worker_capacity

    match = match_create(versions=[valid_version("a"), valid_version("b")])
    # A storage the worker's user can write (the probe passes), that holds no upload.
    empty = Path(tempfile.mkdtemp(prefix="grass-e2e-not-the-shared-media-"))
    empty.chmod(0o777)
    request.addfinalizer(lambda: shutil.rmtree(empty, ignore_errors=True))
    worker = celery("worker", concurrency=2, MEDIA_ROOT=str(empty))
    worker.wait_for(r"this worker refuses matches: the media storage", timeout=30)
    worker.wait_for(r"Canceling queue matches", timeout=30)
    assert "holds none of the newest uploaded bots" in worker.text()
    run_match.delay(match.pk)
    assert worker_capacity().processes == 0
    time.sleep(3.0)  # time enough to take the match and fail it, as it did before
    waited = _match(match.pk)
    assert (waited.status, waited.attempts, waited.failure_reason) == ("queued", 0, "")
    assert "FileNotFoundError" not in worker.text()

    # A worker with the media takes the match the other one would not.
    good = celery("worker")
    good.wait_for(r"run_match\[.*\] succeeded", timeout=120)
    played = _match(match.pk)
    assert (played.status, played.attempts) == ("finished", 1)
