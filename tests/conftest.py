"""How the suite is spread over processes (pytest-xdist, `-n` in pyproject's addopts), and its
tiers: each test gets the marks of the slow kinds it is of (tests/tiers.py), which `make check`
leaves out.

The suite mostly waits (on bots in their boxes, Celery workers, a browser, an emulated guest),
so several test processes share two cores well. Each process has its own test database
(pytest-django) and its own broker database (ladder/settings_test.py); two things still need
an order:

- The cgroup v2 guest (tests/vm) is the longest test by far: it is collected first, so that
  one process starts it at once and the others share out the rest of the suite meanwhile.
- Tests that act on every sandbox box of the host run in one process, one after another:
  the leak tests count what dead runners left (and kill runners to make some), and every
  Celery worker sweeps such leftovers when it starts (the end-to-end and browser tests that
  start workers).

Host-wide state the processes would otherwise share is either owned by the run or kept to one
process at a time:

- Redis: a server of the run's own (tests/redis_server.py), started here by the first process
  (the xdist controller, or the only one) before the others start, stopped at the end; each
  process has its own databases on it (ladder/settings_test.py).
- PostgreSQL: a test database per process (pytest-django), whose sessions are all closed
  before it is dropped (`_close_database_sessions`).
- Sandbox boxes, their claims, sweeps and cgroups: the HOST_WIDE group below, and tests that
  look only at their own boxes (tests/bots/boxes.py), since other programs on the machine (a
  `make run` beside the suite, another checkout's tests) sweep the same boxes.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from tests import redis_server
from tests.tiers import kinds

FIRST = ("tests/vm/",)
HOST_WIDE = (
    "tests/e2e/",
    "tests/bots/test_sandbox_leaks.py",
    "tests/browser/test_site_flow.py",
    "tests/browser/test_play_browser.py",
    "tests/browser/test_challenge_browser.py",
)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Generator[None, None, None]:
    # Before the other plugins' hooks: xdist's reads the groups, and `-m` deselects by marks.
    for item in items:
        for kind in kinds(item):
            item.add_marker(kind)
        # (Not where xdist is absent, as in the cgroup v2 guest: an unknown mark there.)
        if item.nodeid.startswith(HOST_WIDE) and item.config.pluginmanager.hasplugin("xdist"):
            item.add_marker(pytest.mark.xdist_group("host-wide"))
    yield
    # After them: pytest-django puts the database tests first.
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))


_SERVER: list[redis_server.Server] = []


def pytest_configure(config: pytest.Config) -> None:
    """The first process of the run starts its Redis (an xdist worker inherits its address:
    workers start after this hook) and points its own settings, read before, at it."""
    # Celery takes CELERY_BROKER_URL from the environment over its settings: a developer's
    # (`CELERY_BROKER_URL=... make run` exported in the shell) would get the tests' tasks.
    for name in ("CELERY_BROKER_URL", "GRASS_CHANNEL_LAYER_URL"):
        os.environ.pop(name, None)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    try:
        server = redis_server.start()
    except RuntimeError as exc:
        os.environ.pop(redis_server.URL_VARIABLE, None)
        os.environ[redis_server.ERROR_VARIABLE] = str(exc)
        return
    _SERVER.append(server)
    os.environ[redis_server.URL_VARIABLE] = server.url
    os.environ.pop(redis_server.ERROR_VARIABLE, None)
    from django.conf import settings

    from ladder import settings_test

    for name, value in settings_test.redis_settings(server.url).items():
        setattr(settings, name, value)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _SERVER:
        redis_server.stop(_SERVER.pop())
