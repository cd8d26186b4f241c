"""Celery tasks of notifications: thin, they take an id (or nothing) and call one service.

`sweep_deliveries` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

from typing import Any

from ladder.celery import app
from ladder.notifications.services import deliveries_requeue_overdue, delivery_send


# acks_late: a worker that dies mid-send leaves the message to be delivered again; the service
# claims each attempt with a conditional update, so no attempt is made twice and a delivered
# delivery is never sent again. The time limits bound a receiver that answers byte by byte
# (the socket timeout only bounds each read). max_retries=None: the service counts attempts.
@app.task(bind=True, acks_late=True, max_retries=None, soft_time_limit=60, time_limit=90)
def deliver(self: Any, delivery_id: int) -> None:
    sent = delivery_send(delivery_id=delivery_id)
    if sent.retry_in is not None:
        raise self.retry(countdown=sent.retry_in)


@app.task
def sweep_deliveries() -> None:
    deliveries_requeue_overdue()
