"""A match's debug lines as stored: what each seat's bot wrote on stderr while it decided
(`bots.runner.results.DebugLines`), one gzipped JSON file per match beside its log.

Why a file, and only sometimes: at 10 million matches, rows per decision would be billions of
rows for text nobody queries; one compressed file per match is read whole when its replay is
opened, and a match in which no bot wrote anything has none (most ladder bots are quiet).
A seat keeps at most 64 KiB, so a six-seat file is at most 384 KiB of text before gzip.

The format (`grass-debug/1`):

    {"format": "grass-debug/1", "keep": 65536,
     "seats": {"0": {"cut_bytes": 0, "cut_entries": 0,
                     "entries": [[at, request, text], [at, request, text, cut], ...]}}}

`at` is the index of the log event (runner notes aside: the replay's frame) the decision
became; `request` the id of the request answered (0: start-up, null: after the game); `cut`,
when present, the bytes cut from that entry's head. Seats that wrote nothing are left out.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bots.runner.results import SeatReport

FORMAT = "grass-debug/1"


@dataclass(frozen=True)
class DebugLine:
    """One decision's debug lines."""

    at: int
    request: int | None
    text: str
    cut: int = 0


@dataclass(frozen=True)
class SeatLines:
    """One seat's debug lines in a match."""

    seat: int
    cut_bytes: int
    cut_entries: int
    lines: tuple[DebugLine, ...]


def debug_pack(reports: Sequence[SeatReport]) -> bytes | None:
    """The stored file for a played match's seats, or None if no bot wrote anything."""
    seats = {
        str(index): report.debug.as_json()
        for index, report in enumerate(reports)
        if report.debug.entries or report.debug.cut_bytes
    }
    if not seats:
        return None
    keep = max(report.debug.keep for report in reports)
    document = {"format": FORMAT, "keep": keep, "seats": seats}
    return gzip.compress(json.dumps(document, separators=(",", ":")).encode(), mtime=0)


def debug_unpack(data: bytes) -> dict[int, SeatLines]:
    """The stored file read back, by seat. Raises ValueError for a file of another format."""
    document: Any = json.loads(gzip.decompress(data))
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError("not a grass-debug/1 file")
    seats: dict[int, SeatLines] = {}
    for key, seat in document["seats"].items():
        lines = tuple(
            DebugLine(at=row[0], request=row[1], text=row[2], cut=row[3] if len(row) > 3 else 0)
            for row in seat["entries"]
        )
        seats[int(key)] = SeatLines(
            seat=int(key),
            cut_bytes=int(seat["cut_bytes"]),
            cut_entries=int(seat["cut_entries"]),
            lines=lines,
        )
    return seats
