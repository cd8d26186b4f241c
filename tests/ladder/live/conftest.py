"""Fixtures of the live tables' tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


SCENARIO_SECONDS = 240.0
"""How long a test's coroutine may run (within pytest-timeout's 300 s): past it the test fails,
instead of hanging the run."""
LEFTOVER_SECONDS = 5.0
"""How long the tasks a scenario left (a consumer still waiting on its socket, the channel
layer's receive) are given to end once cancelled; then they are abandoned with their loop."""


def run_async(coroutine: Coroutine[Any, Any, T], *, seconds: float = SCENARIO_SECONDS) -> T:
    """Run `coroutine` on an event loop in a thread of its own (a test process whose main
    thread already runs an event loop, as Playwright's sync API keeps one for the session,
    cannot run another there), and return its result.

    Not `asyncio.run`: it waits for ever for every task left behind to end once cancelled,
    and in CI (2026-11-29) one that never did held a test process for 18 minutes after its
    scenario had returned (a refused socket's consumer; pytest-timeout's failure then waited
    on the thread too). A daemon thread, joined with a timeout, is never waited on past it."""
    outcome: dict[str, Any] = {}
    fresh_channel_layers()

    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            outcome["value"] = loop.run_until_complete(coroutine)
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc
        finally:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.wait(left, timeout=LEFTOVER_SECONDS))
            loop.close()

    thread = threading.Thread(target=run, name="run_async", daemon=True)
    thread.start()
    thread.join(seconds + LEFTOVER_SECONDS)
    close_executor_connections()
    if "error" in outcome:
        raise outcome["error"]
    if "value" not in outcome:
        raise AssertionError(f"the scenario did not end within {seconds} s")
    return outcome["value"]  # type: ignore[no-any-return]


def fresh_channel_layers() -> None:
    """Forget the process's channel layer instances, so that the next scenario's consumers make
    new ones on its loop. A layer (channels_redis) keeps its receive lock and count while any
    receive runs: one that an earlier scenario left behind (abandoned with its loop after
    LEFTOVER_SECONDS, as under load) kept the lock, bound to that dead loop, and every later
    receive of the process failed ("is bound to a different event loop": four tests of one
    process in a soak run beside `make run`)."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()


def close_executor_connections() -> None:
    """Close the database connections of asgiref's thread for `database_sync_to_async` (the
    consumers' queries, whatever loop they ran on: one thread for the whole process, which never
    ends). Channels' test communicators turn off the `close_old_connections` that closes them
    after each call in production, so the thread's last connection would stay open to the end of
    the run, and the test database could not be dropped (issue 37). Waits behind what a scenario
    still runs there, at most LEFTOVER_SECONDS."""
    from asgiref.sync import SyncToAsync
    from django.db import connections

    with contextlib.suppress(concurrent.futures.TimeoutError):
        SyncToAsync.single_thread_executor.submit(connections.close_all).result(LEFTOVER_SECONDS)


async def in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`asyncio.to_thread`, the thread's database connection closed when `function` returns
    (a thread that uses the database closes its connection: a pool's thread keeps it open
    otherwise, and one that ends leaves it to the garbage collector)."""

    def run() -> T:
        from django.db import connections

        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    return await asyncio.to_thread(run)


def layer_url() -> str:
    """The Redis address of the test process's channel layer."""
    from django.conf import settings

    return str(settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"])


@pytest.fixture
def channel_layer() -> Iterator[None]:
    """The test process's channel layer database of the run's own Redis, emptied before and
    after."""
    from tests import redis_server

    client = redis_server.emptied(layer_url())
    yield
    redis_server.emptied(layer_url()).close()
    client.close()
