"""Writing matches: creating one with its seats, running it (claim, play, record, rate), putting
lost and failed runs back in the queue a bounded number of times.

The retry rule: every claim of a match counts one attempt. A run that raises marks the match
failed; a worker that dies mid-match leaves it "running" until `match_requeue_stale` notices.
Either way the match is queued again while it has had fewer than GRASS_MATCH_MAX_ATTEMPTS
attempts, and is otherwise failed for good ("gave up after N attempts"). A finished match is
never queued again, so its ratings are applied exactly once.

A played game is never failed because of its log: a log the media storage refuses (a full
disk) waits in the database (PendingLog) and the sweep writes it once there is room.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from bots.runner import runtime
from bots.runner.match import MatchResult, TimeControl, play_match
from engine.game import ENGINE_VERSION
from engine.replay_frames import document
from engine.rules import RULESETS, Variants
from ladder.bots.models import Bot, BotVersion
from ladder.bots.runtimes import expected_runtime, runtime_refusal
from ladder.bots.services import bot_version_runnable
from ladder.bots.signals import bot_disabled
from ladder.matches.models import Match, MatchSeat, PendingLog
from ladder.matches.selectors import (
    match_seats,
)
from ladder.matches.signals import match_recorded, match_settled
from ladder.storage import StorageFull, storage_save_whole

logger = logging.getLogger(__name__)

FAILURE_REASON_CHARS = 4_000


def match_create(
    *,
    versions: Sequence[BotVersion],
    ruleset: str = "modern",
    variants: dict[str, Any] | None = None,
    limits: dict[str, int] | None = None,
    seed: int | None = None,
    shuffle: bool = True,
    rated: bool = True,
    time_control: dict[str, int] | None = None,
    enqueue: bool = False,
) -> Match:
    """A queued match between `versions`, seated in a random order that is recorded.

    `shuffle=False` seats them in the order given (a tournament's seat rotations, a benchmark
    that replays the same games); `seed` fixes the shuffle of the cards (duplicate tables).
    `rated=False` keeps the result out of ladder Elo. `time_control` overrides fields of
    `TimeControl`. With `enqueue`, the match is sent to the workers once the surrounding
    transaction commits (never before: a worker must find the row).
    """
    if not 2 <= len(versions) <= 6:
        raise ValueError(f"a match needs 2 to 6 bots, got {len(versions)}")
    if len({v.bot_id for v in versions}) != len(versions):
        raise ValueError("a bot cannot hold two seats in one match")
    if ruleset not in RULESETS:
        raise ValueError(f"unknown ruleset {ruleset!r}; rulesets are: {', '.join(RULESETS)}")
    variants = Variants.from_dict(variants or {}).as_dict()
    time_control = time_control or {}
    unknown = set(time_control) - {f.name for f in fields(TimeControl)}
    if unknown:
        raise ValueError(f"unknown time control fields: {', '.join(sorted(unknown))}")
    order = list(versions)
    if shuffle:
        random.SystemRandom().shuffle(order)
    extra: dict[str, Any] = {} if seed is None else {"seed": seed}
    with transaction.atomic():
        match = Match.objects.create(
            ruleset=ruleset,
            variants=variants,
            limits=limits or {},
            rated=rated,
            time_control=time_control,
            runtime=expected_runtime(),
            **extra,
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=index, bot_version=version)
            for index, version in enumerate(order)
        )
        if enqueue:
            _enqueue_on_commit(match_id=match.pk)
    return match


def _enqueue_on_commit(*, match_id: int) -> None:
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.matches.tasks import run_match

    # celery-types does not know DjangoTask (ladder/celery.py), which adds delay_on_commit.
    run_match.delay_on_commit(match_id)  # type: ignore[attr-defined]


def match_run(*, match_id: int) -> Match:
    """Play a queued match and record it; safe to call twice for the same match.

    The match is claimed with a conditional update (queued -> running) that exactly one caller
    wins, so a duplicate delivery, or a match already running, finished or failed, does nothing.
    The claim's `started` time is the claim's token: a worker thought dead whose match was
    requeued and claimed again can no longer record or fail it. Bots play with no transaction
    or lock held. The log, the seats' results, the status and the rating changes are then
    written in one transaction. An exception marks the match failed with the reason;
    `attempts` counts the claims, and `match_retry_failed` queues it again while it has
    attempts left.

    A worker whose bots' runtime image is not the match's does not claim it (the error says
    so): the match stays queued for a worker that has the image.
    """
    refusal = runtime_refusal()
    needed = Match.objects.filter(pk=match_id).values_list("runtime", flat=True).first()
    if refusal is None and needed and needed != runtime.identity():
        here = runtime.identity()
        refusal = (
            f"match {match_id} must be played on runtime image {needed}, this worker's is {here}"
        )
    if refusal is not None and settings.GRASS_SANDBOXED:
        logger.error("match %s: not played here: %s", match_id, refusal)
        return Match.objects.get(pk=match_id)
    started = timezone.now()
    claimed = Match.objects.filter(pk=match_id, status=Match.Status.QUEUED).update(
        status=Match.Status.RUNNING, started=started, attempts=F("attempts") + 1
    )
    if claimed != 1:
        logger.info("match %s: not queued, nothing to do", match_id)
        return Match.objects.get(pk=match_id)
    try:
        match = Match.objects.get(pk=match_id)
        seats = list(match_seats(match_id=match_id))
        played = play_match(
            [bot_version_runnable(version=seat.bot_version) for seat in seats],
            ruleset=match.ruleset,
            variants=Variants.from_dict(match.variants),
            seed=match.seed,
            limits=match.limits or None,
            time_control=TimeControl(**match.time_control),
            sandboxed=settings.GRASS_SANDBOXED,
        )
        return _match_record(match_id=match_id, started=started, seats=seats, played=played)
    except Exception as exc:
        logger.exception("match %s failed", match_id)
        reason = f"{type(exc).__name__}: {exc}"[:FAILURE_REASON_CHARS]
        with transaction.atomic():
            failed = Match.objects.filter(
                pk=match_id, status=Match.Status.RUNNING, started=started
            ).update(status=Match.Status.FAILED, failure_reason=reason, finished=timezone.now())
            match = Match.objects.get(pk=match_id)
            if failed and match.attempts >= _max_attempts():
                _settle_on_commit(match)
        return match


def _settle_on_commit(match: Match) -> None:
    """Tell listeners (tournaments) that `match` is settled, once the transaction commits."""
    match_id, status = match.pk, match.status
    transaction.on_commit(
        lambda: match_settled.send(sender=Match, match_id=match_id, status=status)
    )


def _max_attempts() -> int:
    return settings.GRASS_MATCH_MAX_ATTEMPTS


def _gave_up(attempts: int) -> str:
    return f"gave up after {attempts} attempts"


def match_requeue_stale(*, older_than: timedelta | None = None) -> list[int]:
    """Put back matches left "running" for longer than `older_than` (default
    GRASS_MATCH_STALE_SECONDS): their worker was killed mid-match. Returns the requeued ids.

    A match with fewer than GRASS_MATCH_MAX_ATTEMPTS attempts goes back to "queued" and is sent
    to the workers after commit; one that has used them all is failed with the reason "gave up
    after N attempts". Each match changes with a conditional update on its status and claim
    time, so a worker that records the match meanwhile wins and the sweep leaves it alone.
    """
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
    cutoff = timezone.now() - older_than
    stale = Match.objects.filter(status=Match.Status.RUNNING, started__lt=cutoff)
    requeued = []
    for match_id, started, attempts in stale.values_list("id", "started", "attempts"):
        if _requeue_or_give_up(
            match_id=match_id, status=Match.Status.RUNNING, started=started, attempts=attempts
        ):
            requeued.append(match_id)
    if requeued:
        logger.warning("requeued matches lost by their workers: %s", requeued)
    return requeued


def match_resend_lost(*, older_than: timedelta | None = None) -> list[int]:
    """Send again the matches queued for longer than `older_than` (default
    GRASS_MATCH_STALE_SECONDS): their message was lost (a Redis restart without persistence)
    or is stuck behind a dead worker. Returns their ids. A duplicate message is harmless: the
    claim in `match_run` lets exactly one run play the match.
    """
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
    now = timezone.now()
    lost = Match.objects.filter(status=Match.Status.QUEUED, queued__lt=now - older_than)
    resent = []
    for match_id, queued in lost.values_list("id", "queued"):
        with transaction.atomic():
            if Match.objects.filter(pk=match_id, status=Match.Status.QUEUED, queued=queued).update(
                queued=now
            ):
                _enqueue_on_commit(match_id=match_id)
                resent.append(match_id)
    if resent:
        logger.warning("sent again matches queued since before %s: %s", now - older_than, resent)
    return resent


def match_retry_failed() -> list[int]:
    """Queue again the failed matches that have had fewer than GRASS_MATCH_MAX_ATTEMPTS attempts
    (sent to the workers after commit); returns their ids. `failure_reason` keeps the last
    failure until the match finishes. A match given up on has used all its attempts, so it
    stays failed.
    """
    failed = Match.objects.filter(status=Match.Status.FAILED, attempts__lt=_max_attempts())
    requeued = []
    for match_id, started, attempts in failed.values_list("id", "started", "attempts"):
        if _requeue_or_give_up(
            match_id=match_id, status=Match.Status.FAILED, started=started, attempts=attempts
        ):
            requeued.append(match_id)
    return requeued


def _requeue_or_give_up(
    *, match_id: int, status: str, started: datetime | None, attempts: int
) -> bool:
    with transaction.atomic():
        unchanged = Match.objects.filter(pk=match_id, status=status, started=started)
        if attempts < _max_attempts():
            requeue = {"status": Match.Status.QUEUED, "started": None, "finished": None}
            if unchanged.update(**requeue, queued=timezone.now()) != 1:
                return False
            _enqueue_on_commit(match_id=match_id)
            return True
        if unchanged.update(
            status=Match.Status.FAILED, failure_reason=_gave_up(attempts), finished=timezone.now()
        ):
            _settle_on_commit(Match.objects.get(pk=match_id))
        return False


FAULT_DETAIL_CHARS = 300


def first_fault_details(faults: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Each fault kind's first detail, cut to FAULT_DETAIL_CHARS. The forfeit itself is left
    out: its reason has a field of its own (forfeit_reason)."""
    details: dict[str, str] = {}
    for fault in faults:
        kind = str(fault["kind"])
        if kind != "forfeit" and kind not in details:
            details[kind] = str(fault.get("detail", ""))[:FAULT_DETAIL_CHARS]
    return details


