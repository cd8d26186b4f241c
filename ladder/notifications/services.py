"""Writing notifications: webhooks and email settings, recording an event for its recipients,
and sending one delivery (the `deliver` task's work).

Sending follows the match runner's pattern: a delivery is claimed with a conditional update on
its attempt count, so two copies of one task message (acks_late redelivery, the sweep) never
both send the same attempt, and a delivered or failed delivery is never sent again. No
transaction or lock is held while the receiver is called.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from ladder.notifications import transport
from ladder.notifications.backoff import retry_delay
from ladder.notifications.events import SUBSCRIBABLE, Event
from ladder.notifications.guard import Target, UnresolvedHost, UnsafeUrl, resolve_target
from ladder.notifications.models import Delivery, NotificationSettings, Webhook
from ladder.notifications.payloads import ping_payload, site_url
from ladder.notifications.signing import sign
from ladder.task_sending import send_on_commit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

MAX_WEBHOOKS_PER_OWNER = 10
"""Every event fans out to each webhook: a bound keeps one account from multiplying traffic."""
TIMEOUT_SECONDS = 5.0
ERROR_CHARS = 500
LEASE = timedelta(minutes=5)
"""A claimed attempt is due again this long after the claim if its worker died mid-send."""
DUE_SLACK = timedelta(seconds=10)
"""Clocks of workers and the database differ a little: a retry this early still counts as due."""
USER_AGENT = "grass-ladder-webhooks/1"


# --- webhooks and settings ------------------------------------------------------------------


def _target(url: str) -> Target:
    """The checked target of `url` under the operator's settings (read now, not at import)."""
    return resolve_target(
        url,
        allow_private=settings.GRASS_WEBHOOK_ALLOW_PRIVATE,
        allowed_hosts=settings.GRASS_WEBHOOK_ALLOWED_HOSTS,
    )


def _clean_events(events: list[str] | None) -> list[str]:
    if events is None:
        return list(SUBSCRIBABLE)
    unknown = sorted(set(events) - set(SUBSCRIBABLE))
    if unknown:
        raise ValidationError(
            {"events": f"Unknown events: {', '.join(unknown)}; known: {', '.join(SUBSCRIBABLE)}."}
        )
    # In the canonical order, once each.
    return [event for event in SUBSCRIBABLE if event in events]


class TooManyWebhooks(ValidationError):
    """The owner has MAX_WEBHOOKS_PER_OWNER webhooks already (the API answers 409)."""

    def __init__(self) -> None:
        super().__init__(f"You have {MAX_WEBHOOKS_PER_OWNER} webhooks already; delete one first.")


def webhook_create(*, owner: User, url: str, events: list[str] | None = None) -> Webhook:
    """A new active webhook of `owner` with a fresh secret; `events` defaults to all.

    The URL is checked now (ValidationError on `url` saying why) and again before every
    delivery, since what a name resolves to can change. A host that does not resolve now is
    taken: DNS, not the request, decides that, and may answer by the first delivery (which
    is tried again, with the backoff, while it does not). Raises TooManyWebhooks when the
    owner has MAX_WEBHOOKS_PER_OWNER already.
    """
    try:
        _target(url)
    except UnresolvedHost:
        pass
    except UnsafeUrl as exc:
        raise ValidationError({"url": str(exc)}) from None
    cleaned = _clean_events(events)
    with transaction.atomic():
        # Locking the owner's row serialises their creates, so the bound holds under a race.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).get()
        if Webhook.objects.filter(owner=owner).count() >= MAX_WEBHOOKS_PER_OWNER:
            raise TooManyWebhooks()
        return Webhook.objects.create(owner=owner, url=url, events=cleaned)


def webhook_delete(*, webhook: Webhook) -> None:
    """Delete the webhook and its deliveries (a pending one is then simply not sent)."""
    webhook.delete()


def notification_settings_update(
    *, user: User, email: str, email_events: list[str]
) -> NotificationSettings:
    """Set the user's email address and the events also sent there (none: no email)."""
    cleaned = _clean_events(email_events)
    if cleaned and not email:
        raise ValidationError({"email": "Give an address to receive email."})
    with transaction.atomic():
        user.email = email
        user.full_clean(exclude=["password"])
        user.save(update_fields=["email"])
        prefs, _ = NotificationSettings.objects.update_or_create(
            user=user, defaults={"email_events": cleaned}
        )
    return prefs


# --- recording events -----------------------------------------------------------------------


