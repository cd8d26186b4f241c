"""An upload while Redis (the broker) is down (issue 36, part 4): the version is stored and the
upload answered as accepted, never a 500, and the first validation sweep once Redis is back
sends it, not the sweep of GRASS_VALIDATION_RESEND_SECONDS (10 min) later. Every other task
sent from a request (a webhook's test ping, found by Schemathesis with the broker down) is the
same: stored, answered, sent by its sweep (ladder/task_sending.py).

The broker here is a Redis URL on a port where nothing listens: every send is refused, as
during the outage measured (31 s of Redis down answered the upload 500).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from ladder.bots.models import BotVersion
from ladder.bots.services import NEVER_SENT, bot_create, bot_version_resend_pending
from ladder.bots.tasks import sweep_validations, validate_version


@pytest.fixture
def broker_refuses(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[None]:
    """The Celery app's broker is a Redis that refuses every connection."""
    from ladder.celery import app

    settings.GRASS_VALIDATE_INLINE = False
    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    # The app keeps its connections and producers: new ones, to the refusing broker.
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    yield
    app._pool = None  # made for the refusing broker: closed with it
    app.amqp._producer_pool = None


# transaction=True: the upload commits for real, so its task is sent during the request, as on
# a server (in a test's transaction it would be sent only when the test ends).
@pytest.mark.django_db(transaction=True)
def test_an_upload_during_a_broker_outage_is_accepted_and_sent_by_the_next_sweep(
    broker_refuses: None, owner: Any, example_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.test import APIClient

    from ladder.accounts.services import token_get_or_create

    bot = bot_create(owner=owner, name="gus")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_get_or_create(user=owner).key}")
    response = api.post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile("bot.py", example_file("greedy"))},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "pending"
    version = BotVersion.objects.get(pk=response.json()["id"])
    assert version.file.read() == example_file("greedy")  # stored
    assert version.validation_sent == NEVER_SENT

    # A sweep while Redis is still down (beat's own tick got through before it went): the
    # version stays marked, not claimed for another 10 minutes.
    assert bot_version_resend_pending() == [version.pk]
    version.refresh_from_db()
    assert version.validation_sent == NEVER_SENT

    # Redis is back: the next sweep sends it, whatever the resend period.
    sent: list[int] = []
    monkeypatch.setattr(validate_version, "delay", sent.append)
    sweep_validations()
    assert sent == [version.pk]
    version.refresh_from_db()
    assert version.validation_sent > NEVER_SENT
    sweep_validations()
    assert sent == [version.pk]  # sent: not again before the resend period


def test_the_validation_sweep_runs_every_15_seconds(settings: Any) -> None:
    """How soon after Redis's return a never-sent version goes out: beat's next sweep."""
    entries = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == sweep_validations.name
    ]
    assert [e["schedule"] for e in entries] == [15.0]


@pytest.mark.django_db(transaction=True)
def test_a_webhook_ping_during_a_broker_outage_is_accepted_and_left_to_the_sweep(
    broker_refuses: None, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from rest_framework.test import APIClient

    from ladder.notifications.models import Delivery
    from ladder.notifications.services import webhook_create

    real = socket.getaddrinfo

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    hook = webhook_create(owner=owner, url="https://hooks.example/grass")
    api = APIClient()
    api.force_authenticate(owner)
    response = api.post(f"/api/webhooks/{hook.pk}/test/")
    assert response.status_code == 202, response.content
    assert Delivery.objects.get(pk=response.json()["id"]).status == Delivery.Status.PENDING
