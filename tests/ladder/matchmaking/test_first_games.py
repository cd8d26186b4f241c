"""The fast lane (issue 35): a new bot's, or a new version's, first rated game in a ruleset is
seated at once on the `now` pool, however busy the ladder's own games keep the match workers."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_version_upload
from ladder.matches.lanes import Lane
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.matches.tasks import run_match
from ladder.matchmaking.services import matchmaker_fill, matchmaker_first_games, matchmaker_run
from ladder.ratings.models import NEVER, BotRating
from ladder.ratings.services import rating_pool_enter

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str, int | None]]:
    """Every run_match message: (match id, queue, priority); None for the default route."""
    messages: list[tuple[int, str, int | None]] = []
    monkeypatch.setattr(run_match, "delay", lambda match_id: messages.append((match_id, "", None)))
    monkeypatch.setattr(
        run_match,
        "apply_async",
        lambda args, queue, priority: messages.append((args[0], queue, priority)),
    )
    return messages


@pytest.fixture
def ladder(valid_version: Any, owners: Any) -> list[BotVersion]:
    """Six bots of six owners, seated before (not newcomers), and every match worker busy: the
    background games fill the capacity of 4 (settings_test)."""
    versions = [valid_version(f"old{i}", by=by) for i, by in enumerate(owners(6))]
    BotRating.objects.update(last_queued="2026-11-01T00:00:00Z")
    assert len(matchmaker_fill(ruleset="modern", seats=2)) == 4
    assert matchmaker_fill(ruleset="modern", seats=2) == []  # full
    return versions


def test_a_newcomer_is_seated_at_once_while_the_background_games_fill_every_worker(
    ladder: list[BotVersion],
    valid_version: Any,
    owners: Any,
    sent: list[tuple[int, str, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    (newcomer_owner,) = owners(1)
    newcomer = valid_version("new", by=newcomer_owner)
    assert BotRating.objects.get(bot_id=newcomer.bot_id, ruleset="modern").last_queued == NEVER
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        (first,) = matchmaker_first_games(ruleset="modern", seats=3)
    assert first.rated and first.lane == Lane.FIRST and first.status == Match.Status.QUEUED
    bots = {seat.bot_id for seat in first.seats.all()}
    assert newcomer.bot_id in bots and len(bots) == 3
    # To the pool of what someone waits for, behind people's games and challenges.
    assert sent == [(first.pk, "now", int(Lane.FIRST))]
    # Seated: not a newcomer any more, so the next tick seats nobody again...
    assert BotRating.objects.get(bot_id=newcomer.bot_id, ruleset="modern").last_queued > NEVER
    assert matchmaker_first_games(ruleset="modern", seats=3) == []
    # ...and the background games never counted it: their capacity is still full.
    assert matchmaker_fill(ruleset="modern", seats=2) == []


def test_the_lane_holds_its_share_of_the_now_pool_and_no_more(
    ladder: list[BotVersion], valid_version: Any, owners: Any, settings: Any
) -> None:
    # Two games of four: with people's games on the table hosts, the pool is the challenges'
    # and the first games' alone, half each (25 and 25).
    settings.GRASS_NOW_CAPACITY = 4
    newcomers = [valid_version(f"new{i}", by=by) for i, by in enumerate(owners(3))]
    first = matchmaker_first_games(ruleset="modern", seats=2)
    assert len(first) == 2 and all(m.lane == Lane.FIRST for m in first)
    # The third waits for a place, still a newcomer; a game that ends gives it one.
    waiting = [
        v for v in newcomers if not any(m.seats.filter(bot_id=v.bot_id).exists() for m in first)
    ]
    assert matchmaker_first_games(ruleset="modern", seats=2) == []
    assert any(
        BotRating.objects.get(bot_id=v.bot_id, ruleset="modern").last_queued == NEVER
        for v in waiting
    )
    Match.objects.filter(pk=first[0].pk).update(status=Match.Status.FINISHED)
    assert len(matchmaker_first_games(ruleset="modern", seats=2)) == 1
    settings.GRASS_NOW_CAPACITY = 0  # no now worker up: nothing in the fast lane
    assert matchmaker_first_games(ruleset="modern", seats=2) == []


def test_a_new_version_of_a_rated_bot_gets_its_first_games_in_the_fast_lane_too(
    ladder: list[BotVersion], example_file: Any
) -> None:
    bot_id = ladder[0].bot_id
    assert matchmaker_first_games(ruleset="modern", seats=2) == []  # nobody is new
    version = bot_version_upload(bot=ladder[0].bot, filename="bot.py", data=example_file("greedy"))
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    rating_pool_enter(bot_id=bot_id)  # what a valid verdict calls
    assert {r.last_queued for r in BotRating.objects.filter(bot_id=bot_id)} == {NEVER}
    (first,) = matchmaker_first_games(ruleset="modern", seats=2)
    assert first.seats.get(bot_id=bot_id).bot_version_id == version.pk


def test_a_version_uploaded_again_and_again_does_not_take_the_lane_from_a_new_author(
    ladder: list[BotVersion], valid_version: Any, owners: Any, example_file: Any
) -> None:
    """The lane's one place goes to the newcomer served longest ago: a bot that has just had
    its first game goes behind a new author's, however low its id."""
    spammer = ladder[0].bot
    BotRating.objects.filter(bot=spammer).update(updated="2026-11-29T10:00:00Z")  # just rated
    (late_author,) = owners(1)
    new_author = valid_version("fresh", by=late_author)  # joined at the test's own time, later
    BotRating.objects.filter(bot_id=new_author.bot_id).update(updated="2026-11-29T09:00:00Z")
    version = bot_version_upload(bot=spammer, filename="bot.py", data=example_file("greedy"))
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    rating_pool_enter(bot_id=spammer.pk)
    (first,) = matchmaker_first_games(ruleset="modern", seats=2)
    assert new_author.bot_id in {s.bot_id for s in first.seats.all()}


