"""Sending a Celery task once the transaction commits, without a broker outage becoming the
caller's error.

By then what the task works on is stored (an upload, a match, a delivery): with Redis down,
raising would answer a request 500 (or fail a worker's recording) for work that is safe and
that a sweep on beat sends again once Redis is back. So a send that fails is logged at
WARNING, naming that sweep, and the caller goes on. (`delay_on_commit` raised it.)
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)


def send_now(
    task: Any,
    *args: Any,
    queue: str | None = None,
    priority: int | None = None,
    recovery: str,
) -> bool:
    """`task.delay(*args)` (on `queue`, with `priority`, if given): True if the broker took it;
    else logged, with `recovery` (what sends it again, e.g. "the sweep sends it within a
    minute")."""
    try:
        if queue is None and priority is None:
            task.delay(*args)
        else:
            options = {"queue": queue, "priority": priority}
            task.apply_async(args, **{k: v for k, v in options.items() if v is not None})
    except Exception:
        logger.warning(
            "%s%r could not be sent (is the broker down?); %s",
            getattr(task, "name", task),
            args,
            recovery,
            exc_info=True,
        )
        return False
    return True


def send_on_commit(
    task: Any,
    *args: Any,
    queue: str | None = None,
    priority: int | None = None,
    recovery: str,
) -> None:
    """`send_now(...)` once the surrounding transaction commits (at once outside one)."""
    transaction.on_commit(
        lambda: send_now(task, *args, queue=queue, priority=priority, recovery=recovery)
    )
