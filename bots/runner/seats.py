"""A seat of a match as the referee holds it between decisions: what plays in it (a bot's
process and box, or a remote agent), its clocks (the banks `TimeControl` fills, which each
decision is charged to), and its bot's debug lines.

Kept apart from the referee so that its game loop reads as the game's, and what a decision
costs a seat reads in one place. Not in `bots.runner.clock`: that is one decision's clocks,
which know no seat, box or report; the banks a decision is charged to, and a bot frozen
between its turns for working off them, are the seat's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bots.runner.botfiles import BotSource
from bots.runner.clock import DecisionClock
from bots.runner.feed import Feed
from bots.runner.process import BotProcess
from bots.runner.remote import RemoteAgent
from bots.runner.results import DebugEntry, SeatReport
from bots.runner.sandbox import Box


@dataclass(frozen=True)
class TimeControl:
    """How long a bot may think. Defaults suit the ladder; tournaments may set their own."""

    decision_ms: int = 1_000
    """Free thinking time per decision: CPU time of the bot's whole box (wall time without
    the sandbox)."""
    bank_ms: int = 30_000
    """Extra CPU time for the whole game, spent by decisions that run past `decision_ms`."""
    wall_factor: float = 3.0
    """The wall-clock backstop, as a multiple of the CPU times above: a decision may take
    `wall_factor * decision_ms` of wall time, plus a wall bank of `wall_factor * bank_ms`.
    A bot that sleeps uses no CPU; this bounds how long it can hold a match."""
    startup_ms: int = 10_000
    """Wall time from process start to the `ready` reply."""
    max_strikes: int = 3
    restless_cpu_ms: int = 50
    """CPU a bot may burn in one stretch off turn before it is frozen between its turns."""
    restless_total_ms: int = 200
    """CPU a bot may burn off turn over the whole match before it is frozen likewise."""
    remote_decision_ms: int = 120_000
    """Wall time per decision of a remote seat (`bots.runner.remote`: a person in a browser),
    which has no CPU clock and no bank; bots' seats ignore it."""

    def longest_step_s(self) -> float:
        """The longest wall time one step of a game may take on these clocks: a bot's start,
        a bot's decision that spends its whole wall bank, a remote seat's decision. A referee
        that has not moved for longer is stuck (the ladder's heartbeat then stops)."""
        bot_decision_ms = self.wall_factor * (self.decision_ms + self.bank_ms)
        return max(self.startup_ms, bot_decision_ms, self.remote_decision_ms) / 1000


class Seat:
    """The runner's handle on one seat: a bot (`source`, its process and box) or a remote
    agent (`agent`)."""

    def __init__(self, index: int, player: BotSource | RemoteAgent, time: TimeControl) -> None:
        self.index = index
        self.source = player if isinstance(player, BotSource) else None
        self.agent = None if isinstance(player, BotSource) else player
        self.report = SeatReport(player.name)
        self.bank_ms = float(time.bank_ms)
        self.wall_bank_ms = time.bank_ms * time.wall_factor
        self.proc: BotProcess | None = None
        self.box: Box | None = None
        self.plain_dir: Path | None = None
        self.request = 0
        self.feed: Feed | None = None
        """What the seat is sent, in the protocol version its bot chose (after `ready`)."""
        self.cpu_at_reply: int | None = None
        self.idle_cpu_ms = 0.0
        self.at = 0
        """The index of the log event the seat's current decision becomes (`DebugEntry.at`)."""

    @property
    def alive(self) -> bool:
        playing = self.proc is not None or self.agent is not None
        return playing and not self.report.forfeited


def take_debug(seat: Seat, *, request: int | None) -> None:
    """Keep what the seat's bot wrote on stderr since the last take, as the debug lines of
    its decision `request` (at the log event `seat.at`)."""
    if seat.proc is None or seat.proc.closed:
        return
    data, cut = seat.proc.stderr_new()
    seat.report.debug.add(DebugEntry(at=seat.at, request=request, data=data, cut=cut))


def rest(seat: Seat) -> None:
    """After a reply: remember the CPU clock, and freeze a bot known to work off-turn."""
    if seat.box is not None:
        seat.cpu_at_reply = seat.box.cpu_ns()
        if seat.report.frozen_between_turns:
            seat.box.freeze()


def wake(seat: Seat, tc: TimeControl) -> str | None:
    """Before a request: thaw, and catch a bot that burned CPU while not on turn (it is frozen
    between turns from then on): what the referee notes of it, or None."""
    box = seat.box
    if box is None:
        return None
    box.thaw()
    if seat.cpu_at_reply is not None and not seat.report.frozen_between_turns:
        idle_ms = (box.cpu_ns() - seat.cpu_at_reply) / 1e6
        seat.idle_cpu_ms += idle_ms
        if idle_ms > tc.restless_cpu_ms or seat.idle_cpu_ms > tc.restless_total_ms:
            seat.report.frozen_between_turns = True
            return (
                f"used {idle_ms:.0f} ms of CPU while not on turn ({seat.idle_cpu_ms:.0f} "
                "ms in this match); frozen between turns from now"
            )
    return None


def account(seat: Seat, clock: DecisionClock, tc: TimeControl) -> None:
    """Charge a decision: the CPU bank pays for CPU past `decision_ms`, the wall bank
    for wall time past `wall_factor * decision_ms`."""
    report = seat.report
    wall_ms = clock.wall_used_s() * 1000
    cpu_ms = clock.cpu_used_s() * 1000
    report.decisions += 1
    report.think_ms += wall_ms
    report.max_think_ms = max(report.max_think_ms, wall_ms)
    seat.bank_ms = max(0.0, seat.bank_ms - max(0.0, cpu_ms - tc.decision_ms))
    # Time the box waited for a CPU is the host's, not the bot's: the wall bank keeps it.
    overrun = max(0.0, wall_ms - clock.delay_s * 1000 - tc.wall_factor * tc.decision_ms)
    seat.wall_bank_ms = max(0.0, seat.wall_bank_ms - overrun)
    if seat.box is not None:
        report.cpu_ms += cpu_ms