def _log_name(match_id: int) -> str:
    return f"match-{match_id}.jsonl.gz"


def _match_log_store(match: Match, log: bytes) -> bool:
    """Write a just-played match's log to storage, or keep it in the database when storage
    refuses it (a full disk, a lost NFS mount): the game was played, and its result must not
    wait on a disk. Returns whether the file was written; if not, PendingLog holds the bytes
    until `match_logs_write_pending` writes them. Runs in `_match_record`'s transaction; the
    write has a savepoint of its own, so whatever the storage raised leaves it usable.
    """
    try:
        with transaction.atomic():
            storage_save_whole(match.log, _log_name(match.pk), log)
    except Exception as exc:
        logger.exception("match %s: log kept in the database until storage takes it", match.pk)
        PendingLog.objects.update_or_create(
            match=match, defaults={"data": log, "last_error": _storage_error(exc)}
        )
        return False
    return True


def replay_pack(doc: dict[str, Any]) -> bytes:
    """A replay document as the viewer is sent it: compact JSON, gzipped."""
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=6)


def _match_replay_store(match: Match, played: MatchResult) -> None:
    """Compute the match's replay (every card face up: the match page's first view) from the
    game just played and store it beside the log, so that opening the page reads a file and
    replays nothing. Costs the worker about four times the game's own play. Anything that
    goes wrong leaves it out (the viewer then computes it on demand): never the match."""
    try:
        packed = replay_pack(document(played.events, None))
        with transaction.atomic():
            storage_save_whole(match.replay, f"match-{match.pk}.json.gz", packed)
        match.replay_engine = ENGINE_VERSION
    except Exception:
        logger.exception("match %s: replay not stored; the viewer will compute it", match.pk)
        match.replay = ""  # an empty FieldFile: none stored


