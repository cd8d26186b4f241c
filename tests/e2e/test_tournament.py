"""A tournament scheduled a few seconds ahead, run to the finish by a real Celery beat (its
database schedule) and a real worker, on Redis and PostgreSQL, with bots in the sandbox."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.e2e.conftest import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]


def test_beat_opens_closes_starts_and_the_worker_plays_it_to_the_finish(
    celery: Any, valid_version: Any, owner: Any, owners: Any
) -> None:
    from ladder.matches.models import Match
    from ladder.ratings.models import RatingChange
    from ladder.tournaments.models import Tournament
    from ladder.tournaments.selectors import tournament_detail
    from ladder.tournaments.services import tournament_create, tournament_register

    # Three owners: a tournament takes one bot per owner.
    bots = [
        valid_version(name, example, by=by).bot
        for (name, example), by in zip(
            (("g1", "greedy"), ("g2", "greedy"), ("r1", "random")), owners(3), strict=True
        )
    ]
    # Worker and beat first: the schedule counts from the moment both are up, however long
    # they took to start (a beat that woke after all three times would fire them at once and
    # cancel a tournament that nobody could enter). Beat picks the new entries up as it would
    # in production, where tournaments are created while it runs.
    celery("worker", concurrency=2)
    celery("beat")
    now = timezone.now()
    t = tournament_create(
        organiser=owner,
        name="e2e cup",
        format="swiss",
        seats=2,
        swiss_rounds=2,
        limits={"max_hands": 2},
        registration_opens=now + timedelta(seconds=2),
        registration_closes=now + timedelta(seconds=8),
        starts_at=now + timedelta(seconds=10),
    )

    def status() -> str:
        return Tournament.objects.get(pk=t.pk).status

    # Bounds for a hang, not for speed: under CI beside head-to-head games (load 18 on this
    # 2-core machine) the start took longer than 30 s.
    wait_until(lambda: status() == "registration", timeout=120, what="registration to open")
    t.refresh_from_db()
    for bot in bots:
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    wait_until(lambda: status() == "running", timeout=120, what="the start")
    wait_until(lambda: status() == "finished", timeout=240, what="the finish")

    t.refresh_from_db()
    detail = tournament_detail(tournament=t)
    assert [r.number for r in detail.rounds] == [1, 2]
    for r in detail.rounds:
        assert len(r.tables) == 1 and len(r.byes) == 1  # three entrants at two seats
        assert r.tables[0].result is not None
    assert [row.rank for row in detail.standings] == [1, 2, 3]
    games = Match.objects.filter(tournament_game__table__round__tournament=t)
    assert games.count() == 2
    assert set(games.values_list("status", flat=True)) == {"finished"}
    assert all(g.log and not g.rated for g in games)
    assert not RatingChange.objects.filter(match__in=games).exists()  # not rated
