"""The channel layer's messages between a live table (`ladder.relay.table`, on the worker that
plays the match) and the site's consumers (`ladder.live.consumers`): each kind named once here
and built by one function, which both ends import (issue 34: the two ends used to write the
type strings separately). Channels hands a message to the consumer's method named after its
type, dots as underscores: `live.frame` -> `live_frame`, `live.end` -> `live_end`.

To the table (the match's worker group, `groups.worker`): `sync` (a page opened: send it the
latest frame of its view), `act` (a person's answer to a request), `resign`, `claim` (a newer
attempt's table started) and `stop` (the table's own listener, at its end). From the table to
the views' groups: `frame` and `end`.
"""

from __future__ import annotations

from typing import Any

SYNC = "live.sync"
ACT = "live.act"
RESIGN = "live.resign"
CLAIM = "live.claim"
STOP = "live.stop"
FRAME = "live.frame"
END = "live.end"


def sync(*, view: str | int, reply_to: str) -> dict[str, Any]:
    """Ask the table for the latest frame of `view` (a seat, or `groups.WATCHERS`), sent to the
    channel `reply_to` alone."""
    return {"type": SYNC, "view": view, "reply_to": reply_to}


def act(*, seat: int, request: int, action: str) -> dict[str, Any]:
    """A person's answer to request `request` of `seat` (the consumer checked it first; the
    table checks it again against the request it waits on)."""
    return {"type": ACT, "seat": seat, "request": request, "action": action}


def resign(*, seat: int) -> dict[str, Any]:
    return {"type": RESIGN, "seat": seat}


def claim(*, attempt: int) -> dict[str, Any]:
    """Told by a newer attempt's table as it starts: an older run of the match stops."""
    return {"type": CLAIM, "attempt": attempt}


def stop() -> dict[str, Any]:
    return {"type": STOP}


def frame(*, match_id: int, text: str) -> dict[str, Any]:
    """A frame of one view, as JSON text (`ladder.relay.views`)."""
    return {"type": FRAME, "match": match_id, "frame": text}


def end(*, match_id: int, status: str) -> dict[str, Any]:
    """The match is over (`finished`) or failed."""
    return {"type": END, "match": match_id, "status": status}
