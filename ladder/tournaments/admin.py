"""Organisers can create and edit tournaments in the Django admin too; entries and rounds are
shown inline. The admin's create form skips the service's checks, so it validates in clean()."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from ladder.tournaments.models import Entry, Round, Tournament
from ladder.tournaments.services import (
    VALIDATED_FIELDS,
    TournamentError,
    tournament_schedule_clock,
    tournament_validate,
)

LOCKED_WHEN_OPEN = [
    "ruleset",
    "variants",
    "limits",
    "seats",
    "format",
    "swiss_rounds",
    "meetings",
    "duplicate",
    "decision_ms",
    "bank_ms",
    "registration_opens",
    "eligibility",
    "top_n",
    "rated",
    "seed",
    "organiser",
]
LOCKED_WHEN_CLOSED = ["registration_closes", "starts_at", "invited"]
CLOCKED_STATUSES = (
    # Statuses with a step still ahead on the beat clock; later ones have had theirs turned
    # off, and an admin save must not turn them on again.
    Tournament.Status.SCHEDULED,
    Tournament.Status.REGISTRATION,
    Tournament.Status.CLOSED,
)


class TournamentForm(forms.ModelForm):
    class Meta:
        model = Tournament
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # Untyped form data: a field that failed its own validation is missing, hence None
        # (the TypeError below).
        # A field locked once the event is under way (read-only, so not in the form) keeps
        # the tournament's value.
        fields: dict[str, Any] = {
            name: data.get(name) if name in self.fields else getattr(self.instance, name)
            for name in VALIDATED_FIELDS
        }
        try:
            tournament_validate(**fields)
        except (TournamentError, TypeError) as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    raw_id_fields = ["bot", "version"]


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    form = TournamentForm
    list_display = ["name", "format", "seats", "status", "starts_at", "organiser"]
    list_filter = ["status", "format", "ruleset"]
    search_fields = ["name"]
    raw_id_fields = ["organiser"]
    filter_horizontal = ["invited"]
    readonly_fields = ["status", "status_reason", "schedule", "started", "finished"]
    inlines = [EntryInline]

    def get_readonly_fields(self, request: Any, obj: Tournament | None = None) -> list[str]:
        """Once registration opens, the rules of the event are fixed (entrants signed up for
        them); once it closes, so are the times and the invitations. Name and description
        stay editable."""
        fields = list(self.readonly_fields)
        if obj is None or obj.status == Tournament.Status.SCHEDULED:
            return fields
        fields += LOCKED_WHEN_OPEN
        if obj.status != Tournament.Status.REGISTRATION:
            fields += LOCKED_WHEN_CLOSED
        return fields

    def save_model(self, request: Any, obj: Tournament, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if obj.status in CLOCKED_STATUSES:
            tournament_schedule_clock(obj)  # the times may have changed


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["tournament", "number", "status", "started", "finished"]
