"""The test run's own Redis: one `redis-server` started by the first pytest process of a run
(the xdist controller, or the only process under `-n 0`) and stopped at its end.

Before, the tests used databases 9-15 of whatever Redis answered on 127.0.0.1:6379 and emptied
them (issue 36): a developer's `make run`, or a second checkout's test run, lost its queue and
its live tables. Now nothing of the suite talks to a Redis it did not start:

- the server listens on a free port of 127.0.0.1 and asks for a password made for the run, so
  neither another local program nor another test run reaches it by mistake (and a port taken
  by someone else between the choice and the start makes the start fail, then try again);
- it keeps nothing on disk (`save ""`, `appendonly no`) and dies with the process that started
  it (PR_SET_PDEATHSIG), even when that process is killed;
- its address goes to every process of the run by one environment variable, URL_VARIABLE,
  which `ladder/settings_test.py` reads (each test process takes its own databases there);
- `emptied(url)` is the one way a test empties a database, and it refuses any other server.

Under CI=true a run without a `redis-server` fails the tests that need Redis (`unavailable`);
elsewhere they are skipped, like those that need PostgreSQL.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

URL_VARIABLE = "GRASS_TEST_REDIS_URL"
"""The run's server, `redis://:<password>@127.0.0.1:<port>` (no database): set by the process
that started it, inherited by the others (xdist workers, Celery workers, daphne)."""
ERROR_VARIABLE = "GRASS_TEST_REDIS_ERROR"
"""Why the run has no server of its own, when it has none."""
DATABASES = 64
"""Databases of the run's server: `ladder/settings_test.py` gives each test process a few."""
START_TIMEOUT = 20.0


@dataclass(frozen=True)
class Server:
    """A running redis-server of this run."""

    url: str
    process: subprocess.Popen[bytes]
    folder: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the server's process before exec: SIGTERM when the process that started it ends, so
    a killed test run leaves no server behind."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start() -> Server:
    """Start the run's server; raise RuntimeError saying why it could not be started."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server on PATH (Debian: apt-get install redis-server)")
    problems = []
    for _ in range(5):
        folder = Path(tempfile.mkdtemp(prefix="grass-test-redis-"))
        port, password = _free_port(), secrets.token_hex(16)
        config = "\n".join(
            [
                f"port {port}",
                "bind 127.0.0.1",
                'save ""',
                "appendonly no",
                f"databases {DATABASES}",
                f"requirepass {password}",  # on stdin, not in the command line `ps` shows
                f"dir {folder}",
                f"logfile {folder / 'redis.log'}",
                "daemonize no",
            ]
        )
        process = subprocess.Popen(
            [binary, "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C of the run reaches the tests, not their Redis
            preexec_fn=_die_with_parent,
        )
        assert process.stdin is not None
        process.stdin.write(config.encode() + b"\n")
        process.stdin.close()
        server = Server(f"redis://:{password}@127.0.0.1:{port}", process, folder)
        if _answers(server):
            return server
        log = folder / "redis.log"
        problems.append(log.read_text(errors="replace")[-500:] if log.exists() else "no log")
        stop(server)
    raise RuntimeError("redis-server did not start: " + " | ".join(problems))


def _answers(server: Server) -> bool:
    """Whether the server answers PING with the run's password (a Redis of someone else's on
    the port would not take it), before START_TIMEOUT or the process's exit."""
    import redis

    client = redis.Redis.from_url(server.url, socket_timeout=3, socket_connect_timeout=1)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while time.monotonic() < deadline and server.process.poll() is None:
            with contextlib.suppress(redis.ConnectionError):
                return bool(client.ping())
            time.sleep(0.05)
        return False
    finally:
        client.close()


def stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)
    shutil.rmtree(server.folder, ignore_errors=True)


def unavailable(exc: Exception | None = None) -> None:
    """Skip the test (fail it under CI=true): the run has no Redis of its own."""
    from tests.ladder.conftest import _unavailable

    reason = os.environ.get(ERROR_VARIABLE) or "the run started no Redis of its own"
    _unavailable("Redis", RuntimeError(f"{reason}{f': {exc}' if exc else ''}"))


def is_the_runs(url: str) -> bool:
    """Whether `url` names the run's own server (the one `emptied` may empty)."""
    return _is_the_runs(url)


def _is_the_runs(url: str) -> bool:
    own = os.environ.get(URL_VARIABLE)
    if not own:
        return False
    theirs, ours = urlsplit(url), urlsplit(own)
    return (theirs.hostname, theirs.port, theirs.password) == (
        ours.hostname,
        ours.port,
        ours.password,
    )


def emptied(url: str) -> Any:
    """A client of `url`'s database, emptied first. Refuses (AssertionError) a URL that is not
    of the run's own server: the tests never empty a Redis they did not start. Skips the test
    (fails it under CI=true) when the run has no server."""
    import redis

    if not os.environ.get(URL_VARIABLE):
        unavailable()
    where = urlsplit(url)
    assert _is_the_runs(url), (
        f"redis://{where.hostname}:{where.port} is not the test run's own Redis: not emptied"
    )
    client = redis.Redis.from_url(url, socket_timeout=3)
    try:
        client.flushdb()
    except redis.RedisError as exc:
        unavailable(exc)
    return client


def site_env() -> dict[str, str]:
    """The environment that points a process of the site (`ladder.settings`: a Celery worker,
    daphne, `make run`) at this test process's databases of the run's Redis, so that none of
    them falls back to the Redis on 127.0.0.1:6379."""
    from django.conf import settings

    return {
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "GRASS_CHANNEL_LAYER_URL": settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0][
            "address"
        ],
    }
