"""Beat's schedule as beat really sends it: every entry of CELERY_BEAT_SCHEDULE goes out with an
expiry, through the scheduler the site runs (django-celery-beat's DatabaseScheduler) and the
real broker (the tests' Redis database).

The scheduler stores each entry in a PeriodicTask row and keeps only the options it knows: an
`expires` option was dropped on the way, so ticks that waited behind a busy worker never
expired and the quick queue grew by a dozen stale matchmaker ticks a minute (issue 25).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests import redis_server

# transaction=True: the scheduler commits and closes connections itself, as beat does.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_client(settings: Any) -> Any:
    """This test process's broker database of the run's own Redis, emptied (a CI machine
    without redis-server fails here)."""
    return redis_server.emptied(settings.CELERY_BROKER_URL)


@pytest.fixture
def scheduler() -> Iterator[Any]:
    """The site's beat scheduler, set up from the settings as `celery beat` sets it up."""
    from django.conf import settings
    from django_celery_beat.schedulers import DatabaseScheduler

    from ladder.celery import app

    assert settings.CELERY_BEAT_SCHEDULER == "django_celery_beat.schedulers:DatabaseScheduler"
    beat = DatabaseScheduler(app=app)
    yield beat
    beat._finalize.cancel()  # its exit hook writes to a database that is gone by then


def _messages(client: Any) -> list[dict[str, Any]]:
    """Every message waiting in the broker, whatever its queue (kombu keeps a queue as a Redis
    list of JSON documents)."""
    found = []
    for key in client.keys("*"):
        if client.type(key) == b"list":
            found += [json.loads(raw) for raw in client.lrange(key, 0, -1)]
    return found


def test_every_beat_entry_is_sent_with_an_expiry_of_at_most_its_period(
    settings: Any, scheduler: Any, redis_client: Any
) -> None:
    entries = settings.CELERY_BEAT_SCHEDULE
    assert entries
    sent_at = timezone.now()
    for name in entries:
        scheduler.apply_async(scheduler.schedule[name])

    messages = {m["headers"]["task"]: m for m in _messages(redis_client)}
    assert set(messages) == {entry["task"] for entry in entries.values()}
    for name, entry in entries.items():
        headers = messages[entry["task"]]["headers"]
        assert headers["periodic_task_name"] == name  # sent by the database scheduler
        assert headers["expires"] is not None, f"beat sends {name!r} without an expiry"
        expires = datetime.fromisoformat(headers["expires"]) - sent_at
        # Dropped once the next tick is due: a tick that waited is not worth running.
        assert timedelta(seconds=1) <= expires <= timedelta(seconds=entry["schedule"] + 5), name
        body = json.loads(base64.b64decode(messages[entry["task"]]["body"]))
        assert body[0] == [], name  # the ticks take no arguments
