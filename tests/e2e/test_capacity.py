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
