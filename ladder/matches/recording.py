"""Recording a played match: its seats, log, result and status, its bots' records and, for a
rated match, its ratings, in one transaction.

Apart from running the match (`services.match_run`) because everything a played game changes
is written here, together or not at all, and only while the run still holds its claim: a match
taken back and played again is counted once. A game that was played is worth waiting for the
database (`match_record_retrying`), where failing it would play it again; its log never fails
it either (`files.match_log_store`). What the match changes beyond itself follows in the same
transaction: its bots' records (`records.bot_records_add`), its ratings
(`ratings.services.rating_apply`), a bot that only forfeits taken off the ladder
(`bot_disable_if_failing`); then, once it commits, fair play's task and `match_settled`
(`settle_on_commit`, which the flow and the sweeps call too for a match they fail for good).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from django.conf import settings
from django.db import Error as DatabaseErrors
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from bots.runner.results import MatchResult
from ladder.bots.models import Bot
from ladder.bots.selectors import bots_circle_shared
from ladder.bots.signals import bot_disabled
from ladder.matches.claims import Claim
from ladder.matches.files import log_name, match_debug_store, match_log_store, replay_name
from ladder.matches.models import Match, MatchSeat
from ladder.matches.records import SeatResult, bot_records_add
from ladder.matches.signals import match_settled
from ladder.ratings.services import rating_apply
from ladder.task_sending import send_on_commit

logger = logging.getLogger(__name__)


def match_record_retrying(*, claim: Claim, seats: list[MatchSeat], played: MatchResult) -> Match:
    """`_match_record`, tried again while the database connection fails (a PostgreSQL restart
    or failover, a network cut), reconnecting between tries, for up to
    GRASS_MATCH_SAVE_RETRY_SECONDS: a game that was played is worth the wait, where failing it
    would play it again. The record is one transaction and checks the claim first, so a try
    whose commit did go through before the connection broke makes the next one a no-op;
    files a try stored for a transaction that was rolled back are removed before the next.
    """
    deadline = time.monotonic() + settings.GRASS_MATCH_SAVE_RETRY_SECONDS
    pause = SAVE_RETRY_FIRST_PAUSE
    while True:
        try:
            return _match_record(claim=claim, seats=seats, played=played)
        except (OperationalError, InterfaceError) as exc:
            if connection.in_atomic_block or time.monotonic() + pause > deadline:
                raise
            logger.warning(
                "match %s: the database failed while recording it (%s); trying again in %.1f s",
                claim.match_id,
                exc,
                pause,
            )
            with suppress(DatabaseErrors):
                connection.close()  # the next query opens a new connection
            time.sleep(pause)
            pause = min(pause * 2, SAVE_RETRY_MAX_PAUSE)
            try:
                _match_files_unrecorded_remove(claim=claim)
            except DatabaseErrors:
                pass  # still away: the next try fails the same way, and this runs again
            except Exception:  # the storage: the next try's files then take other names
                logger.exception(
                    "match %s: could not remove a rolled-back try's files", claim.match_id
                )


SAVE_RETRY_FIRST_PAUSE = 0.5
SAVE_RETRY_MAX_PAUSE = 5.0
"""Pauses between tries to record a match while the database is away: short, so that the
record lands within seconds of the database coming back (and before any sweep)."""


def _match_files_unrecorded_remove(*, claim: Claim) -> None:
    """Remove the log and replay files a failed try at recording left at the match's paths,
    while the match is still this claim's and unrecorded: a match's paths are its own (its id),
    so a file there belongs to a try whose transaction was rolled back. Left in place, it would
    push the next try's file to another name and stay behind for good."""
    match_id = claim.match_id
    match = claim.held().filter(log="").first()
    if match is None:
        return
    leftovers = [
        (match.log, log_name(match_id)),
        (match.replay, replay_name(match_id)),
    ]
    for field_file, name in leftovers:
        path = field_file.field.generate_filename(match, name)
        if field_file.storage.exists(path):
            field_file.storage.delete(path)
            logger.info("match %s: removed %s, left by a try rolled back", match_id, path)


