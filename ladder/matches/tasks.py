"""Celery tasks of matches: thin, they take an id (or nothing) and call one service.

`sweep_matches` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery.signals import task_postrun, worker_process_shutdown, worker_ready
from django.conf import settings
from django.db import connection

from bots.runner import pool, sandbox
from ladder.bots.tasks import validate_version
from ladder.celery import app
from ladder.matches.broker import match_queues
from ladder.matches.models import Match
from ladder.matches.services import (
    match_files_expire,
    match_logs_write_pending,
    match_requeue_stale,
    match_resend_lost,
    match_retry_failed,
    match_run,
)
from ladder.matches.workers import (
    after_match_refusal,
    proof_due_refusal,
    takes_matches,
    worker_start_refusal,
)

logger = logging.getLogger(__name__)


# acks_late: a worker that dies mid-match leaves the message to be delivered again; match_run
# claims the match with a conditional update, so a second delivery never plays it twice.
@app.task(acks_late=True, bind=True)
def run_match(self: Any, match_id: int) -> None:
    if not Match.objects.filter(pk=match_id).exists():
        # A message of another site's database on the same Redis (two `make run` checkouts,
        # or one run again from a fresh database): nothing of ours to play.
        logger.info("match %s: no such match in this site's database; message dropped", match_id)
        return
    refusal = proof_due_refusal()
    if refusal is None:
        match = match_run(match_id=match_id)
        refusal = after_match_refusal(status=match.status, failure_reason=match.failure_reason)
    if refusal is not None:
        # A match not claimed stays queued; its message is gone, so the sweep sends it again
        # (GRASS_MATCH_RESEND_SECONDS) to a worker that still takes matches.
        stop_taking_matches(hostname=self.request.hostname, reason=refusal)


def stop_taking_matches(*, hostname: str | None, reason: str) -> None:
    """Say why at ERROR, and have this worker stop consuming the matches queue (a broadcast
    to its own main process: a pool process cannot cancel its consumer itself). It takes
    matches again once restarted and its start checks pass."""
    logger.error("this worker stops taking matches: %s", reason)
    if hostname:
        for queue in match_queues():  # the ladder's games, challenges, people's games
            app.control.cancel_consumer(queue, destination=[hostname])


@task_postrun.connect(sender=run_match)
@task_postrun.connect(sender=validate_version)
def make_boxes_for_the_next_match(**_: Any) -> None:
    """Make again the boxes the match used, before the next match arrives: its bots then start
    in boxes made ahead (`bots.runner.pool`), not in boxes made while they start. A failure
    here costs nothing but that: the next bots' boxes are made as they start. The quick
    pool's processes, which play validation games only, do the same after each: measured
    (bench_verdict), a validation's three bots starting in boxes made ahead answer an
    upload about 0.3 s sooner on a loaded 2-core machine."""
    if not settings.GRASS_SANDBOXED:
        return
    try:
        made = pool.POOL.replenish()
    except (sandbox.SandboxUnavailable, OSError) as exc:
        logger.warning("could not make boxes ahead for the next match: %s", exc)
        return
    if made:
        logger.info("made %d boxes ahead for the next match (%d ready)", made, len(pool.POOL.ready))


@worker_process_shutdown.connect
def destroy_ready_boxes(**_: Any) -> None:
    """A pool process that stops takes its ready boxes with it (one that is killed leaves
    them to the sweep when a worker next starts)."""
    pool.POOL.close()


@app.task
def sweep_matches() -> None:
    match_requeue_stale()
    match_resend_lost()
    match_retry_failed()
    match_logs_write_pending()  # logs a full disk refused, once there is room again


def _release_connection() -> None:
    """Close the database connection a start-up handler opened: the worker's main process
    has no more use for it, and an idle session per host adds up at scale. (Not inside a
    transaction, which only tests hold here.)"""
    if not connection.in_atomic_block:
        connection.close()


@app.task
def expire_match_files() -> int:
    """Retention (GRASS_MATCH_FILES_KEEP_DAYS): delete the files of old, unwatched ladder
    matches, a bounded batch an hour."""
    return len(match_files_expire())


@worker_ready.connect
def recover_on_worker_start(sender: Any = None, **_: Any) -> None:
    """With GRASS_RECOVER_ON_WORKER_START (make run's one match worker), take back at once what
    the last stop left behind, instead of at the sweep. Only a worker that plays matches does
    (make run's quick worker starts at the same moment)."""
    if not settings.GRASS_RECOVER_ON_WORKER_START:
        return
    if sender is not None and not takes_matches(sender):
        return
    try:
        match_resend_lost(older_than=timedelta(0))  # first: requeued ones are sent anyway
        match_requeue_stale(older_than=timedelta(0))
    finally:
        _release_connection()


@worker_ready.connect
def check_worker_on_start(sender: Any = None, **_: Any) -> None:
    """Refuse matches, loudly, on a worker that cannot play them as the site does: the first
    of `workers.WORKER_START_CHECKS` (its media storage, its bots' runtime image, the sandbox)
    that fails is logged at ERROR, and the worker stops consuming the matches queue (so it
    also counts for no capacity). The sandbox check removes on the way the boxes a dead
    worker on this host left."""
    try:
        refusal = worker_start_refusal()
    finally:
        _release_connection()
    if refusal is None:
        return
    logger.error("this worker refuses matches: %s", refusal)
    if sender is not None and hasattr(sender, "cancel_task_queue"):
        for queue in match_queues():  # the ladder's games, challenges, people's games
            sender.cancel_task_queue(queue)
