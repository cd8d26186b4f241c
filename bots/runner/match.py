"""Playing one match between bot processes: `play_match(...)`, the function the ladder's
workers and `grass match` both call, and its `Referee`, which starts every seat, plays the
game to its end asking each seat for its decisions, and tears the seats down.

What the referee leans on is in modules of its own: the seats and their clocks
(`bots.runner.seats`: `TimeControl`, the banks a decision is charged to), the fault policy
(`bots.runner.fouls`: strikes, forfeits, the notes merged into the log), starting and stopping
a bot (`bots.runner.boxes`), a remote seat's turns (`bots.runner.remote_seat`), the verdict on
a host its seats failed on (`bots.runner.proof.check_host`), and what a match returns
(`bots.runner.results`).

A seat may also be a *remote agent* (`bots.runner.remote`): an object whose decisions come
from outside the runner, such as a person playing through the ladder site. It is asked with
the seat's observation and answers on a wall clock of its own (`remote_decision_ms`), under
the same fault policy.

Debug lines: what a bot writes on stderr is kept per decision (`DebugLines`, in its seat's
report), beside the index of the log event its answer became, so that the replay can show
each decision's lines beside its frame. They are bounded per seat and match (the latest
DEBUG_KEEP bytes; what was cut is counted) and never reach the log, which is public.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from bots import protocol
from bots.protocol import ProtocolError
from bots.runner import runtime, sandbox
from bots.runner.botfiles import BadBot, BotSource
from bots.runner.boxes import start_bot, stop_bot
from bots.runner.clock import DecisionClock, HostTooBusy
from bots.runner.feed import Feeds
from bots.runner.fouls import (
    Fouls,
    Strike,
    answer,
    forfeit_ranks,
    safe_default,
    timeout_detail,
)
from bots.runner.process import BotGone, BotTimeout, LineTooLong
from bots.runner.proof import check_host
from bots.runner.remote import RemoteAgent
from bots.runner.remote_seat import decide_remote, start_agent
from bots.runner.results import (
    InfrastructureFault,
    MatchResult,
    MatchStopped,
    SeatReport,
    storable,
)
from bots.runner.sandbox import Limits
from bots.runner.seats import Seat, TimeControl, account, rest, take_debug, wake
from engine import Variants, new_game
from engine.game import Event, Game
from engine.rules import ruleset_limits

logger = logging.getLogger(__name__)


_SEED_KEY = os.environ.get("GRASS_BOT_SEED_KEY", "").encode() or os.urandom(32)
"""Secret mixed into bots' seeds. Set GRASS_BOT_SEED_KEY to make bots' own randomness repeat
across runs; otherwise it is random per process (same within one `grass match`)."""


def bot_seed(seed: int, seat: int) -> int:
    """A per-seat seed for the bot's own randomness. Keyed with a secret, so a bot cannot work
    back to the game's seed (which decides every shuffle) by trying small seeds."""
    digest = hmac.new(_SEED_KEY, f"grass-bot:{seed}:{seat}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:6], "big")  # 48 bits: exact in every JSON parser


Watch = Callable[[Game, Sequence[SeatReport]], None]
"""Told of the game before its first decision and after every action (`play_match`'s
`watch`), with the seats' reports so far (their decisions and think time, by seat): it runs
on the referee's thread, so it must return at once, and it must only read the game and the
reports."""
Stop = Callable[[], str | None]
"""Asked before every decision and after every answer (`play_match`'s `stop`): why the match
must stop now, or None. It runs on the referee's thread, so it must return at once."""


def play_match(
    bots: Sequence[BotSource | RemoteAgent],
    *,
    ruleset: str = "modern",
    variants: Variants | None = None,
    seed: int = 0,
    limits: dict[str, int] | None = None,
    time_control: TimeControl | None = None,
    resources: Limits | None = None,
    sandboxed: bool = True,
    watch: Watch | None = None,
    stop: Stop | None = None,
) -> MatchResult:
    """Play one game between `bots` (in seat order) and return the finished match.

    With `sandboxed` (the ladder always), every bot runs in the OS sandbox; if the sandbox
    cannot start, InfrastructureFault is raised and no bot runs. `sandboxed=False` runs bots
    as plain subprocesses, for authors testing on machines without root. A seat given as a
    `RemoteAgent` instead of a bot's files is asked through that object
    (`bots.runner.remote`). `watch`, if given, is told of the game as it is played (the ladder
    shows live tables with it); one that raises is logged and not called again. `stop`, if
    given, is asked before every decision and as each answer comes back: once it gives a
    reason, the game stops there (that answer is not played, the watcher is not told of it),
    the seats are torn down and MatchStopped is raised with the reason.
    """
    started = time.perf_counter()
    variants = variants or Variants()
    tc = time_control or TimeControl()
    resources = resources or Limits()
    names = [b.name for b in bots]
    game = new_game(ruleset, names, seed, variants, limits)
    if sandboxed:
        # The log says which image its bots ran on (a note a replay keeps, not a rule).
        game.events[0]["runtime"] = runtime.identity()
    referee = Referee(game, [Seat(i, b, tc) for i, b in enumerate(bots)], tc, watch, stop)
    proved: set[str] = set()  # languages whose known bot has run here during this match
    try:
        referee.start_all(resources, sandboxed, seed)
        if sandboxed:
            check_host(referee.seats, proved)
        referee.play()
        if sandboxed:
            check_host(referee.seats, proved)
    except HostTooBusy as exc:
        raise InfrastructureFault(str(exc)) from None
    finally:
        referee.close()
    result = game.result
    assert result is not None
    return MatchResult(
        seed=seed,
        result=result,
        ranks=referee.ranks(),
        seats=[s.report for s in referee.seats],
        events=_merge(game.events, referee.fouls.notes),
        duration_s=time.perf_counter() - started,
    )


def _merge(events: list[Event], notes: list[tuple[int, Event]]) -> list[Event]:
    merged: list[Event] = []
    position = 0
    for index, event in notes:
        merged.extend(events[position:index])
        position = max(position, index)
        merged.append(event)
    merged.extend(events[position:])
    return merged


class Referee:
    """The referee of one match: it starts the seats' bots, asks each for its decisions on
    the clocks of `TimeControl`, and applies the fault policy (`bots.runner.fouls`): a
    strike plays the safe default, a forfeit stops the bot for good. Every fault is noted,
    to be merged into the log where it happened."""

    def __init__(
        self,
        game: Game,
        seats: list[Seat],
        tc: TimeControl,
        watch: Watch | None = None,
        stop: Stop | None = None,
    ) -> None:
        self.game = game
        self.seats = seats
        self.tc = tc
        self.watch = watch
        self.stop = stop
        self.fouls = Fouls(game, tc.max_strikes)
        self.feeds = Feeds(game)

    # ------------------------------------------------------------------ the match

    def start_all(self, resources: Limits, sandboxed: bool, seed: int) -> None:
        """Start every bot at once, then wait for each `ready`: start-ups overlap."""
        tc, game = self.tc, self.game
        for seat in self.seats:
            if seat.source is None:
                continue
            try:
                seat.proc, seat.box, seat.plain_dir = start_bot(seat.source, sandboxed, resources)
            except BadBot as exc:
                self.fouls.forfeit(seat, f"did not start: {exc}")
        for seat in self.seats:
            if seat.agent is not None:
                start_agent(seat, self.game, self.tc, self.fouls, self.feeds)
            if seat.proc is None:
                continue
            hello = protocol.hello(
                seat=seat.index,
                players=list(game.names),
                ruleset=game.ruleset.name,
                variants=game.variants.as_dict(),
                limits=ruleset_limits(game.ruleset),
                decision_ms=tc.decision_ms,
                bank_ms=tc.bank_ms,
                wall_factor=tc.wall_factor,
                cpu_clock=seat.box is not None,
                protocols=protocol.PROTOCOLS,
            )
            hello["rng_seed"] = bot_seed(seed, seat.index)
            deadline = seat.proc.started + tc.startup_ms / 1000
            try:
                seat.proc.send(protocol.encode(hello), deadline)
                ready = protocol.parse_reply(seat.proc.readline(deadline), "ready")
                seat.report.startup_ms = (time.perf_counter() - seat.proc.started) * 1000
            except (BotTimeout, BotGone, LineTooLong, ProtocolError) as exc:
                self.fouls.forfeit(seat, f"did not start: {exc}")
                continue
            # The bot says which version it speaks; it is spoken to it for the whole match.
            seat.report.protocol = protocol.chosen_version(ready)
            seat.feed = self.feeds.for_seat(seat.index, seat.report.protocol)
            take_debug(seat, request=0)
            rest(seat)

    def play(self) -> None:
        """Play the game to its end, telling every seat each hand's end and the game's."""
        game = self.game
        reported = hand_start = 0
        self._check_stop()
        self._watch()
        while not game.over:
            self._check_stop()
            seat = self.seats[game.to_act]
            # Its answer is the next event the game logs: its debug lines go beside that event.
            seat.at = len(game.events)
            action = self.decide(seat)
            take_debug(seat, request=seat.request)
            self._check_stop()  # an answer that came after the stop is not played
            game.apply(action)
            self._watch()
            while reported < len(game.events):
                event = game.events[reported]
                if event["e"] == "hand":
                    hand_start = reported
                elif event["e"] == "hand-end":
                    for seat in self.seats:
                        self.tell_hand_end(seat, hand_start, reported)
                reported += 1
        assert game.result is not None
        for seat in self.seats:
            self.tell(seat, {"type": "game_end", "result": game.result, "ranks": self.ranks()})
        for seat in self.seats:  # a moment for on_game_end hooks (and last words on stderr)
            if seat.alive and seat.proc is not None:
                if seat.box is not None:
                    seat.box.thaw()
                seat.proc.wait_exit(0.5)

    def _check_stop(self) -> None:
        """Raise MatchStopped when the caller says the match must stop (`play_match`'s
        `stop`); `play_match` then tears the seats down as after any failure."""
        if self.stop is None:
            return
        reason = self.stop()
        if reason is not None:
            raise MatchStopped(reason)

    def ranks(self) -> list[int]:
        assert self.game.result is not None
        forfeited = [s.report.forfeited for s in self.seats]
        return forfeit_ranks(self.game.result["totals"], forfeited)

    def close(self) -> None:
        """Undo every seat's start (processes, boxes, files), keeping what they wrote: the
        boxes go in one call of the box program, which kills what runs in them."""
        last = len(self.game.events) - 1
        for seat in self.seats:
            if seat.proc is not None and not seat.proc.closed:
                seat.at = max(last, 0)
                take_debug(seat, request=None)
                seat.report.stderr = storable(seat.proc.stderr_text()[-4000:])
        try:
            sandbox.destroy_boxes([seat.box for seat in self.seats if seat.box is not None])
            for seat in self.seats:
                stop_bot(seat.proc, seat.box, seat.plain_dir)
        finally:
            for seat in self.seats:
                if seat.agent is not None:
                    seat.agent.close()

    # ------------------------------------------------------------------ one decision

    def decide(self, seat: Seat) -> str:
        """The seat's action at its decision: its bot's answer, or the safe default when it
        fails to give a legal one on the clocks."""
        game, tc = self.game, self.tc
        legal = game.legal_actions()
        if not seat.alive:
            return safe_default(legal)
        if seat.agent is not None:
            return decide_remote(seat, seat.agent, legal, self.game, self.tc, self.fouls)
        proc, feed = seat.proc, seat.feed
        assert proc is not None and feed is not None
        restless = wake(seat, tc)
        if restless is not None:
            self.fouls.note(seat, "restless", restless)
        seat.request += 1
        cpu_ms = tc.decision_ms + seat.bank_ms
        wall_ms = tc.wall_factor * tc.decision_ms + seat.wall_bank_ms
        box = seat.box
        clock = DecisionClock(
            box.cpu_ns if box is not None else None,
            cpu_ms=cpu_ms,
            wall_ms=wall_ms,
            max_cpus=box.limits.cpus if box is not None else None,
            run_delay_ns=box.run_delay_ns if box is not None else None,
        )
        line = feed.act(
            seat.request, bank_ms=int(seat.bank_ms), cpu_ms=int(cpu_ms), wall_ms=round(wall_ms)
        )
        try:
            action = answer(seat, proc, line, clock)
        except BotTimeout:
            seat.report.timeouts += 1
            account(seat, clock, tc)
            rest(seat)
            return self.fouls.strike(seat, "timeout", timeout_detail(clock))
        except (BotGone, LineTooLong) as exc:
            account(seat, clock, tc)
            reason = "crashed" if isinstance(exc, BotGone) else "protocol"
            if seat.box is not None and seat.box.memory_exceeded():
                limit = seat.box.limits.memory_mb
                exc = BotGone(f"{exc} after reaching its memory limit ({limit} MiB)")
            self.fouls.note(seat, reason, f"{exc}; stderr: {proc.stderr_text()[-1500:]}")
            self.fouls.forfeit(seat, f"{reason}: {exc}")
            return safe_default(legal)
        except Strike as strike:
            account(seat, clock, tc)
            rest(seat)
            return self.fouls.strike(seat, strike.kind, strike.detail)
        account(seat, clock, tc)
        rest(seat)
        if action not in game.moves:
            shown = protocol.shown(action, 200)
            return self.fouls.strike(seat, "illegal", f"illegal action {shown}")
        return action

    def _watch(self) -> None:
        """Tell the watcher, if any, of the game as it stands; a watcher that fails is
        dropped (it shows the game, it must never stop it)."""
        if self.watch is None:
            return
        try:
            self.watch(self.game, [seat.report for seat in self.seats])
        except Exception:
            logger.exception("the match's watcher failed; the match goes on without it")
            self.watch = None

    # ------------------------------------------------------------------ messages

    def tell_hand_end(self, seat: Seat, start: int, end: int) -> None:
        """Scores of a finished hand, the cards everyone held (shown at scoring), and the
        rest of that hand's events as this seat saw them (`Feed.hand_end`)."""
        if seat.alive and seat.feed is not None:
            self.tell(seat, seat.feed.hand_end(start, end))

    def tell(self, seat: Seat, message: dict[str, Any] | bytes) -> None:
        """A message (or its encoded line) that wants no reply. A bot too busy to read it for
        a second (its input pipe full) forfeits: a half-written line would garble everything
        after it."""
        if not seat.alive:
            return
        if seat.agent is not None:
            decoded = json.loads(message) if isinstance(message, bytes) else message
            seat.agent.tell(decoded)
            return
        assert seat.proc is not None
        if seat.box is not None:
            seat.box.thaw()
        line = message if isinstance(message, bytes) else protocol.encode(message)
        try:
            seat.proc.send(line, time.perf_counter() + 1.0)
        except BotTimeout:
            self.fouls.forfeit(seat, "stopped reading its input")
        except BotGone:
            pass
        if seat.box is not None and seat.report.frozen_between_turns and seat.alive:
            seat.box.freeze()
