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
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

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
