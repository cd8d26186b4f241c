"""Bots that cannot play leave the pool (issue 36): a bot taken off the ladder, or without a
valid version, is not in the matchmaker's partial indexes, and one off the ladder not in the
leaderboard's, so neither read grows with the bots that do not play. The flags are kept by the
database in the statement that changes what they derive from, whoever writes it."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion
from ladder.matchmaking.selectors import matchmaker_nearest, matchmaker_waiting
from ladder.matchmaking.services import matchmaker_fill
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import leaderboard
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


def _flags(bot_id: int) -> set[tuple[bool, bool]]:
    return set(BotRating.objects.filter(bot_id=bot_id).values_list("on_ladder", "playing"))


def test_the_flags_follow_every_writer_in_the_same_transaction(
    valid_version: Any, owner: Any
) -> None:
    version = valid_version("flagged")
    bot_id = version.bot_id
    assert _flags(bot_id) == {(True, True)}
    # Staff in the admin, another app's action, a shell: a plain UPDATE of the bot.
    Bot.objects.filter(pk=bot_id).update(disabled=timezone.now(), disabled_reason="x")
    assert _flags(bot_id) == {(False, False)}
    Bot.objects.filter(pk=bot_id).update(disabled=timezone.now())  # disabled again: still off
    assert _flags(bot_id) == {(False, False)}
    # A model saved whole with stale flags cannot put the bot back.
    row = BotRating.objects.filter(bot_id=bot_id).first()
    assert row is not None
    row.on_ladder = row.playing = True
    row.save()
    assert _flags(bot_id) == {(False, False)}
    BotRating.objects.filter(bot_id=bot_id).update(playing=True)
    assert _flags(bot_id) == {(False, False)}
    Bot.objects.filter(pk=bot_id).update(disabled=None, disabled_reason="")
    assert _flags(bot_id) == {(True, True)}
    # Its only valid version gone (or judged again): on the ladder, but not seated.
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.PENDING)
    assert _flags(bot_id) == {(True, False)}
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    assert _flags(bot_id) == {(True, True)}
    BotVersion.objects.filter(pk=version.pk).delete()
    assert _flags(bot_id) == {(True, False)}


def test_a_new_rating_row_is_flagged_from_the_truth_not_from_its_writer(owner: Any) -> None:
    bot = Bot.objects.create(owner=owner, name="versionless")
    BotRating.objects.create(bot=bot, ruleset="modern", mu=1500, games=3)  # defaults say True
    assert _flags(bot.pk) == {(True, False)}
    off = Bot.objects.create(owner=owner, name="off", disabled=timezone.now())
    BotRating.objects.bulk_create([BotRating(bot=off, ruleset="modern", mu=1500, games=3)])
    assert _flags(off.pk) == {(False, False)}


def test_the_matchmaker_never_seats_a_disabled_or_versionless_bot(
    valid_version: Any, owners: Any, finished_match: Any
) -> None:
    a, b, c, d, e = (valid_version(f"b{i}", by=by) for i, by in enumerate(owners(5)))
    Bot.objects.filter(pk=a.bot_id).update(disabled=timezone.now(), disabled_reason="x")
    BotVersion.objects.filter(pk=b.pk).update(status=BotVersion.Status.INVALID)
    rating_apply(match=finished_match([c, d], [1, 2]))  # rated rows keep their flags
    playing = {c.bot_id, d.bot_id, e.bot_id}
    waiting = matchmaker_waiting(ruleset="modern", limit=10)
    assert {row.bot_id for row in waiting} == playing
    near = matchmaker_nearest(ruleset="modern", around=waiting[0], limit=10)
    assert {row.bot_id for row in near} == playing
    for seed in range(4):
        (match,) = matchmaker_fill(seats=4, capacity=1, rng=random.Random(seed))
        assert {seat.bot_id for seat in match.seats.all()} == playing
        match.delete()


def test_the_leaderboard_lists_the_same_rows_as_before(owner: Any) -> None:
    """Before, the board left out disabled bots by id; a bot rated without a valid version
    (only tests make one) was listed, and still is."""
    bots = Bot.objects.bulk_create(Bot(owner=owner, name=f"r{i}") for i in range(12))
    BotRating.objects.bulk_create(
        BotRating(bot=bot, ruleset="modern", mu=1500 + i % 5, games=1 + i % 2)
        for i, bot in enumerate(bots)
    )
    Bot.objects.filter(pk__in=[bot.pk for bot in bots[::3]]).update(disabled=timezone.now())
    before = list(
        BotRating.objects.filter(ruleset="modern", games__gt=0)
        .exclude(bot_id__in=Bot.objects.filter(disabled__isnull=False).values("id"))
        .order_by("-mu", "bot_id")
        .values_list("bot_id", flat=True)
    )
    board = leaderboard(ruleset="modern")
    assert len(before) == 8 and len(board) == 8
    assert [row.bot_id for row in board] == before


def _plans(captured: CaptureQueriesContext) -> list[str]:
    plans = []
    with connection.cursor() as cursor:
        for query in captured:
            sql = query["sql"]
            if sql.startswith("SELECT") and "ratings_botrating" in sql:
                cursor.execute(f"EXPLAIN {sql}")
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def _many(valid_version: Any, owners: Any, n: int) -> list[Any]:
    versions = [valid_version(f"p{i}", by=by) for i, by in enumerate(owners(n))]
    off = [v.bot_id for v in versions[::2]]
    Bot.objects.filter(pk__in=off).update(disabled=timezone.now(), disabled_reason="x")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ratings_botrating")
        cursor.execute("ANALYZE bots_bot")
        # A table of a few rows is read whole (or its rows sorted) whatever the indexes;
        # forbid that to see the plan PostgreSQL uses on a real ladder.
        for scan in ("seqscan", "bitmapscan", "sort"):
            cursor.execute(f"SET LOCAL enable_{scan} = off")
    return versions


def test_the_matchmakers_reads_are_ranges_of_its_partial_indexes_with_no_join(
    valid_version: Any, owners: Any
) -> None:
    _many(valid_version, owners, 8)
    with CaptureQueriesContext(connection) as captured:
        waiting = matchmaker_waiting(ruleset="modern", limit=4)
        matchmaker_nearest(ruleset="modern", around=waiting[0], limit=4)
    plans = _plans(captured)
    assert len(plans) == 3, plans
    assert "bot_rating_pool_waiting" in plans[0], plans[0]
    assert all("bot_rating_pool_nearest" in plan for plan in plans[1:]), plans
    for plan in plans:
        assert "bots_bot" not in plan and "SubPlan" not in plan and "Join" not in plan, plan


def test_the_boards_count_and_pages_are_ranges_of_its_partial_index_with_no_join(
    valid_version: Any, owners: Any, finished_match: Any
) -> None:
    versions = _many(valid_version, owners, 8)
    rating_apply(match=finished_match(versions[:4], [1, 2, 3, 4]))
    board = leaderboard(ruleset="modern")
    with CaptureQueriesContext(connection) as captured:
        assert len(board) == 2
        assert [row.bot_id for row in board[0:50]] == list(board.order()[:50])
    plans = _plans(captured)
    assert plans and all("bot_rating_board_listed" in plan for plan in plans), plans
    # No hashed subplan of the bots off the ladder, no join to them: the count and the ids
    # come from the index alone, and a page joins only its own rows' bots (for their names).
    assert all("SubPlan" not in plan and "Hash" not in plan for plan in plans), plans
    assert "bots_bot" not in plans[0], plans[0]


def test_the_pools_filter_is_what_it_was(valid_version: Any, owners: Any) -> None:
    """`playing` holds exactly the rows the old joins let through."""
    versions = _many(valid_version, owners, 6)
    BotVersion.objects.filter(pk=versions[1].pk).update(status=BotVersion.Status.PENDING)
    old = BotRating.objects.filter(
        Q(bot__disabled__isnull=True), Q(bot__versions__status=BotVersion.Status.VALID)
    ).values_list("pk", flat=True)
    assert set(BotRating.objects.filter(playing=True).values_list("pk", flat=True)) == set(old)
