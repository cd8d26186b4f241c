"""The test run's own Redis (tests/redis_server.py, issue 36): every Redis address the tests'
settings give is the run's server, nothing outside it is emptied, it keeps nothing on disk, and
it does not outlive a run that is killed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests import redis_server

TESTS = Path(__file__).resolve().parent


def _server() -> tuple[str | None, int | None]:
    url = os.environ.get(redis_server.URL_VARIABLE)
    if not url:
        redis_server.unavailable()
    where = urlsplit(url)
    return where.hostname, where.port


def test_every_redis_the_settings_name_is_the_runs_own() -> None:
    from django.conf import settings

    from ladder.celery import app

    server = _server()
    layer = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"]
    for url in (settings.CELERY_BROKER_URL, app.conf.broker_url, layer):
        where = urlsplit(url)
        assert (where.hostname, where.port) == server, url
    assert server[1] != 6379
    # This process's databases are its own: none shared between the broker and the layer.
    assert urlsplit(settings.CELERY_BROKER_URL).path != urlsplit(layer).path


def test_the_site_processes_the_tests_start_are_pointed_at_it_too() -> None:
    env = redis_server.site_env()
    for name in ("CELERY_BROKER_URL", "GRASS_CHANNEL_LAYER_URL"):
        where = urlsplit(env[name])
        assert (where.hostname, where.port) == _server(), name


def test_a_redis_the_run_did_not_start_is_never_emptied() -> None:
    _server()
    for foreign in ("redis://127.0.0.1:6379/9", "redis://:guess@127.0.0.1:6379/0"):
        with pytest.raises(AssertionError, match="not the test run's own Redis"):
            redis_server.emptied(foreign)
    # The same port with another password is not the run's either.
    url = os.environ[redis_server.URL_VARIABLE]
    where = urlsplit(url)
    with pytest.raises(AssertionError, match="not the test run's own Redis"):
        redis_server.emptied(f"redis://:other@{where.hostname}:{where.port}/0")


def test_it_keeps_nothing_on_disk() -> None:
    from django.conf import settings

    client = redis_server.emptied(settings.CELERY_BROKER_URL)
    try:
        assert client.config_get("save") == {"save": ""}
        assert client.config_get("appendonly") == {"appendonly": "no"}
    finally:
        client.close()


def test_no_test_empties_a_redis_by_itself() -> None:
    """`redis_server.emptied` is the only FLUSHDB of the suite (it checks whose server it is)."""
    flush = re.compile(r"\.flush(db|all)\(")
    found = sorted(
        str(path.relative_to(TESTS.parent))
        for path in TESTS.rglob("*.py")
        if path.name not in ("redis_server.py", Path(__file__).name)
        and flush.search(path.read_text())
    )
    assert found == []


def test_a_killed_run_takes_its_server_with_it() -> None:
    """SIGKILL to the process that started a server (no teardown runs): the server ends too."""
    if not os.environ.get(redis_server.URL_VARIABLE):
        redis_server.unavailable()
    script = (
        "from tests import redis_server; import time; s = redis_server.start(); "
        "print(s.process.pid, s.folder, flush=True); time.sleep(600)"
    )
    starter = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=TESTS.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert starter.stdout is not None
    pid_text, folder = starter.stdout.readline().split()
    pid = int(pid_text)
    assert Path(f"/proc/{pid}").exists()
    starter.send_signal(signal.SIGKILL)
    starter.wait()
    deadline = time.monotonic() + 30
    while _alive(pid):
        assert time.monotonic() < deadline, f"redis-server {pid} outlived its killed run"
        time.sleep(0.05)
    shutil.rmtree(folder)  # the killed run's (its teardown never ran)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by init, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
