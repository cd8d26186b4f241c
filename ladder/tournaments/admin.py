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


class TournamentForm(forms.ModelForm):
    class Meta:
        model = Tournament
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # Untyped form data: a field that failed its own validation is missing, hence None
        # (the TypeError below).
        fields: dict[str, Any] = {name: data.get(name) for name in VALIDATED_FIELDS}
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

    def save_model(self, request: Any, obj: Tournament, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        tournament_schedule_clock(obj)  # the times may have changed


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["tournament", "number", "status", "started", "finished"]
