"""Latency classes (issue 35, `ladder.matches.lanes`): who waits for a match decides its queue,
its share of the `now` pool and its message's priority, in the real broker. People's games go
to the table hosts' queue by default; a site may still send them to `now`."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from ladder.matches.lanes import NOW_QUEUE, TABLES_QUEUE, Lane, lane_queue, lane_slots
from ladder.matchmaking.capacity import grass_capacity
from tests import redis_server


def test_with_people_on_the_table_hosts_the_pool_is_the_other_lanes_alone(settings: Any) -> None:
    assert [lane_slots(lane, capacity=0) for lane in Lane] == [0, 0, 0]  # no now worker up
    assert [lane_slots(lane, capacity=2) for lane in Lane] == [0, 1, 1]
    assert [lane_slots(lane, capacity=16) for lane in Lane] == [0, 8, 8]
    settings.GRASS_CHALLENGE_SHARE = 30
    settings.GRASS_FIRST_GAMES_SHARE = 10  # in proportion: three quarters and a quarter
    assert [lane_slots(lane, capacity=16) for lane in Lane] == [0, 12, 4]


def test_the_shares_fill_the_pool_each_at_least_one(settings: Any) -> None:
    settings.GRASS_PLAY_QUEUE = "now"  # people's games on the `now` pool too
    assert [lane_slots(lane, capacity=0) for lane in Lane] == [0, 0, 0]  # no now worker up
    assert [lane_slots(lane, capacity=4) for lane in Lane] == [2, 1, 1]
    assert [lane_slots(lane, capacity=16) for lane in Lane] == [8, 4, 4]
    assert sum(lane_slots(lane, capacity=16) for lane in Lane) == 16  # none waits under them
    settings.GRASS_FIRST_GAMES_SHARE = 0
    assert lane_slots(Lane.FIRST, capacity=16) == 1  # at least one while the pool is up


def test_each_lane_has_its_queue(settings: Any) -> None:
    assert lane_queue(None) == "matches"
    assert lane_queue(Lane.CHALLENGE) == lane_queue(Lane.FIRST) == NOW_QUEUE
    assert lane_queue(Lane.PERSON) == TABLES_QUEUE
    settings.GRASS_PLAY_QUEUE = "now"  # a site that sends them to the `now` pool
    assert lane_queue(Lane.PERSON) == "now"


def _worker(queues: list[str], processes: int) -> Any:
    consumer = SimpleNamespace(
        pool=SimpleNamespace(limit=processes),
        task_consumer=SimpleNamespace(queues=[SimpleNamespace(name=q) for q in queues]),
    )
    return SimpleNamespace(consumer=consumer)


def test_a_worker_says_how_many_processes_it_has_for_each_pool() -> None:
    background = grass_capacity(_worker(["matches"], 2))
    assert background["processes"] == 2 and background["now"] == 0
    assert grass_capacity(_worker(["now", "challenges"], 4)) == {
        "processes": 0,
        "cores": 0,
        "now": 4,
        "tables": 0,
    }
    assert grass_capacity(_worker(["tables"], 200)) == {
        "processes": 0,
        "cores": 0,
        "now": 0,
        "tables": 200,  # a table host: its threads
    }
    quick = grass_capacity(_worker(["celery"], 4))  # the quick pool: none
    assert quick["now"] == quick["tables"] == 0
    every = grass_capacity(_worker(["celery", "matches", "now", "challenges", "tables"], 3))
    assert every["processes"] == every["now"] == every["tables"] == 3  # no -Q: every pool


def test_with_people_on_the_now_pool_no_worker_counts_tables(settings: Any) -> None:
    settings.GRASS_PLAY_QUEUE = "now"
    assert grass_capacity(_worker(["now", "challenges", "tables"], 4))["tables"] == 0


@pytest.fixture
def broker(settings: Any) -> Iterator[Any]:
    """This test process's broker database of the run's own Redis, emptied before and after."""
    client = redis_server.emptied(settings.CELERY_BROKER_URL)
    yield client
    redis_server.emptied(settings.CELERY_BROKER_URL).close()


def test_the_broker_gives_a_persons_game_before_a_challenge_before_a_first_game(
    broker: Any, settings: Any
) -> None:
    """kombu's Redis transport keeps a list per priority step and reads them in order: the
    priority is honoured, not silently dropped (sent in the reverse order of their lanes)."""
    from ladder.celery import app
    from ladder.matches.tasks import run_match

    settings.GRASS_PLAY_QUEUE = "now"  # people's games on the `now` pool, as a site may say
    for match_id, lane in ((1, Lane.FIRST), (2, Lane.CHALLENGE), (3, Lane.FIRST), (4, Lane.PERSON)):
        run_match.apply_async((match_id,), queue=lane_queue(lane), priority=int(lane))
    taken = []
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        while (message := channel.basic_get(queue=NOW_QUEUE, no_ack=True)) is not None:
            assert message.headers["task"] == run_match.name
            taken.append(message.decode()[0][0])
    assert taken == [4, 2, 1, 3]
