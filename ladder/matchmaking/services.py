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
from collections.abc import Mapping

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ladder.bots.selectors import bot_circles
from ladder.matches.lanes import Lane, lane_slots
from ladder.matches.models import Match
from ladder.matches.selectors import matches_active_count, seats_active_count
from ladder.matches.services import match_create
from ladder.matchmaking.capacity import match_capacity, now_capacity, seat_capacity
from ladder.matchmaking.selectors import (
    Candidate,
    home_board_empty,
    matchmaker_nearest,
    matchmaker_newcomers,
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
NEAR_PER_SEAT = 4
"""How many neighbours on each side of the bot a match is built around the matchmaker reads per
seat: more than the seats, so a table can pass over bots of a circle already seated (one
author's many bots at one rating) and still fill."""


def matchmaker_fill(
    *,
    ruleset: str = "modern",
    seats: int = 4,
    capacity: int | None = None,
    seat_limit: int | None = None,
    rng: random.Random | None = None,
    newcomers: bool = True,
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
    so the next match is built around another. A bot never holds two seats in one match, nor
    do two bots of one seating circle (one owner's, or linked accounts': `_distinct_table`);
    `match_create` shuffles the seats. Fewer than 2 bots with a playable (valid) version:
    nothing is queued.

    With `newcomers` false, bots waiting for their first table (the fast lane's, which
    seats them on the `now` pool: `matchmaker_first_games`) are neither built around nor
    seated: a newcomer seated here would wait behind the background games, and, marked
    seated, lose its place in the fast lane.

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
        _take_turns()
        free = capacity - matches_active_count()
        if free <= 0:
            return []
        if seat_limit is not None:
            free = min(free, (seat_limit - seats_active_count()) // seats)
        passed_over = 0
        while len(created) < free and passed_over < WAITING:
            chosen = _matchmaker_pick(ruleset=ruleset, size=seats, rng=rng, newcomers=newcomers)
            if chosen is None:
                break
            if len(chosen) < 2:
                # No other circle near it: it waits its turn again, and the tick goes on with
                # the next bot (one author's crowd of bots must not stall the ladder).
                BotRating.objects.filter(ruleset=ruleset, bot_id=chosen[0].bot_id).update(
                    last_queued=timezone.now()
                )
                passed_over += 1
                continue
            created.append(_seat(chosen, ruleset=ruleset, lane=None))
    return created


def matchmaker_first_games(
    *,
    ruleset: str = "modern",
    seats: int = 4,
    capacity: int | None = None,
) -> list[Match]:
    """The fast lane: a rated game of `ruleset` at once for each bot waiting for its first
    table there since it came or since its newest version did (`matchmaker_newcomers`), while
    the first-games lane has room in the `now` pool (`lanes.lane_slots` of `capacity`, by
    default `now_capacity()`); returns the new matches, sent to the `now` queue after commit.

    A new author's bot was valid 3 s after its upload and unrated for 7 minutes while the
    ladder's games held every match worker (issue 35); on the `now` pool it is seated within
    a tick. Each table is built around the newcomer as `matchmaker_fill` builds one around the
    longest waiting bot (similar ratings, no two bots of one circle), and is rated as any."""
    if not 2 <= seats <= 6:
        raise ValueError(f"a match needs 2 to 6 seats, got {seats}")
    if capacity is None:
        capacity = now_capacity()  # before the lock: asking the workers takes a moment
    slots = lane_slots(Lane.FIRST, capacity=capacity)
    created: list[Match] = []
    with transaction.atomic():
        _take_turns()
        free = slots - matches_active_count(lane=Lane.FIRST)
        if free <= 0:
            return []
        for newcomer in matchmaker_newcomers(ruleset=ruleset, limit=free):
            chosen = _table_around(newcomer, ruleset=ruleset, size=seats)
            if chosen is None or len(chosen) < 2:
                # Alone on the ladder, or only its own circle near it: it waits its turn in
                # the background games, as `matchmaker_fill` passes such a bot over.
                _mark_seated([newcomer], ruleset=ruleset)
                continue
            created.append(_seat(chosen, ruleset=ruleset, lane=Lane.FIRST))
    return created


def _take_turns() -> None:
    """Matchmaker runs take turns (PostgreSQL): two cannot both count the same free place."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [MATCHMAKER_LOCK])


def _seat(chosen: list[Candidate], *, ruleset: str, lane: Lane | None) -> Match:
    versions = matchmaker_versions(bot_ids=[c.bot_id for c in chosen])
    match = match_create(
        versions=[versions[c.bot_id] for c in chosen], ruleset=ruleset, enqueue=True, lane=lane
    )
    # Marked at once, so the next match of this run is built around another bot.
    _mark_seated(chosen, ruleset=ruleset)
    return match


def _mark_seated(chosen: list[Candidate], *, ruleset: str) -> None:
    BotRating.objects.filter(ruleset=ruleset, bot_id__in=[c.bot_id for c in chosen]).update(
        last_queued=timezone.now()
    )


def matchmaker_run(*, rng: random.Random | None = None) -> list[Match]:
    """One beat tick of the ladder: fill the free capacity with one kind of table, picked at
    random from GRASS_LADDER_TABLES (ruleset, seats). Over many ticks every kind is played, so
    every ruleset's leaderboard fills and bots meet every table size; one kind per tick keeps a
    tick's matches built from one ruleset's ratings.

    First, while a `now` pool is up, the fast lane (`matchmaker_first_games`) seats newcomers
    in a table of the home page's ruleset (HOME_RULESET, of a size picked from its kinds):
    the board a new author looks at. Their first games in the other rulesets are the
    background's, where a newcomer waits least. (With a fast lane in every ruleset, a new
    version's second first game, a whole classic game of `strong`, held the lane's one place
    and the next author's first game started 76 s after the upload: bench_latency.)"""
    rng = rng or random.Random()
    tables = _tables_to_fill()
    ruleset, seats = rng.choice(tables)
    capacity = now_capacity()
    fast_lane = lane_slots(Lane.FIRST, capacity=capacity) > 0
    home = [size for kind, size in tables if kind == HOME_RULESET]
    first = []
    if fast_lane and home:
        first = matchmaker_first_games(
            ruleset=HOME_RULESET, seats=rng.choice(home), capacity=capacity
        )
    # The home ruleset's newcomers are the fast lane's alone.
    alone = fast_lane and bool(home) and ruleset == HOME_RULESET
    return first + matchmaker_fill(ruleset=ruleset, seats=seats, rng=rng, newcomers=not alone)


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
    *, ruleset: str, size: int, rng: random.Random, newcomers: bool = True
) -> list[Candidate] | None:
    """The bots of the next match: around one of the longest waiting, the narrowest table of
    `size` neighbours by rating of distinct circles (fewer when fewer can play; the pivot alone
    when no other circle is near it); None when fewer than 2 bots can play at all."""
    waiting = matchmaker_waiting(ruleset=ruleset, limit=WAITING, newcomers=newcomers)
    if not waiting:
        return None
    first = waiting[0].last_queued
    pivot = rng.choice([c for c in waiting if c.last_queued == first])
    return _table_around(pivot, ruleset=ruleset, size=size, newcomers=newcomers)


def _table_around(
    pivot: Candidate, *, ruleset: str, size: int, newcomers: bool = True
) -> list[Candidate] | None:
    """The narrowest table of `size` neighbours by rating of distinct circles that holds
    `pivot` (fewer when fewer can play; the pivot alone when no other circle is near it);
    None when it is the only bot that can play."""
    near = matchmaker_nearest(
        ruleset=ruleset, around=pivot, limit=(size - 1) * NEAR_PER_SEAT, newcomers=newcomers
    )
    if len(near) < 2:
        return None
    circles = bot_circles(bot_ids=[c.bot_id for c in near])
    return _distinct_table(near, near.index(pivot), size, circles)


def _distinct_table(
    near: list[Candidate], at: int, size: int, circle_of: Mapping[int, int]
) -> list[Candidate]:
    """Of `near` (in rating order, the pivot at `at`), the table of `size` bots that holds the
    pivot, no two of one circle, and the narrowest spread of ratings; among equally narrow ones
    the one that skips fewest bots, then the first. Without shared circles these are the
    windows of `size` neighbours, as before circles existed.

    For each first bot, taking every next bot of a new circle (the pivot always, room kept for
    it) ends the table as early as any choice can, so trying each first bot finds the best."""
    pivot = near[at]
    mine = circle_of[pivot.bot_id]
    others = [c for c in near if c is pivot or circle_of[c.bot_id] != mine]
    at = others.index(pivot)
    size = min(size, len({circle_of[c.bot_id] for c in others}))
    best: tuple[tuple[float, int, int], list[Candidate]] | None = None
    for start in range(at + 1):
        table: list[Candidate] = []
        taken = {mine}
        last = start
        for index in range(start, len(others)):
            bot = others[index]
            room = size - len(table) - (0 if index > at else 1)
            if bot is pivot or (circle_of[bot.bot_id] not in taken and room > 0):
                table.append(bot)
                taken.add(circle_of[bot.bot_id])
                last = index
            elif index == start:
                break  # the first bot is not taken: another start covers this table
            if len(table) == size and index >= at:
                break
        if len(table) < size or pivot not in table or table[0] is not others[start]:
            continue
        key = (table[-1].rating - table[0].rating, last - start + 1 - size, start)
        if best is None or key < best[0]:
            best = (key, table)
    return best[1] if best is not None else [pivot]
