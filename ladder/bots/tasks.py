"""Celery tasks of bots: thin, they take an id (or nothing) and call one service.

`sweep_validations` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging
from typing import Any

from bots.runner.faults import is_host_fault
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_version_resend_pending, bot_version_validate
from ladder.breaker import (
    breaker_host_fault,
    breaker_work_done,
    refuse_if_stopped,
    stop_taking_work,
)
from ladder.celery import app

logger = logging.getLogger(__name__)

VALIDATION_HOST_RETRIES = 5
"""Sends of one validation after host faults, each at once to the queue (a peer takes it once
this worker's breaker opens, after GRASS_HOST_FAULTS_IN_A_ROW faults)."""


# acks_late: a worker lost mid-validation leaves the message to be delivered again; a version
# no longer pending is returned unchanged, so a second delivery changes nothing. A host fault
# (the sandbox did not start, the image or the media is missing: `bots.runner.faults`) is not
# the bot's: the version stays pending, the fault counts toward stopping this worker
# (`ladder.matches.breaker`), and the task is sent again at once, without a countdown. A
# countdown's message carries an ETA, and Celery keeps an ETA message in the worker that
# received it until then, so a retry with one ran on the same broken host again; without one
# it waits in the queue, where a healthy peer takes it (this worker too, until its breaker
# opens). Once the retries are used up, `sweep_validations` sends it again later.
@app.task(acks_late=True, bind=True, max_retries=VALIDATION_HOST_RETRIES)
def validate_version(self: Any, version_id: int) -> None:
    version = BotVersion.objects.select_related("bot__owner").filter(pk=version_id).first()
    if version is None:
        # Another site's message on the same Redis, or a version deleted since it was sent.
        logger.info(
            "version %s: no such version in this site's database; message dropped", version_id
        )
        return
    refuse_if_stopped()
    try:
        bot_version_validate(version=version)
    except Exception as exc:
        if not is_host_fault(exc):  # `bots.runner.faults`: by type and errno, never message
            raise
        refusal = breaker_host_fault(exc)
        if refusal is not None:
            stop_taking_work(hostname=self.request.hostname, reason=refusal)
        raise self.retry(exc=exc, countdown=0) from None
    breaker_work_done()


@app.task
def sweep_validations() -> None:
    bot_version_resend_pending()
