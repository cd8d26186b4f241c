"""The matchmaker's `auto` capacity asks real workers over the real broker how many processes
and cores they have (our `grass_capacity` remote-control command): workers started and stopped
change the answer."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("redis_ready"),
]


def test_live_workers_report_their_processes_and_cores(celery: Any) -> None:
    import os

    from ladder.matchmaking.capacity import WorkerCapacity, worker_capacity

    cores = len(os.sched_getaffinity(0))
    assert worker_capacity(timeout=0.5) == WorkerCapacity(0, 0)  # none running yet
    # A worker without -Q reads every queue: its processes count for every pool (the people's
    # tables too).
    first = celery("worker", concurrency=2)
    assert worker_capacity() == WorkerCapacity(processes=2, cores=cores, now=2, tables=2)
    celery("worker", concurrency=3)
    assert worker_capacity() == WorkerCapacity(processes=5, cores=2 * cores, now=5, tables=5)
    first.stop()
    assert worker_capacity() == WorkerCapacity(processes=3, cores=cores, now=3, tables=3)


def test_a_quick_worker_counts_for_no_match(celery: Any) -> None:
    """A worker of the quick pool (`-Q celery`: validations, matchmaker, sweeps, webhooks)
    never takes a match, so the matches queued for its processes would only wait: it answers
    zeros, and the matchmaker sizes the queue by the match workers alone."""
    import os

    from ladder.matchmaking.capacity import WorkerCapacity, worker_capacity

    cores = len(os.sched_getaffinity(0))
    celery("worker", concurrency=2, queues="celery")
    assert worker_capacity() == WorkerCapacity(0, 0)
    celery("worker", concurrency=2, queues="matches")
    assert worker_capacity() == WorkerCapacity(processes=2, cores=cores)
    # The pool of what someone waits for (issue 35) counts apart: the matchmaker's background
    # games never count on it, and its lanes share it alone.
    celery("worker", concurrency=4, queues="now,challenges")
    assert worker_capacity() == WorkerCapacity(processes=2, cores=cores, now=4)
    # ... and so does the table host's (threads: one a table): people's tables, no match.
    celery("worker", concurrency=12, queues="tables", pool="threads")
    assert worker_capacity() == WorkerCapacity(processes=2, cores=cores, now=4, tables=12)
