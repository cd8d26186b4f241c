"""Writing matches: creating one with its seats, and running it (claim, play, record, rate)."""

from __future__ import annotations

import gzip
import hashlib
import logging
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from bots.runner.match import MatchResult, play_match
from engine.rules import RULESETS, Variants
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_version_source
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import match_seats
from ladder.ratings.services import rating_apply

logger = logging.getLogger(__name__)

FAILURE_REASON_CHARS = 4_000


def match_create(
    *,
    versions: Sequence[BotVersion],
    ruleset: str = "modern",
    variants: dict[str, Any] | None = None,
    limits: dict[str, int] | None = None,
    enqueue: bool = False,
) -> Match:
    """A queued match between `versions`, seated in a random order that is recorded.

    With `enqueue`, the match is sent to the workers once the surrounding transaction commits
    (never before: a worker must find the row).
    """
    if not 2 <= len(versions) <= 6:
        raise ValueError(f"a match needs 2 to 6 bots, got {len(versions)}")
    if len({v.bot_id for v in versions}) != len(versions):
        raise ValueError("a bot cannot hold two seats in one match")
    if ruleset not in RULESETS:
        raise ValueError(f"unknown ruleset {ruleset!r}; rulesets are: {', '.join(RULESETS)}")
    variants = Variants.from_dict(variants or {}).as_dict()
    order = list(versions)
    random.SystemRandom().shuffle(order)
    with transaction.atomic():
        match = Match.objects.create(ruleset=ruleset, variants=variants, limits=limits or {})
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=index, bot_version=version)
            for index, version in enumerate(order)
        )
        if enqueue:
            from ladder.matches.tasks import run_match

            match_id = match.pk
            transaction.on_commit(lambda: run_match.delay(match_id))
    return match


def match_run(*, match_id: int) -> Match:
    """Play a queued match and record it; safe to call twice for the same match.

    The match is claimed with a conditional update (queued -> running) that exactly one caller
    wins, so a duplicate delivery, or a match already running, finished or failed, does nothing.
    Bots play with no transaction or lock held. The log, the seats' results, the status and the
    rating changes are then written in one transaction. An exception marks the match failed
    with the reason; `attempts` counts the claims.
    """
    claimed = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).update(
        status=Match.Status.RUNNING, started=timezone.now(), attempts=F("attempts") + 1
    )
    if claimed != 1:
        logger.info("match %s: not queued, nothing to do", match_id)
        return Match.objects.get(pk=match_id)
    try:
        match = Match.objects.get(pk=match_id)
        seats = list(match_seats(match_id=match_id))
        played = play_match(
            [bot_version_source(version=seat.bot_version) for seat in seats],
            ruleset=match.ruleset,
            variants=Variants.from_dict(match.variants),
            seed=match.seed,
            limits=match.limits or None,
            sandboxed=settings.GRASS_SANDBOXED,
        )
        return _match_record(match_id=match_id, seats=seats, played=played)
    except Exception as exc:
        logger.exception("match %s failed", match_id)
        reason = f"{type(exc).__name__}: {exc}"[:FAILURE_REASON_CHARS]
        Match.objects.filter(pk=match_id, status=Match.Status.RUNNING).update(
            status=Match.Status.FAILED, failure_reason=reason, finished=timezone.now()
        )
        return Match.objects.get(pk=match_id)


def _match_record(*, match_id: int, seats: list[MatchSeat], played: MatchResult) -> Match:
    # mtime=0: the same game always compresses to the same bytes, hence the same sha256.
    log = gzip.compress(played.log_text().encode(), mtime=0)
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.RUNNING:
            return match
        for seat, report, place, total in zip(
            seats, played.seats, played.ranks, played.result["totals"], strict=True
        ):
            seat.place = place
            seat.total = total
            seat.forfeited = report.forfeited
            seat.forfeit_reason = report.forfeit_reason
            seat.decisions = report.decisions
            seat.think_ms = round(report.think_ms, 3)
            seat.strikes = report.strikes
            seat.faults = dict(Counter(fault["kind"] for fault in report.faults))
        MatchSeat.objects.bulk_update(
            seats,
            [
                "place",
                "total",
                "forfeited",
                "forfeit_reason",
                "decisions",
                "think_ms",
                "strikes",
                "faults",
            ],
        )
        match.log.save(f"match-{match_id}.jsonl.gz", ContentFile(log), save=False)
        match.log_sha256 = hashlib.sha256(log).hexdigest()
        match.result = played.result
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.save(update_fields=["log", "log_sha256", "result", "status", "finished"])
        rating_apply(match=match)
    return match
