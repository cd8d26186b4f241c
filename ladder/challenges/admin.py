"""Challenges in the admin: read-only lists (they are written by their services alone)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from ladder.challenges.models import Challenge, ChallengeSeat


class SeatInline(admin.TabularInline):
    model = ChallengeSeat
    extra = 0
    readonly_fields = ("position", "version")
    can_delete = False


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ("id", "requester", "ruleset", "status", "created", "sent", "match")
    list_filter = ("status", "ruleset")
    search_fields = ("requester__username",)
    readonly_fields = (
        "requester",
        "ruleset",
        "seating",
        "max_hands",
        "status",
        "created",
        "sent",
        "match",
        "rematch_of",
    )
    inlines = [SeatInline]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
