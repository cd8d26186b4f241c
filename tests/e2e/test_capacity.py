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
    first = celery("worker", concurrency=2)
    assert worker_capacity() == WorkerCapacity(processes=2, cores=cores)
    celery("worker", concurrency=3)
    assert worker_capacity() == WorkerCapacity(processes=5, cores=2 * cores)
    first.stop()
    assert worker_capacity() == WorkerCapacity(processes=3, cores=cores)


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
