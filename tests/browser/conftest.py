"""Browser tests: the site served by pytest-django's `live_server`, driven by Playwright in
Debian's Chromium (/usr/bin/chromium; never a downloaded browser).

Where Chromium cannot start they are skipped, and on CI (`CI=true`) they fail, like the
sandbox's and PostgreSQL's tests. Screenshots go to artifacts/screenshots/ (not in git).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import (  # noqa: F401  (fixtures)
    asgi_server,
    celery,
    celery_env,
    redis_ready,
    worker_user,
)
from tests.ladder.conftest import (  # noqa: F401  (fixtures used by this folder's tests)
    _remove_test_media,
    _unavailable,
    django_db_setup,
    example_file,
    finished_match,
    owner,
    owners,
    postgres_ready,
    sandbox_ready,
    stranger,
    valid_version,
)

# Playwright's sync API keeps an asyncio loop on the main thread, where the tests also use the
# ORM; Django would take that loop for an async context and refuse.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def close_main_thread_connections() -> None:
    """Close this thread's database connections but one a test's transaction holds.

    While Playwright's loop runs on the main thread, Django takes that thread for async code
    and keeps its connections per async context (asgiref's Local): the tests' queries there
    open a connection apart from the one the thread had before the loop started, and that one
    is the thread's again once the loop stops. Each side's is closed as the loop starts and
    stops, or it stays open and idle to the end of the run, where the test database could not
    be dropped for it (issue 37)."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as exc:
        _unavailable("Playwright", exc)
    manager = sync_playwright()
    close_main_thread_connections()
    try:
        playwright = manager.start()
    except Exception as exc:  # Any failure to start the driver means no browser here.
        _unavailable("Playwright", exc)
    try:
        try:
            chromium = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
            )
        except Error as exc:
            _unavailable(f"Chromium at {CHROMIUM}", exc)
        yield chromium
        chromium.close()
    finally:
        close_main_thread_connections()
        manager.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    """No cached replay or counted upload left by another test (the live server shares this
    process's cache)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def same_origin(url: str, origin: str) -> bool:
    """Whether the page's request for `url` stays on the site at `origin` (data: and blob: URLs
    are the page's own bytes)."""
    return url.startswith((f"{origin}/", "data:", "blob:", "about:")) or url == origin


def foreign_requests(page: Any, origin: str) -> list[str]:
    """The list, filled as the page runs, of its requests to other origins than `origin`."""
    foreign: list[str] = []
    origin = origin.rstrip("/")
    page.on(
        "request",
        lambda request: None if same_origin(request.url, origin) else foreign.append(request.url),
    )
    return foreign


@pytest.fixture
def page(browser: Any, live_server: Any) -> Iterator[Any]:
    """A fresh desktop-sized page; console errors fail the test, and so does any request to
    another origin than the live server (a CDN, a font, a tracker: the site loads nothing from
    elsewhere)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    foreign = foreign_requests(page, live_server.url)
    yield page
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert not foreign, f"requests to other origins: {foreign}"


@pytest.fixture
def screenshot() -> Any:
    """`screenshot(page, name)`: a full-page PNG in artifacts/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
