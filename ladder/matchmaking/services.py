"""The ladder's matchmaker: on every beat tick it queues the matches the workers have room for,
each built around the bot that has waited longest for a table, among opponents of similar
rating. A tick reads a few index ranges per match it queues (`selectors`), so its cost grows
with the matches it queues, not with the bots on the ladder.

It reads ratings (to pair bots of similar strength) and the workers' size (`capacity`), and
writes matches through `ladder.matches.services.match_create`: an app of its own above both,
so that running and recording matches (ladder.matches) needs neither.
"""

from __future__ import annotations

import random

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ladder.matches.models import Match
from ladder.matches.selectors import matches_active_count, seats_active_count
from ladder.matches.services import match_create
from ladder.matchmaking.capacity import match_capacity, seat_capacity
from ladder.matchmaking.selectors import (
    Candidate,
    home_board_empty,
    matchmaker_nearest,
    matchmaker_versions,
    matchmaker_waiting,
)
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import HOME_RULESET

MATCHMAKER_LOCK = 0x6772617373
"""The PostgreSQL advisory lock key that makes matchmaker runs take turns ("grass")."""
WAITING = 8
"""The match is built around one of this many bots that have waited longest (at random among
those that waited equally long, as bots never seated all have)."""


def matchmaker_fill(
    *,
    ruleset: str = "modern",
    seats: int = 4,
    capacity: int | None = None,
    seat_limit: int | None = None,
    rng: random.Random | None = None,
) -> list[Match]:
    """Queue matches until queued + running ones reach `capacity` (default `match_capacity()`:
    GRASS_MATCH_CAPACITY, or sized from the live workers), and their seats `seat_limit`
    (default `seat_capacity()` when `capacity` is not given: the live workers' cores times
    GRASS_SEATS_PER_CORE; None: no seat limit); returns the new matches, each sent to the
    workers after commit.

    Each match is built around the bot that has waited longest for a table of this ruleset
    (its `last_queued`; ties broken at random by `rng`): of its neighbours in (rating, bot id)
    order, the match takes the `seats` bots (fewer if fewer can play) in the narrowest window
    that holds it, so opponents are of similar rating; every bot seated is marked seated now,
    so the next match is built around another. A bot never holds two seats in one match;
    `match_create` shuffles the seats. Fewer than 2 bots with a playable (valid) version:
    nothing is queued.

    Runs in one transaction under an advisory lock on PostgreSQL, so two runs at once cannot
    both count the same free capacity.
    """
    if not 2 <= seats <= 6:
        raise ValueError(f"a match needs 2 to 6 seats, got {seats}")
    if capacity is None:
        # Before the lock: asking the workers takes a moment.
        capacity = match_capacity()
        if seat_limit is None:
            seat_limit = seat_capacity()
    rng = rng or random.Random()
    created: list[Match] = []
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [MATCHMAKER_LOCK])
        free = capacity - matches_active_count()
        if free <= 0:
            return []
        if seat_limit is not None:
            free = min(free, (seat_limit - seats_active_count()) // seats)
        for _ in range(free):
            chosen = _matchmaker_pick(ruleset=ruleset, size=seats, rng=rng)
            if chosen is None:
                break
            versions = matchmaker_versions(bot_ids=[c.bot_id for c in chosen])
            created.append(
                match_create(
                    versions=[versions[c.bot_id] for c in chosen], ruleset=ruleset, enqueue=True
                )
            )
            # Marked at once, so the next match of this run is built around another bot.
            BotRating.objects.filter(ruleset=ruleset, bot_id__in=[c.bot_id for c in chosen]).update(
                last_queued=timezone.now()
            )
    return created


def matchmaker_run(*, rng: random.Random | None = None) -> list[Match]:
    """One beat tick of the ladder: fill the free capacity with one kind of table, picked at
    random from GRASS_LADDER_TABLES (ruleset, seats). Over many ticks every kind is played, so
    every ruleset's leaderboard fills and bots meet every table size; one kind per tick keeps a
    tick's matches built from one ruleset's ratings."""
    rng = rng or random.Random()
    ruleset, seats = rng.choice(_tables_to_fill())
    return matchmaker_fill(ruleset=ruleset, seats=seats, rng=rng)


def _tables_to_fill() -> list[tuple[str, int]]:
    """The kinds of table a tick may pick: every one in GRASS_LADDER_TABLES, except while the
    leaderboard the home page shows (HOME_RULESET) has no rated game yet: then only that
    ruleset's, so a new site's first games fill the board its visitors see first."""
    tables = [(ruleset, seats) for ruleset, seats in settings.GRASS_LADDER_TABLES]
    home = [(ruleset, seats) for ruleset, seats in tables if ruleset == HOME_RULESET]
    if home and home_board_empty():
        return home
    return tables


def _matchmaker_pick(*, ruleset: str, size: int, rng: random.Random) -> list[Candidate] | None:
    """The bots of the next match: around one of the longest waiting, the narrowest window of
    `size` neighbours by rating (fewer when fewer can play); None when fewer than 2 can."""
    waiting = matchmaker_waiting(ruleset=ruleset, limit=WAITING)
    if not waiting:
        return None
    first = waiting[0].last_queued
    pivot = rng.choice([c for c in waiting if c.last_queued == first])
    near = matchmaker_nearest(ruleset=ruleset, around=pivot, limit=size - 1)
    if len(near) < 2:
        return None
    size = min(size, len(near))
    at = near.index(pivot)
    # Of the windows of `size` neighbours in rating order that hold the pivot, the narrowest.
    starts = range(max(at - size + 1, 0), min(at, len(near) - size) + 1)
    start = min(starts, key=lambda i: near[i + size - 1].rating - near[i].rating)
    return near[start : start + size]
