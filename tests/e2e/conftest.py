"""Real Celery processes for the end-to-end tests: workers and beat as separate OS processes,
on the test database, the test Redis database and the test media folder.

They run `ladder.settings` (the production settings module) configured from the environment,
as a worker host would, not the test settings. Each process starts in its own session so that
a test can kill it and everything it started, as the OOM killer or a power cut would.

Workers run as the worker's unprivileged user (GRASS_WORKER_USER, `grass`, made by
deploy/install-box.sh), as in production: they reach root only through the box program's sudo
rule, whose installed copy must be this checkout's (installed again here when it is not).

Host-wide state: every worker sweeps the host's dead boxes as it starts (and the teardown of a
test that killed one sweeps too), so every file here runs alone, in the host-wide group
(tests/conftest.py); the broker and the channel layer are this process's databases of the
run's own Redis (tests/redis_server.py), and the test database is this process's own.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import redis_server
from tests.ladder.conftest import (  # noqa: F401  (fixtures used by this folder's tests)
    _empty_cache,
    _unavailable,
    django_db_setup,
    example_file,
    owner,
    owners,
    postgres_ready,
    sandbox_ready,
    stranger,
    valid_version,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def redis_ready() -> None:
    """The run's own Redis (tests/redis_server.py) answers."""
    import redis
    from django.conf import settings

    if not os.environ.get(redis_server.URL_VARIABLE):
        redis_server.unavailable()
    try:
        redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=3).ping()
    except redis.RedisError as exc:
        redis_server.unavailable(exc)


WORKER_USER = os.environ.get("GRASS_WORKER_USER", "grass")


