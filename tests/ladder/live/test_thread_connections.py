"""The live tables' tests close the database connections of the threads their scenarios use
(issue 37): a session left open on the test database keeps it from being dropped at the end."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from tests.ladder.live.conftest import in_thread, run_async

pytestmark = pytest.mark.django_db(transaction=True)

CLOSE_WAIT_S = 10.0
"""How long a closed connection's session may take to leave pg_stat_activity (its backend
ends a moment after the client said goodbye)."""


def backend_pid() -> int:
    """The session of the calling thread's connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def session_open(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return bool(cursor.fetchone()[0])


def session_ended(pid: int) -> bool:
    """Whether the session `pid` is gone, waiting at most CLOSE_WAIT_S for it to go."""
    deadline = time.monotonic() + CLOSE_WAIT_S
    while session_open(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_consumers_query_leaves_no_session_once_the_scenario_is_over() -> None:
    """Channels' test communicators turn off the closing of old connections after each
    `database_sync_to_async` call, as they do here; the thread those calls run on never ends,
    so `run_async` closes its connections."""

    async def scenario() -> int:
        with mock.patch("channels.db.close_old_connections", lambda: None):
            return await database_sync_to_async(backend_pid)()

    pid = run_async(scenario())
    assert pid != backend_pid()
    assert session_ended(pid)


def test_a_thread_of_in_thread_closes_its_connection_when_its_function_returns() -> None:
    """Looked at while the loop, and so its pool's thread, still runs."""

    async def scenario() -> tuple[int, bool]:
        pid = await in_thread(backend_pid)
        return pid, await in_thread(session_ended, pid)

    pid, ended = run_async(scenario())
    assert pid != backend_pid()
    assert ended
