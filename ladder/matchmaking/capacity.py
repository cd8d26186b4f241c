"""How much the ladder may have queued or running at once: matches, and seats.

Two limits, both from the live workers when GRASS_MATCH_CAPACITY is `auto` (the default),
asked over the broker (a remote-control command of ours, `grass_capacity`), so adding a worker
host or losing one changes the flow without a settings change:

- matches: GRASS_MATCHES_PER_WORKER_PROCESS (2) per worker process, so a process never idles
  between matches and the queue never outgrows what the workers drain;
- seats: GRASS_SEATS_PER_CORE (8) per CPU core of the workers. A box gets up to one CPU, and at
  a table only the seat on turn runs, so a core serves about one four-seat table at a time;
  twice that is kept queued or running. Counting seats against cores is what keeps a worker
  with more processes than cores from running more tables than its cores can serve: extra
  work waits in the queue instead of slowing every match on the host. (Bots' clocks are CPU
  time, so an overloaded host would not make its bots lose; it would only make matches slow.)
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from celery.worker.control import inspect_command
from django.conf import settings
from django.core.cache import cache

from ladder.matches.workers import takes_matches

log = logging.getLogger(__name__)

CACHE_SECONDS = 30
"""How long one answer stands: the matchmaker runs every few seconds, and a broadcast waits
its full timeout for replies."""
CACHE_SECONDS_NONE = 5
"""...and how long "no worker answered" stands: a worker that has just started soon counts."""
REPLY_SECONDS = 1.0


@dataclass(frozen=True)
class WorkerCapacity:
    """What the live workers have, summed: pool processes and the CPU cores they may use."""

    processes: int = 0
    cores: int = 0


@inspect_command()
def grass_capacity(state: Any, **_: Any) -> dict[str, int]:
    """Answered by each worker: its pool size and the cores this process may run on, or zeros
    from a worker that takes no matches (a quick worker, `-Q celery`, or one that refused the
    matches queue at start): the matches queued for it would wait for ever."""
    if not takes_matches(state.consumer):
        return {"processes": 0, "cores": 0}
    processes = getattr(state.consumer.pool, "limit", None) or 1
    return {"processes": int(processes), "cores": len(os.sched_getaffinity(0))}


def worker_capacity(*, timeout: float = REPLY_SECONDS) -> WorkerCapacity:
    """Processes and cores of every worker that answers within `timeout` (zeros if none)."""
    from ladder.celery import app

    try:
        # A connection of its own, closed here: collecting the replies leaves a blocking read
        # pending on the connection, and a pooled one would carry it into every process forked
        # later (which then hangs closing it).
        with app.connection_for_write() as connection:
            replies: list[dict[str, Any]] | None = app.control.broadcast(
                "grass_capacity", reply=True, timeout=timeout, connection=connection
            )
    except Exception as exc:  # a broker that is down: no worker can be reached
        log.warning("could not ask the workers for their size: %s", exc)
        return WorkerCapacity()
    processes = cores = 0
    for reply in replies or []:
        for name, answer in reply.items():
            try:
                worker_processes = int(answer["processes"])
                worker_cores = int(answer["cores"])
            except (KeyError, TypeError, ValueError):
                log.warning(
                    "worker %s gave no size (%r); counted as 1 process, 1 core", name, answer
                )
                worker_processes = worker_cores = 1
            processes += worker_processes
            cores += worker_cores
    return WorkerCapacity(processes=processes, cores=cores)


def worker_processes(*, timeout: float = REPLY_SECONDS) -> int:
    """Worker processes of every worker that answers within `timeout` (0 if none does)."""
    return worker_capacity(timeout=timeout).processes


def _live_capacity() -> WorkerCapacity:
    # One answer per broker: hosts that share a cache directory may talk to other brokers.
    key = f"grass:worker-capacity:{settings.CELERY_BROKER_URL}"
    cached = cache.get(key)
    if isinstance(cached, WorkerCapacity):
        return cached
    found = worker_capacity()
    if found.processes == 0:
        log.warning("no Celery worker answered: the matchmaker queues nothing")
    cache.set(key, found, CACHE_SECONDS if found.processes else CACHE_SECONDS_NONE)
    return found


def match_capacity() -> int:
    """The most queued + running matches: GRASS_MATCH_CAPACITY, or with `auto` (None),
    GRASS_MATCHES_PER_WORKER_PROCESS times the live worker processes (cached briefly)."""
    fixed: int | None = settings.GRASS_MATCH_CAPACITY
    if fixed is not None:
        return fixed
    return _live_capacity().processes * int(settings.GRASS_MATCHES_PER_WORKER_PROCESS)


def seat_capacity() -> int | None:
    """The most seats in queued + running matches: with `auto` capacity, GRASS_SEATS_PER_CORE
    times the live workers' cores; None (no limit beyond the matches') when
    GRASS_MATCH_CAPACITY is a fixed number."""
    if settings.GRASS_MATCH_CAPACITY is not None:
        return None
    return _live_capacity().cores * int(settings.GRASS_SEATS_PER_CORE)
