"""When a failed delivery is tried again: a plain schedule, no Django here."""

from __future__ import annotations

RETRY_DELAYS: tuple[int, ...] = (30, 2 * 60, 10 * 60, 60 * 60, 6 * 60 * 60)
"""Seconds to wait after failed attempt 1, 2, ...: a receiver that is down for a deploy gets
its events within minutes, one that is down for an afternoon still gets them the same day."""

MAX_ATTEMPTS = len(RETRY_DELAYS) + 1


def retry_delay(attempt: int) -> int | None:
    """Seconds to wait after failed attempt number `attempt` (1-based) before the next one, or
    None when that was the last (MAX_ATTEMPTS, 6) and the delivery has failed for good.

    >>> [retry_delay(n) for n in range(1, 8)]
    [30, 120, 600, 3600, 21600, None, None]
    """
    if attempt < 1:
        raise ValueError(f"attempts count from 1, got {attempt}")
    if attempt > len(RETRY_DELAYS):
        return None
    return RETRY_DELAYS[attempt - 1]
