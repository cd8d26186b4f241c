"""The live tables' WebSockets (Django Channels; routed in `ladder.live.routing`).

`/ws/matches/<id>/`: a match's table as it is played. A visitor who holds a seat (a person's
game) gets that seat's frames, with its hand and its requests, and may answer them; anyone
else gets the watchers' frames (every hidden card face down) and may say nothing that
matters. `/ws/tournaments/<id>/`: the watchers' frames of a tournament's running tables, at
most one a second per table.

The hello a match's socket sends first says the match's status and the visitor's seat, and
while the match is queued, where it stands in its queue (`queue`: `matchmaking.waiting`).

Who the visitor is comes from the handshake (`ladder.live.handshake`): a browser's session
from a page of this site, or a program's API token (`grass table`); past it, both are the same.
Every byte a client sends is hostile. A message is text of at most GRASS_LIVE_MESSAGE_BYTES
(else the socket is closed), a socket sends at most GRASS_LIVE_MESSAGES_PER_SECOND on average
(bursts of five times that; the rest are dropped, and a socket that keeps flooding is
closed), and only two kinds are heard, from the seat's person alone: `{"type": "act",
"request": N, "action": "..."}`, passed on only if N is the request the seat is waiting on and
the action one of its legal actions (such an answer is never charged to the rate: there is at
most one a request), and `{"type": "resign"}`. The seat is the one the
database gives the signed-in user for this match, never one the message names. The messages,
both ways, are documented for clients in docs/play.md. The worker
checks the answer against its request again (`ladder.relay.table`).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from ladder.live.selectors import LiveSeat, live_seat, tournament_running_tables
from ladder.live.services import person_game_abandon
from ladder.matches.models import Match
from ladder.matchmaking.waiting import match_place_of
from ladder.relay import groups, messages

TOURNAMENT_TABLES = 12
"""Running tables a tournament's socket follows at once."""
TOURNAMENT_REFRESH_S = 20.0
"""How often a tournament's socket looks for tables that started or ended."""
TOURNAMENT_FRAME_S = 1.0
"""Least time between two frames of one table on a tournament's socket."""
FLOOD_CLOSE = 50
"""Messages dropped for flooding after which the socket is closed."""

CLOSE_NO_MATCH = 4404
CLOSE_TOO_BIG = 4413
CLOSE_FLOOD = 4429


