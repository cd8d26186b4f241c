"""Celery task of the matchmaker: thin, it calls one service. `matchmaker_tick` runs on Celery
beat (CELERY_BEAT_SCHEDULE in settings)."""

from __future__ import annotations

# The workers' `grass_capacity` remote-control command is registered when this is imported.
from ladder.celery import app
from ladder.matchmaking import capacity  # noqa: F401
from ladder.matchmaking.services import matchmaker_run


@app.task
def matchmaker_tick() -> None:
    matchmaker_run()
