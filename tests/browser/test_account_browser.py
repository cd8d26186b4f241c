"""A signed-in user's API token, in Chromium (issue 15, point 6): found from the menu,
created, used by a script, revoked."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_user_creates_uses_and_revokes_an_api_token(
    live_server: Any, page: Any, owner: Any, screenshot: Any
) -> None:
    base = live_server.url
    page.goto(f"{base}/login/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("link", name="API token").click()
    page.get_by_role("button", name="Create a token").click()
    key = page.get_by_label("API token").input_value()
    assert len(key) == 40
    screenshot(page, "account-api-token")

    def webhooks() -> int:
        headers = {"Authorization": f"Token {key}"}
        return httpx.get(f"{base}/api/webhooks/", headers=headers).status_code

    assert webhooks() == 200
    page.get_by_role("button", name="Revoke it").click()
    assert "no longer works" in page.get_by_role("status").inner_text()
    assert webhooks() == 401
