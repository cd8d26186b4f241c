"""Real Celery processes for the end-to-end tests: workers and beat as separate OS processes,
on the test database, the test Redis database and the test media folder.

They run `ladder.settings` (the production settings module) configured from the environment,
as a worker host would, not the test settings. Each process starts in its own session so that
a test can kill it and everything it started, as the OOM killer or a power cut would.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.ladder.conftest import (  # noqa: F401  (fixtures used by this folder's tests)
    _empty_cache,
    _unavailable,
    django_db_setup,
    example_file,
    owner,
    postgres_ready,
    sandbox_ready,
    stranger,
    valid_version,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def redis_ready() -> None:
    import redis
    from django.conf import settings

    try:
        redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=3).ping()
    except redis.RedisError as exc:
        _unavailable("Redis", exc)


@dataclass
class CeleryProcess:
    """One `celery` process (a worker or beat) and the file its output goes to."""

    name: str
    popen: subprocess.Popen[bytes]
    output: Path
    stopped: bool = field(default=False)
    killed: bool = field(default=False)

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.text()))

    def wait_for(self, pattern: str, *, times: int = 1, timeout: float = 60.0) -> None:
        """Wait until `pattern` (a regex) appears `times` times in the output."""
        deadline = time.monotonic() + timeout
        while self.count(pattern) < times:
            if self.popen.poll() is not None:
                raise AssertionError(f"{self.name} exited early:\n{self.text()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.name}: no {pattern!r} in {timeout} s:\n{self.text()[-3000:]}"
                )
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the process and everything in its session: no shutdown, no acks."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)
        self.stopped = True

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM to the main process (a worker's warm shutdown: its pool finishes the current
        task), then SIGKILL to whatever of the session is left, at once or after `timeout`."""
        if self.popen.poll() is None:
            self.popen.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)
        self.stopped = self.killed = True


E2E_APPLICATION = "grass-e2e"
"""The application_name of the database sessions of the Celery processes the tests start."""


@pytest.fixture
def celery_env(settings: object, tmp_path: Path, redis_ready: None) -> dict[str, str]:
    """The environment of a worker host pointed at this test's database, broker and media."""
    from django.db import connection

    db = connection.settings_dict
    url = (
        f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "SECRET_KEY": "e2e-" + "k" * 40,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,  # type: ignore[attr-defined]
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),  # type: ignore[attr-defined]
        # The workers' file cache (replays, the matchmaker's count of workers): this test's own.
        "CACHE_DIR": str(tmp_path / "cache"),
        "GRASS_SANDBOXED": "true",
        "GRASS_VALIDATE_INLINE": "false",
        "PYTHONUNBUFFERED": "1",
        # libpq names the workers' and beat's sessions, so teardown waits for theirs alone.
        "PGAPPNAME": E2E_APPLICATION,
    }


@pytest.fixture
def celery(celery_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., CeleryProcess]]:
    """`celery(kind, concurrency=1, **env)`: start a worker or beat; all are stopped after the
    test (beat first, so no new work arrives while workers finish theirs).

    The broker's queue is emptied first: a message left by an earlier run names rows of a
    database that no longer exists.
    """
    import redis

    redis.Redis.from_url(celery_env["CELERY_BROKER_URL"]).flushdb()
    started: list[CeleryProcess] = []

    def start(kind: str, *, concurrency: int = 1, **env: str) -> CeleryProcess:
        index = len(started)
        output = tmp_path / f"{kind}-{index}.log"
        command = [sys.executable, "-m", "celery", "-A", "ladder.celery"]
        if kind == "worker":
            command += [
                "worker",
                f"--concurrency={concurrency}",
                "--pool=prefork",
                "--loglevel=info",
                f"--hostname=e2e{index}@%h",
                "--without-gossip",
                "--without-mingle",
            ]
            ready = r"ready\."
        elif kind == "beat":
            command += ["beat", "--loglevel=info", f"--schedule={tmp_path / 'beat-schedule'}"]
            ready = r"beat: Starting"
        else:
            raise ValueError(f"unknown celery process kind {kind!r}")
        with output.open("wb") as sink:
            popen = subprocess.Popen(
                command,
                cwd=REPO,
                env={**celery_env, **env},
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = CeleryProcess(f"{kind} {index}", popen, output)
        started.append(process)
        process.wait_for(ready, timeout=60)
        return process

    yield start
    for process in sorted(started, key=lambda p: not p.name.startswith("beat")):
        if not process.stopped:
            process.stop()
    if any(process.killed for process in started):
        # A killed worker's boxes (its match's, those it made ahead) wait for the sweep of the
        # next worker to start on the host, as after a power cut; a test run must not leave
        # them behind. The sweep takes only boxes whose runner is gone (their uid locks).
        from bots.runner import sandbox

        sandbox.sweep()
    _wait_for_other_sessions_to_close()


def _wait_for_other_sessions_to_close(timeout: float = 10.0) -> None:
    """PostgreSQL notices a killed client's connection a moment later; the test database can
    be dropped only once the Celery processes' sessions on it have gone. (Sessions of this
    process's own threads, such as a live server's, are not waited for: they stay open until
    the end of the run, and waiting for them cost ten seconds a test.)"""
    from django.db import connection

    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = %s",
                [E2E_APPLICATION],
            )
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.1)


def wait_until(check: Callable[[], object], *, timeout: float, what: str) -> object:
    """Poll `check` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.25)
