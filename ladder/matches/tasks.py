"""Celery tasks of matches: thin, they take an id and call one service."""

from __future__ import annotations

from ladder.celery import app
from ladder.matches.services import match_run


# acks_late: a worker that dies mid-match leaves the message to be delivered again; match_run
# claims the match with a conditional update, so a second delivery never plays it twice.
@app.task(acks_late=True)
def run_match(match_id: int) -> None:
    match_run(match_id=match_id)
