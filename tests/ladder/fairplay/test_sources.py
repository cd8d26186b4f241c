"""Near-identical sources of different owners' bots (ladder/fairplay/sources.py)."""

from __future__ import annotations

import io
import re
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from ladder.bots.models import Bot
from ladder.fairplay.selectors import sources_similar
from ladder.fairplay.sources import shingles, similarity, source_text

EXAMPLES = Path(__file__).resolve().parents[3] / "bots" / "examples"
GREEDY = (EXAMPLES / "greedy" / "bot.py").read_bytes()
RANDOM = (EXAMPLES / "random" / "bot.py").read_bytes()


def test_reformatting_and_comments_change_nothing() -> None:
    squashed = re.sub(rb"#[^\n]*", b"", GREEDY).replace(b"    ", b"\t")
    assert similarity(shingles(GREEDY), shingles(squashed)) == 1.0


def test_different_bots_are_not_alike() -> None:
    assert similarity(shingles(GREEDY), shingles(RANDOM)) < 0.5


def test_a_zip_is_read_member_by_member() -> None:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("bot.py", GREEDY)
    assert source_text(data.getvalue()) == GREEDY
    assert source_text(b"PK\x03\x04 not really a zip") == b"PK\x03\x04 not really a zip"


@pytest.mark.django_db
def test_a_copy_by_another_owner_is_listed(
    valid_version: Any, django_user_model: Any, example_file: Any
) -> None:
    from ladder.bots.services import bot_create, bot_version_upload

    valid_version("mine", "greedy")
    valid_version("other", "random")  # same owner: never listed
    thief = django_user_model.objects.create_user(username="cy", password="pw")
    bot = bot_create(owner=thief, name="copy")
    copied = example_file("greedy").replace(b"GreedyBot", b"MyBot")
    version = bot_version_upload(bot=bot, filename="bot.py", data=copied)
    type(version).objects.filter(pk=version.pk).update(status="valid")
    found = sources_similar()
    assert [(f.bot_a.name, f.bot_b.name) for f in found] == [("mine", "copy")]
    assert found[0].similarity > 0.8
    out = StringIO()
    call_command("collusion", "--sources", stdout=out)
    assert "ann/mine and cy/copy: sources" in out.getvalue()
    Bot.objects.filter(pk=bot.pk).update(disabled="2026-01-01T00:00Z")
    assert sources_similar() == []
