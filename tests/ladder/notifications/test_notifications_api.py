"""The webhooks API and the notifications page: who may do what, shapes, the secret shown
once, the email settings."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from django.test import Client

from ladder.notifications.models import Delivery, NotificationSettings, Webhook
from ladder.notifications.services import webhook_create

pytestmark = pytest.mark.django_db

URL = "https://hooks.example/grass"


@pytest.fixture(autouse=True)
def public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """`hooks.example` resolves to a public address; nothing is sent in these tests."""
    real = socket.getaddrinfo

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


@pytest.fixture
def hook(owner: Any) -> Webhook:
    return webhook_create(owner=owner, url=URL)


def test_the_owner_creates_a_webhook_and_sees_the_secret_once(api: Any) -> None:
    created = api("owner").post(
        "/api/webhooks/", {"url": URL, "events": ["bot.crashed"]}, format="json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    hook = Webhook.objects.get()
    assert body["secret"] == hook.secret and len(hook.secret) >= 40
    assert body["events"] == ["bot.crashed"] and body["active"] is True and body["url"] == URL

    listed = api("owner").get("/api/webhooks/").json()
    assert [h["id"] for h in listed] == [hook.pk]
    assert "secret" not in listed[0]
    assert api("stranger").get("/api/webhooks/").json() == []

    every = api("owner").post("/api/webhooks/", {"url": URL}, format="json").json()
    assert "match.finished" in every["events"] and "ping" not in every["events"]


def test_a_refused_url_is_a_400_saying_why(api: Any) -> None:
    for url, why in [
        ("http://127.0.0.1:8000/x", "non-public address"),
        ("http://169.254.169.254/latest/meta-data/", "non-public address"),
        ("https://user:pw@hooks.example/", "user name or password"),
        ("ftp://hooks.example/", "Only http:// and https://"),
    ]:
        answer = api("owner").post("/api/webhooks/", {"url": url}, format="json")
        assert answer.status_code == 400, url
        assert why in str(answer.json()["url"]), (url, answer.json())
    bad_event = api("owner").post("/api/webhooks/", {"url": URL, "events": ["nope"]}, format="json")
    assert bad_event.status_code == 400 and "events" in bad_event.json()
    assert not Webhook.objects.exists()


def test_anonymous_gets_401_everywhere(api: Any, hook: Webhook) -> None:
    client = api("anonymous")
    assert client.get("/api/webhooks/").status_code == 401
    assert client.post("/api/webhooks/", {"url": URL}, format="json").status_code == 401
    assert client.delete(f"/api/webhooks/{hook.pk}/").status_code == 401
    assert client.get(f"/api/webhooks/{hook.pk}/deliveries/").status_code == 401
    assert client.post(f"/api/webhooks/{hook.pk}/test/").status_code == 401


def test_another_users_webhook_does_not_exist_for_them(api: Any, hook: Webhook) -> None:
    client = api("stranger")
    assert client.delete(f"/api/webhooks/{hook.pk}/").status_code == 404
    assert client.get(f"/api/webhooks/{hook.pk}/deliveries/").status_code == 404
    assert client.post(f"/api/webhooks/{hook.pk}/test/").status_code == 404
    assert Webhook.objects.filter(pk=hook.pk).exists() and not Delivery.objects.exists()


def test_a_test_ping_is_listed_with_its_status_and_only_one_waits_at_a_time(
    api: Any, hook: Webhook
) -> None:
    client = api("owner")
    ping = client.post(f"/api/webhooks/{hook.pk}/test/")
    assert ping.status_code == 202
    assert ping.json()["event"] == "ping" and ping.json()["status"] == "pending"
    assert client.post(f"/api/webhooks/{hook.pk}/test/").json()["id"] == ping.json()["id"]

    listed = client.get(f"/api/webhooks/{hook.pk}/deliveries/").json()
    assert listed["count"] == 1
    (row,) = listed["results"]
    assert row["id"] == ping.json()["id"] and row["attempts"] == 0
    assert set(row) >= {"status", "last_status_code", "last_error", "next_attempt", "payload"}


def test_the_owner_deletes_a_webhook_with_its_deliveries(api: Any, hook: Webhook) -> None:
    api("owner").post(f"/api/webhooks/{hook.pk}/test/")
    deleted = api("owner").delete(f"/api/webhooks/{hook.pk}/")
    assert deleted.status_code == 200 and deleted.json()["id"] == hook.pk
    assert not Webhook.objects.exists() and not Delivery.objects.exists()


def test_a_host_that_does_not_resolve_yet_is_taken_and_checked_at_delivery(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS decides, not the request: a name with no answer now may have one by the first
    delivery, which checks it again (and is tried again while it has none)."""

    real = socket.getaddrinfo

    def no_answer(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".example"):  # an address needs no DNS: it is always answered
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", no_answer)
    answer = api("owner").post("/api/webhooks/", {"url": "https://later.example/h"}, format="json")
    assert answer.status_code == 201, answer.json()
    assert Webhook.objects.get().url == "https://later.example/h"
    # A private address is still refused, whatever DNS says.
    private = api("owner").post("/api/webhooks/", {"url": "http://10.0.0.1/h"}, format="json")
    assert private.status_code == 400 and "non-public address" in str(private.json())