def _storage_error(exc: Exception) -> str:
    cause = exc.__cause__ if isinstance(exc, StorageFull) and exc.__cause__ else exc
    return f"{type(cause).__name__}: {cause}"[:FAILURE_REASON_CHARS]


def match_logs_write_pending(*, limit: int = 100) -> list[int]:
    """Write to storage the logs that waited in the database (PendingLog), oldest first, at
    most `limit` per call; returns the ids of the matches whose log was written. Run by the
    sweep (`sweep_matches`, every minute on beat).

    Each match is taken under its row lock (skipping one another sweep holds), its file
    written whole and the row deleted in one transaction. The first refusal ends the call: a
    storage still full would refuse the rest too; the next sweep tries again.
    """
    written: list[int] = []
    waiting = PendingLog.objects.order_by("created").values_list("match_id", flat=True)
    for match_id in list(waiting[:limit]):
        with transaction.atomic():
            match = Match.objects.select_for_update(skip_locked=True).filter(pk=match_id).first()
            pending = PendingLog.objects.filter(match_id=match_id).first()
            if match is None or pending is None:
                continue  # another sweep holds it, or has written it
            try:
                with transaction.atomic():
                    storage_save_whole(match.log, _log_name(match_id), bytes(pending.data))
            except Exception as exc:
                logger.warning("match %s: its log still cannot be stored: %s", match_id, exc)
                pending.last_error = _storage_error(exc)
                pending.save(update_fields=["last_error"])
                break
            match.save(update_fields=["log"])
            pending.delete()
        written.append(match_id)
    if written:
        logger.info("stored the logs that waited in the database: matches %s", written)
    return written


