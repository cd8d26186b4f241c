"""Writes of fair play: a rated match's flows into the running test of each pair of its bots
and of each pair of its seating circles; a flagged pair's shared matches voided and its bots
disabled."""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.flows import PairFlow, game_flows
from engine.log import LogError, read_log
from ladder.accounts.models import Seating
from ladder.accounts.services import accounts_link
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_circles
from ladder.fairplay.detect import START, PairTest, first_chance, pair_match, watches
from ladder.fairplay.detect import PairMatch as PairMatchStats
from ladder.fairplay.models import CircleMatch, CircleWatch, PairMatch, PairWatch, Watch
from ladder.matches.models import Match
from ladder.ratings.models import RatingChange
from ladder.ratings.rebuild import matches_void

logger = logging.getLogger(__name__)

START_RATING = 1500.0
"""A bot without a rating change for the match (not expected for a rated match) counts as new."""


class LogNotStored(Exception):
    """The match's log is still waiting for the storage (`PendingLog`): try again later."""


def _counts(flow: PairFlow) -> dict[str, int]:
    return {name: value for name, value in flow.as_dict().items() if name not in ("giver", "taker")}


def _test_of(watch: Watch) -> PairTest:
    """The watch's running test as stored (a new watch's starts at START)."""
    return PairTest(
        matches=watch.matches,
        hits=watch.hits,
        firsts=watch.firsts,
        expected_firsts=watch.expected_firsts,
        log_flow=tuple(watch.log_flow) or START,
        log_lift=tuple(watch.log_lift) or START,
        flagged_at=watch.flagged_at,
    )


@dataclass(frozen=True)
class Recorded:
    pairs: int
    """Pairs of bots whose test took this match."""
    flagged: list[int]
    """Ids of the PairWatch rows flagged by this match."""
    circles: int = 0
    """Pairs of seating circles whose test took this match."""
    circles_flagged: list[int] = field(default_factory=list)
    """Ids of the CircleWatch rows flagged by this match."""


@dataclass(frozen=True)
class Seen:
    """One pair of seats of a match as a watch reads it: `low`'s seat first."""

    low_seat: int
    high_seat: int
    stats: PairMatchStats
    expected_first: float
    flows: dict[str, dict[str, int]]
    """This match's flows between the two seats, by direction ("low>high", "high>low")."""


def _seen(
    flows: Mapping[tuple[int, int], PairFlow],
    low_seat: int,
    high_seat: int,
    ranks: list[int],
    ratings: list[float],
) -> Seen:
    return Seen(
        low_seat,
        high_seat,
        pair_match(flows, low_seat, high_seat, ranks),
        first_chance(ratings, [low_seat, high_seat]),
        {
            "low>high": _counts(flows[low_seat, high_seat]),
            "high>low": _counts(flows[high_seat, low_seat]),
        },
    )


def _shared_fields(seen: Seen) -> dict[str, Any]:
    """A shared match's row (`models.SharedMatch`), but its watch and match."""
    stats = seen.stats
    return {
        "low_seat": seen.low_seat,
        "high_seat": seen.high_seat,
        "score": stats.score,
        "help_low": stats.help_ab,
        "help_high": stats.help_ba,
        "spared_low": stats.spared_ab,
        "spared_high": stats.spared_ba,
        "asks_low": stats.asks_ab,
        "asks_high": stats.asks_ba,
        "first": stats.first,
        "expected_first": seen.expected_first,
        "flows": seen.flows,
    }


def _observe(watch: Watch, seen: Seen, *, tests: int) -> bool:
    """Add one shared match to the watch's test and aggregates, and save it; True when this
    match flagged it."""
    test = _test_of(watch).observe(seen.stats, seen.expected_first, pairs=tests)
    watch.matches = test.matches
    watch.hits = test.hits
    watch.firsts = test.firsts
    watch.expected_firsts = test.expected_firsts
    watch.log_flow = list(test.log_flow)
    watch.log_lift = list(test.log_lift)
    watch.evidence = test.evidence
    watch.flows = {
        way: {
            name: watch.flows.get(way, {}).get(name, 0) + value
            for name, value in seen.flows[way].items()
        }
        for way in ("low>high", "high>low")
    }
    flagged_now = test.flagged_at is not None and watch.flagged is None
    if flagged_now:
        watch.flagged_at = test.flagged_at
        watch.flagged = timezone.now()
        logger.warning("fair play: flagged %s after %s shared matches", watch, test.matches)
    watch.save()
    return flagged_now


