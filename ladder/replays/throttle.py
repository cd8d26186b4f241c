"""How much replaying one client may ask of the web host: each log opened at /replay/, and each
match replay not yet in the cache, costs up to several seconds of a web worker's time. An
address, or a signed-in user, gets `GRASS_REPLAY_UPLOADS_PER_HOUR` uploads and
`GRASS_REPLAY_COMPUTES_PER_HOUR` match replays computed for it per clock hour (a replay served
from the cache costs nothing).

The counts are `ladder.hourly`'s, in Django's cache.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from ladder.clients import client_address
from ladder.hourly import spend


def client_key(request: HttpRequest) -> str:
    """Who is uploading: the signed-in user, else the client's address (`client_address`:
    behind nginx, the address nginx saw, which a client cannot forge)."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"ip:{client_address(request) or ''}"


def upload_wait(*, client: str, now: float | None = None) -> int:
    """Count an upload by `client`: 0 if it may go ahead, else the seconds until it may."""
    return spend(
        bucket="replay-uploads",
        limit=settings.GRASS_REPLAY_UPLOADS_PER_HOUR,
        client=client,
        now=now,
    )


def compute_wait(*, client: str, now: float | None = None) -> int:
    """Count a match replay computed for `client` (not in the cache): 0 if it may go ahead,
    else the seconds until it may."""
    return spend(
        bucket="replay-computes",
        limit=settings.GRASS_REPLAY_COMPUTES_PER_HOUR,
        client=client,
        now=now,
    )
