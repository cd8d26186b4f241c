"""The notifications page in a real Chromium: a signed-in owner adds a webhook through the form,
sees its secret once, and reads the deliveries already made; on a phone, without sideways
scrolling. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from ladder.notifications.models import Delivery, Webhook
from tests.browser.conftest import foreign_requests

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page: Any, user: Any, base: str) -> None:
    """Give the page the session of `user`, as if they had logged in."""
    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    page.context.add_cookies([{"name": "sessionid", "value": session, "url": base}])


def test_the_notifications_page_adds_a_webhook_and_lists_deliveries(
    live_server: Any, browser: Any, page: Any, owner: Any, settings: Any, screenshot: Any
) -> None:
    # The receivers named here are on loopback, as on a development box.
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = True
    old = Webhook.objects.create(owner=owner, url="http://127.0.0.1:9/old")
    Delivery.objects.create(
        owner=owner,
        webhook=old,
        event="match.finished",
        payload={"match": {"id": 1}},
        status=Delivery.Status.PENDING,
        attempts=2,
        last_status_code=503,
        last_error="HTTP 503: busy",
    )
    base = live_server.url
    sign_in(page, owner, base)

    page.goto(f"{base}/account/notifications/")
    page.get_by_role("heading", name="Notifications", level=1).wait_for()
    deliveries = page.get_by_role("table", name="Latest deliveries to http://127.0.0.1:9/old")
    assert "HTTP 503" in deliveries.inner_text() and "match.finished" in deliveries.inner_text()

    page.get_by_label("URL").fill("http://127.0.0.1:9/new")
    page.get_by_role("button", name="Add the webhook").click()
    added = page.get_by_role("status").filter(has_text="Webhook added")
    added.wait_for()
    secret = page.get_by_label("Secret for http://127.0.0.1:9/new").input_value()
    assert secret == Webhook.objects.get(url="http://127.0.0.1:9/new").secret
    screenshot(page, "notifications")

    # Shown once: the page again lists the webhook, never its secret.
    page.goto(f"{base}/account/notifications/")
    assert page.get_by_role("heading", name="http://127.0.0.1:9/new").count() == 1
    assert secret not in page.content()

    phone = browser.new_context(
        viewport={"width": 375, "height": 812}, device_scale_factor=2, is_mobile=True
    )
    try:
        small = phone.new_page()
        foreign = foreign_requests(small, base)
        sign_in(small, owner, base)
        small.goto(f"{base}/account/notifications/")
        width = small.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        screenshot(small, "notifications-phone")
    finally:
        phone.close()
    assert not foreign
