"""The channel layer's group names of a live table, shared by the worker that plays the match
(`ladder.relay.table`) and the site's consumers (`ladder.live.consumers`). Channels allows
ASCII letters, digits, `-`, `_` and `.` in a name."""

from __future__ import annotations

WATCHERS = "all"
"""The key of the watchers' view (every hidden card face down); a person's is their seat."""


def watchers(match_id: int) -> str:
    """Everyone who watches the match and holds no seat in it."""
    return f"live.{match_id}.all"


def seat(match_id: int, seat: int) -> str:
    """The person who holds `seat` (its sockets only: their view shows their hand)."""
    return f"live.{match_id}.seat{seat}"


def worker(match_id: int) -> str:
    """The worker playing the match: people's actions and watchers' requests for the latest
    frame go here (exactly one channel while the match is played)."""
    return f"live.{match_id}.worker"


def for_view(match_id: int, view: str | int) -> str:
    return watchers(match_id) if view == WATCHERS else seat(match_id, int(view))