@pytest.fixture(scope="session")
def worker_user() -> pwd.struct_passwd:
    """The worker's user, with this checkout's box program installed for it; the suite fails
    (it does not skip) when a worker could not run here unprivileged."""
    from bots.runner import boxctl

    try:
        user = pwd.getpwnam(WORKER_USER)
    except KeyError:
        pytest.fail(f"no user {WORKER_USER!r} for the workers: run deploy/setup.sh")
    installed = subprocess.run(
        [boxctl.INSTALLED, "version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if installed != f"version:{boxctl.source_version()}":
        subprocess.run(["bash", str(REPO / "deploy" / "install-box.sh")], check=True)
    readable = subprocess.run(
        [*as_user(user), "test", "-r", str(REPO / "manage.py"), "-a", "-x", sys.executable],
        check=False,
    )
    if readable.returncode != 0:
        pytest.fail(
            f"user {WORKER_USER} cannot read {REPO} or run {sys.executable}: the checkout and its "
            ".venv must be readable by the worker's user (deploy/setup.sh makes .venv on "
            "/usr/bin/python3)"
        )
    return user


def e2e_cache_env() -> dict[str, str]:
    """The shared cache of a test's site processes: this test process's cache database of the
    run's Redis (`ladder.settings_test.redis_url_for`) and a key prefix of the test's own, so no
    test reads another's entries and none is flushed."""
    from django.conf import settings

    from ladder.settings_test import redis_url_for

    broker: str = settings.CELERY_BROKER_URL
    return {
        "GRASS_CACHE_URL": redis_url_for("cache", broker.rsplit("/", 1)[0]),
        "GRASS_CACHE_KEY_PREFIX": f"e2e-{os.getpid()}-{time.monotonic_ns()}",
    }


def as_user(user: pwd.struct_passwd) -> list[str]:
    """The command prefix that runs a command as `user`, with its groups and nothing more."""
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--"]


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
def celery_env(
    settings: object, tmp_path: Path, redis_ready: None, worker_user: pwd.struct_passwd
) -> Iterator[dict[str, str]]:
    """The environment of a worker host pointed at this test's database, broker and media.
    The media folder is the workers' to write (they run as the worker's user); the test's own
    writes there make folders anyone may write (settings_test's STORAGES)."""
    import shutil
    import tempfile

    from django.db import connection

    media = Path(settings.MEDIA_ROOT)  # type: ignore[attr-defined]
    media.chmod(0o777)
    home = Path(tempfile.mkdtemp(prefix="grass-e2e-home-"))
    os.chown(home, worker_user.pw_uid, worker_user.pw_gid)

    db = connection.settings_dict
    env: dict[str, str]
    url = (
        f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "SECRET_KEY": "e2e-" + "k" * 40,
        "DATABASE_URL": url,
        # This process's databases of the run's own Redis: broker and live tables.
        **redis_server.site_env(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),  # type: ignore[attr-defined]
        # The workers' shared cache (replays, the matchmaker's count of workers): this test's
        # own keys, in the database beside the tests' brokers.
        **e2e_cache_env(),
        "GRASS_SANDBOXED": "true",
        "GRASS_VALIDATE_INLINE": "false",
        "PYTHONUNBUFFERED": "1",
        # libpq names the workers' and beat's sessions, so teardown waits for theirs alone.
        "PGAPPNAME": E2E_APPLICATION,
        # No file of the test's own (it is root's) for a worker to touch.
        "HOME": str(home),
    }
    yield env
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def celery(
    celery_env: dict[str, str], tmp_path: Path, worker_user: pwd.struct_passwd
) -> Iterator[Callable[..., CeleryProcess]]:
    """`celery(kind, concurrency=1, queues=None, pool="prefork", as_root=False,
    ready_timeout=60, **env)`:
    start a worker or beat, and wait up to `ready_timeout` s for it to say it is ready (a
    worker proves every language's known bot first: a minute or more on a loaded machine).
    All are stopped after the test (beat first, so no new work arrives while workers finish
    theirs). Workers run as the worker's unprivileged user, as in production, unless
    `as_root` (the box program reads GRASS_RUNTIME_ROOT from a root caller only).

    The broker's queue (a database of the run's own Redis) is emptied first: a message left by
    an earlier test names rows that no longer exist.
    """
    broker = celery_env["CELERY_BROKER_URL"]
    # A test's private Redis (test_broker_restart's, which it kills) starts empty and is not
    # the run's: only the run's own is emptied.
    if redis_server.is_the_runs(broker):
        redis_server.emptied(broker).close()
    started: list[CeleryProcess] = []

    def start(
        kind: str,
        *,
        concurrency: int = 1,
        queues: str | None = None,
        pool: str = "prefork",
        as_root: bool = False,
        ready_timeout: float = 60.0,
        **env: str,
    ) -> CeleryProcess:
        index = len(started)
        output = tmp_path / f"{kind}-{index}.log"
        command = [sys.executable, "-m", "celery", "-A", "ladder.celery"]
        if kind == "worker" and not as_root:  # as_root: only to point its box program at a
            command = [*as_user(worker_user), *command]  # test's image (GRASS_RUNTIME_ROOT)
        if kind == "worker":
            command += [
                "worker",
                f"--concurrency={concurrency}",
                f"--pool={pool}",  # threads: the table host
                "--loglevel=info",
                f"--hostname=e2e{index}@%h",
                "--without-gossip",
                "--without-mingle",
                # -Q as the units give it (matches, or celery: the quick work); none: both.
                *([f"--queues={queues}"] if queues else []),
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
        process.wait_for(ready, timeout=ready_timeout)
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def asgi_server(celery_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The site under daphne (its `runserver`: HTTP, static files and WebSockets), on the
    test's database, broker and channel layer (the channel layer fixture empties it). Yields
    its address. A person's decisions there last GRASS_PLAY_DECISION_SECONDS=30."""
    from tests.ladder.live.conftest import layer_url

    port = free_port()
    env = {
        **celery_env,
        "DEBUG": "true",  # runserver serves the static files only then
        # A missed request would cost the test this long (never waited for when all goes well).
        "GRASS_PLAY_DECISION_SECONDS": "30",
        "GRASS_CHANNEL_LAYER_URL": layer_url(),
        "PGAPPNAME": E2E_APPLICATION,
    }
    output = tmp_path / "daphne.log"
    with output.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                log = output.read_text()[-3000:]
                raise AssertionError(f"daphne did not start:\n{log}") from None
            time.sleep(0.2)
    while "Daphne" not in output.read_text(errors="replace"):  # the ASGI server, not WSGI's
        assert server.poll() is None and time.monotonic() < deadline, output.read_text()[-3000:]
        time.sleep(0.2)
    yield base
    server.terminate()
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, 9)
        server.wait(10)


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
