"""Signals of tournaments: how other apps (notifications) hear of a tournament's progress
without tournaments importing them."""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from ladder.tournaments.models import Tournament

tournament_status_changed = Signal()
"""Sent with `tournament_id` and `status` (a `Tournament.Status` value: "running" when it
starts, "finished" when its last round ends), after the transaction that changed it commits."""


def tournament_status_changed_on_commit(*, tournament_id: int, status: str) -> None:
    """Send `tournament_status_changed` once the surrounding transaction commits: a listener
    must find the new status in the database, and a rolled-back change is never announced."""
    transaction.on_commit(
        lambda: tournament_status_changed.send(
            sender=Tournament, tournament_id=tournament_id, status=status
        )
    )
