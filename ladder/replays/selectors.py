"""Reading replays: a finished match's stored log, or a log a visitor uploads, as the frames the
viewer steps through (computed by the engine: `engine.replay_frames`)."""

from __future__ import annotations

import gzip
import io
import logging
import time
import zlib
from collections.abc import Callable
from typing import Any

from django.core.cache import cache

from engine.game import ENGINE_VERSION, Event
from engine.log import LogError, read_log
from engine.replay_frames import document
from ladder.matches.decisions import decision_marks
from ladder.matches.files import replay_pack
from ladder.matches.selectors import match_finished

MIB = 1024 * 1024
UPLOAD_LIMIT = 5 * MIB
"""Largest log file a visitor may upload (a long 6-seat game's log is about 100 KiB gzipped)."""
TEXT_LIMIT = 32 * MIB
"""Largest log once decompressed: a small gzip file can hold gigabytes of repeated text."""
LINE_LIMIT = 75_000
"""Most lines a log may have; each costs a frame of work and of JSON (a 50,000-line log takes
about 10 s to compute). Under the platform's 30-hand limit, random players log up to about
30,000 events, and the longest games we could make (two seats that propose every deal they may
and decline every offer, with every variant on) about 50,200: half as much again for margin,
runner notes and the header."""
CACHE_SECONDS = 30 * 24 * 3600
"""How long a computed replay stays in the cache (a full cache also drops entries)."""
WAIT_SECONDS = 15
"""How long a request waits for another's computation of the same document before computing
it itself (the longest log allowed takes about 15 s; gunicorn gives a request 30)."""
LOCK_SECONDS = 60
"""A computation's claim expires after this, should its process die mid-way."""
SEATS = 6

logger = logging.getLogger(__name__)


class ReplayError(ValueError):
    """A request the viewer cannot serve, with the message it shows (and an HTTP status)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Throttled(ReplayError):
    """Too much replaying asked by one client (ladder/replays/throttle.py)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message, status=429)
        self.retry_after = retry_after


def parse_view(text: str | None) -> int | None:
    """The `view` parameter: "all" (or nothing) for every card face up, else a seat number."""
    if text in (None, "", "all"):
        return None
    assert text is not None
    if text.isdigit() and int(text) < SEATS:
        return int(text)
    raise ReplayError(f"view must be 'all' or a seat number from 0 to {SEATS - 1}, not {text!r}")


def _text(data: bytes) -> bytes:
    """The log's bytes, gunzipped if gzip, never more than TEXT_LIMIT of them."""
    if data[:2] != b"\x1f\x8b":
        if len(data) > TEXT_LIMIT:
            raise ReplayError(f"the log is larger than {TEXT_LIMIT // MIB} MiB", status=413)
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
            text = unpacked.read(TEXT_LIMIT + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise LogError(1, f"not a readable gzip file ({exc})") from None
    if len(text) > TEXT_LIMIT:
        raise ReplayError(
            f"the log is larger than {TEXT_LIMIT // MIB} MiB once decompressed", status=413
        )
    if text[:2] == b"\x1f\x8b":
        # engine.log would unpack it again, without a limit.
        raise LogError(1, "the log is compressed twice")
    return text


def log_events(data: bytes) -> list[Event]:
    """Parse a log file (gzip or plain JSON Lines); raises LogError naming the bad line."""
    text = _text(data)
    if not text.strip():
        raise LogError(1, "the log is empty")
    if text.count(b"\n") > LINE_LIMIT:
        raise ReplayError(f"the log has more than {LINE_LIMIT:,} lines", status=413)
    return read_log(io.BytesIO(text))


def replay_document(*, data: bytes, seat: int | None) -> dict[str, Any]:
    """The viewer's document for a log file (see `engine.replay_frames.document`).

    Raises LogError for a log the engine does not reproduce, ReplayError for a log too large
    or a seat that is not in the game.
    """
    events = log_events(data)
    try:
        doc = document(events, seat)
        # Where its decisions are, for the viewer's steps (`ladder.matches.decisions`).
        doc["decisions"] = decision_marks(events, seat)
        return doc
    except LogError:
        raise
    except ValueError as exc:
        raise ReplayError(str(exc)) from None


def replay_cache_key(*, digest: str, seat: int | None) -> str:
    """The cache key of a log's frames: the log's sha256, the view and the engine that
    computes them (what the match replay's ETag is made of)."""
    view = "all" if seat is None else str(seat)
    return f"replay:{ENGINE_VERSION}:{digest}:{view}"


def _cached(key: str) -> bytes | None:
    try:
        cached = cache.get(key)
    except Exception:  # A cache that does not answer costs time, never the replay.
        logger.warning("replay cache unavailable", exc_info=True)
        return None
    return cached if isinstance(cached, bytes) else None


def replay_gzip(
    *,
    digest: str,
    seat: int | None,
    load: Callable[[], bytes],
    before_compute: Callable[[], None] | None = None,
) -> bytes:
    """The viewer's document as gzipped JSON, from the cache, else computed from `load()`
    (the log whose sha256 is `digest`) and cached: a log's frames take seconds to compute and
    never change. Raises as `replay_document`; errors are not cached.

    The cache holds the gzipped bytes, which the view sends as they are: a 30-hand game is
    several megabytes of JSON but well under one gzipped. While one request computes a
    document, others asking for the same one wait for it (up to WAIT_SECONDS) rather than
    compute it too: a match just finished may be opened by many at once. `before_compute`
    runs only when this request is about to compute (a cache miss): it may raise Throttled.
    """
    key = replay_cache_key(digest=digest, seat=seat)
    cached = _cached(key)
    if cached is not None:
        return cached
    lock = f"{key}:computing"
    try:
        mine = cache.add(lock, 1, LOCK_SECONDS)
    except Exception:
        mine = True
    if not mine:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(0.25)
            cached = _cached(key)
            if cached is not None:
                return cached
    try:
        if before_compute is not None:
            before_compute()
        doc = replay_document(data=load(), seat=seat)
        packed = replay_pack(doc)
        try:
            cache.set(key, packed, CACHE_SECONDS)
        except Exception:
            logger.warning("replay cache unavailable", exc_info=True)
    finally:
        if mine:
            try:
                cache.delete(lock)
            except Exception:
                logger.warning("replay cache unavailable", exc_info=True)
    return packed


def match_log_bytes(*, match_id: int) -> bytes | None:
    """The stored log of a finished match (what `/api/matches/{id}/log/` sends), or None."""
    match = match_finished(match_id=match_id)
    if match is None or not match.log:
        return None
    with match.log.open("rb") as handle:
        data: bytes = handle.read()
    return data


def match_log_etag(*, match_id: int) -> str | None:
    """The stored log's sha256: a finished match's log never changes, so neither do its frames."""
    match = match_finished(match_id=match_id)
    if match is None or not match.log:
        return None
    return match.log_sha256 or None


def match_replay_stored(*, match_id: int) -> bytes | None:
    """The replay (every card face up) that the worker stored when it recorded the match, if
    this engine computed it; None otherwise (then it is computed, and cached, on demand)."""
    match = match_finished(match_id=match_id)
    if match is None or not match.replay or match.replay_engine != ENGINE_VERSION:
        return None
    try:
        with match.replay.open("rb") as handle:
            data: bytes = handle.read()
    except OSError:
        logger.warning("match %s: stored replay unreadable", match_id, exc_info=True)
        return None
    return data
