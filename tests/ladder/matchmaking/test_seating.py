"""The matchmaker never seats two bots of one circle (an owner's, or linked accounts') at a
rated table, and one author's crowd of bots never stalls the ladder.

The attack (docs/fairplay.md): an author's "feeder" bot recognises their "partner" at the table
through an ordinary deal and hands it the game (the partner won 85% of four-seat games instead
of 23%). Kept apart, a feeder has no one to feed.
"""

from __future__ import annotations

import itertools
import os
import random
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.accounts.services import account_house_set, accounts_link
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_circles
from ladder.matches.models import Match, MatchSeat
from ladder.matches.tasks import run_match
from ladder.matchmaking.selectors import Candidate
from ladder.matchmaking.services import _distinct_table, matchmaker_fill
from ladder.ratings.models import BotRating
from tests.tiers import examples

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


def _rate(version: BotVersion, mu: float) -> None:
    BotRating.objects.filter(bot_id=version.bot_id, ruleset="modern").update(mu=mu)


def _tables() -> list[list[int]]:
    seats = MatchSeat.objects.order_by("match_id", "seat").values_list("match_id", "bot_id")
    return [[bot for _, bot in group] for _, group in itertools.groupby(seats, lambda s: s[0])]


def _shared(tables: list[list[int]]) -> list[list[int]]:
    bots = {bot for table in tables for bot in table}
    circles = bot_circles(bot_ids=bots)
    return [t for t in tables if len({circles[b] for b in t}) != len(t)]


def test_two_bots_of_one_owner_never_share_a_table(
    valid_version: Any, owners: Any, owner: Any
) -> None:
    feeder, partner = valid_version("feeder"), valid_version("partner")
    others = [valid_version(f"o{i}", by=by) for i, by in enumerate(owners(2))]
    for version in (feeder, partner, *others):
        _rate(version, 1500)  # all alike: by rating alone any four would do
    for seed in range(20):
        Match.objects.all().delete()
        (match,) = matchmaker_fill(seats=4, capacity=1, rng=random.Random(seed))
        bots = set(match.seats.values_list("bot_id", flat=True))
        assert len(bots) == 3 and not {feeder.bot_id, partner.bot_id} <= bots


def test_bots_of_linked_accounts_never_share_a_table(valid_version: Any, owners: Any) -> None:
    alice, alias, bob, carol = owners(4)
    accounts_link(user_ids=[alice.pk, alias.pk], reason="signed up from one /48")
    versions = [valid_version(n, by=u) for n, u in [("f", alice), ("p", alias), ("b", bob)]]
    versions.append(valid_version("c", by=carol))
    for seed in range(12):
        Match.objects.all().delete()
        (match,) = matchmaker_fill(seats=4, capacity=1, rng=random.Random(seed))
        bots = set(match.seats.values_list("bot_id", flat=True))
        assert len(bots) == 3 and not {versions[0].bot_id, versions[1].bot_id} <= bots


def test_the_house_examples_may_share_a_table(django_user_model: Any, valid_version: Any) -> None:
    house = django_user_model.objects.create_user(username="examples")
    account_house_set(user_id=house.pk)
    versions = [valid_version(n, n, by=house) for n in ("random", "greedy", "strong")]
    (match,) = matchmaker_fill(seats=3, capacity=1)
    assert set(match.seats.values_list("bot_id", flat=True)) == {v.bot_id for v in versions}


def test_one_authors_crowd_at_the_head_of_the_queue_does_not_stall_the_ladder(
    valid_version: Any, owners: Any, owner: Any
) -> None:
    """Ten bots of one author waited longest, all at one rating, the others far away: a
    table around one of the crowd has no one else near it. It waits its turn again and the
    tick goes on, so the other authors still play (before circles, the tick stopped at the
    first table it could not fill)."""
    crowd = [valid_version(f"crowd{i}") for i in range(10)]
    rest = [valid_version(f"r{i}", by=by) for i, by in enumerate(owners(4))]
    now = timezone.now()
    for index, version in enumerate(crowd):
        _rate(version, 1500)
        BotRating.objects.filter(bot_id=version.bot_id).update(
            last_queued=now - timedelta(hours=2, minutes=index)
        )
    for version in rest:
        _rate(version, 3000)
    created = matchmaker_fill(seats=2, capacity=4, rng=random.Random(1))
    assert created, "the tick queued nothing"
    assert not _shared(_tables())


