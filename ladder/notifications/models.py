"""Webhooks an owner registered, the deliveries made to them (and by email), and each user's
email choices.

A Delivery is one event for one recipient over one channel: a webhook, or the owner's email.
It is written when the event happens and sent by the `deliver` task, tried again with backoff
(`backoff.retry_delay`) until it is delivered or has failed for good; its row is the record the
owner reads ("why did my receiver not hear of match 812?").
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from ladder.notifications.events import SUBSCRIBABLE
from ladder.notifications.signing import new_secret


def all_events() -> list[str]:
    return list(SUBSCRIBABLE)


def no_events() -> list[str]:
    return []


class Webhook(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=64, default=new_secret)
    """Signs every request (X-Grass-Signature). Shown to the owner once, when created."""
    events = models.JSONField(default=all_events)
    """The event names sent here (`events.SUBSCRIBABLE`); `ping` always is."""
    active = models.BooleanField(default=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["owner", "id"]

    def __str__(self) -> str:
        return self.url


class Delivery(models.Model):
    class Channel(models.TextChoices):
        WEBHOOK = "webhook", "webhook"
        EMAIL = "email", "email"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        """Not sent yet, or the last attempt failed and another is due at `next_attempt`."""
        DELIVERED = "delivered", "delivered"
        """The receiver answered 2xx (or the mail server took the email)."""
        FAILED = "failed", "failed"
        """Given up: every attempt failed, or the URL may no longer be used; see last_error."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="deliveries"
    )
    channel = models.CharField(max_length=8, choices=Channel.choices, default=Channel.WEBHOOK)
    webhook = models.ForeignKey(
        Webhook, on_delete=models.CASCADE, null=True, blank=True, related_name="deliveries"
    )
    """Set for the webhook channel; email goes to the owner's address at sending time."""
    event = models.CharField(max_length=32)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    next_attempt = models.DateTimeField(null=True, blank=True)
    """When the next attempt is due (pending only): the sweep re-sends deliveries overdue by
    much, whose task message was lost."""
    created = models.DateTimeField(default=timezone.now)
    delivered = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(channel="webhook", webhook__isnull=False)
                | models.Q(channel="email", webhook__isnull=True),
                name="delivery_webhook_iff_channel_webhook",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt"]),
            models.Index(fields=["owner", "-created"]),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook or self.channel} ({self.status})"


class NotificationSettings(models.Model):
    """A user's email choices; no row means no email."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings"
    )
    email_events = models.JSONField(default=no_events, blank=True)
    """Event names (`events.SUBSCRIBABLE`) also sent to the user's email address."""

    class Meta:
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return f"notification settings of {self.user}"
