"""Delivering webhooks to a real HTTP server on 127.0.0.1 started by the test: the signature
(checked with WEBHOOKS.md's own code), retries with backoff, no redirects, and the guard
against private addresses at creation and again at delivery. Email through Django's backend.

The receiving server is on loopback, so these tests turn on GRASS_WEBHOOK_ALLOW_PRIVATE (or
name the server in GRASS_WEBHOOK_ALLOWED_HOSTS), as an operator would on a development box.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from celery.exceptions import Retry
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import timezone

from ladder.notifications import services
from ladder.notifications.events import Event
from ladder.notifications.models import Delivery, NotificationSettings, Webhook
from ladder.notifications.services import delivery_send, notify, webhook_create
from ladder.notifications.tasks import deliver

pytestmark = pytest.mark.django_db

WEBHOOKS_MD = Path(__file__).resolve().parents[3] / "ladder" / "notifications" / "WEBHOOKS.md"


class Receiver:
    """An HTTP server on 127.0.0.1 that records each request and answers from a script."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[tuple[int, dict[str, str]]] = []
        self.delay = 0.0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                time.sleep(receiver.delay)
                status, headers = receiver.answers.pop(0) if receiver.answers else (200, {})
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def allow_private(settings: Any) -> Any:
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = True
    settings.GRASS_WEBHOOK_ALLOWED_HOSTS = []
    return settings


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names the test makes up (`*.example`) resolve to what the test puts in this table (an
    empty list: a temporary DNS failure); every other name and address still goes to the real
    resolver."""
    table: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in table and not table[host]:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host in table:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in table[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return table


def documented_verifier() -> Any:
    """`grass_signature_ok` exactly as WEBHOOKS.md shows it to receivers."""
    code = re.search(r"```python\n(.*?)```", WEBHOOKS_MD.read_text(), re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)
    return namespace["grass_signature_ok"]


def _delivery(owner: Any, url: str, event: Event = Event.MATCH_FINISHED) -> Delivery:
    webhook_create(owner=owner, url=url)
    (delivery,) = notify(event=event, owner=owner, payload={"match": {"id": 7}, "place": 1})
    return delivery


def _make_due(delivery: Delivery) -> None:
    """What the retry's countdown does: the next attempt is now due."""
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt=timezone.now())


def test_a_delivery_is_a_signed_json_post_that_the_documented_check_accepts(
    owner: Any, receiver: Receiver, allow_private: Any
) -> None:
    delivery = _delivery(owner, receiver.url)

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.DELIVERED
    assert sent.retry_in is None and sent.delivery.attempts == 1
    assert sent.delivery.last_status_code == 200 and sent.delivery.delivered is not None
    (request,) = receiver.requests
    headers, body = request["headers"], request["body"]
    assert request["path"] == "/hook"
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Grass-Event"] == "match.finished"
    assert headers["X-Grass-Delivery"] == str(delivery.pk)
    assert json.loads(body) == {
        "id": delivery.pk,
        "event": "match.finished",
        "created": delivery.created.isoformat(),
        "data": {"match": {"id": 7}, "place": 1},
    }
    secret = Webhook.objects.get().secret
    verified = documented_verifier()
    assert verified(secret, headers, body)
    # A changed body, another secret, a replayed (old) timestamp: all refused.
    assert not verified(secret, headers, body.replace(b'"place":1', b'"place":2'))
    assert not verified("not-the-secret", headers, body)
    old = int(headers["X-Grass-Timestamp"]) - 3600
    from ladder.notifications.signing import sign

    replay = {**headers, "X-Grass-Timestamp": str(old)}
    replay["X-Grass-Signature"] = sign(secret=secret, timestamp=old, body=body)
    assert not verified(secret, replay, body)


