from django.contrib import admin, messages
from django.db.models import QuerySet
from django.db.models.functions import Length
from django.http import HttpRequest

from ladder.matches.models import Match, MatchSeat, PendingLog
from ladder.pagination import EstimatedCountPaginator
from ladder.ratings.rebuild import matches_void


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    fields = (
        "seat",
        "bot_version",
        "player",
        "place",
        "total",
        "forfeited",
        "decisions",
        "strikes",
    )
    readonly_fields = fields
    can_delete = False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ["id", "ruleset", "status", "attempts", "host", "pid", "created", "finished"]
    list_filter = ["status", "ruleset"]
    # Which worker played a match, or lost it: searching a host's name lists its matches.
    search_fields = ["host"]
    # The seed is a secret until the match is over; the admin shows it read-only like the rest.
    # `rated` too: a match made rated by hand would skip the seating rules (docs/fairplay.md);
    # the Void action below takes one out of the ratings.
    readonly_fields = [
        "rated",
        "seed",
        "log",
        "log_sha256",
        "result",
        "started",
        "heartbeat",
        "host",
        "pid",
        "finished",
        "attempts",
    ]
    inlines = [MatchSeatInline]
    actions = ["void"]
    # Millions of matches: the list's size is estimated, never counted (twice) per page.
    paginator = EstimatedCountPaginator
    show_full_result_count = False

    @admin.action(description="Void: take out of the ratings (rebuilds the rulesets' ratings)")
    def void(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        # Clearing "rated" by hand changes no rating until `manage.py ratings_rebuild --apply`;
        # this action clears it and has a task rebuild the ratings (minutes on a big ladder:
        # never inside this request).
        rulesets = matches_void(match_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(
            request,
            f"Voided. The ratings of {', '.join(rulesets) or 'no ruleset'} are being rebuilt "
            "by a task; the leaderboard shows them once it is done.",
            messages.SUCCESS,
        )


@admin.register(PendingLog)
class PendingLogAdmin(admin.ModelAdmin):
    """Logs that waited for room in the media storage (a full disk): the sweep writes them and
    deletes the rows, so a long list here means the disk is still full."""

    list_display = ["match", "created", "size", "last_error"]
    readonly_fields = ["match", "created", "size", "last_error"]
    exclude = ["data"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PendingLog]:
        # The sizes, not the bytes: a full disk may leave many megabytes waiting here.
        pending: QuerySet[PendingLog] = super().get_queryset(request)
        return pending.defer("data").annotate(bytes=Length("data"))

    @admin.display(description="bytes")
    def size(self, pending: PendingLog) -> int:
        return int(getattr(pending, "bytes", 0))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
