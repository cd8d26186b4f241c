"""The ratings app listens to matches: a rated match is rated in the transaction that records
it (`ladder.matches.signals.match_recorded`), so a result and its rating changes are written
together or not at all, and matches need not import ratings. Likewise a bot whose version
passes validation gets its rows in the matchmaker's pool in that transaction."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from ladder.bots.signals import bot_version_validated
from ladder.matches.models import Match
from ladder.matches.signals import match_recorded
from ladder.ratings.services import rating_apply, rating_pool_join


@receiver(match_recorded)
def rate_recorded_match(*, match: Match, **_: Any) -> None:
    if match.rated:
        rating_apply(match=match)


@receiver(bot_version_validated)
def pool_validated_bot(*, bot_id: int, **_: Any) -> None:
    rating_pool_join(bot_id=bot_id)
