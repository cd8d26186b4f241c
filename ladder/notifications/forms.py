"""HTML forms of notifications: a new webhook, the email settings."""

from __future__ import annotations

from django import forms

from ladder.notifications.events import SUBSCRIBABLE


def _event_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in SUBSCRIBABLE]


class WebhookForm(forms.Form):
    url = forms.URLField(
        max_length=500,
        label="URL",
        assume_scheme="https",
        help_text="An https:// (or http://) address on the public internet; it receives a "
        "signed JSON POST per event.",
    )
    events = forms.MultipleChoiceField(
        choices=_event_choices,
        initial=list(SUBSCRIBABLE),
        widget=forms.CheckboxSelectMultiple,
        label="Events",
    )


class EmailForm(forms.Form):
    email = forms.EmailField(required=False, label="Email address")
    email_events = forms.MultipleChoiceField(
        choices=_event_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Also send these events by email",
        help_text="None ticked: no email.",
    )
