"""The live tests' event loops (`run_async`, conftest.py) do not leak into each other: a
channel layer receive that an earlier scenario left holding the layer's receive lock (its loop
abandoned, as a loaded machine may leave one) does not break the next scenario's receives. Seen
in a soak run beside `make run`: four tests of one process failed with "Lock ... is bound to a
different event loop" after one scenario was abandoned."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.ladder.live.conftest import run_async

pytestmark = pytest.mark.django_db


def test_a_receive_left_by_one_scenario_does_not_break_the_next(channel_layer: None) -> None:
    from channels.layers import get_channel_layer

    async def abandoned() -> None:
        # What a receive cut off in the middle leaves (channels_redis's own bookkeeping):
        # one receive counted, its lock taken on this loop, which is then closed.
        layer: Any = get_channel_layer()
        layer.receive_count += 1
        layer.receive_lock = asyncio.Lock()
        await layer.receive_lock.acquire()
        layer.receive_event_loop = asyncio.get_running_loop()

    async def next_scenario() -> dict[str, Any]:
        layer: Any = get_channel_layer()
        name = await layer.new_channel()
        await layer.send(name, {"type": "live.sync"})
        message: dict[str, Any] = await asyncio.wait_for(layer.receive(name), 30)
        return message

    run_async(abandoned())
    assert run_async(next_scenario())["type"] == "live.sync"
