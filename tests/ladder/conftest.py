"""Fixtures for the ladder site's tests: PostgreSQL, the sandbox, users and bots.

The Django tests run on a real PostgreSQL (ladder/settings_test.py). When it does not answer,
they fail on CI (`CI=true`) and are skipped elsewhere, like the sandbox's tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from bots.runner import sandbox


def _unavailable(what: str, exc: Exception) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} must work on CI: {exc}")
    pytest.skip(f"{what} unavailable here: {exc}")


@pytest.fixture(scope="session")
def postgres_ready() -> None:
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    try:
        psycopg.connect(
            host=db.get("HOST") or "127.0.0.1",
            port=int(db.get("PORT") or 5432),
            user=db.get("USER") or "postgres",
            password=db.get("PASSWORD") or None,
            dbname="postgres",
            connect_timeout=3,
        ).close()
    except psycopg.Error as exc:
        _unavailable("PostgreSQL", exc)


@pytest.fixture(scope="session")
def django_db_setup(
    postgres_ready: None, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[None]:
    """pytest-django's test database, created only once PostgreSQL is known to answer; at the
    end, every other session on it closed before pytest-django drops it (issue 37: the drop
    failed with "database ... is being accessed by other users" and left it behind)."""
    yield
    with django_db_blocker.unblock():
        _close_database_sessions()


SESSIONS_CLOSE_TIMEOUT = 30.0


def _other_sessions() -> list[tuple[int, str, str, str]]:
    """The test database's sessions but this connection's: pid, application, state, query."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, application_name, state, left(query, 120) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return list(cursor.fetchall())


def _close_database_sessions() -> None:
    """Wait for the test database's other sessions to go before pytest-django drops it, and
    name in a warning those still open after SESSIONS_CLOSE_TIMEOUT. Nothing is terminated
    (pg_terminate_backend here once killed the test processes' own connections mid-teardown in
    CI): a session left open is a leak, to be fixed where it is opened.

    The rule: a thread that uses the database closes its connection when it is done with it.
    Django keeps a connection per thread, and one a thread leaves open stays open while the
    thread lives (a pool's thread, such as asgiref's for `database_sync_to_async`: to the end of
    the run), then until the garbage collector frees the dead thread's storage (collected here
    first, as a last resort). How the tests keep to it: the threads they start close their
    connection when their function returns (`in_thread`, and `run_async` for asgiref's thread,
    in tests/ladder/live/conftest.py); the browser tests close the main thread's connections as
    Playwright's loop starts and stops, since Django keeps that thread's connections apart
    while the loop runs (tests/browser/conftest.py); the site's own threads (a match's
    heartbeat, the breaker's proof) close theirs on exit. The Celery workers and daphne the
    end-to-end tests start are stopped after each test, but PostgreSQL notices a killed
    client's session a moment later: those are what the wait is for."""
    import gc
    import time
    import warnings

    gc.collect()
    deadline = time.monotonic() + SESSIONS_CLOSE_TIMEOUT
    while (left := _other_sessions()) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        warnings.warn(
            "sessions still open on the test database at its teardown (a thread that used the"
            f" database and did not close its connection, or a process not stopped): {left}",
            stacklevel=1,
        )


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Every test starts with an empty cache: no cached replay, and none of the hourly counts
    (`ladder.hourly`: replays, sign-ups) that earlier tests in this process spent."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def _remove_test_media() -> Iterator[None]:
    """ladder/settings_test.py points MEDIA_ROOT at a fresh temporary folder; remove it after."""
    yield
    import shutil

    from django.conf import settings

    if "grass-test-media-" in str(settings.MEDIA_ROOT):
        shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        sandbox.check()
    except sandbox.SandboxUnavailable as exc:
        _unavailable("the bot sandbox", exc)


@pytest.fixture
def owner(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="ann", password="pw")


@pytest.fixture
def stranger(django_user_model: Any) -> Any:
    """A signed-up user who owns nothing the test looks at."""
    return django_user_model.objects.create_user(username="bo", password="pw")


PERSONAS = ("owner", "stranger", "anonymous")
"""Who may call an API: `owner` (of the bot in question), `stranger`, `anonymous`."""


@pytest.fixture
def api(owner: Any, stranger: Any) -> Any:
    """`api(persona)`: a REST client for one of PERSONAS, signed in with the user's API token
    (`Authorization: Token ...`), as a script would be; `anonymous` sends no credentials."""
    from rest_framework.test import APIClient

    from ladder.accounts.services import token_get_or_create

    users = {"owner": owner, "stranger": stranger, "anonymous": None}

    def make(persona: str) -> APIClient:
        client = APIClient()
        user = users[persona]
        if user is not None:
            token = token_get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def owners(django_user_model: Any) -> Any:
    """`make(n)`: n new users (`author0`, `author1`, ...), unlinked: the owners of bots that
    must be able to share a rated table."""
    made: list[Any] = []

    def make(n: int) -> list[Any]:
        start = len(made)
        made.extend(
            django_user_model.objects.create_user(username=f"author{i}", password="pw")
            for i in range(start, start + n)
        )
        return made[start:]

    return make


@pytest.fixture
def example_file() -> Any:
    """The bytes of an example bot's `bot.py`, as its author would upload it."""
    from bots.runner.botfiles import load_bot

    return lambda name: load_bot(name).files["bot.py"]


@pytest.fixture
def valid_version(owner: Any, example_file: Any) -> Any:
    """`make(name, example, by=user)`: a bot of `owner` (or of `by`) with one version of an
    example bot, marked valid without playing its validation game (the upload tests play
    those). Bots of one owner never share a rated table the matchmaker or a tournament makes:
    tests of those give each bot an owner of its own (`owners`)."""
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload
    from ladder.ratings.services import rating_pool_enter

    def make(name: str, example: str = "random", *, by: Any = None) -> BotVersion:
        bot = bot_create(owner=by or owner, name=name)
        version = bot_version_upload(bot=bot, filename="bot.py", data=example_file(example))
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        # What bot_version_validate calls with a valid verdict: the matchmaker's pool.
        rating_pool_enter(bot_id=version.bot_id)
        version.refresh_from_db()
        return version

    return make


@pytest.fixture
def finished_match() -> Any:
    """`make(versions, places, ruleset="modern")`: a finished match with the given places,
    as match_run leaves it before rating (no game is played)."""
    from ladder.matches.models import Match, MatchSeat
    from ladder.matches.records import SeatResult, bot_records_add

    def make(versions: list[Any], places: list[int], ruleset: str = "modern") -> Match:
        match = Match.objects.create(ruleset=ruleset, status=Match.Status.FINISHED)
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=i, bot_version=v, bot_id=v.bot_id, place=p)
            for i, (v, p) in enumerate(zip(versions, places, strict=True))
        )
        # As the recording service does: the bots' kept records take the match.
        bot_records_add(
            seats=[
                SeatResult(v.bot_id, i, p, {})
                for i, (v, p) in enumerate(zip(versions, places, strict=True))
            ]
        )
        return match

    return make


def rated_games(*, ruleset: str) -> list[list[tuple[int, int]]]:
    """Every rated match in `ruleset` in the order it was rated, as `elo.recompute` takes it:
    one list of (bot id, place) per match (read back from the stored rating changes)."""
    from ladder.ratings.models import RatingChange

    games: dict[int, list[tuple[int, int]]] = {}
    changes = RatingChange.objects.filter(ruleset=ruleset).order_by("id")
    for change in changes.only("match_id", "bot_id", "place"):
        games.setdefault(change.match_id, []).append((change.bot_id, change.place))
    return list(games.values())
