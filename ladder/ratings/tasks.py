"""Celery task of ratings: thin, it calls one service."""

from __future__ import annotations

from ladder.celery import app
from ladder.ratings.rebuild import rating_rebuild
from ladder.ratings.selectors import leaderboard
from ladder.ratings.services import ladder_rulesets


@app.task
def rebuild_ratings(ruleset: str) -> dict[str, int]:
    """Rebuild `ruleset`'s ratings from its rated matches and store them (after a Void in the
    admin: `rebuild.matches_void`). Recording goes on meanwhile (`rating_rebuild`)."""
    report = rating_rebuild(ruleset=ruleset, apply=True)
    return {"matches": report.matches, "bots": report.bots, "changed": len(report.differences)}


@app.task
def keep_leaderboards() -> dict[str, int]:
    """Beat's "leaderboards" entry: each ladder ruleset's big board counted and anchored again
    for the cache (`Leaderboard.keep`), so no visitor's request pays for it."""
    return {ruleset: leaderboard(ruleset=ruleset).keep() for ruleset in ladder_rulesets()}
