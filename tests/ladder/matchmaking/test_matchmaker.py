"""The matchmaker: a plain function that keeps the queue filled up to the capacity."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_version_upload
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.matches.tasks import run_match
from ladder.matchmaking.services import matchmaker_fill, matchmaker_run
from ladder.ratings.models import BotRating

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_now_pool(settings: Any) -> None:
    """The background games alone: with no `now` pool, a tick seats no newcomer in the fast
    lane (tests/ladder/matchmaking/test_first_games.py)."""
    settings.GRASS_NOW_CAPACITY = 0


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


@pytest.fixture
def bots(valid_version: Any, owners: Any) -> Any:
    """`make(ratings)`: one bot with a valid version per rating, named b0, b1, ..., each of an
    owner of its own (each has joined the matchmaker's pool with its valid version; its modern
    rating is set here)."""

    def make(ratings: list[float]) -> list[BotVersion]:
        versions = [valid_version(f"b{i}", by=by) for i, by in enumerate(owners(len(ratings)))]
        for version, mu in zip(versions, ratings, strict=True):
            BotRating.objects.filter(bot_id=version.bot_id, ruleset="modern").update(mu=mu)
        return versions

    return make


def _seated(versions: list[BotVersion], minutes_ago: dict[int, int]) -> None:
    """Mark bots (by index) as last seated that many minutes ago in modern."""
    now = timezone.now()
    for index, minutes in minutes_ago.items():
        BotRating.objects.filter(bot_id=versions[index].bot_id, ruleset="modern").update(
            last_queued=now - timedelta(minutes=minutes)
        )


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


def test_the_bot_waiting_longest_gets_a_seat(bots: Any) -> None:
    versions = bots([1500, 1500, 1500, 1500, 1500])
    # Seated last: b0 and b2 an hour ago (a tie, broken at random), the others lately.
    _seated(versions, {0: 60, 1: 5, 2: 60, 3: 4, 4: 3})
    pivots = set()
    for seed in range(8):
        (match,) = matchmaker_fill(seats=2, capacity=1, rng=random.Random(seed))
        ids = _bot_ids(match)
        assert ids & {versions[0].bot_id, versions[2].bot_id}
        pivots |= ids & {versions[0].bot_id, versions[2].bot_id}
        match.delete()
        _seated(versions, {0: 60, 2: 60})
    assert pivots == {versions[0].bot_id, versions[2].bot_id}


def test_a_bot_never_seated_comes_before_every_seated_one(bots: Any) -> None:
    versions = bots([1500, 1500, 1500])
    _seated(versions, {0: 600, 1: 600})
    (match,) = matchmaker_fill(seats=2, capacity=1, rng=random.Random(3))
    assert versions[2].bot_id in _bot_ids(match)


def test_opponents_have_similar_ratings(bots: Any) -> None:
    versions = bots([1000, 1010, 1020, 1030, 2000, 2010, 2020, 2030])
    # Everyone has been seated lately except b5 (2010), whom the match is built around.
    _seated(versions, {i: 1 for i in range(8) if i != 5})

    (match,) = matchmaker_fill(seats=4, capacity=1, rng=random.Random(1))

    assert _bot_ids(match) == {v.bot_id for v in versions[4:]}
    assert match.ruleset == "modern" and match.status == Match.Status.QUEUED


def test_a_disabled_bot_is_not_seated(bots: Any) -> None:
    versions = bots([1500, 1500, 1500])
    Bot.objects.filter(pk=versions[0].bot_id).update(disabled=timezone.now())
    for seed in range(4):
        (match,) = matchmaker_fill(seats=3, capacity=1, rng=random.Random(seed))
        assert _bot_ids(match) == {versions[1].bot_id, versions[2].bot_id}
        match.delete()


def test_a_tick_reads_the_same_queries_whatever_the_number_of_bots(
    bots: Any, django_assert_max_num_queries: Any
) -> None:
    """The tick's cost is the matches it queues: with 6 bots or 40, the same queries, each a
    short index range (the bench, `manage.py bench_scale`, times it at 100,000 bots)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(n: int) -> int:
        Match.objects.all().delete()
        BotRating.objects.all().delete()
        BotVersion.objects.all().delete()
        Bot.objects.all().delete()
        bots([1500 + 10 * i for i in range(n)])
        with CaptureQueriesContext(connection) as captured:
            assert len(matchmaker_fill(seats=4, capacity=3, rng=random.Random(5))) == 3
        assert not any("IN (" in q["sql"] and q["sql"].count("%s") > 20 for q in captured)
        return len(captured)

    assert queries(6) == queries(40)


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
    valid_version: Any, owner: Any, stranger: Any, example_file: Any
) -> None:
    assert matchmaker_fill(capacity=4) == []
    lone = valid_version("lone")
    assert matchmaker_fill(capacity=4) == []
    pending = valid_version("pending", by=stranger)
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


def test_matches_have_a_queue_of_their_own_and_everything_else_is_quick_work() -> None:
    """A validation, a tick, a sweep, a webhook or a tournament's next round never waits
    behind games: run_match goes to `matches`, every other task of the site to `celery`, the
    quick queue that `make run` and deploy/systemd give a pool of its own (`-Q celery`)."""
    from pathlib import Path

    from ladder.celery import app
    from ladder.matches.tasks import run_match

    app.loader.import_default_modules()  # every app's tasks module, as a worker loads them
    router = app.amqp.router
    ours = [name for name in app.tasks if name.startswith("ladder.")]
    assert run_match.name in ours and len(ours) > 5
    for name in ours:
        expected = "matches" if name == run_match.name else "celery"
        assert router.route({}, name)["queue"].name == expected, name
    # The quick pool and the `now` pool exist wherever the site runs, and the match pool
    # takes the ladder's background games only (issue 35: the latency classes).
    root = Path(__file__).resolve().parents[3]
    procfile = (root / "Procfile").read_text()
    for queues in ("-Q celery", "-Q matches ", "-Q now,challenges ", "-Q tables --pool=threads"):
        assert queues in procfile, queues
    units = root / "deploy" / "systemd"
    assert "-Q celery" in (units / "grass-worker-quick.service").read_text()
    assert "-Q matches \\" in (units / "grass-worker.service").read_text()
    assert "-Q now,challenges \\" in (units / "grass-worker-now.service").read_text()
    assert "-Q tables --pool=threads \\" in (units / "grass-worker-tables.service").read_text()
