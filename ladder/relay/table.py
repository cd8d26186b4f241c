"""A live table: the worker's end of a match's live page.

The referee calls `LiveTable.watch` after every action (`play_match`'s `watch`). At most
GRASS_LIVE_FRAMES_PER_SECOND times a second (and always when a person is asked, and at the
end) it builds the frames of the table's views (`ladder.relay.views`) and leaves them in an
outbox that holds one frame per view: a frame not sent yet is replaced by the next, so a slow
channel layer costs watchers frames, never the referee time or memory. The table's courier
(`ladder.relay.courier`), a thread with its own event loop and channel layer connection,
sends what is in the outbox to the views' groups and hands the table what the people send
(`answer`, `resign`) and a newer run's claim (`claimed`).

A person's seat is a remote agent (`bots.runner.remote`): `RelayAgent.decide` puts the
request in the person's frame, then waits for an answer naming that request and one of its
legal actions, for the request's time; anything else is ignored. The consumers check who
may speak for a seat (`ladder.live.consumers`); this end checks again that an answer fits
the request it waits on.

Nothing here may stop a match: a channel layer that fails is logged (once) and the game goes
on; its people then time out and forfeit, as a bot that does not answer would.

A run whose match was taken back (its claim lost, `ladder.matches.heartbeat`) abandons its
table (`LiveTable.abandon`): it sends no frame and no end from then on (the run that holds the
match now speaks to the pages), stops listening to the people, and a person's seat waiting for
an answer is woken, so that the run stops at once instead of after the person's time. It learns
of the take-back at its next heartbeat, or sooner: the newer run's table announces its attempt
to the match's worker group when it starts (`live.claim`), and an older table that hears it
gives its run up at once, so two runs are never fed one person's answers for long.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings

from bots.runner.remote import AgentGone, RemoteRequest
from engine.game import Game
from engine.transcript import describe_action
from ladder.relay.courier import ABANDONED, CLOSE_WAIT_S, Courier
from ladder.relay.views import Frame, TableViews

if TYPE_CHECKING:
    from bots.runner.results import SeatReport

logger = logging.getLogger(__name__)

ACTION_CHARS = 200
"""Longer than any legal action's text: an answer past it is not even compared."""
RESEND_S = 10.0
"""While a person has not answered, their frame with the request is sent again this often: a
frame the channel layer dropped on its way (a socket that lagged past the layer's capacity or
expiry, as daphne did with 500 tables on a 2-core machine: 933 strikes in 500 games,
bench_tables) costs the person seconds, not their whole decision's time and a strike. Frames
are whole and the pages keep one answer per request, so a frame seen twice changes nothing."""


@dataclass
class _Waiting:
    """A request a person's seat has to answer."""

    request: int
    legal: frozenset[str]
    deadline: float
    """Wall clock (time.time) when the referee stops waiting."""
    answered: threading.Event = field(default_factory=threading.Event)
    action: str | None = None


