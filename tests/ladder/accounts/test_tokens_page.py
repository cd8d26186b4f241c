"""A signed-in user creates, replaces and revokes their API token on a page (issue 15, point
6), without sending a password to POST /api/auth/token/."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/webhooks/").status_code == 200


def test_create_replace_and_revoke_a_token(client: Any, owner: Any) -> None:
    assert client.get("/account/tokens/").status_code == 302  # to the log-in page
    client.force_login(owner)
    assert "You have no API token." in client.get("/account/tokens/").content.decode()

    created = client.post("/account/tokens/", {"action": "create"}).content.decode()
    first = Token.objects.get(user=owner).key
    assert f'value="{first}"' in created and "not shown again" in created
    assert works(first)
    again = client.get("/account/tokens/").content.decode()
    assert first not in again and f"<code>{first[:4]}…</code>" in again  # shown once only

    client.post("/account/tokens/", {"action": "create"})  # replace
    second = Token.objects.get(user=owner).key
    assert second != first and works(second) and not works(first)

    answer = client.post("/account/tokens/", {"action": "revoke"}, follow=True)
    assert "no longer works" in answer.content.decode()
    assert not Token.objects.filter(user=owner).exists() and not works(second)
    assert "Log out ann" in answer.content.decode()  # the session is untouched


def test_sign_up_shows_the_token_it_made_once(client: Any) -> None:
    """Signing up makes an API token; the next page shows it in full, once, without the user
    having to replace it first."""
    answer = client.post(
        "/signup/", {"username": "newcomer", "password": "a long pass phrase"}, follow=True
    )
    page = answer.content.decode()
    key = Token.objects.get(user__username="newcomer").key
    assert answer.redirect_chain == [("/account/tokens/", 302)]
    assert f'value="{key}"' in page and "not shown again" in page
    assert "Welcome, newcomer" in page and 'href="/write-a-bot/"' in page
    assert works(key)

    again = client.get("/account/tokens/").content.decode()
    assert key not in again and f"<code>{key[:4]}…</code>" in again  # shown once only
