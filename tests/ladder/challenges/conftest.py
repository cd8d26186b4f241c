"""Fixtures for challenges: the examples' bots, another owner's bot, a version of the author's."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.ratings.services import rating_pool_enter


@pytest.fixture
def owned_by(example_file: Any) -> Any:
    """`make(user, name, example="random", valid=True)`: a bot of `user` with one version."""

    def make(user: Any, name: str, example: str = "random", valid: bool = True) -> BotVersion:
        bot = bot_create(owner=user, name=name)
        version = bot_version_upload(bot=bot, filename="bot.py", data=example_file(example))
        if valid:
            BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
            # What bot_version_validate calls with a valid verdict: the matchmaker's pool.
            rating_pool_enter(bot_id=version.bot_id)
        version.refresh_from_db()
        return version

    return make


@pytest.fixture
def examples(django_user_model: Any, owned_by: Any) -> dict[str, BotVersion]:
    """The example bots as `manage.py ladder_examples` makes them (user `examples`)."""
    user = django_user_model.objects.create_user(username="examples")
    return {name: owned_by(user, name, name) for name in ("random", "greedy")}


@pytest.fixture
def mine(owner: Any, owned_by: Any) -> BotVersion:
    """ann's bot `mine`, version 1 valid."""
    version: BotVersion = owned_by(owner, "mine", "greedy")
    return version


def second_version(
    version: BotVersion, example_file: Any, valid: bool = True, data: bytes | None = None
) -> BotVersion:
    """A new version of `version`'s bot: the random example, or `data`."""
    bot = Bot.objects.get(pk=version.bot_id)
    new = bot_version_upload(bot=bot, filename="bot.py", data=data or example_file("random"))
    if valid:
        BotVersion.objects.filter(pk=new.pk).update(status=BotVersion.Status.VALID)
    new.refresh_from_db()
    return new