def _match_record(
    *, match_id: int, started: datetime, seats: list[MatchSeat], played: MatchResult
) -> Match:
    """Record a played match in one transaction: seats, log, result, status, ratings.

    A log that storage will not take does not undo the rest: it waits in the database
    (`_match_log_store`), since a game that was played must never be failed and replayed
    because of a disk.
    """
    # mtime=0: the same game always compresses to the same bytes, hence the same sha256.
    log = gzip.compress(played.log_text().encode(), mtime=0)
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.RUNNING or match.started != started:
            # Requeued while this worker played (it was thought lost): the newer claim records.
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
            seat.fault_details = first_fault_details(report.faults)
            seat.stderr = report.stderr
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
                "fault_details",
                "stderr",
            ],
        )
        if _match_log_store(match, log):
            _match_replay_store(match, played)
        match.log_sha256 = hashlib.sha256(log).hexdigest()
        match.result = played.result
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.failure_reason = ""
        match.save(
            update_fields=[
                "log",
                "log_sha256",
                "replay",
                "replay_engine",
                "result",
                "status",
                "finished",
                "failure_reason",
            ]
        )
        # Ratings are applied by their app's receiver, in this transaction.
        match_recorded.send(sender=Match, match=match)
        if match.rated:
            for seat in seats:
                if seat.forfeited:
                    bot_disable_if_failing(bot_id=seat.bot_version.bot_id)
        _settle_on_commit(match)
    return match


def bot_disable_if_failing(*, bot_id: int) -> bool:
    """Take a bot off the ladder when its last GRASS_DISABLE_AFTER_FORFEITS finished ladder
    games were all forfeits (a crash, a broken protocol, strikes): it only spoils its
    opponents' games. Returns whether it was disabled now. Runs in the caller's transaction;
    listeners hear of it after commit."""
    limit = settings.GRASS_DISABLE_AFTER_FORFEITS
    if limit <= 0:
        return False
    last = list(
        MatchSeat.objects.filter(
            bot_version__bot_id=bot_id,
            match__status=Match.Status.FINISHED,
            match__rated=True,
        )
        .order_by("-match__finished", "-match_id")
        .values_list("forfeited", "forfeit_reason")[:limit]
    )
    if len(last) < limit or not all(forfeited for forfeited, _ in last):
        return False
    reason = f"forfeited its last {limit} games; the last: {last[0][1]}"[:1000]
    if not Bot.objects.filter(pk=bot_id, disabled__isnull=True).update(
        disabled=timezone.now(), disabled_reason=reason
    ):
        return False
    transaction.on_commit(lambda: bot_disabled.send(sender=Bot, bot_id=bot_id, reason=reason))
    return True
