"""The owner sees what their bot did (issue 15, point 3): the whole validation error, folded
rather than cut, and a version's status while its validation game is played in the
background."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import BotVersion

pytestmark = pytest.mark.django_db

LAST_LINE = 'RuntimeError: "the line that says what went wrong"'


def test_the_whole_validation_error_is_shown_folded(
    client: Any, owner: Any, valid_version: Any
) -> None:
    version = valid_version("crashy")
    error = "crashed: exit code 1\n\nstderr (last lines):\n" + "x" * 3000 + "\n" + LAST_LINE
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.INVALID, validation_error=error
    )
    client.force_login(owner)

    html = client.get(f"/bots/{version.bot_id}/").content.decode()

    folded = html[html.index('<details class="validation-error">') :]
    folded = folded[: folded.index("</details>")]
    assert "<summary" in folded and "crashed: exit code 1" in folded
    assert "the line that says what went wrong" in folded  # the end is not cut off
    assert "x" * 3000 in folded


def test_an_upload_answers_at_once_and_the_page_waits_for_the_verdict(
    client: Any, owner: Any, example_file: Any, settings: Any, monkeypatch: Any
) -> None:
    from ladder.bots import tasks
    from ladder.bots.services import bot_create

    settings.GRASS_VALIDATE_INLINE = False
    sent: list[int] = []
    monkeypatch.setattr(tasks.validate_version, "delay", sent.append)
    bot = bot_create(owner=owner, name="later")
    client.force_login(owner)

    answer = client.post(
        f"/bots/{bot.pk}/upload/", {"file": _upload(example_file("greedy"))}, follow=True
    )

    html = answer.content.decode()
    version = BotVersion.objects.get(bot=bot)
    assert version.status == BotVersion.Status.PENDING
    assert "Version 1 uploaded: pending" in html
    assert f'data-poll-versions="/api/bots/{bot.pk}/versions/"' in html
    assert "/static/ladder/pending.js" in html

    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    html = client.get(f"/bots/{bot.pk}/").content.decode()
    assert "data-poll-versions" not in html and "pending.js" not in html


def _upload(data: bytes) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("bot.py", data, content_type="text/x-python")