def match_flows_record(*, match_id: int) -> Recorded:
    """Read a finished rated match's log once, and add each pair of its bots' part to their
    test, and each pair of its seating circles' part to theirs (a watch seen again for the
    same match is skipped, so a retried task adds nothing). Raises LogNotStored while the log
    waits for the storage."""
    match = Match.objects.filter(pk=match_id, status=Match.Status.FINISHED, rated=True).first()
    if match is None:
        return Recorded(0, [])
    if not match.log:
        raise LogNotStored(f"match {match_id}: its log is not stored yet")
    try:
        with match.log.open("rb") as handle:
            flows = game_flows(read_log(handle))
    except LogError:
        # The ladder wrote this log itself: a log it cannot replay is a bug, not a cheat.
        logger.exception("match %s: its log does not replay; no flows read", match_id)
        return Recorded(0, [])
    seats = list(match.seats.order_by("seat").values_list("seat", "bot_id", "place"))
    ranks = [place if place is not None else len(seats) for _, _, place in seats]
    before = dict(RatingChange.objects.filter(match=match).values_list("bot_id", "before"))
    ratings = [before.get(bot_id, START_RATING) for _, bot_id, _ in seats]
    tests = watches(settings.GRASS_FAIRPLAY_PAIRS)
    bots = [(seat, bot) for seat, bot, _ in seats if bot is not None]
    flagged: list[int] = []
    count = 0
    for (sa, bot_a), (sb, bot_b) in itertools.combinations(bots, 2):
        if bot_a == bot_b:
            continue
        (low_seat, low), (high_seat, high) = sorted([(sa, bot_a), (sb, bot_b)], key=lambda x: x[1])
        seen = _seen(flows, low_seat, high_seat, ranks, ratings)
        with transaction.atomic():
            watch, _ = PairWatch.objects.get_or_create(low_id=low, high_id=high)
            watch = PairWatch.objects.select_for_update().get(pk=watch.pk)
            if PairMatch.objects.filter(watch=watch, match=match).exists():
                continue
            PairMatch.objects.create(watch=watch, match=match, **_shared_fields(seen))
            if _observe(watch, seen, tests=tests):
                flagged.append(watch.pk)
            count += 1
    circles, circles_flagged = _circles_record(match, bots, flows, ranks, ratings, tests)
    return Recorded(count, flagged, circles, circles_flagged)


def _circles_record(
    match: Match,
    bots: list[tuple[int, int]],
    flows: Mapping[tuple[int, int], PairFlow],
    ranks: list[int],
    ratings: list[float],
    tests: int,
) -> tuple[int, list[int]]:
    """Each pair of the match's seating circles' part in their test (circles as they are now,
    one query). A circle holding more than one seat (accounts linked after the match was
    recorded: it was rated then) takes no part: which of its bots would speak for it is not
    for the test to choose."""
    circle_of = bot_circles(bot_ids=[bot for _, bot in bots])
    held = Counter(circle_of.get(bot) for _, bot in bots)
    alone = [
        (circle_of[bot], seat, bot)
        for seat, bot in bots
        if bot in circle_of and held[circle_of[bot]] == 1
    ]
    flagged: list[int] = []
    count = 0
    for a, b in itertools.combinations(alone, 2):
        (low, low_seat, low_bot), (high, high_seat, high_bot) = sorted([a, b])
        seen = _seen(flows, low_seat, high_seat, ranks, ratings)
        with transaction.atomic():
            watch, _ = CircleWatch.objects.get_or_create(low=low, high=high)
            watch = CircleWatch.objects.select_for_update().get(pk=watch.pk)
            if CircleMatch.objects.filter(watch=watch, match=match).exists():
                continue
            CircleMatch.objects.create(
                watch=watch,
                match=match,
                low_bot_id=low_bot,
                high_bot_id=high_bot,
                **_shared_fields(seen),
            )
            if _observe(watch, seen, tests=tests):
                flagged.append(watch.pk)
            count += 1
    return count, flagged


def pair_void(*, watch_id: int) -> list[int]:
    """Void every rated match the pair shared (their ratings rebuilt by a task, as the match
    admin's Void) and disable both bots. Returns the voided match ids."""
    with transaction.atomic():
        watch = PairWatch.objects.select_for_update().get(pk=watch_id)
        shared = list(
            Match.objects.filter(rated=True, seats__bot_id=watch.low_id)
            .filter(seats__bot_id=watch.high_id)
            .values_list("pk", flat=True)
            .distinct()
        )
        _void(watch, shared, {watch.low_id, watch.high_id}, f"fair play pair {watch.pk}")
    return shared


def circle_void(*, watch_id: int) -> list[int]:
    """Void every rated match the two circles shared and disable every bot of theirs that sat
    at one (the pairs of bots that met: `selectors.circle_bots`), as `pair_void` does for one
    pair. Returns the voided match ids."""
    with transaction.atomic():
        watch = CircleWatch.objects.select_for_update().get(pk=watch_id)
        rows = CircleMatch.objects.filter(watch=watch, match__rated=True)
        shared = sorted(set(rows.values_list("match_id", flat=True)))
        bots = {bot for pair in rows.values_list("low_bot_id", "high_bot_id") for bot in pair}
        _void(watch, shared, bots, f"fair play circles {watch.pk}")
    return shared


def _void(watch: PairWatch | CircleWatch, shared: list[int], bots: set[int], label: str) -> None:
    """Void the matches, disable the bots and link their owners (in the caller's transaction):
    disabled is not for good (a new valid version puts a bot back on the ladder), so the owners
    are linked too, and whatever they upload next never shares a rated table again. The
    house's accounts are never linked."""
    if shared:
        matches_void(match_ids=shared)
    now = timezone.now()
    reason = f"voided for collusion with another bot ({label})"
    Bot.objects.filter(pk__in=bots).update(disabled=now, disabled_reason=reason)
    owners = set(Bot.objects.filter(pk__in=bots).values_list("owner_id", flat=True))
    house = Seating.objects.filter(user_id__in=owners, house=True).values_list("user_id", flat=True)
    people = owners - set(house)
    if len(people) >= 2:
        accounts_link(user_ids=people, reason=f"staff: colluded ({label})")
    watch.voided = now
    watch.save(update_fields=["voided", "updated"])
