"""The matchmaker: a plain function that keeps the queue filled up to the capacity."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_version_upload
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.matches.tasks import run_match
from ladder.matchmaking.services import matchmaker_fill, matchmaker_run
from ladder.ratings.models import BotRating

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


@pytest.fixture
def bots(valid_version: Any) -> Any:
    """`make(ratings)`: one bot with a valid version per rating, named b0, b1, ..."""

    def make(ratings: list[float]) -> list[BotVersion]:
        versions = [valid_version(f"b{i}") for i in range(len(ratings))]
        BotRating.objects.bulk_create(
            BotRating(bot_id=v.bot_id, ruleset="modern", mu=mu)
            for v, mu in zip(versions, ratings, strict=True)
        )
        return versions

    return make


def _bot_ids(match: Match) -> set[int]:
    return {seat.bot_version.bot_id for seat in match.seats.select_related("bot_version")}


def test_capacity_counts_queued_and_running_matches(
    bots: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    versions = bots([1500] * 4)
    running = match_create(versions=versions[:2])
    Match.objects.filter(pk=running.pk).update(status=Match.Status.RUNNING)
    match_create(versions=versions[2:])
    Match.objects.create(status=Match.Status.FINISHED)  # not counted

    with django_capture_on_commit_callbacks(execute=True):
        created = matchmaker_fill(capacity=5)
    assert len(created) == 3
    assert sent == [m.pk for m in created]  # enqueued after commit
    assert matchmaker_fill(capacity=5) == []
    assert Match.objects.filter(status__in=["queued", "running"]).count() == 5


def test_the_least_played_bot_gets_a_seat(bots: Any, finished_match: Any) -> None:
    versions = bots([1500, 1500, 1500, 1500, 1500])
    for a, b in [(0, 1), (2, 3), (1, 4), (3, 4)]:
        finished_match([versions[a], versions[b]], [1, 2])
    # Games in the last 24 hours: b0 1, b1 2, b2 1, b3 2, b4 2.
    for seed in range(5):
        (match,) = matchmaker_fill(seats=2, capacity=1, rng=random.Random(seed))
        assert _bot_ids(match) & {versions[0].bot_id, versions[2].bot_id}
        match.delete()


def test_opponents_have_similar_ratings(bots: Any, finished_match: Any) -> None:
    versions = bots([1000, 1010, 1020, 1030, 2000, 2010, 2020, 2030])
    # Everyone has played once except b5 (2010), whom the match is built around.
    for a, b in [(0, 1), (2, 3), (4, 6), (7, 0)]:
        finished_match([versions[a], versions[b]], [1, 2])

    (match,) = matchmaker_fill(seats=4, capacity=1, rng=random.Random(1))

    assert _bot_ids(match) == {v.bot_id for v in versions[4:]}
    assert match.ruleset == "modern" and match.status == Match.Status.QUEUED


def test_successive_matches_spread_over_the_bots_without_duplicates(bots: Any) -> None:
    versions = bots([1200, 1400, 1500, 1500, 1600, 1800])
    created = matchmaker_fill(seats=3, capacity=2, rng=random.Random(7))

    assert len(created) == 2
    seated = [_bot_ids(m) for m in created]
    assert all(len(ids) == 3 for ids in seated)  # a bot never holds two seats
    # The second match is built around a bot that has not played yet, so not one of the first's.
    assert seated[1] - seated[0]
    assert seated[0] | seated[1] <= {v.bot_id for v in versions}


def test_a_match_takes_every_bot_when_fewer_than_the_seats_can_play(bots: Any) -> None:
    versions = bots([1500, 1600, 1700])
    (match,) = matchmaker_fill(seats=6, capacity=1)
    assert _bot_ids(match) == {v.bot_id for v in versions}
    assert match.seats.count() == 3


def test_fewer_than_two_playable_bots_make_no_match(
    valid_version: Any, owner: Any, example_file: Any
) -> None:
    assert matchmaker_fill(capacity=4) == []
    lone = valid_version("lone")
    assert matchmaker_fill(capacity=4) == []
    pending = valid_version("pending")
    BotVersion.objects.filter(pk=pending.pk).update(status=BotVersion.Status.PENDING)
    assert matchmaker_fill(capacity=4) == []

    # A bot plays its newest *valid* version: a newer pending upload does not bench it.
    BotVersion.objects.filter(pk=pending.pk).update(status=BotVersion.Status.VALID)
    bot_version_upload(bot=pending.bot, filename="bot.py", data=example_file("random"))
    (match,) = matchmaker_fill(seats=2, capacity=1)
    assert {s.bot_version_id for s in match.seats.all()} == {lone.pk, pending.pk}


def test_a_tick_sets_tables_of_one_of_the_ladders_kinds(bots: Any, settings: Any) -> None:
    bots([1500] * 6)
    settings.GRASS_MATCH_CAPACITY = 2
    settings.GRASS_LADDER_TABLES = [("classic", 3)]
    created = matchmaker_run()
    assert [(m.ruleset, m.seats.count()) for m in created] == [("classic", 3)] * 2


def test_ticks_spread_over_every_kind_of_table(bots: Any, settings: Any) -> None:
    versions = bots([1500] * 6)
    settings.GRASS_MATCH_CAPACITY = 1
    kinds = [("modern", 2), ("modern", 5), ("classic", 4)]
    settings.GRASS_LADDER_TABLES = kinds
    # The home page's board has a rated game: from then on every kind of table is played.
    BotRating.objects.update_or_create(
        bot_id=versions[0].bot_id, ruleset="modern", defaults={"mu": 1500, "games": 1}
    )
    rng = random.Random(7)
    seen = set()
    for _ in range(30):
        for match in matchmaker_run(rng=rng):
            seen.add((match.ruleset, match.seats.count()))
            Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
    assert seen == set(kinds)


def test_the_first_games_of_a_new_ladder_fill_the_home_pages_board(
    bots: Any, settings: Any
) -> None:
    """`/` shows the modern board: while it is empty, ticks set modern tables only (a classic
    table first left it empty for another tick, 26 s into `make run` instead of 16)."""
    versions = bots([1500] * 6)
    settings.GRASS_MATCH_CAPACITY = 1
    settings.GRASS_LADDER_TABLES = [("classic", 4), ("classic", 3), ("modern", 3)]
    rng = random.Random(1)
    for _ in range(12):
        (match,) = matchmaker_run(rng=rng)
        assert (match.ruleset, match.seats.count()) == ("modern", 3)
        Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
    BotRating.objects.update_or_create(
        bot_id=versions[0].bot_id, ruleset="modern", defaults={"mu": 1500, "games": 1}
    )
    rulesets = set()
    for _ in range(12):
        for match in matchmaker_run(rng=rng):
            rulesets.add(match.ruleset)
            Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
    assert rulesets == {"classic", "modern"}


def test_beat_runs_the_matchmaker_and_the_sweep(bots: Any, settings: Any) -> None:
    from ladder.celery import app
    from ladder.matches.tasks import sweep_matches
    from ladder.matchmaking.tasks import matchmaker_tick

    app.loader.import_default_modules()  # every app's tasks module, as a worker loads them
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks
    bots([1500, 1500])
    settings.GRASS_MATCH_CAPACITY = 1
    matchmaker_tick()
    matchmaker_tick()
    assert Match.objects.filter(status=Match.Status.QUEUED).count() == 1
    sweep_matches()  # nothing lost or failed: nothing changes
    assert Match.objects.filter(status=Match.Status.QUEUED).count() == 1


def test_matches_have_a_queue_of_their_own_that_every_worker_takes() -> None:
    """A validation, a webhook or a tournament's next round never waits behind queued matches:
    run_match goes to `matches`, the rest to `celery`, and a worker started without -Q takes
    both (Celery consumes every queue in task_queues)."""
    from ladder.celery import app
    from ladder.matches.tasks import run_match
    from ladder.tournaments.tasks import progress_tournament

    router = app.amqp.router
    assert router.route({}, run_match.name)["queue"].name == "matches"
    assert router.route({}, progress_tournament.name)["queue"].name == "celery"
    assert {q.name for q in app.amqp.queues.consume_from.values()} == {"celery", "matches"}


class FakeBroadcast:
    """What `app.control.broadcast("grass_capacity", reply=True, ...)` answers: one entry per
    worker that replied."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.asked = 0

    def __call__(self, command: str, **_: Any) -> list[dict[str, Any]]:
        assert command == "grass_capacity"
        self.asked += 1
        return self.replies


