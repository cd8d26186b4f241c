"""What tournaments do when a match settles: queue `progress_tournament` for its tournament."""

from __future__ import annotations

from typing import Any

from ladder.tournaments.models import TableGame


def on_match_settled(sender: Any, match_id: int, status: str, **_: Any) -> None:
    tournament_id = (
        TableGame.objects.filter(match_id=match_id)
        .values_list("table__round__tournament_id", flat=True)
        .first()
    )
    if tournament_id is not None:
        from ladder.tournaments.tasks import progress_tournament

        progress_tournament.delay(tournament_id)
