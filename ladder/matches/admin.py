from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.matches.models import Match, MatchSeat
from ladder.ratings.rebuild import matches_void


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    fields = ("seat", "bot_version", "place", "total", "forfeited", "decisions", "strikes")
    readonly_fields = fields
    can_delete = False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ["id", "ruleset", "status", "attempts", "created", "finished"]
    list_filter = ["status", "ruleset"]
    # The seed is a secret until the match is over; the admin shows it read-only like the rest.
    readonly_fields = ["seed", "log", "log_sha256", "result", "started", "finished", "attempts"]
    inlines = [MatchSeatInline]
    actions = ["void"]

    @admin.action(description="Void: take out of the ratings (rebuilds the rulesets' ratings)")
    def void(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        # Clearing "rated" by hand changes no rating until `manage.py ratings_recompute --apply`;
        # this action does both at once.
        rebuilt = matches_void(match_ids=list(queryset.values_list("pk", flat=True)))
        summary = "; ".join(
            f"{r.ruleset}: {r.matches} matches rated again, {len(r.differences)} ratings changed"
            for r in rebuilt
        )
        self.message_user(request, f"Voided. {summary}", messages.SUCCESS)