def test_auto_capacity_is_two_matches_per_live_worker_process(
    bots: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.cache import cache

    from ladder.celery import app
    from ladder.matchmaking.capacity import match_capacity, seat_capacity

    settings.GRASS_MATCH_CAPACITY = None  # auto
    cache.clear()
    workers = FakeBroadcast(
        [
            {"w1@a": {"processes": 3, "cores": 2}},
            {"w2@b": {"processes": 2, "cores": 2}},
            {"odd@c": {"error": "No such command"}},  # an older worker: 1 process, 1 core
        ]
    )
    monkeypatch.setattr(app.control, "broadcast", workers)
    assert match_capacity() == 2 * (3 + 2 + 1)
    assert match_capacity() == 12 and workers.asked == 1  # the answer stands a while
    assert seat_capacity() == 8 * (2 + 2 + 1) and workers.asked == 1
    settings.GRASS_MATCHES_PER_WORKER_PROCESS = 1
    assert match_capacity() == 6

    bots([1500] * 4)
    assert len(matchmaker_fill(seats=2)) == 6
    settings.GRASS_MATCH_CAPACITY = 7  # a fixed number wins over the workers' answer
    assert seat_capacity() is None
    assert len(matchmaker_fill(seats=2)) == 1


def test_auto_capacity_counts_seats_against_the_workers_cores(
    bots: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker with more processes than cores: its cores, not its processes, bound the
    tables in flight, so the extra work waits in the queue instead of slowing every match."""
    from django.core.cache import cache

    from ladder.celery import app

    settings.GRASS_MATCH_CAPACITY = None
    cache.clear()
    monkeypatch.setattr(
        app.control, "broadcast", FakeBroadcast([{"big@a": {"processes": 8, "cores": 1}}])
    )
    bots([1500] * 4)
    created = matchmaker_fill(seats=4)
    assert len(created) == 2  # 8 seats on one core: two four-seat tables, not sixteen
    assert matchmaker_fill(seats=2) == []  # every seat taken, whatever the table size
    settings.GRASS_SEATS_PER_CORE = 12
    assert len(matchmaker_fill(seats=2)) == 2  # 4 seats free: two more two-seat tables


def test_with_no_worker_answering_nothing_is_queued(
    bots: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.cache import cache

    from ladder.celery import app

    settings.GRASS_MATCH_CAPACITY = None
    cache.clear()
    monkeypatch.setattr(app.control, "broadcast", FakeBroadcast([]))
    bots([1500] * 4)
    assert matchmaker_fill(seats=2) == []

    def broker_down(command: str, **_: Any) -> Any:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    cache.clear()
    monkeypatch.setattr(app.control, "broadcast", broker_down)
    assert matchmaker_fill(seats=2) == []
