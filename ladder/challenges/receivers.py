"""What challenges do when a match settles: a challenge's match frees a place in their share,
so the next waiting challenge is sent at once (not at the next beat tick)."""

from __future__ import annotations

from typing import Any

from ladder.challenges.models import Challenge


def on_match_settled(sender: Any, match_id: int, status: str, **_: Any) -> None:
    if Challenge.objects.filter(match_id=match_id).exists():
        from ladder.challenges.tasks import dispatch_challenges

        dispatch_challenges.delay()
