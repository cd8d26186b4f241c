"""The ratings app listens to matches: a rated match is rated in the transaction that records
it (`ladder.matches.signals.match_recorded`), so a result and its rating changes are written
together or not at all, and matches need not import ratings."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from ladder.matches.models import Match
from ladder.matches.signals import match_recorded
from ladder.ratings.services import rating_apply


@receiver(match_recorded)
def rate_recorded_match(*, match: Match, **_: Any) -> None:
    if match.rated:
        rating_apply(match=match)
