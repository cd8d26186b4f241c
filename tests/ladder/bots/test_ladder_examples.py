"""`manage.py ladder_examples`: the example bots, validated, created once."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from ladder.bots.models import Bot, BotVersion

pytestmark = pytest.mark.django_db


def test_the_examples_are_created_once_each_with_one_valid_version(sandbox_ready: None) -> None:
    call_command("ladder_examples", stdout=io.StringIO())
    call_command("ladder_examples", stdout=io.StringIO())

    bots = Bot.objects.filter(owner__username="examples").order_by("name")
    assert [b.name for b in bots] == ["greedy", "random", "strong"]
    for bot in bots:
        versions = BotVersion.objects.filter(bot=bot)
        assert [v.status for v in versions] == [BotVersion.Status.VALID]
    assert not bots[0].owner.has_usable_password()
