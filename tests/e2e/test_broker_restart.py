"""A broker restart: Redis killed (SIGKILL) and started again while a worker plays a match.

The issue promises that a broker restart never applies a match's ratings twice and never loses
a finished result. Redis here keeps nothing on disk (as `make run`'s and the tests' do), so a
restart loses every message it held: the running match's unacknowledged one and the messages
of matches queued behind it. The results and ratings live in PostgreSQL, written in one
transaction by the worker that claimed the match; a queued match whose message was lost is sent
again by the sweep (`match_resend_lost`, on beat in production).

Each test runs a private `redis-server` on a free port (nothing on disk, in the test's tmp_path),
so killing it disturbs no other test or developer; the workers and this process talk to it
only. The worker is a real Celery process with bots in the OS sandbox.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.log import verify
from tests.e2e.conftest import wait_until
from tests.ladder.conftest import _unavailable

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready"),
]

SLOW_SECONDS = 8
"""How long the slow bot dawdles from its start: longer than the broker restart takes."""
SLOW_BOT = f'''
"""slow: random moves, 0.2 s each for its first {SLOW_SECONDS} s, then at once: the match is
still being played while the test restarts the broker."""
import random
import time

from bots.sdk import Bot, Observation, run

STARTED = time.monotonic()


class Slow(Bot):
    name = "slow"

    def choose(self, obs: Observation) -> str:
        if time.monotonic() - STARTED < {SLOW_SECONDS}:
            time.sleep(0.2)
        return random.choice(obs.legal)


run(Slow())
'''.encode()


@dataclass
class PrivateRedis:
    """A redis-server of this test's own that keeps nothing: `kill` loses every message."""

    port: int
    folder: Path
    popen: subprocess.Popen[bytes] | None = field(default=None)
    starts: int = field(default=0)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        self.starts += 1
        log = self.folder / f"redis-{self.starts}.log"
        self.popen = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--logfile",
                str(log),
            ],
            cwd=self.folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url, socket_timeout=1).ping()
                return
            except redis.RedisError:
                if self.popen.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"redis-server on port {self.port} did not start:\n"
                        + log.read_text(errors="replace")[-2000:]
                    ) from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no save (there is nothing to save anyway)."""
        assert self.popen is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)

    def waiting(self, queue: str) -> int:
        """Messages waiting in `queue` (kombu keeps a queue as a Redis list of its name)."""
        import redis

        return int(redis.Redis.from_url(self.url).llen(queue))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        _unavailable("redis-server", FileNotFoundError("redis-server is not on PATH"))
    folder = tmp_path / "redis"
    folder.mkdir()
    server = PrivateRedis(port=_free_port(), folder=folder)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def celery_env(celery_env: dict[str, str], private_redis: PrivateRedis) -> dict[str, str]:
    """The e2e workers' environment (tests/e2e/conftest.py), on the private Redis."""
    return {**celery_env, "CELERY_BROKER_URL": private_redis.url}


def _send(broker: PrivateRedis, task: Any, *args: Any) -> None:
    """`task.delay(*args)` through the private Redis (this process's Celery app is configured
    for the tests' shared Redis database)."""
    from ladder.celery import app

    with app.connection_for_write(broker.url) as connection:
        task.apply_async(args, connection=connection)


def _match_between(valid_version: Any, owner: Any, names: list[str], *, slow: bool) -> Any:
    """A queued 3-seat match of two hands (`slow`: one seat is SLOW_BOT, the others random)."""
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload
    from ladder.matches.services import match_create

    versions = [valid_version(name) for name in names[slow:]]
    if slow:
        version = bot_version_upload(
            bot=bot_create(owner=owner, name=names[0]), filename="bot.py", data=SLOW_BOT
        )
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        versions.append(BotVersion.objects.get(pk=version.pk))
    return match_create(versions=versions, limits={"max_hands": 2})


def _match(match_id: int) -> Any:
    from ladder.matches.models import Match

    return Match.objects.get(pk=match_id)


def _status(match_id: int) -> str:
    return str(_match(match_id).status)


def _wait_recorded_once(match_id: int, *, what: str) -> None:
    wait_until(lambda: _status(match_id) not in ("queued", "running"), timeout=120, what=what)
    _assert_recorded_once(match_id)


def _assert_recorded_once(match_id: int) -> None:
    """Finished after one claim, one rating change per seat, each bot rated for one game, the
    log stored with its checksum and replaying through the engine."""
    from ladder.matches.models import MatchSeat
    from ladder.ratings.models import BotRating, RatingChange

    match = _match(match_id)
    assert match.status == "finished", (match.status, match.failure_reason)
    assert match.attempts == 1
    bots = sorted(
        MatchSeat.objects.filter(match=match).values_list("bot_version__bot_id", flat=True)
    )
    changes = RatingChange.objects.filter(match=match)
    assert sorted(changes.values_list("bot_id", flat=True)) == bots
    ratings = BotRating.objects.filter(bot_id__in=bots, ruleset=match.ruleset)
    assert sorted(r.bot_id for r in ratings) == bots
    assert all(r.games == 1 for r in ratings), [(r.bot_id, r.games) for r in ratings]
    with match.log.open("rb") as log:
        data = log.read()
    assert hashlib.sha256(data).hexdigest() == match.log_sha256
    assert verify(io.BytesIO(data)).over


