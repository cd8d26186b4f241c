"""The events an owner can be told about, and the milestones of a rating. No Django here.

Each event's payload is built by a function in `payloads.py`; this module holds only the names
and the maths, so the names can be listed anywhere (forms, API, docs) without touching models.
"""

from __future__ import annotations

import math
from enum import StrEnum


class Event(StrEnum):
    MATCH_FINISHED = "match.finished"
    """A match one of the owner's bots played has finished (one per seat the owner held)."""
    BOT_CRASHED = "bot.crashed"
    """One of the owner's bots forfeited a finished match: a crash, strikes (timeouts, illegal
    moves), failing to start; the payload holds the reason."""
    BOT_DISABLED = "bot.disabled"
    """One of the owner's bots was taken off the ladder: its last GRASS_DISABLE_AFTER_FORFEITS
    finished ladder games were all forfeits (`ladder.matches.recording.bot_disable_if_failing`). A
    new version that passes validation puts it back."""
    RATING_MILESTONE = "rating.milestone"
    """A bot's rating reached a multiple of 100 (1600, 1700, ...) for the first time."""
    TOURNAMENT_STARTING = "tournament.starting"
    """A tournament one of the owner's bots entered has started its first round."""
    TOURNAMENT_FINISHED = "tournament.finished"
    """A tournament one of the owner's bots played has finished; the payload holds its ranks."""
    PING = "ping"
    """Sent on request (`POST /api/webhooks/<id>/test/`) to check a receiver; not subscribable."""


SUBSCRIBABLE: tuple[str, ...] = tuple(e.value for e in Event if e is not Event.PING)
"""The events a webhook or the email settings may choose; a new webhook gets all of them."""

MILESTONE_STEP = 100


def milestone_reached(
    *, peak_before: float, after: float, step: int = MILESTONE_STEP
) -> int | None:
    """The highest multiple of `step` that `after` is above and `peak_before` (the best rating
    the bot ever had before this game, its starting rating included) was not; None if none.

    "First time above 1600" means above every earlier peak, so a bot that drops to 1590 and
    climbs back to 1610 is not told twice, and a new bot (starting at 1500) is not told it is
    above 1500 after its first win.

    >>> milestone_reached(peak_before=1590.0, after=1604.2)
    1600
    >>> milestone_reached(peak_before=1590.0, after=1600.0) is None  # at 1600, not above it
    True
    >>> milestone_reached(peak_before=1612.0, after=1640.0) is None
    True
    >>> milestone_reached(peak_before=1500.0, after=1530.0) is None
    True
    >>> milestone_reached(peak_before=1690.0, after=1812.0)
    1800
    """
    highest = (math.ceil(after / step) - 1) * step  # the highest multiple strictly below
    return highest if highest > peak_before else None
