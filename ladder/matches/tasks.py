"""Celery tasks of matches: thin, they take an id (or nothing) and call one service.

`matchmaker_tick` and `sweep_matches` run on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

from ladder.celery import app
from ladder.matches.services import (
    match_requeue_stale,
    match_resend_lost,
    match_retry_failed,
    match_run,
    matchmaker_run,
)


# acks_late: a worker that dies mid-match leaves the message to be delivered again; match_run
# claims the match with a conditional update, so a second delivery never plays it twice.
@app.task(acks_late=True)
def run_match(match_id: int) -> None:
    match_run(match_id=match_id)


@app.task
def matchmaker_tick() -> None:
    matchmaker_run()


@app.task
def sweep_matches() -> None:
    match_requeue_stale()
    match_resend_lost()
    match_retry_failed()
