"""How much replaying one client may ask of the web host: each log opened at /replay/, and each
match replay not yet in the cache, costs up to several seconds of a web worker's time. An
address, or a signed-in user, gets `GRASS_REPLAY_UPLOADS_PER_HOUR` uploads and
`GRASS_REPLAY_COMPUTES_PER_HOUR` match replays computed for it per clock hour (a replay served
from the cache costs nothing).

The counts live in Django's cache, which every web worker shares (ladder/settings.py). A
count may miss an increment when two requests race on a file-based cache; the limit is there
to stop floods, not to count exactly.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from ladder.clients import client_address

WINDOW = 3600
"""The limit's window in seconds: counts start again at each clock hour."""

logger = logging.getLogger(__name__)


def client_key(request: HttpRequest) -> str:
    """Who is uploading: the signed-in user, else the client's address (`client_address`:
    behind nginx, the address nginx saw, which a client cannot forge)."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"ip:{client_address(request) or ''}"


def upload_wait(*, client: str, now: float | None = None) -> int:
    """Count an upload by `client`: 0 if it may go ahead, else the seconds until it may."""
    return _spend(
        bucket="replay-uploads",
        limit=settings.GRASS_REPLAY_UPLOADS_PER_HOUR,
        client=client,
        now=now,
    )


def compute_wait(*, client: str, now: float | None = None) -> int:
    """Count a match replay computed for `client` (not in the cache): 0 if it may go ahead,
    else the seconds until it may."""
    return _spend(
        bucket="replay-computes",
        limit=settings.GRASS_REPLAY_COMPUTES_PER_HOUR,
        client=client,
        now=now,
    )


def _spend(*, bucket: str, limit: int, client: str, now: float | None) -> int:
    if limit <= 0:
        return 0
    now = time.time() if now is None else now
    window = int(now) // WINDOW
    key = f"{bucket}:{client}:{window}"
    try:
        cache.add(key, 0, WINDOW)
        count = cache.incr(key)
    except ValueError:
        # The count expired between add and incr: this is the window's first one.
        cache.set(key, 1, WINDOW)
        count = 1
    except Exception:  # Without a cache, nothing is counted rather than everything refused.
        logger.warning("replay counts unavailable", exc_info=True)
        return 0
    if count <= limit:
        return 0
    return (window + 1) * WINDOW - int(now)