def notify(*, event: Event, owner: User, payload: dict[str, Any]) -> list[Delivery]:
    """Record `event` for `owner`: a delivery per active webhook of theirs that wants it, and
    one by email if they chose it. Each is sent by the `deliver` task once this commits."""
    rows = [
        Delivery(owner=owner, webhook=hook, event=event, payload=payload)
        for hook in Webhook.objects.filter(owner=owner, active=True).order_by("id")
        if event in hook.events
    ]
    prefs = NotificationSettings.objects.filter(user=owner).first()
    if prefs is not None and event in prefs.email_events and owner.email:
        rows.append(
            Delivery(owner=owner, channel=Delivery.Channel.EMAIL, event=event, payload=payload)
        )
    with transaction.atomic():
        created = Delivery.objects.bulk_create(rows)
        _enqueue_on_commit([row.pk for row in created])
    return created


def webhook_ping(*, webhook: Webhook) -> Delivery:
    """A `ping` delivery to `webhook` whatever events it chose, to check the receiver.

    One at a time: while a ping is pending, asking again returns it, so the button cannot be
    used to make the ladder hammer an address.
    """
    with transaction.atomic():
        Webhook.objects.select_for_update().filter(pk=webhook.pk).get()
        waiting = Delivery.objects.filter(
            webhook=webhook, event=Event.PING, status=Delivery.Status.PENDING
        ).first()
        if waiting is not None:
            return waiting
        delivery = Delivery.objects.create(
            owner_id=webhook.owner_id, webhook=webhook, event=Event.PING, payload=ping_payload()
        )
        _enqueue_on_commit([delivery.pk])
    return delivery


def _enqueue_on_commit(delivery_ids: list[int]) -> None:
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.notifications.tasks import deliver

    for delivery_id in delivery_ids:
        # With the broker down, the delivery stays pending and stored (not a 500).
        send_on_commit(deliver, delivery_id, recovery="beat's sweep sends it after SWEEP_GRACE")


# --- sending --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """How one attempt went."""

    ok: bool
    status_code: int | None = None
    error: str = ""
    final: bool = False
    """No point trying again (the URL is refused, the webhook is off): failed at once."""


def delivery_body(delivery: Delivery) -> bytes:
    """The JSON a receiver gets: the same bytes on every attempt (compact, keys sorted)."""
    envelope = {
        "id": delivery.pk,
        "event": delivery.event,
        "created": delivery.created.isoformat(),
        "data": delivery.payload,
    }
    return json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode()


def _send_webhook(delivery: Delivery) -> Attempt:
    webhook = delivery.webhook
    assert webhook is not None
    if not webhook.active:
        return Attempt(ok=False, error="The webhook is turned off.", final=True)
    try:
        # Checked again now, and the request goes to the address checked here (guard.py).
        target = _target(webhook.url)
    except UnresolvedHost as exc:  # DNS may answer next time: tried again with the backoff.
        return Attempt(ok=False, error=f"Not sent: {exc}")
    except UnsafeUrl as exc:  # A non-public address stays refused.
        return Attempt(ok=False, error=f"Not sent: {exc}", final=True)
    body = delivery_body(delivery)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Grass-Event": delivery.event,
        "X-Grass-Delivery": str(delivery.pk),
        "X-Grass-Timestamp": str(timestamp),
        "X-Grass-Signature": sign(secret=webhook.secret, timestamp=timestamp, body=body),
    }
    try:
        answer = transport.post(target, body, headers, timeout=TIMEOUT_SECONDS)
    except Exception as exc:  # refused, timed out, TLS, not HTTP: all worth another try
        return Attempt(ok=False, error=f"{type(exc).__name__}: {exc}")
    if 200 <= answer.status < 300:
        return Attempt(ok=True, status_code=answer.status)
    if 300 <= answer.status < 400:
        error = f"HTTP {answer.status}: redirect to {answer.location or '?'} not followed"
    else:
        error = f"HTTP {answer.status}: {answer.excerpt}".strip()
    return Attempt(ok=False, status_code=answer.status, error=error)


def _send_email(delivery: Delivery) -> Attempt:
    address = delivery.owner.email
    if not address:
        return Attempt(ok=False, error="The account has no email address.", final=True)
    subject = f"[Grass ladder] {delivery.event}"
    text = (
        f"{delivery.event}\n\n{json.dumps(delivery.payload, indent=2, sort_keys=True)}\n\n"
        f"Choose what is sent here: {site_url('notifications-page')}\n"
    )
    try:
        EmailMessage(subject, text, to=[address]).send(fail_silently=False)
    except Exception as exc:
        return Attempt(ok=False, error=f"{type(exc).__name__}: {exc}")
    return Attempt(ok=True)


