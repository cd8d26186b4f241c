"""The live workers' size is asked over the broker (a broadcast that waits its full timeout, 1 s)
and kept in the shared cache: the matchmaker's ticks renew it every CACHE_SECONDS, so a person
asking for a game reads it and never waits for a broadcast while beat runs (issue 35: a
person's game started 1 s late, bench_latency)."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.matchmaking import capacity
from ladder.matchmaking.capacity import WorkerCapacity, match_capacity, now_capacity


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch, settings: Any) -> list[float]:
    """Every broadcast the code makes (answered by one worker of each pool), by its time."""
    settings.GRASS_MATCH_CAPACITY = None
    settings.GRASS_NOW_CAPACITY = None
    calls: list[float] = []

    def broadcast(**_: Any) -> WorkerCapacity:
        calls.append(capacity.time.time())
        return WorkerCapacity(processes=2, cores=2, now=4)

    monkeypatch.setattr(capacity, "worker_capacity", broadcast)
    return calls


def test_a_persons_request_reads_what_the_ticks_keep_fresh(
    asked: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert now_capacity() == 4 and match_capacity() == 4 and len(asked) == 1
    clock = capacity.time.time()
    later = clock + capacity.CACHE_SECONDS + 5
    monkeypatch.setattr(capacity.time, "time", lambda: later)
    assert now_capacity(waiting=True) == 4 and len(asked) == 1  # a request: no broadcast
    assert now_capacity() == 4 and len(asked) == 2  # the matchmaker's tick asks again
    much_later = later + capacity.KEEP_SECONDS + 5  # beat stopped: the request asks itself
    monkeypatch.setattr(capacity.time, "time", lambda: much_later)
    assert now_capacity(waiting=True) == 4 and len(asked) == 3
