"""Celery tasks of matches: thin, they take an id (or nothing) and call one service.

`sweep_matches` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from celery.exceptions import Reject
from celery.signals import task_postrun, worker_process_shutdown, worker_ready, worker_shutdown
from celery.worker.control import control_command
from django.conf import settings
from django.db import connection

from bots.runner import pool, sandbox
from bots.runner.faults import is_host_fault
from ladder.bots.tasks import validate_version
from ladder.breaker import (
    breaker_host_fault,
    breaker_reprove,
    breaker_work_done,
    refuse_if_stopped,
    stop_taking_work,
)
from ladder.celery import app
from ladder.matches.broker import match_queues
from ladder.matches.files import match_files_expire, match_logs_write_pending
from ladder.matches.models import Match
from ladder.matches.recovery import match_requeue_stale, match_resend_lost, match_retry_failed
from ladder.matches.services import match_run
from ladder.matches.workers import (
    after_fault_refusal,
    proof_ahead,
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
    refuse_if_stopped()
    refusal = proof_due_refusal()
    if refusal is not None:
        # Not claimed: the message goes back to the queue for a peer (this worker stops
        # consuming it first, so the message is not delivered here again).
        stop_taking_work(hostname=self.request.hostname, reason=refusal)
        raise Reject(refusal, requeue=True)
    try:
        match_run(match_id=match_id)
    except Exception as exc:
        if not is_host_fault(exc):  # `bots.runner.faults`: by type and errno, never message
            raise
        # match_run gave the match back (queued again, its attempt returned).
        refusal = breaker_host_fault(exc, check=after_fault_refusal)
        if refusal is not None:
            stop_taking_work(hostname=self.request.hostname, reason=refusal)
        return
    breaker_work_done()


@control_command(args=[("reason", str)], signature="<reason>")
def grass_stop_taking_work(state: Any, reason: str = "", **_: Any) -> dict[str, str]:
    """Remote control command, run by a worker's main process (`stop_taking_work`): stop
    consuming every queue this worker reads, then prove the worker again every
    GRASS_BREAKER_PROOF_SECONDS in a thread of its own (`breaker.breaker_reprove`), and consume
    the same queues again once a proof passes."""
    consumer = state.consumer
    queues = sorted(_consumed_queues(consumer))
    for queue in queues:
        consumer.call_soon(consumer.cancel_task_queue, queue)
    if queues:
        _reprove_in_background(consumer, queues)
    return {"ok": f"no longer consuming from {', '.join(queues) or 'any queue'}: {reason[:200]}"}


def _consumed_queues(consumer: Any) -> set[str]:
    """The queues a worker's consumer reads now (what it was started to read, before it
    consumes)."""
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is None:
        return {str(name) for name in consumer.app.amqp.queues.consume_from}
    return {str(queue.name) for queue in task_consumer.queues}


def _reprove_in_background(consumer: Any, queues: list[str]) -> None:
    if settings.GRASS_BREAKER_PROOF_SECONDS <= 0:
        return  # never: only a restart takes the worker back (and the tests' process)

    def resume() -> None:
        # call_soon: the consumer's own loop adds them (what Celery's add_consumer does),
        # without the broker, which may be the thing that has just come back.
        for queue in queues:
            consumer.call_soon(consumer.add_task_queue, queue)
        logger.warning("this worker consumes %s again", ", ".join(queues))

    def reprove() -> None:
        try:
            breaker_reprove(prove=worker_start_refusal, resume=resume)
        finally:
            _release_connection()

    threading.Thread(target=reprove, name="grass-breaker", daemon=True).start()


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
        # The ids let an operator (and tests/e2e/test_pipeline.py) tell this worker's ready
        # boxes from other programs' among the host's leftovers.
        ready = ", ".join(str(ready.box.id) for ready in pool.POOL.ready)
        logger.info("made %d boxes ahead for the next match (ready: boxes %s)", made, ready)


@task_postrun.connect(sender=run_match)
@task_postrun.connect(sender=validate_version)
def prove_ahead(**_: Any) -> None:
    """Run the periodic proof after a task when it is due soon (`workers.proof_ahead`), not
    before a match someone waits for. A failure is logged; the next match is refused by the
    proof that is then due, as before."""
    refusal = proof_ahead()
    if refusal is not None:
        logger.warning("the proof run after a task failed: %s", refusal)


@worker_process_shutdown.connect
@worker_shutdown.connect
def destroy_ready_boxes(**_: Any) -> None:
    """A pool process that stops takes its ready boxes with it (one that is killed leaves
    them to the sweep when a worker next starts); a table host's pool is threads of the
    worker's own process, which does the same when it stops."""
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
        # Every running match, whatever its heartbeat: this worker is the site's only one.
        match_requeue_stale(silent_for=timedelta(0), older_than=timedelta(0))
    finally:
        _release_connection()


@worker_ready.connect
def check_worker_on_start(sender: Any = None, **_: Any) -> None:
    """Refuse matches, loudly, on a worker that cannot play them as the site does: the first
    of `workers.WORKER_START_CHECKS` (its media storage, its bots' runtime image, the sandbox)
    that fails is logged at ERROR, and the worker stops consuming the matches queue (so it
    also counts for no capacity) until it proves itself again (GRASS_BREAKER_PROOF_SECONDS).
    The sandbox check removes on the way the boxes a dead worker on this host left."""
    try:
        refusal = worker_start_refusal()
    finally:
        _release_connection()
    if refusal is None:
        # After "ready.": a match taken before this line waits for the proof in its process.
        logger.info("this worker passed its start checks")
        return
    logger.error("this worker refuses matches: %s", refusal)
    if sender is not None and hasattr(sender, "cancel_task_queue"):
        consumed = _consumed_queues(sender)
        queues = [q for q in match_queues() if q in consumed]  # games, challenges, people's
        for queue in queues:
            sender.cancel_task_queue(queue)
        if queues:
            # It takes them again once it proves itself (a mount that came up late, an image
            # built after the worker started), as a worker stopped by its breaker does.
            _reprove_in_background(sender, queues)
