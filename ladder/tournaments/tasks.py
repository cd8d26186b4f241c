"""Celery tasks of tournaments: thin, they take an id (or nothing) and call one service.

`tick_tournament` runs at each tournament's set times from django-celery-beat's database
schedule; `sweep_tournaments` runs every 30 s from CELERY_BEAT_SCHEDULE; `progress_tournament`
runs when one of a tournament's games settles.
"""

from __future__ import annotations

from ladder.celery import app
from ladder.tournaments import services
from ladder.tournaments.models import Tournament


@app.task(name="ladder.tournaments.tasks.tournament_tick")
def tick_tournament(tournament_id: int) -> None:
    services.tournament_tick(tournament_id=tournament_id)


@app.task(acks_late=True)
def progress_tournament(tournament_id: int) -> None:
    services.tournament_progress(tournament_id=tournament_id)


@app.task
def sweep_tournaments() -> None:
    """The safety net: a clock entry or a progress message that got lost is made up for."""
    live = Tournament.objects.exclude(
        status__in=[Tournament.Status.FINISHED, Tournament.Status.CANCELLED]
    ).values_list("id", flat=True)
    for tournament_id in live:
        services.tournament_tick(tournament_id=tournament_id)
        services.tournament_progress(tournament_id=tournament_id)
