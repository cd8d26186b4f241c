"""`manage.py ladder_examples`: the example bots on the ladder, so a fresh site has games.

Creates the user "examples" (who cannot log in; the house, whose bots may share tables with
each other) and its bots random, greedy and strong, each
with a version uploaded from bots/examples/<name>/bot.py and validated by its sandboxed game.
Safe to run again: a bot that already has a valid version is left alone, and a pending one
(its sandbox did not start last time) is validated again rather than uploaded twice.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from bots.runner.botfiles import load_bot
from ladder.accounts.services import HOUSE_USERNAME, account_house_set
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload, bot_version_validate

EXAMPLES_USER = HOUSE_USERNAME
EXAMPLES = ("random", "greedy", "strong")


class Command(BaseCommand):
    help = "Create the user 'examples' and its bots random, greedy, strong (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        with transaction.atomic():
            user, created = user_model.objects.get_or_create(username=EXAMPLES_USER)
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            # The house: each example sits as a circle of its own (docs/fairplay.md). An
            # "examples" someone signed up as (before the name was reserved) is refused.
            try:
                account_house_set(user_id=user.pk)
            except ValueError as exc:
                raise CommandError(
                    f"{exc}: rename or remove that account, then run this again"
                ) from None
        for name in EXAMPLES:
            self._ensure_example(user, name)

    def _ensure_example(self, user: Any, name: str) -> None:
        bot = Bot.objects.filter(owner=user, name=name).first() or bot_create(owner=user, name=name)
        versions = BotVersion.objects.filter(bot=bot)
        if versions.filter(status=BotVersion.Status.VALID).exists():
            self.stdout.write(f"{name}: already has a valid version")
            return
        version = versions.filter(status=BotVersion.Status.PENDING).order_by("-number").first()
        if version is None:
            data = load_bot(name).files["bot.py"]
            version = bot_version_upload(bot=bot, filename="bot.py", data=data)
        version = bot_version_validate(version=version)
        if version.status != BotVersion.Status.VALID:
            raise CommandError(
                f"{name} v{version.number} failed validation: {version.validation_error}"
            )
        self.stdout.write(f"{name}: version {version.number} validated")