def test_an_owner_has_at_most_ten_webhooks(api: Any, owner: Any) -> None:
    for _ in range(10):
        webhook_create(owner=owner, url=URL)
    answer = api("owner").post("/api/webhooks/", {"url": URL}, format="json")
    assert answer.status_code == 409 and "10 webhooks" in str(answer.json())


def test_the_page_needs_a_login_and_is_linked_for_signed_in_users(
    client: Client, owner: Any
) -> None:
    answer = client.get("/account/notifications/")
    assert answer.status_code == 302 and "/login/" in answer["Location"]
    assert "/account/notifications/" not in client.get("/").content.decode()
    client.force_login(owner)
    assert 'href="/account/notifications/"' in client.get("/").content.decode()


def test_the_page_adds_a_webhook_shows_the_secret_once_and_lists_deliveries(
    client: Client, owner: Any
) -> None:
    client.force_login(owner)
    added = client.post(
        "/account/notifications/", {"url": URL, "events": ["match.finished", "bot.crashed"]}
    )
    assert added.status_code == 200
    hook = Webhook.objects.get()
    assert hook.events == ["match.finished", "bot.crashed"]
    assert hook.secret in added.content.decode()

    client.post(f"/account/notifications/webhooks/{hook.pk}/test/")
    Delivery.objects.update(attempts=1, last_status_code=500, last_error="HTTP 500: oops")
    page = client.get("/account/notifications/").content.decode()
    assert hook.secret not in page
    assert URL in page and "ping" in page and "HTTP 500" in page and "oops" in page

    refused = client.post(
        "/account/notifications/", {"url": "http://10.0.0.1/", "events": ["bot.crashed"]}
    )
    assert refused.status_code == 400 and "non-public address" in refused.content.decode()

    client.post(f"/account/notifications/webhooks/{hook.pk}/delete/")
    assert not Webhook.objects.exists()


def test_the_page_acts_only_on_the_users_own_webhooks(
    client: Client, stranger: Any, hook: Webhook
) -> None:
    client.force_login(stranger)
    assert client.post(f"/account/notifications/webhooks/{hook.pk}/delete/").status_code == 404
    assert client.post(f"/account/notifications/webhooks/{hook.pk}/test/").status_code == 404
    assert URL not in client.get("/account/notifications/").content.decode()
    assert Webhook.objects.filter(pk=hook.pk).exists()


def test_the_page_sets_the_email_choices(client: Client, owner: Any) -> None:
    client.force_login(owner)
    missing = client.post(
        "/account/notifications/email/", {"email": "", "email_events": ["bot.crashed"]}
    )
    assert missing.status_code == 400 and "Give an address" in missing.content.decode()
    saved = client.post(
        "/account/notifications/email/",
        {"email": "ann@example.org", "email_events": ["bot.crashed", "rating.milestone"]},
    )
    assert saved.status_code == 302
    owner.refresh_from_db()
    assert owner.email == "ann@example.org"
    prefs = NotificationSettings.objects.get(user=owner)
    assert prefs.email_events == ["bot.crashed", "rating.milestone"]
    page = client.get("/account/notifications/").content.decode()
    assert 'value="ann@example.org"' in page
