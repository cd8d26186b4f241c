"""The sweeps: lost and failed runs put back in the queue a bounded number of times, and
queued matches whose message was lost sent again. Run on beat (`tasks.sweep_matches`), and by
a starting worker, never inside a match's run.

Apart from the flow because the flow (`services.match_run`) only moves a match on from a claim
it holds; a run that never comes back, or a message the broker lost, is found here, from the
database alone, and each change is a conditional update that a run recording meanwhile wins.

The retry rule: every claim of a match counts one attempt. A run that raises marks the match
failed; a worker that dies mid-match leaves it "running" until `match_requeue_stale` notices.
Either way the match is queued again while it has had fewer than GRASS_MATCH_MAX_ATTEMPTS
attempts, and is otherwise failed for good ("gave up after N attempts"). A finished match is
never queued again, so its ratings are applied exactly once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from ladder.matches.broker import matches_waiting
from ladder.matches.models import Match
from ladder.matches.recording import settle_on_commit
from ladder.matches.services import enqueue_on_commit, max_attempts

logger = logging.getLogger(__name__)


def _gave_up(attempts: int) -> str:
    return f"gave up after {attempts} attempts"


def match_requeue_stale(
    *, silent_for: timedelta | None = None, older_than: timedelta | None = None
) -> list[int]:
    """Put back the running matches whose worker is gone; returns their ids.

    Gone: its heartbeat (`heartbeat.match_heartbeat`) is older than `silent_for` (default
    GRASS_MATCH_SILENT_SECONDS: the worker was killed, its host lost, or its run is stuck and
    stopped beating on purpose, `heartbeat.Progress`). Never for its age: a match whose worker
    beats is left to it however long it plays (a person's game of two hours), since taking it
    back played it twice (issue 35). `older_than` (default GRASS_MATCH_STALE_SECONDS) judges
    only a match claimed without a heartbeat, by a worker of an earlier release. Heartbeats
    are judged in the database's clock, and not at all while the database has been up for
    less than `silent_for`: a restart silenced every worker for a while, and their next beats
    come within seconds.

    A match with fewer than GRASS_MATCH_MAX_ATTEMPTS attempts goes back to "queued" and is sent
    to the workers after commit; one that has used them all is failed with the reason "gave up
    after N attempts". Each match changes with a conditional update on its status and claim
    (its start and attempt), so a worker that records the match meanwhile wins and the sweep
    leaves it alone; the run it was taken from finds its claim gone at its next beat and stops.
    """
    if silent_for is None:
        silent_for = timedelta(seconds=settings.GRASS_MATCH_SILENT_SECONDS)
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
    gone = Q(heartbeat__isnull=True, started__lt=timezone.now() - older_than)
    if not _database_started_within(silent_for):
        gone |= Q(heartbeat__lt=Now() - silent_for)
    stale = Match.objects.filter(gone, status=Match.Status.RUNNING)
    requeued = []
    lost_by = {}
    for match_id, started, attempts, host, pid in stale.values_list(
        "id", "started", "attempts", "host", "pid"
    ):
        if _requeue_or_give_up(
            match_id=match_id, status=Match.Status.RUNNING, started=started, attempts=attempts
        ):
            requeued.append(match_id)
            lost_by[match_id] = f"{host or '?'} pid {pid}"
    if requeued:
        logger.warning("requeued matches lost by their workers: %s (%s)", requeued, lost_by)
    return requeued


def _database_started_within(period: timedelta) -> bool:
    """Whether the database server (PostgreSQL) started less than `period` ago."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_postmaster_start_time() > now() - make_interval(secs => %s)",
            [period.total_seconds()],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def match_resend_lost(*, older_than: timedelta | None = None) -> list[int]:
    """Send again the queued matches whose message is lost; returns their ids.

    By default: queued for longer than GRASS_MATCH_RESEND_SECONDS with no message waiting in
    the broker's matches queue (`broker.matches_waiting`): a Redis restart without persistence
    lost it, or a worker that died took it. A match that waits its turn is left alone, so the
    queue never fills with copies. When the broker cannot be read, the matches queued for
    longer than GRASS_MATCH_STALE_SECONDS are sent again instead. With `older_than` (a starting
    worker of `make run`, an operator), every match queued for longer, whatever the broker
    holds. A duplicate message is harmless: the claim in `match_run` lets exactly one run play
    the match.
    """
    now = timezone.now()
    waiting: set[int] = set()
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_RESEND_SECONDS)
        # A message taken by a worker between this read and the claim is not waiting: its
        # match is then claimed (the update below skips it) or sent twice, harmlessly.
        found = matches_waiting() if _queued_before(now - older_than).exists() else set()
        if found is None:  # the broker cannot tell: time alone, as long as a match may take
            older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
        else:
            waiting = found
    lost = _queued_before(now - older_than)
    resent = []
    for match_id, queued in lost.values_list("id", "queued"):
        if match_id in waiting:
            continue
        with transaction.atomic():
            if Match.objects.filter(pk=match_id, status=Match.Status.QUEUED, queued=queued).update(
                queued=now
            ):
                enqueue_on_commit(match_id=match_id, stored=True)
                resent.append(match_id)
    if resent:
        logger.warning("sent again matches queued since before %s: %s", now - older_than, resent)
    return resent


def _queued_before(moment: datetime) -> QuerySet[Match]:
    return Match.objects.filter(status=Match.Status.QUEUED, queued__lt=moment)


def match_retry_failed() -> list[int]:
    """Queue again the failed matches that have had fewer than GRASS_MATCH_MAX_ATTEMPTS attempts
    (sent to the workers after commit); returns their ids. `failure_reason` keeps the last
    failure until the match finishes. A match given up on has used all its attempts, so it
    stays failed.
    """
    failed = Match.objects.filter(
        status=Match.Status.FAILED,
        attempts__lt=max_attempts(),
        host_faults__lt=settings.GRASS_MATCH_MAX_HOST_FAULTS,  # given up for host faults
    )
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
        # The claim as the caller read it (its start and attempt): a worker that records or
        # fails the match meanwhile, or a newer claim, leaves it alone.
        unchanged = Match.objects.filter(
            pk=match_id, status=status, started=started, attempts=attempts
        )
        if attempts < max_attempts():
            requeue = {"status": Match.Status.QUEUED, "started": None, "finished": None}
            if unchanged.update(**requeue, queued=timezone.now()) != 1:
                return False
            enqueue_on_commit(match_id=match_id, stored=True)
            return True
        if unchanged.update(
            status=Match.Status.FAILED, failure_reason=_gave_up(attempts), finished=timezone.now()
        ):
            settle_on_commit(Match.objects.get(pk=match_id))
        return False
