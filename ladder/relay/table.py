"""A live table: the worker's end of a match's live page.

The referee calls `LiveTable.watch` after every action (`play_match`'s `watch`). At most
GRASS_LIVE_FRAMES_PER_SECOND times a second (and always when a person is asked, and at the
end) it builds the frames of the table's views (`ladder.relay.views`) and leaves them in an
outbox that holds one frame per view: a frame not sent yet is replaced by the next, so a slow
channel layer costs watchers frames, never the referee time or memory. A thread of the
table's own, with its own event loop and channel layer connection, sends what is in the
outbox to the views' groups (`ladder.relay.groups`) and listens on a channel of its own,
joined to the match's worker group, for two things: a consumer asking for the latest frame
of a view (a page that just opened), and a person's answer to a request.

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

import asyncio
import contextlib
import json
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
from ladder.relay import groups, messages
from ladder.relay.views import Frame, TableViews

if TYPE_CHECKING:
    from bots.runner.results import SeatReport

logger = logging.getLogger(__name__)

ABANDONED = "abandoned"
"""`LiveTable.ending` of a table whose run lost its claim: it ends without a word."""
CLOSE_WAIT_S = 3.0
"""How long the end of a match waits for the last frames to leave (then they are dropped)."""
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
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.wake: asyncio.Event | None = None
        self.latest: dict[int | None, str] = {}
        """The last frame sent to each view, as text: the answer to a page that just opened
        (the thread's own)."""
        self.failed_once = False

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
            self._stop_loop()

    def _kick(self) -> None:
        """Wake the thread (starting it first): never blocks."""
        if self.thread is None:
            self._start()
        loop, wake = self.loop, self.wake
        if loop is None or wake is None:
            return  # still starting: it reads the outbox when it is up
        # A closed loop: the thread died, and frames are only frames.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(wake.set)

    def _stop_loop(self) -> None:
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)

    # ------------------------------------------------------------------ the thread

    def _start(self) -> None:
        started = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(started,), name=f"live-table-{self.match_id}", daemon=True
        )
        self.thread.start()
        started.wait(CLOSE_WAIT_S)

    def _run(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.wake = asyncio.Event()
        self.loop = loop
        started.set()
        try:
            loop.run_until_complete(self._main())
        except Exception:
            logger.exception("match %s: the live table stopped", self.match_id)
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def _main(self) -> None:
        from channels import DEFAULT_CHANNEL_LAYER
        from channels.layers import channel_layers

        # A layer of the table's own: its connections belong to this thread's loop, and its
        # channel receives nothing another table waits for.
        layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        channel = await layer.new_channel()
        group = groups.worker(self.match_id)
        listening = await self._quietly(layer.group_add(group, channel))
        listener = asyncio.create_task(self._listen(layer, channel)) if listening else None
        if self.attempt:
            # An older run of this match still playing (its worker was thought lost, and its
            # next heartbeat has not told it yet) hears that its claim is gone, and stops now.
            await self._quietly(layer.group_send(group, messages.claim(attempt=self.attempt)))
        assert self.wake is not None
        try:
            while True:
                await self.wake.wait()
                self.wake.clear()
                with self.lock:
                    outbox, self.outbox = self.outbox, {}
                    again, self.again = self.again, set()
                    ending = self.ending
                if ending == ABANDONED:
                    return
                for view, frame in outbox.items():
                    text = json.dumps(frame, separators=(",", ":"))
                    self.latest[view] = text
                    message = messages.frame(match_id=self.match_id, text=text)
                    target = (
                        groups.watchers(self.match_id)
                        if view is None
                        else groups.seat(self.match_id, view)
                    )
                    await self._quietly(layer.group_send(target, message))
                for seat in again - set(outbox):
                    latest = self.latest.get(seat)
                    if latest is not None:
                        message = messages.frame(match_id=self.match_id, text=latest)
                        await self._quietly(
                            layer.group_send(groups.seat(self.match_id, seat), message)
                        )
                if ending is not None:
                    end = messages.end(match_id=self.match_id, status=ending)
                    await self._quietly(layer.group_send(groups.watchers(self.match_id), end))
                    for seat in self.people:
                        await self._quietly(layer.group_send(groups.seat(self.match_id, seat), end))
                    return
        finally:
            if listener is not None:
                # A message to itself ends the listener between two receives: cancelling a
                # receive would wait out Redis's blocking pop.
                await self._quietly(layer.send(channel, messages.stop()))
                await self._quietly(asyncio.shield(listener))
                listener.cancel()
                await self._quietly(layer.group_discard(group, channel))
            await self._quietly(layer.close_pools())

    async def _quietly(self, call: Any) -> bool:
        """Await a channel layer call; a failure is logged once per table and forgotten."""
        try:
            await asyncio.wait_for(call, CLOSE_WAIT_S)
        except Exception as exc:
            if not self.failed_once:
                self.failed_once = True
                name = type(exc).__name__
                logger.warning("match %s: live table: %s: %s", self.match_id, name, exc)
            return False
        return True

    async def _listen(self, layer: Any, channel: str) -> None:
        while True:
            try:
                message = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._quietly(_raise(exc))
                await asyncio.sleep(1)
                continue
            if not isinstance(message, dict):
                continue
            kind = message.get("type")
            if kind == messages.STOP:
                return
            if kind == messages.SYNC:
                await self._sync(layer, message)
            elif kind == messages.ACT:
                self._answer(message)
            elif kind == messages.RESIGN:
                self._resign(message)
            elif kind == messages.CLAIM:
                self._claimed(message)

    async def _sync(self, layer: Any, message: dict[str, Any]) -> None:
        """A page opened: send it the latest frame of its view."""
        view = message.get("view")
        reply_to = message.get("reply_to")
        if view == groups.WATCHERS:
            text = self.latest.get(None)
        elif isinstance(view, int) and not isinstance(view, bool):
            text = self.latest.get(view)
        else:
            return
        if text is None or not isinstance(reply_to, str) or len(reply_to) > 200:
            return
        await self._quietly(layer.send(reply_to, messages.frame(match_id=self.match_id, text=text)))

    def _answer(self, message: dict[str, Any]) -> None:
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

    def _claimed(self, message: dict[str, Any]) -> None:
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

    def _resign(self, message: dict[str, Any]) -> None:
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


async def _raise(exc: Exception) -> None:
    raise exc


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
