"""Fixtures of the live tables' tests."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` in a thread of its own: a test process whose main thread already runs an
    event loop (Playwright's sync API keeps one for the session) cannot run another there."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def layer_url() -> str:
    """The Redis address of the test process's channel layer."""
    from django.conf import settings

    return str(settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"])


@pytest.fixture
def channel_layer() -> Iterator[None]:
    """The test process's channel layer database, emptied before and after."""
    import redis

    client = redis.Redis.from_url(layer_url(), socket_timeout=3)
    try:
        client.flushdb()
    except redis.RedisError as exc:
        from tests.ladder.conftest import _unavailable

        _unavailable("Redis", exc)
    yield
    client.flushdb()
