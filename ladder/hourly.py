"""Counts per client and clock hour, for the limits that stop one client flooding the site:
replays opened and computed (`ladder.replays.throttle`), accounts created
(`ladder.accounts.services.signup_wait`).

The counts live in the shared cache (Redis, ladder/shared_cache.py), so one client is counted
once across every web host, with Redis's atomic INCR. Without a cache nothing is counted (fail
open): a Redis outage must not lock every visitor out of signing up or watching replays, and
what it lets through for its length is bounded by the work each costs (a sign-up is a row; a
replay computed is seconds of one web worker, which gunicorn's timeout bounds).

Bot uploads are not counted here: each costs a worker a build and a game, so their limits
(`ladder.bots.services.bot_version_upload_check`) count the stored versions in the database,
under a lock on the owner, and may not miss one.
"""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

WINDOW = 3600
"""The window in seconds: counts start again at each clock hour."""

logger = logging.getLogger(__name__)


def spend(*, bucket: str, limit: int, client: str, now: float | None = None) -> int:
    """Count one more for `client` in `bucket`: 0 if it is within `limit` this hour, else the
    seconds until the next hour (`limit` 0: no limit, nothing counted)."""
    if limit <= 0:
        return 0
    now = time.time() if now is None else now
    key = _key(bucket, client, now)
    try:
        cache.add(key, 0, WINDOW)
        count = cache.incr(key)
    except ValueError:
        # The count expired between add and incr: this is the window's first one.
        cache.set(key, 1, WINDOW)
        count = 1
    except Exception:
        logger.warning("hourly counts unavailable (%s)", bucket, exc_info=True)
        return 0
    return 0 if count <= limit else _until_next(now)


def wait(*, bucket: str, limit: int, client: str, now: float | None = None) -> int:
    """As `spend`, without counting: 0 if `client` has used less than `limit` this hour."""
    if limit <= 0:
        return 0
    now = time.time() if now is None else now
    try:
        count = cache.get(_key(bucket, client, now), 0)
    except Exception:
        logger.warning("hourly counts unavailable (%s)", bucket, exc_info=True)
        return 0
    return 0 if count < limit else _until_next(now)


def _key(bucket: str, client: str, now: float) -> str:
    return f"{bucket}:{client}:{int(now) // WINDOW}"


def _until_next(now: float) -> int:
    return (int(now) // WINDOW + 1) * WINDOW - int(now)


def in_minutes(seconds: int) -> str:
    """A wait as a refusal says it: `1 minute`, `12 minutes` (whole minutes, rounded up, at
    least one)."""
    minutes = max(1, -(-seconds // 60))
    return f"{minutes} minute{'' if minutes == 1 else 's'}"
