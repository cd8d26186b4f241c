"""Reading notifications: a user's webhooks and settings, a webhook's deliveries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import QuerySet

from ladder.notifications.models import Delivery, NotificationSettings, Webhook

if TYPE_CHECKING:
    from django.contrib.auth.models import User

RECENT_DELIVERIES = 10


def webhook_list(*, owner: User) -> QuerySet[Webhook]:
    return Webhook.objects.filter(owner=owner).order_by("id")


def webhook_list_with_recent(*, owner: User) -> list[Webhook]:
    """The owner's webhooks, each with `recent`: its latest RECENT_DELIVERIES deliveries."""
    hooks = list(webhook_list(owner=owner))
    for hook in hooks:
        hook.recent = list(delivery_list(webhook=hook)[:RECENT_DELIVERIES])  # type: ignore[attr-defined]
    return hooks


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    """The webhook's deliveries, newest first."""
    return Delivery.objects.filter(webhook=webhook).order_by("-created", "-id")


def email_delivery_list(*, owner: User) -> QuerySet[Delivery]:
    """The owner's email deliveries, newest first."""
    return Delivery.objects.filter(owner=owner, channel=Delivery.Channel.EMAIL).order_by(
        "-created", "-id"
    )


def notification_settings_get(*, user: User) -> NotificationSettings:
    """The user's settings; an unsaved default (no email) if they never chose."""
    return NotificationSettings.objects.filter(user=user).first() or NotificationSettings(user=user)
