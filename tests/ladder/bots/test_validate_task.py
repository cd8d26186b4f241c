"""Validation as a Celery task: the upload is stored, the task is enqueued after commit, and the
task plays the validation game; beat's sweep sends a version left pending again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bots.runner.results import InfrastructureFault
from ladder.bots import services
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create, bot_version_resend_pending, bot_version_submit
from ladder.bots.tasks import sweep_validations, validate_version

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


def pending_for(version: BotVersion, seconds: float) -> None:
    """As if `version`'s validation was last asked for `seconds` ago."""
    BotVersion.objects.filter(pk=version.pk).update(
        validation_sent=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_version_left_pending_is_sent_again_at_most_once_per_period(
    owner: Any,
    example_file: Any,
    settings: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    settings.GRASS_VALIDATION_RESEND_SECONDS = 600
    sent: list[int] = []
    monkeypatch.setattr(validate_version, "delay", sent.append)
    bot = bot_create(owner=owner, name="gus")
    with django_capture_on_commit_callbacks(execute=True):
        version = bot_version_submit(bot=bot, filename="bot.py", data=example_file("greedy"))
    assert sent == [version.pk]  # and its message is lost

    pending_for(version, 590)
    with django_capture_on_commit_callbacks(execute=True):
        assert bot_version_resend_pending() == []
    pending_for(version, 610)
    with django_capture_on_commit_callbacks(execute=True):
        assert bot_version_resend_pending() == [version.pk]
        assert bot_version_resend_pending() == []  # sent now: not again in this period
    assert sent == [version.pk, version.pk]

    validate_version(version.pk)  # a worker takes the message sent again
    assert BotVersion.objects.get(pk=version.pk).status == BotVersion.Status.VALID
    pending_for(version, 10_000)
    with django_capture_on_commit_callbacks(execute=True):
        assert bot_version_resend_pending() == []  # no longer pending: never sent again
    assert sent == [version.pk, version.pk]


def test_a_version_whose_sandbox_did_not_start_inline_is_validated_by_the_sweep(
    owner: Any,
    example_file: Any,
    settings: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GRASS_VALIDATE_INLINE = True

    def no_sandbox(*args: Any, **kwargs: Any) -> Any:
        raise InfrastructureFault("the sandbox could not start")

    monkeypatch.setattr(services, "play_match", no_sandbox)
    bot = bot_create(owner=owner, name="gus")
    version = bot_version_submit(bot=bot, filename="bot.py", data=example_file("greedy"))
    assert version.status == BotVersion.Status.PENDING
    monkeypatch.undo()  # the sandbox works again

    sent: list[int] = []
    monkeypatch.setattr(validate_version, "delay", sent.append)
    pending_for(version, settings.GRASS_VALIDATION_RESEND_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        sweep_validations()  # the beat task, called in-process
    assert sent == [version.pk]
    validate_version(version.pk)
    version.refresh_from_db()
    assert (version.status, version.validation_error) == (BotVersion.Status.VALID, "")


def test_beat_sends_the_validation_sweep(settings: Any) -> None:
    from ladder.celery import app

    app.loader.import_default_modules()  # every app's tasks module, as a worker loads them
    entries = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == sweep_validations.name
    ]
    assert len(entries) == 1 and sweep_validations.name in app.tasks
    # Swept well within the resend period, so a version waits about that long, not twice it.
    assert entries[0]["schedule"] <= settings.GRASS_VALIDATION_RESEND_SECONDS / 2