def _match_record(*, claim: Claim, seats: list[MatchSeat], played: MatchResult) -> Match:
    """Record a played match in one transaction: seats, log, result, status, ratings.

    A log that storage will not take does not undo the rest: it waits in the database
    (`match_log_store`), since a game that was played must never be failed and replayed
    because of a disk.
    """
    # mtime=0: the same game always compresses to the same bytes, hence the same sha256.
    log = gzip.compress(played.log_text().encode(), mtime=0)
    match_id = claim.match_id
    with transaction.atomic():
        # Only while this run still holds its claim: a conditional update that changes exactly
        # one row (and locks it until commit), or none when the match was taken back while
        # this worker played (it was thought lost): then the newer claim plays and records it,
        # and nothing of this run is counted.
        if claim.held().update(status=Match.Status.FINISHED, finished=timezone.now()) != 1:
            return Match.objects.get(pk=match_id)
        match = Match.objects.get(pk=match_id)
        # A rated table seats one bot per seating circle. Asked again here, where no run can
        # skip it: accounts linked since the match was queued make it an unrated one.
        bot_ids = [seat.bot_id for seat in seats if seat.bot_id is not None]
        shared = bots_circle_shared(bot_ids=bot_ids) if match.rated else set()
        note = ""
        if shared:
            names = " and ".join(seat.holder for seat in seats if seat.bot_id in shared)
            note = f"played unrated: {names} sit in one seating circle (accounts linked since "
            note += "it was queued)"
            logger.warning("match %s: %s", match_id, note)
            match.rated = False
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
        # No replay is computed here: it was two thirds of the CPU of recording a match and a
        # file 4.4 times the log's size; the viewer computes it on first view and caches it.
        match_log_store(match, log)
        match_debug_store(match, played)
        match.log_sha256 = hashlib.sha256(log).hexdigest()
        match.result = played.result
        match.status = Match.Status.FINISHED
        match.finished = timezone.now()
        match.failure_reason = note
        match.save(
            update_fields=[
                "log",
                "log_sha256",
                "debug",
                "result",
                "status",
                "finished",
                "failure_reason",
                "rated",
            ]
        )
        bot_records_add(
            seats=[
                SeatResult(seat.bot_id, seat.seat, place, seat.faults)
                for seat, place in zip(seats, played.ranks, strict=True)
                if seat.bot_id is not None  # a bot's seat: a person's games are no record
            ]
        )
        if match.rated:
            # In this transaction: a result and its rating changes are written together or
            # not at all.
            rating_apply(match=match)
            # Fair play reads the log once it is committed (a task: a replay of the game).
            from ladder.fairplay.tasks import match_flows

            send_on_commit(
                match_flows,
                match.pk,
                recovery="none: this match is left out of its pairs' collusion tests "
                "(no sweep reads its flows later)",
            )
        if match.rated:
            for seat in seats:
                if seat.forfeited and seat.bot_version is not None:
                    bot_disable_if_failing(bot_id=seat.bot_version.bot_id)
        settle_on_commit(match)
    return match


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


def bot_disable_if_failing(*, bot_id: int) -> bool:
    """Take a bot off the ladder when its last GRASS_DISABLE_AFTER_FORFEITS finished ladder
    games (the newest it was seated in) were all forfeits (a crash, a broken protocol,
    strikes): it only spoils its opponents' games. Returns whether it was disabled now. Runs
    in the caller's transaction; listeners hear of it after commit."""
    limit = settings.GRASS_DISABLE_AFTER_FORFEITS
    if limit <= 0:
        return False
    # Its newest matches first (ids follow creation), read down the seats' (bot, -match)
    # index until `limit` finished ladder games: a bot with 200,000 games costs no more.
    last = list(
        MatchSeat.objects.filter(
            bot_id=bot_id,
            match__status=Match.Status.FINISHED,
            match__rated=True,
        )
        .order_by("-match_id")
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


def settle_on_commit(match: Match) -> None:
    """Tell listeners (tournaments) that `match` is settled, once the transaction commits."""
    match_id, status = match.pk, match.status
    transaction.on_commit(
        lambda: match_settled.send(sender=Match, match_id=match_id, status=status)
    )
