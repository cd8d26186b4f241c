"""Uploading and validating bot versions: the newest valid version plays."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from bots.runner.botfiles import BadBot
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_version_playing, bot_version_source
from ladder.bots.services import bot_create, bot_version_upload, bot_version_validate

pytestmark = pytest.mark.django_db

BROKEN = b"def choose(self, obs:\n    return 'end'\n"


def test_a_valid_upload_is_stored_pending_then_validates(
    owner: Any, example_file: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    data = example_file("greedy")
    version = bot_version_upload(bot=bot, filename="greedy.py", data=data)
    assert (version.number, version.status, version.size) == (1, "pending", len(data))
    assert bot_version_source(version=version).files == {"bot.py": data}
    assert bot_version_playing(bot=bot) is None

    version = bot_version_validate(version=version)

    assert version.status == BotVersion.Status.VALID
    assert version.validation_error == ""
    assert bot_version_playing(bot=bot) == version


def test_a_broken_upload_is_invalid_with_its_traceback_and_the_old_version_plays(
    owner: Any, example_file: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    good = bot_version_validate(
        version=bot_version_upload(bot=bot, filename="bot.py", data=example_file("random"))
    )
    broken = bot_version_upload(bot=bot, filename="bot.py", data=BROKEN)
    assert broken.number == 2

    broken = bot_version_validate(version=broken)

    assert broken.status == BotVersion.Status.INVALID
    assert "SyntaxError" in broken.validation_error
    assert "Traceback (most recent call last)" in broken.validation_error
    assert bot_version_playing(bot=bot) == good
    # The verdict is final: validating again changes nothing.
    assert bot_version_validate(version=broken).status == BotVersion.Status.INVALID


def test_an_unsafe_zip_is_refused_and_nothing_is_stored(owner: Any) -> None:
    bot = bot_create(owner=owner, name="mine")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", "print('hi')\n")
        archive.writestr("../escape.py", "print('out')\n")

    with pytest.raises(BadBot, match="outside the archive"):
        bot_version_upload(bot=bot, filename="evil.zip", data=buffer.getvalue())

    assert not BotVersion.objects.exists()
    assert not (Path(settings.MEDIA_ROOT) / "bots" / str(bot.pk)).exists()