def test_a_newcomer_with_no_other_circle_near_it_waits_in_the_background(
    valid_version: Any, owner: Any
) -> None:
    lone, same = valid_version("lone"), valid_version("same")  # one owner: one circle
    assert matchmaker_first_games(ruleset="modern", seats=2) == []  # one a tick: the share
    assert matchmaker_first_games(ruleset="modern", seats=2) == []
    rows = BotRating.objects.filter(bot_id__in=[lone.bot_id, same.bot_id], ruleset="modern")
    assert all(row.last_queued > NEVER for row in rows)  # passed over, not asked again
    assert not Match.objects.exists()


def test_a_tick_seats_newcomers_in_the_fast_lane_only_while_a_now_pool_is_up(
    valid_version: Any, owners: Any, settings: Any
) -> None:
    """A newcomer seated in a background game would wait behind the ladder's games, and,
    marked seated, lose its place in the fast lane (the bench saw a new version's first game
    queued behind two `strong` games when the lane's one place was taken)."""
    settings.GRASS_LADDER_TABLES = [("modern", 2)]
    bots = [valid_version(f"b{i}", by=by).bot_id for i, by in enumerate(owners(4))]
    first, *background = matchmaker_run()  # the lane's one place of a pool of 4
    assert first.lane == Lane.FIRST
    seated = {s.bot_id for s in first.seats.all()}
    waiting = set(bots) - seated
    # The background seats the two bots seated already, never the two newcomers, who wait for
    # the lane (full until the first game ends).
    assert background and all(m.lane is None for m in background)
    assert all({s.bot_id for s in m.seats.all()} == seated for m in background)
    Match.objects.filter(pk__in=[m.pk for m in background]).update(status=Match.Status.FINISHED)
    assert matchmaker_first_games(ruleset="modern", seats=2) == []
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED)
    (second,) = [m for m in matchmaker_run() if m.lane == Lane.FIRST]
    assert min(waiting) in {s.bot_id for s in second.seats.all()}  # newcomers in id order
    # With no `now` pool, the background seats newcomers as before.
    settings.GRASS_NOW_CAPACITY = 0
    valid_version("late", by=owners(1)[0])
    Match.objects.update(status=Match.Status.FINISHED)
    assert any(m.lane is None for m in matchmaker_run())


def test_a_match_sent_again_goes_back_to_its_lane(
    valid_version: Any,
    owners: Any,
    sent: list[tuple[int, str, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from ladder.matches.recovery import match_resend_lost

    a, b = (valid_version(f"v{i}", by=by) for i, by in enumerate(owners(2)))
    challenge = match_create(versions=[a, b], rated=False, lane=Lane.CHALLENGE, enqueue=True)
    background = match_create(versions=[a, b], enqueue=True)
    long_ago = timezone.now() - timedelta(hours=1)
    Match.objects.update(queued=long_ago)
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        resent = match_resend_lost(older_than=timedelta(minutes=1))
    assert sorted(resent) == sorted([challenge.pk, background.pk])
    assert sorted(sent) == sorted(
        [(challenge.pk, "now", int(Lane.CHALLENGE)), (background.pk, "", None)]
    )


def test_the_fast_lane_seats_the_home_pages_ruleset_whatever_the_ticks_kind(
    valid_version: Any, owners: Any, settings: Any
) -> None:
    """Its first games in the other rulesets are the background's (a first classic game of
    `strong` held the lane's place, and the next author's first game waited 76 s)."""
    import random

    settings.GRASS_LADDER_TABLES = [("classic", 4), ("modern", 2)]
    versions = [valid_version(f"b{i}", by=by) for i, by in enumerate(owners(6))]
    # The home page's board has a game: every kind of table may be picked.
    BotRating.objects.filter(bot_id=versions[0].bot_id, ruleset="modern").update(games=1)
    seed = next(s for s in range(100) if random.Random(s).choice([0, 1]) == 0)  # classic
    created = matchmaker_run(rng=random.Random(seed))
    first = [m for m in created if m.lane == Lane.FIRST]
    background = [m for m in created if m.lane is None]
    assert [(m.ruleset, m.seats.count()) for m in first] == [("modern", 2)]
    # The classic tables seat newcomers: that ruleset has no fast lane.
    assert background and all(m.ruleset == "classic" for m in background)
    assert BotRating.objects.filter(ruleset="classic", last_queued=NEVER).count() < 6
