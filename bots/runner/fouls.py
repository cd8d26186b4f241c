"""The fault policy of a match (documented in bots/PROTOCOL.md): a decision that times out,
gets a reply that is not protocol, or names an illegal action is a *strike*: the engine's safe
default action is played instead and the game goes on. After `max_strikes` strikes, or at once
if the bot's process dies, the bot *forfeits*: it is killed, the default action plays for it
to the end, and it is ranked below every seat that did not forfeit. The match always finishes;
every fault is written into the log as a `note` line. A remote seat is held to the same policy.

Kept apart from the referee, which applies it, so that the rules a seat is held to read in one
place, without the game loop around them, and so that the training environments (`bots.rl`)
play a failed decision as a match does (`safe_default`). Host faults, which are never a seat's,
are `bots.runner.faults`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bots import protocol
from bots.protocol import ProtocolError
from bots.runner.clock import DecisionClock
from bots.runner.process import BotProcess
from bots.runner.results import storable
from bots.runner.seats import Seat, take_debug
from engine.game import Event, Game


def safe_default(legal: Sequence[str]) -> str:
    """The move played for a bot that failed to choose: decline, end, finish a deal, or the
    first legal action (a deterministic choice, never a random one)."""
    for choice in ("decline", "end", "withdraw"):
        if choice in legal:
            return choice
    return legal[0]


def forfeit_ranks(totals: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """Places by total, except that every forfeiting seat ranks below every other seat."""
    key = [(not f, t) for t, f in zip(totals, forfeited, strict=True)]
    return [1 + sum(other > mine for other in key) for mine in key]


@dataclass(frozen=True)
class Fouls:
    """The fault policy applied to one match's seats: every fault is noted, to be merged into
    the log where it happened; a strike plays the safe default, a forfeit stops the bot for
    good."""

    game: Game
    max_strikes: int
    notes: list[tuple[int, Event]] = field(default_factory=list)
    """(index in the game's events, note): where each note goes in the log."""

    def note(self, seat: Seat, kind: str, detail: str, **extra: Any) -> None:
        """A fault, for the log (where the game is now) and the seat's report."""
        detail = storable(detail)[:2000]
        event: Event = {"e": "note", "seat": seat.index, "kind": kind, "detail": detail}
        event.update(extra)
        self.notes.append((len(self.game.events), event))
        seat.report.faults.append({"kind": kind, "detail": detail, **extra})

    def strike(self, seat: Seat, kind: str, detail: str) -> str:
        """Note a strike and return the safe default to play; the last strike forfeits."""
        default = safe_default(self.game.legal_actions())
        seat.report.strikes += 1
        self.note(seat, kind, detail, strike=seat.report.strikes, played=default)
        if seat.report.strikes >= self.max_strikes:
            self.forfeit(seat, f"{seat.report.strikes} strikes (last: {kind}: {detail})")
        return default

    def forfeit(self, seat: Seat, reason: str) -> None:
        """The seat is out: noted, its bot stopped; defaults play for it to the end."""
        if seat.report.forfeited:
            return
        seat.report.forfeited = True
        seat.report.forfeit_reason = storable(reason)
        self.note(seat, "forfeit", reason)
        self.silence(seat)
        if seat.agent is not None:
            seat.agent.tell({"type": "forfeit", "reason": seat.report.forfeit_reason})

    def silence(self, seat: Seat) -> None:
        """Stop the seat's bot, keeping the end of its stderr for its author (the box itself
        is removed by `close`)."""
        if seat.proc is not None and not seat.proc.closed:
            take_debug(seat, request=seat.request)
            seat.report.stderr = storable(seat.proc.stderr_text()[-4000:])
            seat.proc.close()


def answer(seat: Seat, proc: BotProcess, line: bytes, clock: DecisionClock) -> str:
    """Send the request's line and read the bot's action for it; late answers to earlier
    requests are skipped. Raises Strike for a reply that is not one."""
    proc.send(line, clock.hard_deadline, clock.wait)
    taken = proc.taken
    for lines in range(1, protocol.REPLY_LINES + 2):
        if lines > protocol.REPLY_LINES or proc.taken - taken > protocol.REPLY_BYTES:
            raise Strike(
                "flood",
                f"more than {protocol.REPLY_LINES} lines or {protocol.REPLY_BYTES} bytes "
                "for one request (late answers count)",
            )
        reply = proc.readline(clock.hard_deadline, clock.wait)
        try:
            parsed = protocol.parse_reply(reply, "action")
        except ProtocolError as exc:
            raise Strike("protocol", str(exc)) from None
        reply_id = parsed.get("id")
        if not isinstance(reply_id, int) or isinstance(reply_id, bool):
            reply_id = None  # 17.0 and true are not request ids
        if reply_id is not None and 0 < reply_id < seat.request:
            continue  # a late answer to an earlier request: ignore it
        if reply_id != seat.request:
            shown = protocol.shown(parsed.get("id"))
            raise Strike("protocol", f"reply for request {shown}, expected {seat.request}")
        action: str = parsed["action"]
        return action
    raise AssertionError("unreachable: the loop ends by a strike or an answer")


def timeout_detail(clock: DecisionClock) -> str:
    """What a timeout's note says: the clock that ran out first, the other one's use, and the
    time the box waited for a CPU when it did (the host's, not the bot's)."""
    cpu, wall = clock.cpu_used_s() * 1000, clock.wall_used_s() * 1000
    delay = clock.delay_s * 1000
    waited = f", {delay:.0f} ms of it waiting for a CPU" if delay >= 1 else ""
    if clock.which_ran_out() == "cpu":
        detail = f"no answer in {cpu:.0f} ms of CPU time ({wall:.0f} ms of wall time{waited})"
    else:
        detail = f"no answer in {wall:.0f} ms of wall time{waited} ({cpu:.0f} ms of CPU time)"
    return detail


class Strike(Exception):
    """A reply that is not an answer to the request (`answer`): a strike of `kind`."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