def test_a_500_is_retried_with_backoff_and_the_second_attempt_delivers(
    owner: Any, receiver: Receiver, allow_private: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver.answers = [(500, {})]
    delivery = _delivery(owner, receiver.url)
    countdowns: list[float] = []

    def retry(countdown: float, **_: Any) -> Retry:
        countdowns.append(countdown)
        raise Retry()

    monkeypatch.setattr(deliver, "retry", retry)

    first = deliver.apply(args=[delivery.pk])

    assert first.state == "RETRY"
    assert len(countdowns) == 1 and 25 < countdowns[0] <= 30
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING and delivery.attempts == 1
    assert delivery.last_status_code == 500 and delivery.last_error.startswith("HTTP 500")
    assert delivery.next_attempt is not None
    # At least 25 s ahead when set; a generous margin for a loaded machine since.
    assert delivery.next_attempt - timezone.now() > timedelta(seconds=15)

    # Too early (a duplicate message, say): nothing is sent.
    deliver.apply(args=[delivery.pk])
    assert len(receiver.requests) == 1 and len(countdowns) == 1

    _make_due(delivery)
    second = deliver.apply(args=[delivery.pk])

    assert second.state == "SUCCESS" and len(countdowns) == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempts == 2
    assert delivery.last_status_code == 200 and delivery.last_error == ""
    assert len(receiver.requests) == 2
    first_body, second_body = (r["body"] for r in receiver.requests)
    assert first_body == second_body  # every attempt sends the same body (same delivery id)

    # Delivered: never sent again, however often the task runs.
    _make_due(delivery)
    deliver.apply(args=[delivery.pk])
    assert len(receiver.requests) == 2


def test_after_six_failed_attempts_the_delivery_fails_for_good(
    owner: Any, receiver: Receiver, allow_private: Any
) -> None:
    receiver.answers = [(503, {})] * 6
    delivery = _delivery(owner, receiver.url)
    waits = []
    for _ in range(6):
        sent = delivery_send(delivery_id=delivery.pk)
        waits.append(None if sent.retry_in is None else round(sent.retry_in, -1))
        if sent.retry_in is not None:
            _make_due(delivery)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and delivery.attempts == 6
    assert waits == [30, 120, 600, 3600, 21600, None]
    assert delivery.next_attempt is None and delivery.last_status_code == 503
    delivery_send(delivery_id=delivery.pk)
    assert len(receiver.requests) == 6


def test_redirects_are_not_followed(owner: Any, allow_private: Any) -> None:
    first, elsewhere = Receiver(), Receiver()
    try:
        first.answers = [(302, {"Location": elsewhere.url})]
        delivery = _delivery(owner, first.url)
        sent = delivery_send(delivery_id=delivery.pk)
        assert sent.delivery is not None and sent.delivery.status == Delivery.Status.PENDING
        assert sent.delivery.last_status_code == 302
        assert "not followed" in sent.delivery.last_error
        assert len(first.requests) == 1 and elsewhere.requests == []
    finally:
        first.close()
        elsewhere.close()


def test_a_receiver_that_does_not_answer_in_time_is_retried(
    owner: Any, receiver: Receiver, allow_private: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "TIMEOUT_SECONDS", 0.3)
    receiver.delay = 1.0
    delivery = _delivery(owner, receiver.url)
    sent = delivery_send(delivery_id=delivery.pk)
    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.PENDING
    assert "timed out" in sent.delivery.last_error and sent.retry_in is not None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/hook",
        "http://10.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:{port}/hook",
        "http://localhost:{port}/hook",
    ],
)
def test_private_and_loopback_urls_are_refused_at_creation(
    owner: Any, receiver: Receiver, settings: Any, url: str
) -> None:
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(ValidationError) as refused:
        webhook_create(owner=owner, url=url.format(port=receiver.port))
    assert "non-public address" in str(refused.value.message_dict["url"])
    assert not Webhook.objects.exists()


def test_a_url_allowed_then_forbidden_is_refused_at_delivery_without_a_request(
    owner: Any, receiver: Receiver, allow_private: Any
) -> None:
    delivery = _delivery(owner, receiver.url)
    allow_private.GRASS_WEBHOOK_ALLOW_PRIVATE = False

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.FAILED
    assert sent.retry_in is None and sent.delivery.last_status_code is None
    assert "127.0.0.1" in sent.delivery.last_error
    assert "non-public address" in sent.delivery.last_error
    assert receiver.requests == []