def _candidates(ratings: list[int]) -> list[Candidate]:
    now = timezone.now()
    return [Candidate(i, float(r), now) for i, r in enumerate(ratings)]


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4)), min_size=2, max_size=12).map(
        sorted
    ),
    size=st.integers(2, 6),
    pivot=st.integers(0, 11),
)
def test_the_table_is_the_narrowest_of_distinct_circles_holding_the_pivot(
    data: list[tuple[int, int]], size: int, pivot: int
) -> None:
    """Against every choice of bots: the table holds the pivot, no circle twice, as many bots
    as there are circles (up to `size`), and no such table is narrower."""
    near = _candidates([rating for rating, _ in data])
    circle_of = {c.bot_id: circle for c, (_, circle) in zip(near, data, strict=True)}
    at = pivot % len(near)
    table = _distinct_table(near, at, size, circle_of)
    mine = circle_of[near[at].bot_id]
    allowed = [c for c in near if c is near[at] or circle_of[c.bot_id] != mine]
    want = min(size, len({circle_of[c.bot_id] for c in allowed}))
    assert near[at] in table and len(table) == want
    assert len({circle_of[c.bot_id] for c in table}) == len(table)
    assert table == sorted(table, key=near.index)
    best = min(
        max(c.rating for c in combo) - min(c.rating for c in combo)
        for combo in itertools.combinations(allowed, want)
        if near[at] in combo and len({circle_of[c.bot_id] for c in combo}) == want
    )
    assert table[-1].rating - table[0].rating == best


def test_without_shared_circles_the_table_is_the_window_it_always_was() -> None:
    near = _candidates([10, 11, 20, 21, 22, 40])
    circle_of = {c.bot_id: c.bot_id for c in near}
    assert [c.bot_id for c in _distinct_table(near, 2, 3, circle_of)] == [2, 3, 4]
    assert [c.bot_id for c in _distinct_table(near, 1, 2, circle_of)] == [0, 1]


@pytest.mark.slow
def test_a_simulated_ladder_of_thousands_of_ticks_never_seats_one_circle_twice(
    valid_version: Any, owners: Any, django_user_model: Any
) -> None:
    """Forty bots: the house's three, authors with one bot, authors with four or six, two
    pairs of linked accounts, ratings that drift as games end. Five hundred ticks of every
    table size in the suite (GRASS_SEATING_TICKS sets more: 5,000 were run by hand, see
    docs/fairplay.md); every table checked."""
    rng = random.Random(33)
    house = django_user_model.objects.create_user(username="examples")
    account_house_set(user_id=house.pk)
    authors = owners(14)
    accounts_link(user_ids=[authors[0].pk, authors[1].pk], reason="one /48")
    accounts_link(user_ids=[authors[2].pk, authors[3].pk, authors[4].pk], reason="staff")
    bots_of = [3, 3, 2, 2, 2, 6, 4, 3, 3, 3, 2, 1, 1, 2]
    versions = [valid_version(n, n, by=house) for n in ("random", "greedy", "strong")]
    for author, count in zip(authors, bots_of, strict=True):
        versions += [valid_version(f"{author.username}-{i}", by=author) for i in range(count)]
    assert len(versions) == 40
    for version in versions:
        _rate(version, rng.gauss(1500, 150))
    ticks = int(os.environ.get("GRASS_SEATING_TICKS") or examples(500))
    for _ in range(ticks):
        # Some games end (their seats free), ratings drift, and a tick fills the room.
        running = list(
            Match.objects.filter(status=Match.Status.QUEUED).values_list("pk", flat=True)
        )
        ended = [pk for pk in running if rng.random() < 0.5]
        Match.objects.filter(pk__in=ended).update(status=Match.Status.FINISHED)
        for version in rng.sample(versions, 3):
            BotRating.objects.filter(bot_id=version.bot_id, ruleset="modern").update(
                mu=rng.gauss(1500, 150)
            )
        matchmaker_fill(seats=rng.randint(2, 6), capacity=4, seat_limit=None, rng=rng)
    tables = _tables()
    assert len(tables) > ticks  # the ladder played: several tables a tick
    assert _shared(tables) == []
