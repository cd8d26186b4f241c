"""Celery tasks of matches: thin, they take an id (or nothing) and call one service.

`sweep_matches` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery.signals import task_postrun, worker_process_shutdown, worker_ready
from django.conf import settings

from bots.runner import pool, sandbox
from ladder.bots.runtimes import runtime_refusal
from ladder.celery import app
from ladder.matches.services import (
    match_logs_write_pending,
    match_requeue_stale,
    match_resend_lost,
    match_retry_failed,
    match_run,
)

logger = logging.getLogger(__name__)


# acks_late: a worker that dies mid-match leaves the message to be delivered again; match_run
# claims the match with a conditional update, so a second delivery never plays it twice.
@app.task(acks_late=True)
def run_match(match_id: int) -> None:
    match_run(match_id=match_id)


@task_postrun.connect(sender=run_match)
def make_boxes_for_the_next_match(**_: Any) -> None:
    """Make again the boxes the match used, before the next match arrives: its bots then start
    in boxes made ahead (`bots.runner.pool`), not in boxes made while they start. A failure
    here costs nothing but that: the next bots' boxes are made as they start."""
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


@worker_ready.connect
def recover_on_worker_start(**_: Any) -> None:
    """With GRASS_RECOVER_ON_WORKER_START (make run's one-worker site), take back at once what
    the last stop left behind, instead of after GRASS_MATCH_STALE_SECONDS."""
    if settings.GRASS_RECOVER_ON_WORKER_START:
        match_resend_lost(older_than=timedelta(0))  # first: requeued ones are sent anyway
        match_requeue_stale(older_than=timedelta(0))


@worker_ready.connect
def sweep_sandbox_on_worker_start(sender: Any = None, **_: Any) -> None:
    """Refuse matches on a worker that cannot play them as the site does (its bots' runtime
    image is another, or the sandbox cannot start: it stops consuming the `matches` queue and
    says why), and remove the boxes a dead worker on this host left (processes, cgroups,
    staged code: see `bots.runner.home.sweep`), so a host that lost workers does not run out
    of sandboxes."""
    if not settings.GRASS_SANDBOXED:
        return
    problem = runtime_refusal()
    removed: dict[str, int] = {}
    if problem is None:
        try:
            removed = sandbox.sweep()
        except sandbox.SandboxUnavailable as exc:
            problem = f"the bot sandbox cannot run on this worker: {exc}"
    if problem is not None:
        logger.error("this worker refuses matches: %s", problem)
        if sender is not None and hasattr(sender, "cancel_task_queue"):
            sender.cancel_task_queue("matches")
        return
    if any(removed.values()):
        logger.warning("removed what dead runners left on this host: %s", removed)
