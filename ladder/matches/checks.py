"""Django system checks of the matches' settings (`manage.py check`, and every command that
runs the checks: migrate, runserver)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

from ladder.matches.lanes import NOW_QUEUE, TABLES_QUEUE, lane_queue


@checks.register(checks.Tags.compatibility)
def play_queue_not_behind_ladder_games(**_: Any) -> list[checks.CheckMessage]:
    """GRASS_PLAY_QUEUE=matches was the example environment file's value before the `now`
    queue (issue 35): a site upgraded with it would queue every person's game behind the
    ladder's games again, and on a pool whose capacity the matchmaker does not count them in."""
    if lane_queue(None) != settings.GRASS_PLAY_QUEUE:
        return []
    return [
        checks.Warning(
            f"GRASS_PLAY_QUEUE={settings.GRASS_PLAY_QUEUE}: people's games wait behind the "
            "ladder's games on that queue",
            hint=f"remove GRASS_PLAY_QUEUE from the environment file (its default is "
            f"`{TABLES_QUEUE}`, the table hosts'; `{NOW_QUEUE}` is the pool of what someone "
            "waits for): deploy/README.md, Latency classes",
            id="grass.W001",
        )
    ]
