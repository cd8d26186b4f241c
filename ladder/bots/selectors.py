"""Reading bots: which version plays, and a version's files as the runner wants them."""

from __future__ import annotations

import hashlib

from bots.runner.botfiles import BotSource, source_from_upload
from ladder.bots.models import Bot, BotVersion


def bot_version_playing(*, bot: Bot) -> BotVersion | None:
    """The version that plays for `bot`: its newest valid one, or None."""
    return (
        BotVersion.objects.filter(bot=bot, status=BotVersion.Status.VALID)
        .order_by("-number")
        .first()
    )


def bot_version_source(*, version: BotVersion) -> BotSource:
    """The version's files, read back from storage and checked against the stored sha256."""
    with version.file.open("rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != version.sha256:
        raise RuntimeError(f"stored file of {version} does not match its sha256")
    return source_from_upload(version.bot.name, version.file.name, data)
