"""What a match hands back to its caller: the seats' reports, the finished match, and the two
ways it can end without one (`InfrastructureFault`, `MatchStopped`).

These are kept apart from the referee because their readers are not the referee's: the
ladder records them (its database, log and debug files, live tables) and classifies the
faults (`bots.runner.faults`), and none of those needs the machinery that plays a match to
name what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bots.runner.process import DEBUG_KEEP
from engine.game import Event
from engine.log import dumps


@dataclass(frozen=True)
class DebugEntry:
    """What a bot wrote on stderr while it decided: since its previous answer, up to this one."""

    at: int
    """The index of the log event (among the game's events, runner notes aside: the replay's
    frame) its answer became; 0 for what it wrote while starting, the last event's for what it
    wrote after the game ended."""
    request: int | None
    """The id of the request it was answering; 0 before its first request, None after the game."""
    data: bytes
    cut: int = 0
    """Bytes it wrote before `data` for the same decision that are not kept."""


@dataclass
class DebugLines:
    """One seat's debug lines over a match, by decision, bounded to `keep` bytes: when more
    come, the oldest are cut (whole entries first, then the head of the oldest left), so the
    latest are kept, and `cut_bytes` / `cut_entries` say what went."""

    keep: int = DEBUG_KEEP
    entries: list[DebugEntry] = field(default_factory=list)
    size: int = 0
    cut_bytes: int = 0
    """Bytes written and not kept: cut from entries kept in part, or with whole entries."""
    cut_entries: int = 0
    """Entries dropped whole (their decisions show no lines)."""

    def add(self, entry: DebugEntry) -> None:
        if not entry.data and not entry.cut:
            return
        self.cut_bytes += entry.cut
        self.entries.append(entry)
        self.size += len(entry.data)
        first = 0
        while self.size > self.keep:
            oldest = self.entries[first]
            excess = self.size - self.keep
            if len(oldest.data) <= excess:
                first += 1
                self.size -= len(oldest.data)
                self.cut_bytes += len(oldest.data)
                self.cut_entries += 1
                continue
            self.entries[first] = replace(
                oldest, data=oldest.data[excess:], cut=oldest.cut + excess
            )
            self.size -= excess
            self.cut_bytes += excess
        if first:
            del self.entries[:first]

    def as_json(self) -> dict[str, Any]:
        """JSON-ready: `entries` as [at, request, text] (with a fourth item, the bytes cut from
        its head, when some were), text decoded as UTF-8 with what no database or JSON takes
        made visible (`storable`)."""
        rows: list[list[Any]] = []
        for entry in self.entries:
            row: list[Any] = [
                entry.at,
                entry.request,
                storable(entry.data.decode(errors="replace")),
            ]
            if entry.cut:
                row.append(entry.cut)
            rows.append(row)
        return {"cut_bytes": self.cut_bytes, "cut_entries": self.cut_entries, "entries": rows}


@dataclass
class SeatReport:
    """What happened to one seat's bot during the match."""

    name: str
    decisions: int = 0
    think_ms: float = 0.0
    max_think_ms: float = 0.0
    cpu_ms: float = 0.0
    startup_ms: float = 0.0
    strikes: int = 0
    timeouts: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    forfeited: bool = False
    forfeit_reason: str = ""
    frozen_between_turns: bool = False
    stderr: str = ""
    """The end of what the bot wrote on stderr in the whole match (its last 4,000 characters)."""
    debug: DebugLines = field(default_factory=DebugLines)
    """The same, by decision (`DebugLines`)."""
    protocol: int = 1
    """The protocol version the bot chose in `ready` (bots/PROTOCOL.md)."""

    @property
    def mean_think_ms(self) -> float:
        return self.think_ms / self.decisions if self.decisions else 0.0


@dataclass
class MatchResult:
    """The finished match: the engine's result, ranks after forfeits, reports, and the log."""

    seed: int
    result: dict[str, Any]
    ranks: list[int]
    seats: list[SeatReport]
    events: list[Event]
    """The full log: the engine's events with the runner's `note` lines merged in."""
    duration_s: float

    def log_text(self) -> str:
        return dumps(self.events)


class InfrastructureFault(RuntimeError):
    """The match could not be played for reasons that are not a bot's fault."""


class MatchStopped(RuntimeError):
    """The caller stopped the match before its end (`play_match`'s `stop` gave a reason): the
    ladder's run of a match that was taken back from it. The seats were torn down (their
    processes killed, their boxes destroyed) and nothing of the game is returned."""


def storable(text: str) -> str:
    """`text` with what no database text column takes made visible: NUL characters (a bot's
    stderr may hold them) and lone surrogates. A fault's detail reaches PostgreSQL; a bot must
    not be able to make recording its own loss fail."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
