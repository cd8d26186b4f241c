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
import time
from dataclasses import dataclass
from typing import Any

from celery.worker.control import inspect_command
from django.conf import settings

from ladder import shared_cache
from ladder.matches.lanes import NOW_QUEUE, Lane, lane_queue, lane_slots
from ladder.matches.workers import takes_matches, takes_queue

log = logging.getLogger(__name__)

CACHE_SECONDS = 30
"""How long one answer stands for the matchmaker: it runs every few seconds, and a broadcast
waits its full timeout for replies."""
KEEP_SECONDS = 90
"""How long one answer is kept for a person's request (`now_capacity(waiting=True)`): the
matchmaker's ticks renew it every CACHE_SECONDS, so a request never waits for a broadcast
(1 s of a person's game's start, measured by bench_latency) while beat runs."""
CACHE_SECONDS_NONE = 5
"""...and how long "no worker answered" stands: a worker that has just started soon counts."""
REPLY_SECONDS = 1.0


@dataclass(frozen=True)
class WorkerCapacity:
    """What the live workers have, summed: pool processes and the CPU cores they may use."""

    processes: int = 0
    cores: int = 0
    now: int = 0
    """Pool processes of the workers that read the `now` queue (`ladder.matches.lanes`)."""
    tables: int = 0
    """Tables (pool threads) of the workers that read the people's queue when it is not
    `now`: the table hosts (GRASS_PLAY_QUEUE, `tables`)."""


@inspect_command()
def grass_capacity(state: Any, **_: Any) -> dict[str, int]:
    """Answered by each worker: its pool size and the cores this process may run on, or zeros
    from a worker that takes no matches (a quick worker, `-Q celery`, or one that refused the
    matches queue at start): the matches queued for it would wait for ever; and, apart, its
    pool size if it reads the `now` queue (the pool of the work someone waits for), and if it
    reads the people's queue of a table host (`tables`)."""
    processes = int(getattr(state.consumer.pool, "limit", None) or 1)
    now = processes if takes_queue(state.consumer, NOW_QUEUE) else 0
    people = lane_queue(Lane.PERSON)
    tables = processes if people != NOW_QUEUE and takes_queue(state.consumer, people) else 0
    if not takes_matches(state.consumer):
        return {"processes": 0, "cores": 0, "now": now, "tables": tables}
    return {
        "processes": processes,
        "cores": len(os.sched_getaffinity(0)),
        "now": now,
        "tables": tables,
    }


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
    processes = cores = now = tables = 0
    for reply in replies or []:
        for name, answer in reply.items():
            try:
                worker_processes = int(answer["processes"])
                worker_cores = int(answer["cores"])
                # A worker of before the `now` queue answers without it: it reads none.
                worker_now = int(answer.get("now", 0))
                worker_tables = int(answer.get("tables", 0))
            except (AttributeError, KeyError, TypeError, ValueError):
                log.warning(
                    "worker %s gave no size (%r); counted as 1 process, 1 core", name, answer
                )
                worker_processes = worker_cores = 1
                worker_now = worker_tables = 0
            processes += worker_processes
            cores += worker_cores
            now += worker_now
            tables += worker_tables
    return WorkerCapacity(processes=processes, cores=cores, now=now, tables=tables)


def worker_processes(*, timeout: float = REPLY_SECONDS) -> int:
    """Worker processes of every worker that answers within `timeout` (0 if none does)."""
    return worker_capacity(timeout=timeout).processes


def _live_capacity(*, waiting: bool = False) -> WorkerCapacity:
    """The live workers' answer, asked again when older than CACHE_SECONDS (KEEP_SECONDS for
    a request someone `waiting` made)."""
    # One answer per broker: hosts that share a cache directory may talk to other brokers.
    key = f"grass:worker-capacity:{settings.CELERY_BROKER_URL}"
    # A cache that is down costs a broadcast per tick (fail open: the answer is the workers').
    cached = shared_cache.get(key)
    if isinstance(cached, tuple) and len(cached) == 2 and isinstance(cached[0], WorkerCapacity):
        answer: WorkerCapacity = cached[0]
        if time.time() - float(cached[1]) < (KEEP_SECONDS if waiting else CACHE_SECONDS):
            return answer
    found = worker_capacity()
    if found.processes == 0 and found.now == 0 and found.tables == 0:
        log.warning("no Celery worker answered: the matchmaker queues nothing")
    kept = KEEP_SECONDS if found.processes or found.now or found.tables else CACHE_SECONDS_NONE
    shared_cache.put(key, (found, time.time()), kept)
    return found


def match_capacity() -> int:
    """The most queued + running matches: GRASS_MATCH_CAPACITY, or with `auto` (None),
    GRASS_MATCHES_PER_WORKER_PROCESS times the live worker processes (cached briefly)."""
    fixed: int | None = settings.GRASS_MATCH_CAPACITY
    if fixed is not None:
        return fixed
    return _live_capacity().processes * int(settings.GRASS_MATCHES_PER_WORKER_PROCESS)


def match_places(*, waiting: bool = False) -> int:
    """How many background games are played at once: the processes of the live workers that
    take them with `auto` capacity; with a fixed GRASS_MATCH_CAPACITY, that capacity over
    GRASS_MATCHES_PER_WORKER_PROCESS, rounded up."""
    fixed: int | None = settings.GRASS_MATCH_CAPACITY
    if fixed is not None:
        per_process = max(1, int(settings.GRASS_MATCHES_PER_WORKER_PROCESS))
        return max(0, -(-fixed // per_process))
    return _live_capacity(waiting=waiting).processes


def now_capacity(*, waiting: bool = False) -> int:
    """The processes of the pool of the work someone waits for (`ladder.matches.lanes`):
    GRASS_NOW_CAPACITY, or with `auto` (None), those of the live workers that read the `now`
    queue (cached briefly; longer for a request someone is `waiting` on, which the
    matchmaker's ticks keep fresh). Each lane holds its share of them."""
    fixed: int | None = settings.GRASS_NOW_CAPACITY
    if fixed is not None:
        return fixed
    return _live_capacity(waiting=waiting).now


def person_places(*, waiting: bool = False) -> int:
    """How many people's games the site may hold, queued or running: GRASS_PLAY_GAMES_MAX
    when set; else, on table hosts (GRASS_PLAY_QUEUE other than `now`, by default `tables`),
    GRASS_TABLES_CAPACITY, or with `auto` their threads (cached as `now_capacity`); else
    GRASS_PLAY_SHARE of the `now` pool (at least one while it is up, `lanes.lane_slots`)."""
    fixed = int(settings.GRASS_PLAY_GAMES_MAX)
    if fixed > 0:
        return fixed
    if lane_queue(Lane.PERSON) != NOW_QUEUE:
        tables: int | None = settings.GRASS_TABLES_CAPACITY
        return tables if tables is not None else _live_capacity(waiting=waiting).tables
    return lane_slots(Lane.PERSON, capacity=now_capacity(waiting=waiting))


def seat_capacity() -> int | None:
    """The most seats in queued + running matches: with `auto` capacity, GRASS_SEATS_PER_CORE
    times the live workers' cores; None (no limit beyond the matches') when
    GRASS_MATCH_CAPACITY is a fixed number."""
    if settings.GRASS_MATCH_CAPACITY is not None:
        return None
    return _live_capacity().cores * int(settings.GRASS_SEATS_PER_CORE)