def test_a_name_that_rebinds_to_loopback_after_the_check_is_refused_at_delivery(
    owner: Any, receiver: Receiver, settings: Any, fake_dns: dict[str, list[str]]
) -> None:
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    fake_dns["rebind.example"] = ["93.184.216.34"]
    delivery = _delivery(owner, f"http://rebind.example:{receiver.port}/hook")
    fake_dns["rebind.example"] = ["127.0.0.1"]

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.FAILED
    assert receiver.requests == []


def test_a_host_that_does_not_resolve_for_a_while_is_tried_again(
    owner: Any, receiver: Receiver, settings: Any, fake_dns: dict[str, list[str]]
) -> None:
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    settings.GRASS_WEBHOOK_ALLOWED_HOSTS = [f"flaky.example:{receiver.port}"]
    fake_dns["flaky.example"] = ["127.0.0.1"]
    delivery = _delivery(owner, f"http://flaky.example:{receiver.port}/hook")
    fake_dns["flaky.example"] = []  # the resolver is down

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.PENDING
    assert sent.retry_in is not None and 25 < sent.retry_in <= 30  # the usual backoff
    assert sent.delivery.attempts == 1 and sent.delivery.last_status_code is None
    assert sent.delivery.last_error.startswith("Not sent: The host flaky.example cannot be")
    assert "Temporary failure in name resolution" in sent.delivery.last_error
    assert receiver.requests == []

    fake_dns["flaky.example"] = ["127.0.0.1"]  # back
    _make_due(delivery)
    again = delivery_send(delivery_id=delivery.pk)

    assert again.delivery is not None and again.delivery.status == Delivery.Status.DELIVERED
    assert again.delivery.attempts == 2 and len(receiver.requests) == 1


def test_a_host_that_resolves_to_a_private_address_at_delivery_fails_at_once(
    owner: Any, receiver: Receiver, settings: Any, fake_dns: dict[str, list[str]]
) -> None:
    # Unlike a DNS failure: an answer, and a refused one, which another try will not change.
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    fake_dns["moved.example"] = ["93.184.216.34"]
    delivery = _delivery(owner, f"http://moved.example:{receiver.port}/hook")
    fake_dns["moved.example"] = ["10.0.0.7"]

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.FAILED
    assert sent.retry_in is None and sent.delivery.attempts == 1
    assert "non-public address" in sent.delivery.last_error
    assert receiver.requests == []


def test_the_request_goes_to_the_checked_address_with_the_name_as_host(
    owner: Any, receiver: Receiver, settings: Any, fake_dns: dict[str, list[str]]
) -> None:
    # The operator allows one internal name and port; it resolves to the test's server.
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    settings.GRASS_WEBHOOK_ALLOWED_HOSTS = [f"hooks.example:{receiver.port}"]
    fake_dns["hooks.example"] = ["127.0.0.1"]
    delivery = _delivery(owner, f"http://hooks.example:{receiver.port}/in?x=1")

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.DELIVERED
    (request,) = receiver.requests
    assert request["path"] == "/in?x=1"
    assert request["headers"]["Host"] == f"hooks.example:{receiver.port}"
    # Another port of the same name is not allowed.
    with pytest.raises(ValidationError):
        webhook_create(owner=owner, url="http://hooks.example:6379/")


def test_a_webhook_turned_off_gets_nothing(
    owner: Any, receiver: Receiver, allow_private: Any
) -> None:
    delivery = _delivery(owner, receiver.url)
    Webhook.objects.update(active=False)
    sent = delivery_send(delivery_id=delivery.pk)
    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.FAILED
    assert receiver.requests == []
    assert notify(event=Event.MATCH_FINISHED, owner=owner, payload={}) == []


def test_webhooks_get_only_the_events_they_chose(
    owner: Any, stranger: Any, allow_private: Any, receiver: Receiver
) -> None:
    webhook_create(owner=owner, url=receiver.url, events=["bot.crashed"])
    webhook_create(owner=stranger, url=receiver.url)
    assert notify(event=Event.MATCH_FINISHED, owner=owner, payload={}) == []
    (crashed,) = notify(event=Event.BOT_CRASHED, owner=owner, payload={"reason": "x"})
    assert crashed.webhook is not None and crashed.webhook.owner_id == owner.pk
    with pytest.raises(ValidationError):
        webhook_create(owner=owner, url=receiver.url, events=["match.exploded"])


