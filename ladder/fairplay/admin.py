"""Flagged pairs of bots and of seating circles for staff: the evidence (shared matches, which
way it went, wins against the ratings' expectation) and the action that voids a pair's shared
matches, which shows which way it went and asks before it voids anything."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ladder.fairplay.models import CircleMatch, CircleWatch, PairMatch, PairWatch
from ladder.fairplay.selectors import (
    Directions,
    circle_bots,
    circle_directions,
    circle_name,
    hit_made_by,
    pair_directions,
)
from ladder.fairplay.services import circle_void, pair_void

SHOWN = (
    "match",
    "low_seat",
    "high_seat",
    "score",
    "help_low",
    "help_high",
    "spared_low",
    "spared_high",
    "asks_low",
    "asks_high",
    "hit_by",
    "first",
    "expected_first",
)

READ_FIRST = (
    "Read which way it went before voiding: a flag says the two bots' play looks collusive, "
    "the directions say whose play it was. A bot that floods a rival with deal proposals makes "
    "the pair look collusive by itself, and the Void disables both bots and links their owners."
)


def directions_html(directions: Directions) -> SafeString:
    """Both ways of a watch, then its notes in bold (`selectors.Directions`)."""
    ways = format_html_join("", "<li>{}</li>", ((way.line(),) for way in directions.ways))
    notes = format_html_join("", "<li><strong>{}</strong></li>", ((n,) for n in directions.notes()))
    return format_html("<ul>{}{}</ul>", ways, notes)


class SharedInline(admin.TabularInline):
    extra = 0
    can_delete = False
    max_num = 0
    show_change_link = False

    @admin.display(description="hit made by")
    def hit_by(self, row: PairMatch | CircleMatch) -> str:
        if row.pk is None:  # the formset's empty form
            return "-"
        return hit_made_by(row) or "-"


class PairMatchInline(SharedInline):
    model = PairMatch
    fields = SHOWN
    readonly_fields = SHOWN
    ordering = ["-score"]


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
    readonly_fields = [
        "low",
        "high",
        "directions",
        *(
            f.name
            for f in PairWatch._meta.get_fields()
            if f.concrete and f.name not in ("low", "high")
        ),
    ]
    inlines = [PairMatchInline]
    actions = ["void"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="which way it went")
    def directions(self, watch: PairWatch) -> SafeString:
        return directions_html(pair_directions(watch=watch))

    @admin.action(
        description="Void the pair's shared rated matches and disable both bots (asks first)"
    )
    def void(self, request: HttpRequest, queryset: QuerySet[PairWatch]) -> TemplateResponse | None:
        pairs = queryset.select_related("low__owner", "high__owner")
        return void_action(
            self,
            request,
            [
                (
                    watch.pk,
                    _heading(watch, f"{watch.low.display_name} & {watch.high.display_name}"),
                    directions_html(pair_directions(watch=watch)),
                )
                for watch in pairs
            ],
            pair_void,
        )


def _heading(watch: PairWatch | CircleWatch, names: str) -> str:
    return (
        f"{names}: evidence {watch.evidence:,.0f} after {watch.matches} shared matches, "
        f"{watch.hits} hits"
    )


def void_action(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    items: list[tuple[int, str, SafeString]],
    void: Callable[..., list[int]],
) -> TemplateResponse | None:
    """The Void of either watch: first which way each selected watch's evidence went, with a
    button that voids; then, confirmed, `void(watch_id=...)` for each."""
    if request.POST.get("confirm") != "yes":
        return TemplateResponse(
            request,
            "admin/fairplay/void_confirm.html",
            {
                **model_admin.admin_site.each_context(request),
                "title": "Read which way it went before voiding",
                "read_first": READ_FIRST,
                "items": items,
                "opts": model_admin.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )
    voided = sum(len(void(watch_id=pk)) for pk, _, _ in items)
    model_admin.message_user(
        request,
        f"Voided {voided} shared rated matches and disabled the bots; the ratings are "
        "being rebuilt by a task.",
        messages.SUCCESS,
    )
    return None


class CircleMatchInline(SharedInline):
    model = CircleMatch
    fields = ("low_bot", "high_bot", *SHOWN)
    readonly_fields = ("low_bot", "high_bot", *SHOWN)
    ordering = ["-score"]


class CircleFlaggedFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(
        self,
        request: HttpRequest,
        model_admin: admin.ModelAdmin,
    ) -> list[tuple[str, str]]:
        return [("flagged", "flagged"), ("watched", "not flagged")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[CircleWatch]
    ) -> QuerySet[CircleWatch]:
        if self.value() == "flagged":
            return queryset.filter(flagged__isnull=False)
        if self.value() == "watched":
            return queryset.filter(flagged__isnull=True)
        return queryset


@admin.register(CircleWatch)
class CircleWatchAdmin(admin.ModelAdmin):
    """Pairs of seating circles: every rated match any bot of one shared with any bot of the
    other. A flag here with none among the pairs of their bots is many bots each sharing a few
    tables; the pairs of bots that met are listed, each with its own pair watch to act on."""

    list_display = [
        "low_circle",
        "high_circle",
        "matches",
        "hits",
        "firsts",
        "expected_firsts",
        "evidence",
        "flagged_at",
        "flagged",
        "voided",
    ]
    list_filter = [CircleFlaggedFilter]
    ordering = ["-evidence"]
    list_per_page = 50  # two circles' names each: a few queries a row
    readonly_fields = [
        "low_circle",
        "high_circle",
        "directions",
        "bots_met",
        *(f.name for f in CircleWatch._meta.get_fields() if f.concrete),
    ]
    inlines = [CircleMatchInline]
    actions = ["void"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(
        description="Void the circles' shared rated matches and disable the bots that met in "
        "them (asks first)"
    )
    def void(
        self, request: HttpRequest, queryset: QuerySet[CircleWatch]
    ) -> TemplateResponse | None:
        items = [
            (
                watch.pk,
                _heading(watch, f"{self.low_circle(watch)} & {self.high_circle(watch)}"),
                directions_html(circle_directions(watch=watch)),
            )
            for watch in queryset
        ]
        return void_action(self, request, items, circle_void)

    @admin.display(description="low circle")
    def low_circle(self, watch: CircleWatch) -> str:
        return f"{circle_name(watch.low)} ({watch.low})"

    @admin.display(description="high circle")
    def high_circle(self, watch: CircleWatch) -> str:
        return f"{circle_name(watch.high)} ({watch.high})"

    @admin.display(description="which way it went")
    def directions(self, watch: CircleWatch) -> SafeString:
        return directions_html(circle_directions(watch=watch))

    @admin.display(description="pairs of bots that met (shared matches)")
    def bots_met(self, watch: CircleWatch) -> str:
        return ", ".join(
            f"{low} & {high} ({shared})" for low, high, shared in circle_bots(watch_id=watch.pk)
        )