class Bucket:
    """A token bucket: `rate` messages a second on average, `burst` at once."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class _Guarded(AsyncWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Size and rate limits on what a browser sends."""

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        rate = max(settings.GRASS_LIVE_MESSAGES_PER_SECOND, 1)
        self.bucket = Bucket(rate, rate * 5)
        self.dropped = 0
        await super().websocket_connect(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None or len(text_data) > settings.GRASS_LIVE_MESSAGE_BYTES:
            await self.close(code=CLOSE_TOO_BIG)
            return
        try:
            message = json.loads(text_data)
        except ValueError:
            message = None
        # The answer to the request a seat waits on is never charged: there is at most one per
        # request, and the worker makes the requests. Everything else spends the budget.
        if isinstance(message, dict) and await self.answered(message):
            return
        if not self.bucket.take():
            self.dropped += 1
            if self.dropped >= FLOOD_CLOSE:
                await self.close(code=CLOSE_FLOOD)
            return
        if isinstance(message, dict):
            await self.heard(message)

    async def answered(self, message: dict[str, Any]) -> bool:
        """Whether `message` is the answer a seat waits on (passed on if so)."""
        return False

    async def heard(self, message: dict[str, Any]) -> None:
        """Any other well-formed message, within the limits."""

    async def send_frame(self, text: str) -> None:
        """A frame as the worker serialized it, wrapped with the server's clock (the page
        counts a request's time down from it), never parsed again here."""
        now = round(time.time() * 1000)
        await self.send(text_data=f'{{"type":"frame","now":{now},"frame":{text}}}')


class TableConsumer(_Guarded):
    """`/ws/matches/<id>/`: one match's live table, as its visitor may see it."""

    async def connect(self) -> None:
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        self.seat: int | None = None
        self.group: str | None = None
        self.waiting: tuple[int, frozenset[str]] | None = None
        """The request the seat waits on (id, legal actions), from its latest frame."""
        self.seq = 0
        found: LiveSeat | None = await database_sync_to_async(live_seat)(
            match_id=self.match_id, user=self.scope["user"]
        )
        if found is None:
            await self.close(code=CLOSE_NO_MATCH)
            return
        self.seat = found.seat
        view: str | int = groups.WATCHERS if self.seat is None else self.seat
        self.group = groups.for_view(self.match_id, view)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        hello: dict[str, Any] = {"type": "hello", "status": found.status, "seat": self.seat}
        if found.status == Match.Status.QUEUED:
            # Where it stands in its queue, as the page says it when loaded.
            place = await database_sync_to_async(match_place_of)(match_id=self.match_id)
            if place is not None:
                hello["queue"] = {**place.as_dict(), "text": place.text}
        await self.send(text_data=json.dumps(hello))
        if found.status in (Match.Status.FINISHED, Match.Status.FAILED):
            await self.send(text_data=json.dumps({"type": "end", "status": found.status}))
            return
        # The latest frame, from the worker playing the match (none yet if it is queued).
        sync = messages.sync(view=view, reply_to=self.channel_name)
        await self.channel_layer.group_send(groups.worker(self.match_id), sync)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def answered(self, message: dict[str, Any]) -> bool:
        if self.seat is None or message.get("type") != "act":
            return False  # a watcher has nothing to say
        request, action = message.get("request"), message.get("action")
        waiting = self.waiting
        if waiting is None or not isinstance(request, int) or isinstance(request, bool):
            return False
        if request != waiting[0] or not isinstance(action, str) or action not in waiting[1]:
            return False
        self.waiting = None  # one answer per request
        forward = messages.act(seat=self.seat, request=request, action=action)
        await self.channel_layer.group_send(groups.worker(self.match_id), forward)
        return True

    async def heard(self, message: dict[str, Any]) -> None:
        if self.seat is None:
            return  # a watcher has nothing to say
        if message.get("type") == "resign":
            user = self.scope["user"]
            if await database_sync_to_async(person_game_abandon)(match_id=self.match_id, user=user):
                # Not started yet: ended here (no worker listens to a queued game).
                end = messages.end(match_id=self.match_id, status="failed")
                await self.channel_layer.group_send(groups.watchers(self.match_id), end)
                await self.live_end(end)
                return
            await self.channel_layer.group_send(
                groups.worker(self.match_id), messages.resign(seat=self.seat)
            )

    async def live_frame(self, event: dict[str, Any]) -> None:
        text = event["frame"]
        if self.seat is not None:
            # The person's own frames (a handful a minute): read the request they carry.
            frame = json.loads(text)
            if frame.get("seq", 0) < self.seq:
                return  # an older frame (a late answer to this page's sync)
            self.seq = frame.get("seq", 0)
            request = frame.get("request")
            self.waiting = None if request is None else (request["id"], frozenset(request["legal"]))
        await self.send_frame(text)

    async def live_end(self, event: dict[str, Any]) -> None:
        self.waiting = None
        await self.send(text_data=json.dumps({"type": "end", "status": event["status"]}))


class TournamentConsumer(_Guarded):
    """`/ws/tournaments/<id>/`: the tournament's running tables, as watchers see them."""

    async def connect(self) -> None:
        self.tournament_id = int(self.scope["url_route"]["kwargs"]["tournament_id"])
        self.following: set[int] = set()
        self.latest: dict[int, str] = {}
        self.sent: dict[int, float] = {}
        await self.accept()
        self.refresher = asyncio.create_task(self._refresh())

    async def disconnect(self, code: int) -> None:
        refresher = getattr(self, "refresher", None)
        if refresher is not None:
            refresher.cancel()
        for match_id in getattr(self, "following", ()):
            await self.channel_layer.group_discard(groups.watchers(match_id), self.channel_name)

    async def _refresh(self) -> None:
        """Follow the tables that run now (and stop following those that ended), now and
        every TOURNAMENT_REFRESH_S; send each table's newest frame at most once a second."""
        refreshed = float("-inf")
        while True:
            now = time.monotonic()
            if now - refreshed >= TOURNAMENT_REFRESH_S:
                refreshed = now
                running = set(
                    await database_sync_to_async(tournament_running_tables)(
                        tournament_id=self.tournament_id, limit=TOURNAMENT_TABLES
                    )
                )
                for match_id in running - self.following:
                    channel = self.channel_name
                    await self.channel_layer.group_add(groups.watchers(match_id), channel)
                    sync = messages.sync(view=groups.WATCHERS, reply_to=channel)
                    await self.channel_layer.group_send(groups.worker(match_id), sync)
                for match_id in self.following - running:
                    await self.channel_layer.group_discard(
                        groups.watchers(match_id), self.channel_name
                    )
                self.following = running
                tables = {"type": "tables", "matches": sorted(running)}
                await self.send(text_data=json.dumps(tables))
            for match_id, text in list(self.latest.items()):
                if now - self.sent.get(match_id, float("-inf")) >= TOURNAMENT_FRAME_S:
                    del self.latest[match_id]
                    self.sent[match_id] = now
                    await self.send_frame(text)
            await asyncio.sleep(0.25)

    async def live_frame(self, event: dict[str, Any]) -> None:
        match_id = event.get("match")
        if isinstance(match_id, int) and match_id in self.following:
            self.latest[match_id] = event["frame"]

    async def live_end(self, event: dict[str, Any]) -> None:
        match_id = event.get("match")
        if isinstance(match_id, int):
            end = {"type": "end", "match": match_id, "status": event["status"]}
            await self.send(text_data=json.dumps(end))
