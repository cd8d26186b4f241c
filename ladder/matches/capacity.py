"""How many matches the ladder may have queued or running at once.

The matchmaker keeps about two matches per worker process waiting or in play: enough that a
process never idles between matches, few enough that the queue never grows past what the
workers can drain. With GRASS_MATCH_CAPACITY=auto (the default) the number of processes comes
from the live workers themselves, asked over the broker (Celery's remote control `stats`), so
adding a worker host or losing one changes the flow without a settings change.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

CACHE_SECONDS = 30
"""How long one answer stands: the matchmaker runs every few seconds, and a broadcast waits
its full timeout for replies."""
CACHE_SECONDS_NONE = 5
"""...and how long "no worker answered" stands: a worker that has just started soon counts."""
REPLY_SECONDS = 1.0


def worker_processes(*, timeout: float = REPLY_SECONDS) -> int:
    """Worker processes of every worker that answers within `timeout` (0 if none does)."""
    from ladder.celery import app

    try:
        # A connection of its own, closed here: collecting the replies leaves a blocking read
        # pending on the connection, and a pooled one would carry it into every process forked
        # later (which then hangs closing it).
        with app.connection_for_write() as connection:
            inspect = app.control.inspect(timeout=timeout, connection=connection)
            replies: dict[str, Any] | None = inspect.stats()
    except Exception as exc:  # a broker that is down: no worker can be reached
        log.warning("could not ask the workers for their size: %s", exc)
        return 0
    total = 0
    for name, stats in (replies or {}).items():
        try:
            total += int(stats["pool"]["max-concurrency"])
        except (KeyError, TypeError, ValueError):
            log.warning("worker %s gave no pool size; counted as 1 process", name)
            total += 1
    return total


def match_capacity() -> int:
    """The most queued + running matches: GRASS_MATCH_CAPACITY, or with `auto` (None),
    GRASS_MATCHES_PER_WORKER_PROCESS times the live worker processes (cached briefly)."""
    fixed: int | None = settings.GRASS_MATCH_CAPACITY
    if fixed is not None:
        return fixed
    # One answer per broker: hosts that share a cache directory may talk to other brokers.
    key = f"grass:worker-processes:{settings.CELERY_BROKER_URL}"
    processes = cache.get(key)
    if processes is None:
        processes = worker_processes()
        if processes == 0:
            log.warning("no Celery worker answered: the matchmaker queues nothing")
        cache.set(key, processes, CACHE_SECONDS if processes else CACHE_SECONDS_NONE)
    return int(processes) * int(settings.GRASS_MATCHES_PER_WORKER_PROCESS)
