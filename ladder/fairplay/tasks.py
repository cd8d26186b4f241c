"""Celery task of fair play: thin, it calls one service."""

from __future__ import annotations

from typing import Any

from ladder.celery import app
from ladder.fairplay.services import LogNotStored, match_flows_record


@app.task(bind=True, max_retries=20, default_retry_delay=60)
def match_flows(self: Any, match_id: int) -> dict[str, Any]:
    """Sent once a rated match is recorded (`matches.recording._match_record`, on commit): its
    flows into the test of each pair of its bots and of its seating circles. A log still waiting
    for the storage is tried again later."""
    try:
        recorded = match_flows_record(match_id=match_id)
    except LogNotStored as exc:
        raise self.retry(exc=exc) from None
    return {
        "pairs": recorded.pairs,
        "flagged": recorded.flagged,
        "circles": recorded.circles,
        "circles_flagged": recorded.circles_flagged,
    }
