"""The matchmaker's `auto` capacity asks real workers over the real broker how many processes
they run: workers started and stopped change the answer."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("redis_ready"),
]


def test_live_workers_report_their_processes(celery: Any) -> None:
    from ladder.matches.capacity import worker_processes

    assert worker_processes(timeout=0.5) == 0  # none running yet
    first = celery("worker", concurrency=2)
    assert worker_processes() == 2
    celery("worker", concurrency=3)
    assert worker_processes() == 5
    first.stop()
    assert worker_processes() == 3