@dataclass(frozen=True)
class Sent:
    """What `delivery_send` did."""

    delivery: Delivery | None
    """The delivery as it is now; None if it was deleted with its webhook."""
    retry_in: float | None = None
    """Seconds until the next attempt, when this call made an attempt that failed and will be
    tried again: the caller schedules it. None otherwise, so only the run that made an attempt
    schedules the next one and a duplicate task message dies out instead of looping."""


def delivery_send(*, delivery_id: int) -> Sent:
    """Make the delivery's next attempt if it is pending and due.

    A 2xx answer (for email: the backend took it) delivers it. Anything else is recorded (status
    code, error) and the next attempt is set `retry_delay(attempts)` ahead, until the last
    attempt fails it for good; a URL refused by the guard (a non-public address) or a webhook
    turned off fails it at once, without a request. A host that does not resolve is a failed
    attempt like any other (DNS may answer next time), also without a request.
    """
    delivery = Delivery.objects.select_related("webhook", "owner").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.PENDING:
        return Sent(delivery)
    now = timezone.now()
    if delivery.next_attempt is not None and delivery.next_attempt > now + DUE_SLACK:
        return Sent(delivery)
    attempt = delivery.attempts + 1
    claimed = Delivery.objects.filter(
        pk=delivery.pk, status=Delivery.Status.PENDING, attempts=delivery.attempts
    ).update(attempts=attempt, next_attempt=now + LEASE)
    if claimed != 1:
        logger.info("delivery %s: attempt %s taken by another worker", delivery.pk, attempt)
        return Sent(Delivery.objects.filter(pk=delivery.pk).first())
    if delivery.channel == Delivery.Channel.EMAIL:
        outcome = _send_email(delivery)
    else:
        outcome = _send_webhook(delivery)
    recorded = _record(delivery, attempt, outcome)
    retry_in = None
    if (
        recorded is not None
        and recorded.status == Delivery.Status.PENDING
        and recorded.attempts == attempt
    ):
        assert recorded.next_attempt is not None  # pending rows always have one after a claim
        retry_in = max((recorded.next_attempt - timezone.now()).total_seconds(), 0.0)
    return Sent(recorded, retry_in)


def _record(delivery: Delivery, attempt: int, outcome: Attempt) -> Delivery | None:
    now = timezone.now()
    fields: dict[str, Any] = {
        "last_status_code": outcome.status_code,
        "last_error": outcome.error[:ERROR_CHARS],
    }
    if outcome.ok:
        fields.update(status=Delivery.Status.DELIVERED, delivered=now, next_attempt=None)
    else:
        delay = None if outcome.final else retry_delay(attempt)
        if delay is None:
            fields.update(status=Delivery.Status.FAILED, next_attempt=None)
            logger.info("delivery %s failed for good: %s", delivery.pk, outcome.error)
        else:
            fields.update(next_attempt=now + timedelta(seconds=delay))
    # Conditional on the claim: should the sweep have re-sent it meanwhile, that run records.
    Delivery.objects.filter(
        pk=delivery.pk, status=Delivery.Status.PENDING, attempts=attempt
    ).update(**fields)
    # None if the webhook (and so the delivery) was deleted while the request was under way.
    return Delivery.objects.filter(pk=delivery.pk).first()


SWEEP_GRACE = timedelta(minutes=10)


def deliveries_requeue_overdue() -> list[int]:
    """Send again the pending deliveries overdue by SWEEP_GRACE: their task message was lost
    (a broker restart) or their worker died. The claim in `delivery_send` keeps a duplicate
    message from sending an attempt twice. Returns their ids."""
    cutoff = timezone.now() - SWEEP_GRACE
    overdue = list(
        Delivery.objects.filter(
            status=Delivery.Status.PENDING, next_attempt__lt=cutoff
        ).values_list("id", flat=True)[:1000]
    )
    # A delivery never sent at all has no next_attempt: overdue once it is old.
    overdue += list(
        Delivery.objects.filter(
            status=Delivery.Status.PENDING, next_attempt__isnull=True, created__lt=cutoff
        ).values_list("id", flat=True)[:1000]
    )
    with transaction.atomic():
        _enqueue_on_commit(overdue)
    return overdue
