"""The matches' system checks."""

from __future__ import annotations

from typing import Any

from django.core import checks


def test_a_play_queue_left_on_the_ladders_games_is_warned_of(settings: Any) -> None:
    assert not [m for m in checks.run_checks() if m.id == "grass.W001"]  # the default: `tables`
    settings.GRASS_PLAY_QUEUE = "matches"  # the old example environment file's value
    (warning,) = [m for m in checks.run_checks() if m.id == "grass.W001"]
    assert "behind the ladder's games" in warning.msg and "Latency classes" in warning.hint
