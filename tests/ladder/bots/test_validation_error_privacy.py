"""A version's validation error quotes its bot's stderr (tracebacks: lines of its private
source): only the bot's owner and staff see it, in the API and on the bot's page; everyone
else sees the verdict only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from ladder.accounts.services import token_get_or_create
from ladder.bots.models import BotVersion

pytestmark = pytest.mark.django_db

SECRET = 'Traceback (most recent call last):\n  File "/bot/bot.py", line 7\n    SECRET_MOVE = 42'
SEES = {"owner": True, "staff": True, "stranger": False, "anonymous": False}


@pytest.fixture
def invalid_version(valid_version: Any) -> BotVersion:
    """The owner's bot with an invalid version whose error quotes its source."""
    version: BotVersion = valid_version("leaky")
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.INVALID, validation_error=SECRET
    )
    return version


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="sid", password="pw", is_staff=True)


@pytest.fixture
def client_as(api: Any, staff: Any) -> Any:
    """`client_as(persona)`: an API client for owner, stranger, anonymous or staff."""

    def make(persona: str) -> APIClient:
        if persona != "staff":
            client: APIClient = api(persona)
            return client
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_get_or_create(user=staff).key}")
        return client

    return make


@pytest.mark.parametrize("persona", SEES)
def test_the_version_list_shows_the_error_to_owner_and_staff_only(
    client_as: Any, invalid_version: BotVersion, persona: str
) -> None:
    response = client_as(persona).get(f"/api/bots/{invalid_version.bot_id}/versions/")

    assert response.status_code == 200
    [version] = response.json()["results"]
    assert version["status"] == "invalid"  # the verdict is public
    assert version["validation_error"] == (SECRET if SEES[persona] else None)
    assert ("SECRET_MOVE" in response.content.decode()) == SEES[persona]


@pytest.mark.parametrize("persona", SEES)
def test_the_bot_detail_shows_the_error_to_owner_and_staff_only(
    client_as: Any, invalid_version: BotVersion, persona: str
) -> None:
    response = client_as(persona).get(f"/api/bots/{invalid_version.bot_id}/")

    assert response.status_code == 200
    latest = response.json()["versions"]["latest"]
    assert latest["status"] == "invalid"
    assert latest["validation_error"] == (SECRET if SEES[persona] else None)
    assert ("SECRET_MOVE" in response.content.decode()) == SEES[persona]


@pytest.mark.parametrize("persona", SEES)
def test_the_bot_page_shows_the_error_to_owner_and_staff_only(
    client: Client, owner: Any, stranger: Any, staff: Any, invalid_version: BotVersion, persona: str
) -> None:
    users = {"owner": owner, "stranger": stranger, "staff": staff, "anonymous": None}
    if users[persona] is not None:
        client.force_login(users[persona])

    html = client.get(f"/bots/{invalid_version.bot_id}/").content.decode()

    assert f'<td data-version-status="{invalid_version.pk}">invalid</td>' in html  # public verdict
    assert ("SECRET_MOVE" in html) == SEES[persona]
    assert ("Validation error" in html) == SEES[persona]
