"""Fixtures for the tournament services: entrants with valid versions, a tournament whose times
have passed, and a stand-in for the workers that settles every queued game at once."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from tests.ladder.conftest import (  # noqa: F401  (the ladder's fixtures, for this folder)
    django_db_setup,
    example_file,
    owner,
    postgres_ready,
    stranger,
    valid_version,
)


@pytest.fixture
def organiser(django_user_model: Any) -> Any:
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(username="org", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    return django_user_model.objects.get(pk=user.pk)  # permissions are cached per object


@pytest.fixture
def entrants(valid_version: Any, owner: Any, owners: Any) -> Any:  # noqa: F811
    """`entrants(n)`: n bots, each with a valid version: the first of the `owner` user, the
    others each of an owner of its own (a tournament seats one bot per owner)."""

    def make(n: int) -> list[Any]:
        return [
            valid_version(f"bot{i}", by=by).bot for i, by in enumerate([owner, *owners(n - 1)][:n])
        ]

    return make


@pytest.fixture
def make_tournament(organiser: Any) -> Any:
    """`make(**fields)`: a tournament whose registration is open now and whose start has passed
    once `tick` is called with `now` past `starts_at`."""
    from django.utils import timezone

    from ladder.tournaments.services import tournament_create, tournament_tick

    def make(**fields: Any) -> Any:
        now = timezone.now()
        fields.setdefault("name", "cup")
        fields.setdefault("registration_opens", now - timedelta(hours=2))
        fields.setdefault("registration_closes", now + timedelta(minutes=1))
        fields.setdefault("starts_at", now + timedelta(minutes=2))
        t = tournament_create(organiser=organiser, **fields)
        tournament_tick(tournament_id=t.pk)  # registration opens
        t.refresh_from_db()
        return t

    return make


def settle_games(tournament: Any, rng: random.Random, *, fail: int = 0) -> int:
    """Play every queued game of `tournament` the quick way: random totals, places from them.
    The first `fail` games fail for good instead. Returns how many games were settled."""
    from django.conf import settings

    from ladder.matches.models import Match

    queued = Match.objects.filter(
        tournament_game__table__round__tournament=tournament, status=Match.Status.QUEUED
    ).order_by("id")
    settled = 0
    for match in queued:
        if settled < fail:
            match.status, match.attempts = Match.Status.FAILED, settings.GRASS_MATCH_MAX_ATTEMPTS
            match.save(update_fields=["status", "attempts"])
            settled += 1
            continue
        seats = list(match.seats.order_by("seat"))
        totals = [rng.randrange(0, 5) * 5_000 for _ in seats]
        for seat, total in zip(seats, totals, strict=True):
            seat.total = total
            seat.place = 1 + sum(other > total for other in totals)
            seat.save(update_fields=["total", "place"])
        match.status = Match.Status.FINISHED
        match.save(update_fields=["status"])
        settled += 1
    return settled
