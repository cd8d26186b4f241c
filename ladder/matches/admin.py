from django.contrib import admin

from ladder.matches.models import Match, MatchSeat


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
