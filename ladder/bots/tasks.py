"""Celery tasks of bots: thin, they take an id (or nothing) and call one service.

`sweep_validations` runs on Celery beat (CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging

from bots.runner.match import InfrastructureFault
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_version_resend_pending, bot_version_validate
from ladder.celery import app

logger = logging.getLogger(__name__)


# acks_late: a worker lost mid-validation leaves the message to be delivered again; a version
# no longer pending is returned unchanged, so a second delivery changes nothing. A sandbox
# that did not start is not the bot's fault: the version stays pending and the task retries;
# once the retries are used up, `sweep_validations` sends it again later.
@app.task(
    acks_late=True,
    autoretry_for=(InfrastructureFault,),
    retry_backoff=10,
    max_retries=3,
)
def validate_version(version_id: int) -> None:
    version = BotVersion.objects.select_related("bot__owner").filter(pk=version_id).first()
    if version is None:
        # Another site's message on the same Redis, or a version deleted since it was sent.
        logger.info(
            "version %s: no such version in this site's database; message dropped", version_id
        )
        return
    bot_version_validate(version=version)


@app.task
def sweep_validations() -> None:
    bot_version_resend_pending()
