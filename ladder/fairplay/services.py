"""Writes of fair play: a rated match's flows into each pair's running test; a flagged pair's
shared matches voided and its bots disabled."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.flows import PairFlow, game_flows
from engine.log import LogError, read_log
from ladder.accounts.models import Seating
from ladder.accounts.services import accounts_link
from ladder.bots.models import Bot
from ladder.fairplay.detect import START, PairTest, first_chance, pair_match
from ladder.fairplay.models import PairMatch, PairWatch
from ladder.matches.models import Match
from ladder.ratings.models import RatingChange
from ladder.ratings.rebuild import matches_void

logger = logging.getLogger(__name__)

START_RATING = 1500.0
"""A bot without a rating change for the match (not expected for a rated match) counts as new."""


class LogNotStored(Exception):
    """The match's log is still waiting for the storage (`PendingLog`): try again later."""


def _add(total: dict[str, int], flow: PairFlow) -> dict[str, int]:
    counts = flow.as_dict()
    return {
        name: total.get(name, 0) + value
        for name, value in counts.items()
        if name not in ("giver", "taker")
    }


def _test_of(watch: PairWatch) -> PairTest:
    """The pair's running test as stored (a new pair's starts at START)."""
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


def match_flows_record(*, match_id: int) -> Recorded:
    """Read a finished rated match's log once, and add each pair of its bots' part to their
    test (a pair seen again for the same match is skipped, so a retried task adds nothing).
    Raises LogNotStored while the log waits for the storage."""
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
    pairs = settings.GRASS_FAIRPLAY_PAIRS
    flagged: list[int] = []
    count = 0
    for (sa, bot_a, _), (sb, bot_b, _) in itertools.combinations(seats, 2):
        if bot_a is None or bot_b is None or bot_a == bot_b:
            continue
        (low_seat, low), (high_seat, high) = sorted([(sa, bot_a), (sb, bot_b)], key=lambda x: x[1])
        stats = pair_match(flows, low_seat, high_seat, ranks)
        expected = first_chance(ratings, [low_seat, high_seat])
        with transaction.atomic():
            watch, _ = PairWatch.objects.get_or_create(low_id=low, high_id=high)
            watch = PairWatch.objects.select_for_update().get(pk=watch.pk)
            if PairMatch.objects.filter(watch=watch, match=match).exists():
                continue
            test = _test_of(watch).observe(stats, expected, pairs=pairs)
            here = {
                "low>high": _add({}, flows[low_seat, high_seat]),
                "high>low": _add({}, flows[high_seat, low_seat]),
            }
            PairMatch.objects.create(
                watch=watch,
                match=match,
                low_seat=low_seat,
                high_seat=high_seat,
                score=stats.score,
                help_low=stats.help_ab,
                help_high=stats.help_ba,
                spared_low=stats.spared_ab,
                spared_high=stats.spared_ba,
                first=stats.first,
                expected_first=expected,
                flows=here,
            )
            watch.matches = test.matches
            watch.hits = test.hits
            watch.firsts = test.firsts
            watch.expected_firsts = test.expected_firsts
            watch.log_flow = list(test.log_flow)
            watch.log_lift = list(test.log_lift)
            watch.evidence = test.evidence
            watch.flows = {
                "low>high": _add(watch.flows.get("low>high", {}), flows[low_seat, high_seat]),
                "high>low": _add(watch.flows.get("high>low", {}), flows[high_seat, low_seat]),
            }
            if test.flagged_at is not None and watch.flagged is None:
                watch.flagged_at = test.flagged_at
                watch.flagged = timezone.now()
                flagged.append(watch.pk)
                logger.warning("fair play: flagged %s after %s shared matches", watch, test.matches)
            watch.save()
            count += 1
    return Recorded(count, flagged)


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
        if shared:
            matches_void(match_ids=shared)
        now = timezone.now()
        reason = f"voided for collusion with another bot (fair play pair {watch.pk})"
        Bot.objects.filter(pk__in=[watch.low_id, watch.high_id]).update(
            disabled=now, disabled_reason=reason
        )
        # Disabled is not for good (a new valid version puts a bot back on the ladder), so the
        # owners are linked too: whatever they upload next never shares a rated table again.
        owners = set(
            Bot.objects.filter(pk__in=[watch.low_id, watch.high_id]).values_list(
                "owner_id", flat=True
            )
        )
        if len(owners) == 2 and not Seating.objects.filter(user_id__in=owners, house=True).exists():
            accounts_link(user_ids=owners, reason=f"staff: colluded (fair play pair {watch.pk})")
        watch.voided = now
        watch.save(update_fields=["voided", "updated"])
    return shared