def test_opted_in_events_are_emailed(owner: Any, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    services.notification_settings_update(
        user=owner, email="ann@example.org", email_events=["match.finished"]
    )
    assert notify(event=Event.BOT_CRASHED, owner=owner, payload={}) == []
    (delivery,) = notify(event=Event.MATCH_FINISHED, owner=owner, payload={"place": 2})
    assert delivery.channel == Delivery.Channel.EMAIL

    sent = delivery_send(delivery_id=delivery.pk)

    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.DELIVERED
    (email,) = mail.outbox
    assert email.to == ["ann@example.org"] and "match.finished" in email.subject
    assert '"place": 2' in email.body


class BrokenBackend(BaseEmailBackend):
    def send_messages(self, messages: Any) -> int:
        raise ConnectionRefusedError("the SMTP server is down")


def test_an_email_that_cannot_be_sent_is_retried(owner: Any, settings: Any) -> None:
    settings.EMAIL_BACKEND = f"{__name__}.BrokenBackend"
    owner.email = "ann@example.org"
    owner.save()
    NotificationSettings.objects.create(user=owner, email_events=["bot.crashed"])
    (delivery,) = notify(event=Event.BOT_CRASHED, owner=owner, payload={})
    sent = delivery_send(delivery_id=delivery.pk)
    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.PENDING
    assert "SMTP server is down" in sent.delivery.last_error and sent.retry_in is not None


def test_a_lost_task_message_is_sent_again_by_the_sweep(
    owner: Any,
    allow_private: Any,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    lost = _delivery(owner, receiver.url)
    Delivery.objects.filter(pk=lost.pk).update(created=timezone.now() - timedelta(hours=1))
    notify(event=Event.MATCH_FINISHED, owner=owner, payload={})  # new: its message is on its way
    retried = notify(event=Event.BOT_CRASHED, owner=owner, payload={})[0]
    Delivery.objects.filter(pk=retried.pk).update(
        attempts=2, next_attempt=timezone.now() - timedelta(hours=1)
    )
    queued: list[int] = []
    monkeypatch.setattr(deliver, "delay", queued.append)

    with django_capture_on_commit_callbacks(execute=True):
        assert sorted(services.deliveries_requeue_overdue()) == [lost.pk, retried.pk]

    assert sorted(queued) == [lost.pk, retried.pk]


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[Receiver, Any]]:
    """A Receiver speaking HTTPS with a certificate for `hooks.example` only (self-signed by
    openssl), and a TLS context that trusts it."""
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=hooks.example"),
            *("-addext", "subjectAltName=DNS:hooks.example"),
        ],
        check=True,
        capture_output=True,
    )
    server = Receiver()
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    server.server.socket = served.wrap_socket(server.server.socket, server_side=True)
    trusting = ssl.create_default_context(cafile=str(cert))
    yield server, trusting
    server.close()


def test_https_goes_to_the_pinned_address_and_checks_the_certificate_for_the_name(
    owner: Any,
    settings: Any,
    fake_dns: dict[str, list[str]],
    tls_receiver: tuple[Receiver, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ssl

    receiver, trusting = tls_receiver
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: trusting)
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = False
    settings.GRASS_WEBHOOK_ALLOWED_HOSTS = ["hooks.example", "other.example"]
    fake_dns["hooks.example"] = ["127.0.0.1"]
    fake_dns["other.example"] = ["127.0.0.1"]

    good = _delivery(owner, f"https://hooks.example:{receiver.port}/tls")
    sent = delivery_send(delivery_id=good.pk)
    assert sent.delivery is not None, sent
    assert sent.delivery.status == Delivery.Status.DELIVERED, sent.delivery.last_error
    assert [r["path"] for r in receiver.requests] == ["/tls"]

    # Same address, another name: the certificate does not match, nothing is sent.
    Webhook.objects.all().delete()
    wrong = _delivery(owner, f"https://other.example:{receiver.port}/tls")
    sent = delivery_send(delivery_id=wrong.pk)
    assert sent.delivery is not None and sent.delivery.status == Delivery.Status.PENDING
    assert "certificate" in sent.delivery.last_error.lower()
    assert len(receiver.requests) == 1
