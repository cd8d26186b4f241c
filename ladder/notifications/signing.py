"""Signing webhook bodies, so a receiver knows a request came from the ladder. No Django here.

    X-Grass-Timestamp: 1767225600
    X-Grass-Signature: sha256=<hex HMAC-SHA256 with the webhook's secret of "<timestamp>.<body>">

The timestamp is inside the signed text: a receiver that refuses timestamps older than a few
minutes cannot be fed a recorded request again (a replay), since changing the timestamp breaks
the signature. WEBHOOKS.md shows a receiver's check.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SECRET_BYTES = 32


def new_secret() -> str:
    """A webhook's secret: 32 random bytes, URL-safe text (43 characters)."""
    return secrets.token_urlsafe(SECRET_BYTES)


def sign(*, secret: str, timestamp: int, body: bytes) -> str:
    """The X-Grass-Signature header's value for `body` sent at `timestamp` (Unix seconds)."""
    message = str(timestamp).encode() + b"." + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(
    *, secret: str, timestamp: str, body: bytes, signature: str, now: float, tolerance: int = 300
) -> bool:
    """Whether `signature` is ours for `body` at `timestamp`, and the timestamp is within
    `tolerance` seconds of `now`. The comparison takes the same time however wrong it is."""
    if not timestamp.isdigit() or abs(now - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(sign(secret=secret, timestamp=int(timestamp), body=body), signature)
