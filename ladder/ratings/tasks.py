"""Celery task of ratings: thin, it calls one service."""

from __future__ import annotations

from ladder.celery import app
from ladder.ratings.rebuild import rating_rebuild


@app.task
def rebuild_ratings(ruleset: str) -> dict[str, int]:
    """Rebuild `ruleset`'s ratings from its rated matches and store them (after a Void in the
    admin: `rebuild.matches_void`). Recording goes on meanwhile (`rating_rebuild`)."""
    report = rating_rebuild(ruleset=ruleset, apply=True)
    return {"matches": report.matches, "bots": report.bots, "changed": len(report.differences)}
