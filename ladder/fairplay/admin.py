"""Flagged pairs for staff: the evidence (shared matches, flows both ways, wins against the
ratings' expectation) and the action that voids a pair's shared matches."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.fairplay.models import PairMatch, PairWatch
from ladder.fairplay.services import pair_void

SHOWN = (
    "match",
    "low_seat",
    "high_seat",
    "score",
    "help_low",
    "help_high",
    "spared_low",
    "spared_high",
    "first",
    "expected_first",
)


class PairMatchInline(admin.TabularInline):
    model = PairMatch
    fields = SHOWN
    readonly_fields = SHOWN
    ordering = ["-score"]
    extra = 0
    can_delete = False
    max_num = 0
    show_change_link = False


class FlaggedFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(
        self,
        request: HttpRequest,
        model_admin: admin.ModelAdmin,
    ) -> list[tuple[str, str]]:
        return [
            ("flagged", "flagged, not voided"),
            ("voided", "voided"),
            ("watched", "not flagged"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[PairWatch]) -> QuerySet[PairWatch]:
        if self.value() == "flagged":
            return queryset.filter(flagged__isnull=False, voided__isnull=True)
        if self.value() == "voided":
            return queryset.filter(voided__isnull=False)
        if self.value() == "watched":
            return queryset.filter(flagged__isnull=True)
        return queryset


@admin.register(PairWatch)
class PairWatchAdmin(admin.ModelAdmin):
    list_display = [
        "low",
        "high",
        "matches",
        "hits",
        "firsts",
        "expected_firsts",
        "evidence",
        "flagged_at",
        "flagged",
        "voided",
    ]
    list_filter = [FlaggedFilter]
    ordering = ["-evidence"]
    search_fields = ["low__name", "high__name", "low__owner__username", "high__owner__username"]
    readonly_fields = [f.name for f in PairWatch._meta.get_fields() if f.concrete]
    inlines = [PairMatchInline]
    actions = ["void"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Void the pair's shared rated matches and disable both bots")
    def void(self, request: HttpRequest, queryset: QuerySet[PairWatch]) -> None:
        voided = 0
        for watch_id in queryset.values_list("pk", flat=True):
            voided += len(pair_void(watch_id=watch_id))
        self.message_user(
            request,
            f"Voided {voided} shared rated matches and disabled the bots; the ratings are "
            "being rebuilt by a task.",
            messages.SUCCESS,
        )
