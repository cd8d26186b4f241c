"""Reading matches."""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.matches.models import MatchSeat


def match_seats(*, match_id: int) -> QuerySet[MatchSeat]:
    """The match's seats in seat order, with their versions and bots."""
    return (
        MatchSeat.objects.filter(match_id=match_id)
        .select_related("bot_version__bot")
        .order_by("seat")
    )
