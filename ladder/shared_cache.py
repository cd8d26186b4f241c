"""The site's shared cache (Redis, `CACHES` in ladder/settings.py): what it may hold, and how a
use survives the cache being down.

Every host reads and writes the one cache: beat's kept leaderboard counts and anchors reach the
web hosts, and the limits count one client across all of them. Two things follow.

**What is read back is signed.** Django's Redis backend pickles what it stores, and unpickling
runs code. Anyone who can write to that Redis (a local user on a development machine, where it
listens on 127.0.0.1 without a password; anyone holding its password on a server) could plant a
value that runs as the site's user when a page reads it. `SignedSerializer` puts an HMAC made
with SECRET_KEY before each pickle and unpickles only what carries a valid one; anything else
reads as a miss. Whole numbers stay bare, so `incr` keeps working on them: a planted number is
only a number.

**A read or a write that fails is a miss, never an error.** `get` and `put` log the failure and
go on: every value kept here is either computed again from the database (counts, anchors,
charts, the workers' capacity) or is a limit that opens rather than locks everyone out
(`ladder.hourly`). A use that must fail closed does not call these.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import pickle
from typing import Any

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

_MAC_BYTES = hashlib.sha256().digest_size
_SALT = b"grass-ladder.shared_cache"


class UnsignedValue(ValueError):
    """A value in the cache without a valid signature: planted, or written with another key."""


class SignedSerializer:
    """Django's RedisSerializer (whole numbers bare, the rest pickled), with every pickle
    signed: `loads` unpickles only bytes whose HMAC-SHA256 under SECRET_KEY matches."""

    def __init__(self, protocol: int | None = None) -> None:
        self.protocol = pickle.HIGHEST_PROTOCOL if protocol is None else protocol

    @staticmethod
    def _mac(data: bytes) -> bytes:
        key = hashlib.sha256(_SALT + settings.SECRET_KEY.encode()).digest()
        return hmac.new(key, data, hashlib.sha256).digest()

    def dumps(self, obj: Any) -> int | bytes:
        # type(), not isinstance(): True must not be stored as 1 (Django's serializer does so).
        if type(obj) is int:
            return obj
        data = pickle.dumps(obj, self.protocol)
        return self._mac(data) + data

    def loads(self, data: bytes | int) -> Any:
        try:
            return int(data)
        except ValueError:
            pass
        if not isinstance(data, bytes):
            raise UnsignedValue("a cached value that is neither a number nor signed bytes")
        mac, body = data[:_MAC_BYTES], data[_MAC_BYTES:]
        if len(data) <= _MAC_BYTES or not hmac.compare_digest(mac, self._mac(body)):
            raise UnsignedValue("a cached value without a valid signature was not unpickled")
        return pickle.loads(body)


def get(key: str, default: Any = None) -> Any:
    """`cache.get(key)`, or `default` when the cache cannot answer (down, or the value is not
    signed): the caller computes what it wanted from the database instead."""
    try:
        return cache.get(key, default)
    except UnsignedValue:
        logger.error("shared cache: %s held a value without a valid signature", key)
        return default
    except Exception:
        logger.warning("shared cache unavailable (get %s)", key, exc_info=True)
        return default


def put(key: str, value: Any, timeout: float) -> None:
    """`cache.set(...)`; when the cache cannot take it, the value is simply not kept."""
    try:
        cache.set(key, value, timeout)
    except Exception:
        logger.warning("shared cache unavailable (set %s)", key, exc_info=True)
