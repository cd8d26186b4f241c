"""HTML pages of notifications: `/account/notifications/` lists the user's webhooks with their
latest deliveries, adds one (showing its secret this once), deletes or tests one, and sets the
email choices. Thin: selectors read, services write."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ladder.accounts.selectors import signed_in_user
from ladder.notifications.forms import EmailForm, WebhookForm
from ladder.notifications.models import Webhook
from ladder.notifications.selectors import (
    RECENT_DELIVERIES,
    email_delivery_list,
    notification_settings_get,
    webhook_list_with_recent,
)
from ladder.notifications.services import (
    notification_settings_update,
    webhook_create,
    webhook_delete,
    webhook_ping,
)


def _form_errors(form: Form, exc: ValidationError) -> None:
    for field, errors in exc.message_dict.items():
        form.add_error(field if field in form.fields else None, errors)


def _page(
    request: HttpRequest,
    *,
    webhook_form: WebhookForm | None = None,
    email_form: EmailForm | None = None,
    created: Webhook | None = None,
    status: int = 200,
) -> HttpResponse:
    user = signed_in_user(request)
    prefs = notification_settings_get(user=user)
    context = {
        "webhooks": webhook_list_with_recent(owner=user),
        "emails": email_delivery_list(owner=user)[:RECENT_DELIVERIES],
        "webhook_form": webhook_form or WebhookForm(),
        "email_form": email_form
        or EmailForm(initial={"email": user.email, "email_events": prefs.email_events}),
        "created": created,
    }
    return render(request, "notifications/notifications.html", context, status=status)


@login_required
def notifications_page(request: HttpRequest) -> HttpResponse:
    """`/account/notifications/`: GET shows; POST adds a webhook and shows its secret once
    (in this answer only: it is never put in a redirect, a message or the session)."""
    if request.method != "POST":
        return _page(request)
    form = WebhookForm(request.POST)
    if form.is_valid():
        try:
            hook = webhook_create(owner=signed_in_user(request), **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return _page(request, created=hook)
    return _page(request, webhook_form=form, status=400)


@login_required
@require_POST
def notifications_email(request: HttpRequest) -> HttpResponse:
    """`/account/notifications/email/`: the email address and the events sent there."""
    form = EmailForm(request.POST)
    if form.is_valid():
        try:
            notification_settings_update(user=signed_in_user(request), **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, "Email settings saved.")
            return redirect("notifications-page")
    return _page(request, email_form=form, status=400)


@login_required
@require_POST
def webhook_delete_page(request: HttpRequest, webhook_id: int) -> HttpResponse:
    hook = get_object_or_404(Webhook, pk=webhook_id, owner=request.user)
    webhook_delete(webhook=hook)
    messages.success(request, f"Webhook {hook.url} deleted.")
    return redirect("notifications-page")


@login_required
@require_POST
def webhook_test_page(request: HttpRequest, webhook_id: int) -> HttpResponse:
    hook = get_object_or_404(Webhook, pk=webhook_id, owner=request.user)
    webhook_ping(webhook=hook)
    messages.success(request, f"A ping is on its way to {hook.url}; reload to see how it went.")
    return redirect("notifications-page")
