"""The upload form at /bots/<id>/upload/: the owner uploads, others may not."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create

pytestmark = pytest.mark.django_db


def test_the_owner_uploads_a_valid_bot(
    client: Client, owner: Any, example_file: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    client.force_login(owner)
    upload = SimpleUploadedFile("bot.py", example_file("greedy"))
    response = client.post(f"/bots/{bot.pk}/upload/", {"file": upload}, follow=True)
    assert response.status_code == 200
    assert "Version 1 uploaded: valid." in response.content.decode()
    assert list(BotVersion.objects.filter(bot=bot).values_list("status", flat=True)) == ["valid"]


def test_a_broken_upload_shows_the_validation_reason(
    client: Client, owner: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    client.force_login(owner)
    upload = SimpleUploadedFile("bot.py", b"raise SystemExit('no luck today')\n")
    response = client.post(f"/bots/{bot.pk}/upload/", {"file": upload})
    assert response.status_code == 200
    html = response.content.decode()
    assert "is invalid" in html and "no luck today" in html


def test_a_file_that_is_not_a_bot_is_refused_with_the_reason(client: Client, owner: Any) -> None:
    bot = bot_create(owner=owner, name="mine")
    client.force_login(owner)
    upload = SimpleUploadedFile("notes.txt", b"hello")
    response = client.post(f"/bots/{bot.pk}/upload/", {"file": upload})
    assert response.status_code == 200
    assert "upload a .zip, a single source file or an executable" in response.content.decode()
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_a_stranger_gets_403(client: Client, owner: Any, stranger: Any) -> None:
    bot = bot_create(owner=owner, name="mine")
    client.force_login(stranger)
    assert client.get(f"/bots/{bot.pk}/upload/").status_code == 403
    upload = SimpleUploadedFile("bot.py", b"print()\n")
    assert client.post(f"/bots/{bot.pk}/upload/", {"file": upload}).status_code == 403
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_anonymous_is_sent_to_log_in(client: Client, owner: Any) -> None:
    bot = bot_create(owner=owner, name="mine")
    response = client.get(f"/bots/{bot.pk}/upload/")
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next=/bots/{bot.pk}/upload/"
    assert client.get("/bots/new/").status_code == 302