@pytest.mark.parametrize("down", ["briefly", "until-the-match-finished"])
def test_a_broker_restart_mid_match_loses_no_result_and_rates_once(
    down: str, celery: Any, private_redis: PrivateRedis, owner: Any, valid_version: Any
) -> None:
    """Redis dies while the match is played and comes back empty, either at once (the worker's
    consumer reconnects while its pool still plays) or only after the match has finished (the
    result is recorded, and the message's acknowledgement goes nowhere, with no broker at
    all). Either way the match is recorded and rated exactly once, and the worker then takes
    new work from the new broker."""
    from ladder.matches.tasks import run_match

    match = _match_between(valid_version, owner, ["slow", "r1", "r2"], slow=True)
    worker = celery("worker")
    _send(private_redis, run_match, match.pk)
    wait_until(lambda: _status(match.pk) == "running", timeout=60, what="the match to start")
    time.sleep(1.0)  # the bots are playing
    private_redis.kill()
    assert _status(match.pk) == "running", "the match ended before the broker died"
    worker.wait_for("Connection to broker lost", timeout=30)
    if down == "briefly":
        # Down until the worker has tried to reconnect and failed, then back.
        worker.wait_for("Cannot connect to redis", timeout=60)
        private_redis.start()
        assert _status(match.pk) == "running", "the match ended while the broker was down"
    else:
        wait_until(lambda: _status(match.pk) != "running", timeout=120, what="the match")
        private_redis.start()

    wait_until(lambda: _status(match.pk) != "running", timeout=120, what="the match")
    _assert_recorded_once(match.pk)

    # The worker reconnected (its consumer, not only its pool): a match sent through the new
    # broker is played. Its message may wait for the reconnection (the retries back off).
    after = _match_between(valid_version, owner, ["r3", "r4", "r5"], slow=False)
    _send(private_redis, run_match, after.pk)
    _wait_recorded_once(after.pk, what="a match sent after the restart")
    # Nothing was played or rated twice: not the restarted match, not the new one.
    _assert_recorded_once(match.pk)
    assert worker.popen.poll() is None, worker.text()[-3000:]


def test_a_match_queued_when_the_broker_died_is_sent_again_by_the_sweep(
    celery: Any, private_redis: PrivateRedis, owner: Any, valid_version: Any
) -> None:
    """A match waiting in Redis's queue behind a running one (one worker process, prefetch 1)
    is lost with Redis: nothing plays it until the sweep, which sends again every match queued
    for longer than GRASS_MATCH_RESEND_SECONDS whose message is not in Redis; it is then
    played and rated once."""
    from ladder.matches.tasks import run_match, sweep_matches

    playing = _match_between(valid_version, owner, ["slow", "r1", "r2"], slow=True)
    waiting = _match_between(valid_version, owner, ["r3", "r4", "r5"], slow=False)
    worker = celery("worker", concurrency=1, GRASS_MATCH_RESEND_SECONDS="3")
    _send(private_redis, run_match, playing.pk)
    wait_until(lambda: _status(playing.pk) == "running", timeout=60, what="the first match")
    _send(private_redis, run_match, waiting.pk)
    # The second message is in Redis, not in the worker: its one process is busy.
    wait_until(lambda: private_redis.waiting("matches") == 1, timeout=10, what="the queued message")
    assert _status(waiting.pk) == "queued"

    private_redis.kill()
    worker.wait_for("Connection to broker lost", timeout=30)
    worker.wait_for("Cannot connect to redis", timeout=60)
    private_redis.start()
    wait_until(lambda: _status(playing.pk) != "running", timeout=120, what="the first match")
    _assert_recorded_once(playing.pk)

    # The worker is idle and connected, and the second match's message is gone for good: a
    # message sent now behind it on the same queue (the finished match again, which the worker
    # takes and leaves) is taken by the worker's one process, so anything queued before it
    # would have been taken first.
    worker.wait_for(r"Connected to redis", times=2, timeout=60)
    _send(private_redis, run_match, playing.pk)
    worker.wait_for(rf"match {playing.pk}: not queued, nothing to do", timeout=60)
    waiting.refresh_from_db()
    assert (waiting.status, waiting.attempts) == ("queued", 0), worker.text()[-3000:]
    assert private_redis.waiting("matches") == 0

    # The sweep (beat runs it every 15 s in production) finds it queued for longer than
    # GRASS_MATCH_RESEND_SECONDS with no message in Redis, and sends it again (it used to wait
    # for GRASS_MATCH_STALE_SECONDS, 30 minutes, then a match's longest).
    _send(private_redis, sweep_matches)
    worker.wait_for(rf"sent again matches queued since before .*: \[{waiting.pk}\]", timeout=60)
    _wait_recorded_once(waiting.pk, what="the match sent again")
    _assert_recorded_once(playing.pk)
