"""Validation as a Celery task: the upload is stored, the task is enqueued after commit, and the
task plays the validation game."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create, bot_version_submit
from ladder.bots.tasks import validate_version

pytestmark = pytest.mark.django_db


def test_without_inline_validation_the_upload_enqueues_the_task(
    owner: Any,
    example_file: Any,
    settings: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    sent: list[int] = []
    monkeypatch.setattr(validate_version, "delay", sent.append)
    bot = bot_create(owner=owner, name="gus")

    with django_capture_on_commit_callbacks(execute=True):
        version = bot_version_submit(bot=bot, filename="bot.py", data=example_file("greedy"))
    assert version.status == BotVersion.Status.PENDING
    assert sent == [version.pk]

    validate_version(version.pk)  # the task, called in-process
    version.refresh_from_db()
    assert (version.status, version.validation_error) == (BotVersion.Status.VALID, "")
    validate_version(version.pk)  # a second delivery: unchanged
    assert BotVersion.objects.get(pk=version.pk).status == BotVersion.Status.VALID