class LiveTable:
    """One match's live frames and its people's relay, for the time the match is played."""

    def __init__(
        self,
        *,
        match_id: int,
        people: Mapping[int, str],
        frames_per_second: float,
        attempt: int = 0,
        superseded: Callable[[str], None] | None = None,
    ):
        self.match_id = match_id
        self.attempt = attempt
        """The run's attempt at the match (its claim's): announced to the match's other
        tables when this one starts, and compared with theirs."""
        self.superseded = superseded
        """Called (from the table's thread) when a newer attempt's table announces itself:
        this run's claim is gone. None: the table abandons itself."""
        self.people = dict(people)
        """Seat -> name of each person's seat."""
        self.interval = 1 / frames_per_second if frames_per_second > 0 else None
        """Least time between two frames; None: frames only for people's tables."""
        self.enabled = bool(people) or self.interval is not None
        self.game: Game | None = None
        self.reports: Sequence[SeatReport] = ()
        """The seats' reports as the referee keeps them (read on its thread only)."""
        self.views: TableViews | None = None
        self.last_build = float("-inf")
        self.force = False
        self.seq = 0
        self.lock = threading.Lock()
        self.outbox: dict[int | None, Frame] = {}
        """Frames not sent yet, one per view (None: the watchers'), guarded by `lock`."""
        self.again: set[int] = set()
        """Seats whose latest frame is to be sent again (`resend`), guarded by `lock`."""
        self.ending: str | None = None
        """Set when the match is over ("finished") or failed ("failed"), guarded by `lock`."""
        self.waiting: dict[int, _Waiting] = {}
        self.gone: dict[int, str] = {}
        """Seats whose person resigned (or whose seat was forfeited), with why."""
        self.courier = Courier(self)
        """The thread that sends the outbox and hears the people (`ladder.relay.courier`)."""

    # ------------------------------------------------------------------ the referee's side

    def agent(self, seat: int) -> RelayAgent:
        """The remote agent of a person's seat."""
        return RelayAgent(self, seat, self.people[seat])

    def watch(self, game: Game, reports: Sequence[SeatReport] = ()) -> None:
        """`play_match`'s watcher: build the frames when they are due. Returns at once."""
        if not self.enabled:
            return
        self.reports = reports
        if self.views is None:
            self.game = game
            self.views = TableViews(game, self.people)
        now = time.monotonic()
        due = self.interval is not None and now - self.last_build >= self.interval
        if due or self.force or game.over:
            self.force = False
            self._build(game, None)

    def ask(self, seat: int, request: RemoteRequest, waiting: _Waiting) -> None:
        """Show a person their request: a frame for every view now, theirs with the request."""
        if self.game is None or self.views is None or self.abandoned:
            return  # not watched yet: the referee always watches first
        self.force = True  # the frame after the answer shows that it was taken
        self._build(self.game, {seat: request.observation}, {seat: (request, waiting)})

    def resend(self, seat: int) -> None:
        """Send the seat's latest frame again (its request still waits: RESEND_S). Returns at
        once."""
        with self.lock:
            if self.ending is not None:
                return
            self.again.add(seat)
        self._kick()

    def _build(
        self,
        game: Game,
        asked: dict[int, dict[str, Any]] | None,
        requests: dict[int, tuple[RemoteRequest, _Waiting]] | None = None,
    ) -> None:
        assert self.views is not None
        self.last_build = time.monotonic()
        # Microseconds of the wall clock, so that a match played again (its worker was lost)
        # numbers its frames after the first run's: pages keep the newest they have seen.
        self.seq = max(self.seq + 1, time.time_ns() // 1000)
        frames = self.views.frames(game, asked)
        think = _think(self.reports)
        for view, frame in frames.items():
            frame["match"] = self.match_id
            frame["seq"] = self.seq
            frame["think"] = think
            if view is None:
                continue
            frame["out"] = self.gone.get(view)
            if requests and view in requests:
                request, waiting = requests[view]
                frame["request"] = {
                    "id": request.request,
                    "legal": list(request.legal),
                    "labels": [describe_action(action, game.names) for action in request.legal],
                    "deadline": round(waiting.deadline * 1000),
                    "seconds": request.timeout_s,
                }
            else:
                frame["request"] = None
        with self.lock:
            if self.ending == ABANDONED:
                return
            self.outbox.update(frames)
        self._kick()

    def end(self, status: str) -> None:
        with self.lock:
            if self.ending is None:
                self.ending = status
        self._kick()

    def abandon(self, reason: str) -> None:
        """This run lost its claim on the match: send nothing more, not even the end, and
        wake the people's seats that wait, so that the referee stops at once. Never blocks
        (called from the heartbeat's thread)."""
        with self.lock:
            self.ending = ABANDONED
            self.outbox.clear()
            for waiting in self.waiting.values():
                waiting.answered.set()
        logger.info("match %s: live table abandoned: %s", self.match_id, reason)
        if self.thread is not None:
            self._kick()

    @property
    def abandoned(self) -> bool:
        return self.ending == ABANDONED

    def fail(self, reason: str) -> None:
        """The match failed (not a bot's fault): tell the pages so."""
        self.end("failed")

    def close(self) -> None:
        """The match is recorded (or failed): send the last frames and the end, then stop,
        waiting at most CLOSE_WAIT_S for the channel layer."""
        if self.thread is None:
            return
        self.end("finished")
        self.thread.join(CLOSE_WAIT_S)
        if self.thread.is_alive():
            logger.warning("match %s: the live table's last frames were dropped", self.match_id)
            self.courier.stop()

    def _kick(self) -> None:
        """Wake the table's courier (starting it first): never blocks."""
        self.courier.kick()

    @property
    def thread(self) -> threading.Thread | None:
        """The courier's thread, once the first frame or the end started it."""
        return self.courier.thread

    # ------------------------------------------------------------ what the people send

    def answer(self, message: dict[str, Any]) -> None:
        """A person's answer: taken only if it names the request their seat waits on and one
        of its legal actions."""
        seat, request, action = message.get("seat"), message.get("request"), message.get("action")
        # `True == 1`: a bool is no seat and no request id.
        if not isinstance(seat, int) or isinstance(seat, bool) or not _is_int(request):
            return
        if not isinstance(action, str):
            return
        if len(action) > ACTION_CHARS:
            return
        with self.lock:
            waiting = self.waiting.get(seat)
            if waiting is None or waiting.request != request or waiting.answered.is_set():
                return
            if action not in waiting.legal:
                return
            waiting.action = action
            waiting.answered.set()

    def claimed(self, message: dict[str, Any]) -> None:
        """A table of a newer attempt at this match started: this run's claim is gone (only a
        take-back lets a match be claimed again, and every claim counts one attempt more)."""
        attempt = message.get("attempt")
        if not isinstance(attempt, int) or isinstance(attempt, bool):
            return
        if attempt <= self.attempt or self.abandoned:
            return
        reason = f"superseded: attempt {attempt} of the match started its live table"
        if self.superseded is not None:
            self.superseded(reason)
        else:
            self.abandon(reason)

    def resign(self, message: dict[str, Any]) -> None:
        seat = message.get("seat")
        if not _is_int(seat) or seat not in self.people:
            return
        with self.lock:
            self.gone.setdefault(seat, "resigned")
            waiting = self.waiting.get(seat)
            if waiting is not None:
                waiting.answered.set()


def _think(reports: Sequence[SeatReport]) -> list[dict[str, int]] | None:
    """Each seat's decisions so far and the time they took (wall ms, as the match page shows
    them once recorded), by seat; None before the referee has told any."""
    if not reports:
        return None
    return [{"decisions": r.decisions, "ms": round(r.think_ms)} for r in reports]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RelayAgent:
    """A person's seat (`bots.runner.remote.RemoteAgent`), through its live table."""

    def __init__(self, table: LiveTable, seat: int, name: str) -> None:
        self.table = table
        self.seat = seat
        self.name = name

    def start(self, hello: dict[str, Any]) -> None:
        pass  # the person's page shows the game as the table's frames tell it

    def decide(self, request: RemoteRequest) -> str | None:
        table, seat = self.table, self.seat
        waiting = _Waiting(
            request=request.request,
            legal=frozenset(request.legal),
            deadline=time.time() + request.timeout_s,
        )
        with table.lock:
            if seat in table.gone:
                raise AgentGone(table.gone[seat])
            if table.ending == ABANDONED:
                return None  # the referee's next look at its stop ends the run
            table.waiting[seat] = waiting
        try:
            table.ask(seat, request, waiting)
            deadline = time.monotonic() + request.timeout_s
            while not waiting.answered.wait(min(RESEND_S, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    break
                table.resend(seat)
        finally:
            with table.lock:
                table.waiting.pop(seat, None)
                gone = table.gone.get(seat)
                abandoned = table.ending == ABANDONED
        if abandoned:
            return None
        if gone is not None:
            raise AgentGone(gone)
        return waiting.action

    def tell(self, message: dict[str, Any]) -> None:
        if message.get("type") == "forfeit":
            with self.table.lock:
                self.table.gone.setdefault(self.seat, str(message.get("reason", "forfeited")))

    def close(self) -> None:
        pass  # the table closes once the match is recorded


def live_table_open(
    *,
    match_id: int,
    people: Mapping[int, str],
    attempt: int = 0,
    superseded: Callable[[str], None] | None = None,
) -> LiveTable:
    """The live table of attempt `attempt` at a match about to be played; its thread starts
    with the first frame (a table nobody may watch, GRASS_LIVE_FRAMES_PER_SECOND 0 and no
    person, has none) and tells the match's older tables that their run is superseded."""
    return LiveTable(
        match_id=match_id,
        people=people,
        frames_per_second=settings.GRASS_LIVE_FRAMES_PER_SECOND,
        attempt=attempt,
        superseded=superseded,
    )
