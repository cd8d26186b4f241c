"""A live table's courier: the thread that carries its frames out and its people's words in.

A `LiveTable` (`ladder.relay.table`) lives on the referee's thread and must never block it:
it leaves frames in its outbox and kicks its courier. The courier is a thread with its own
event loop and channel layer connection. It sends what the outbox holds to the views' groups
(`ladder.relay.groups`), sends a seat's latest frame again when the table asks, and ends the
pages when the table ends; and it listens on a channel of its own, joined to the match's
worker group, for a page that just opened (it answers with the latest frame of its view), a
person's answer or resignation, and a newer run's claim, which it hands to the table
(`LiveTable.answer`, `resign`, `claimed`).

Nothing here may stop a match: a channel layer that fails is logged once and forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from ladder.relay import groups, messages

if TYPE_CHECKING:
    from ladder.relay.table import LiveTable

logger = logging.getLogger(__name__)

CLOSE_WAIT_S = 3.0
"""How long a channel layer call may take, and the thread its start (then it is dropped)."""
ABANDONED = "abandoned"
"""`LiveTable.ending` of a table whose run lost its claim: it ends without a word."""


class Courier:
    """The live table's thread: started by the table's first kick, stopped by its end."""

    def __init__(self, table: LiveTable) -> None:
        self.table = table
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.wake: asyncio.Event | None = None
        self.latest: dict[int | None, str] = {}
        """The last frame sent to each view, as text: the answer to a page that just opened
        (the thread's own)."""
        self.failed_once = False

    def kick(self) -> None:
        """Wake the thread (starting it first): never blocks."""
        if self.thread is None:
            self._start()
        loop, wake = self.loop, self.wake
        if loop is None or wake is None:
            return  # still starting: it reads the outbox when it is up
        # A closed loop: the thread died, and frames are only frames.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(wake.set)

    def stop(self) -> None:
        """Stop the thread's loop where it is (its last frames did not leave in time)."""
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)

    def _start(self) -> None:
        started = threading.Event()
        self.thread = threading.Thread(
            target=self._run,
            args=(started,),
            name=f"live-table-{self.table.match_id}",
            daemon=True,
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
            logger.exception("match %s: the live table stopped", self.table.match_id)
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def _main(self) -> None:
        from channels import DEFAULT_CHANNEL_LAYER
        from channels.layers import channel_layers

        table = self.table
        # A layer of the table's own: its connections belong to this thread's loop, and its
        # channel receives nothing another table waits for.
        layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        channel = await layer.new_channel()
        group = groups.worker(table.match_id)
        listening = await self._quietly(layer.group_add(group, channel))
        listener = asyncio.create_task(self._listen(layer, channel)) if listening else None
        if table.attempt:
            # An older run of this match still playing (its worker was thought lost, and its
            # next heartbeat has not told it yet) hears that its claim is gone, and stops now.
            await self._quietly(layer.group_send(group, messages.claim(attempt=table.attempt)))
        try:
            await self._deliver(layer)
        finally:
            if listener is not None:
                # A message to itself ends the listener between two receives: cancelling a
                # receive would wait out Redis's blocking pop.
                await self._quietly(layer.send(channel, messages.stop()))
                await self._quietly(asyncio.shield(listener))
                listener.cancel()
                await self._quietly(layer.group_discard(group, channel))
            await self._quietly(layer.close_pools())

    async def _deliver(self, layer: Any) -> None:
        """Send what the table's outbox holds each time the table kicks, until it ends."""
        table, match_id = self.table, self.table.match_id
        assert self.wake is not None
        while True:
            await self.wake.wait()
            self.wake.clear()
            with table.lock:
                outbox, table.outbox = table.outbox, {}
                again, table.again = table.again, set()
                ending = table.ending
            if ending == ABANDONED:
                return
            for view, frame in outbox.items():
                text = json.dumps(frame, separators=(",", ":"))
                self.latest[view] = text
                message = messages.frame(match_id=match_id, text=text)
                target = groups.watchers(match_id) if view is None else groups.seat(match_id, view)
                await self._quietly(layer.group_send(target, message))
            for seat in again - set(outbox):
                latest = self.latest.get(seat)
                if latest is not None:
                    message = messages.frame(match_id=match_id, text=latest)
                    await self._quietly(layer.group_send(groups.seat(match_id, seat), message))
            if ending is not None:
                end = messages.end(match_id=match_id, status=ending)
                await self._quietly(layer.group_send(groups.watchers(match_id), end))
                for seat in table.people:
                    await self._quietly(layer.group_send(groups.seat(match_id, seat), end))
                return

    async def _quietly(self, call: Any) -> bool:
        """Await a channel layer call; a failure is logged once per table and forgotten."""
        try:
            await asyncio.wait_for(call, CLOSE_WAIT_S)
        except Exception as exc:
            if not self.failed_once:
                self.failed_once = True
                name = type(exc).__name__
                logger.warning("match %s: live table: %s: %s", self.table.match_id, name, exc)
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
                self.table.answer(message)
            elif kind == messages.RESIGN:
                self.table.resign(message)
            elif kind == messages.CLAIM:
                self.table.claimed(message)

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
        frame = messages.frame(match_id=self.table.match_id, text=text)
        await self._quietly(layer.send(reply_to, frame))


async def _raise(exc: Exception) -> None:
    raise exc
