"""The ladder's matchmaker: on every beat tick it queues the matches the workers have room for,
each built around the bot with the fewest recent games, among opponents of similar rating.

It reads ratings (to pair bots of similar strength) and the workers' size (`capacity`), and
writes matches through `ladder.matches.services.match_create`: an app of its own above both,
so that running and recording matches (ladder.matches) needs neither.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ladder.matches.models import Match
from ladder.matches.selectors import matches_active_count, seats_active_count
from ladder.matches.services import match_create
from ladder.matchmaking.capacity import match_capacity, seat_capacity
from ladder.matchmaking.selectors import Candidate, home_board_empty, matchmaker_candidates
from ladder.ratings.selectors import HOME_RULESET

MATCHMAKER_LOCK = 0x6772617373
"""The PostgreSQL advisory lock key that makes matchmaker runs take turns ("grass")."""
RECENT = timedelta(hours=24)
"""The matchmaker prefers bots with few games in this period."""


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

    Each match is built around the bot with the fewest games in the last 24 hours (ties broken
    at random by `rng`): the candidates are sorted by rating and the match takes the `seats`
    bots (fewer if fewer can play) in a window of that order centred on it, so opponents are of
    similar rating. A bot never holds two seats in one match; `match_create` shuffles the seats.
    Fewer than 2 bots with a playable (valid) version: nothing is queued.

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
        candidates = matchmaker_candidates(ruleset=ruleset, since=timezone.now() - RECENT)
        size = min(seats, len(candidates))
        if size < 2:
            return []
        if seat_limit is not None:
            free = min(free, (seat_limit - seats_active_count()) // size)
        games = {c.version.bot_id: c.recent_games for c in candidates}
        for _ in range(free):
            chosen = _matchmaker_pick(candidates, games=games, size=size, rng=rng)
            created.append(
                match_create(versions=[c.version for c in chosen], ruleset=ruleset, enqueue=True)
            )
            # Counted at once, so the next match of this run is built around another bot.
            for c in chosen:
                games[c.version.bot_id] += 1
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


def _matchmaker_pick(
    candidates: list[Candidate], *, games: dict[int, int], size: int, rng: random.Random
) -> list[Candidate]:
    fewest = min(games.values())
    pivot = rng.choice([c for c in candidates if games[c.version.bot_id] == fewest])
    by_rating = sorted(candidates, key=lambda c: (c.rating, c.version.bot_id))
    at = by_rating.index(pivot)
    # Of the windows of `size` neighbours in rating order that hold the pivot, the narrowest.
    starts = range(max(at - size + 1, 0), min(at, len(by_rating) - size) + 1)
    start = min(starts, key=lambda i: by_rating[i + size - 1].rating - by_rating[i].rating)
    return by_rating[start : start + size]
