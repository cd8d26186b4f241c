"""A running match's heartbeat: while a worker process plays a match, a thread of that process
writes the database's clock into the match's row every GRASS_MATCH_HEARTBEAT_SECONDS.

The sweep then tells a match whose worker died (its heartbeat stopped) from a long match (it
beats) within about a minute (`services.match_requeue_stale`), where it used to wait for the
longest a match may take (GRASS_MATCH_STALE_SECONDS, 30 minutes). The time written is the
database's (`Now()`), and the sweep compares it with the database's, so the hosts' clocks never
matter. A thread, not the game loop: the game runs in the sandboxed runner, which knows nothing
of the database, and a thread beats just the same while a bot thinks for seconds.

The beat is a conditional update on the claim (status running, this claim's start), so a
worker whose match was taken back (the sweep thought it lost) stops beating for it; its result
is then not recorded either (`services._match_record` checks the same claim).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime

from django.conf import settings
from django.db import Error, connection
from django.db.models.functions import Now

from ladder.matches.models import Match

logger = logging.getLogger(__name__)

RETRY_SECONDS = 1.0
"""How soon a beat that failed (the database unreachable) is tried again: once the database is
back, the match must show a fresh heartbeat before a sweep judges it silent."""
JOIN_SECONDS = 5.0
"""How long the end of a match waits for a beat in progress (one UPDATE; a database that does
not answer leaves the thread to finish on its own, a daemon)."""


def match_heartbeat_write(*, match_id: int, started: datetime) -> bool:
    """Write the heartbeat of the match claimed at `started`; returns whether that claim still
    holds (False: it was taken back or is recorded, and must not beat again)."""
    return bool(
        Match.objects.filter(pk=match_id, status=Match.Status.RUNNING, started=started).update(
            heartbeat=Now()
        )
    )


@contextmanager
def match_heartbeat(*, match_id: int, started: datetime) -> Iterator[None]:
    """Beat for the match claimed at `started` while the block runs (its play and its
    recording), from a thread that opens a database connection of its own for each beat."""
    stop = threading.Event()
    thread = threading.Thread(
        target=_beat, args=(match_id, started, stop), name=f"heartbeat-{match_id}", daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(JOIN_SECONDS)


def _beat(match_id: int, started: datetime, stop: threading.Event) -> None:
    interval = float(settings.GRASS_MATCH_HEARTBEAT_SECONDS)
    wait, failing = interval, False
    try:
        while not stop.wait(wait):
            try:
                holds = match_heartbeat_write(match_id=match_id, started=started)
            except Error as exc:
                if not failing:
                    logger.warning("match %s: heartbeat not written, retrying: %s", match_id, exc)
                failing, wait = True, min(RETRY_SECONDS, interval)
                continue
            finally:
                # One connection per beat, closed at once: a playing process holds no second
                # session between beats (PostgreSQL's connections are the scarce part), and a
                # restart of the server leaves nothing stale to stumble on.
                _drop_connection()
            if failing:
                logger.info("match %s: heartbeat written again", match_id)
            failing, wait = False, interval
            if not holds:
                if stop.is_set():  # recorded just now: the claim ended as it should
                    return
                logger.warning(
                    "match %s: taken back from this worker (thought lost); its result here "
                    "will not be recorded",
                    match_id,
                )
                return
    finally:
        _drop_connection()


def _drop_connection() -> None:
    """Close this thread's database connection (a broken one is replaced at the next query)."""
    with suppress(Error):
        connection.close()
