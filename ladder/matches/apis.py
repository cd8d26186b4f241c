"""REST API of matches: list with filters, detail with seats, log download."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import APIException
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.rules import RULESETS
from ladder.api import IdField, QuerySerializer
from ladder.bots.selectors import bot_errors_visible
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import (
    MatchDetail,
    SeatDebug,
    SeatDetail,
    match_debug_lines,
    match_debug_readable,
    match_detail,
    match_finished,
    match_keys,
    match_log_pending,
    match_worker_visible,
    matches_in_order,
    release,
)
from ladder.matchmaking.waiting import match_place
from ladder.pagination import KeysetPagination

_datetime = serializers.DateTimeField()


class QueueSerializer(serializers.Serializer):
    """Where a match waiting for a worker (or a challenge waiting for a place) stands."""

    position = serializers.IntegerField(min_value=1, help_text="1: the next to start.")
    ahead = serializers.IntegerField(
        min_value=0, help_text="How many are taken before it: position - 1."
    )
    estimate_seconds = serializers.IntegerField(
        min_value=0,
        allow_null=True,
        help_text="About how many seconds until it starts (0: a place is free for it), from "
        "how long its lane's latest games took; null when there is nothing to go by yet.",
    )
    lane = serializers.ChoiceField(
        choices=["background", "person", "challenge", "first"],
        help_text="Its queue: the ladder's background games, a person's game, a challenge, "
        "a new version's first rated game.",
    )


def _seat_output(seat: MatchSeat) -> dict[str, Any]:
    """One seat as MatchListApi's SeatSerializer gives it: a bot's, or a person's (its bot
    fields null, `player` named)."""
    version = seat.bot_version
    return {
        "seat": seat.seat,
        "bot_id": version.bot_id if version else None,
        "bot": version.bot.name if version else None,
        "owner": version.bot.owner.username if version else None,
        "display_name": version.bot.display_name if version else None,
        "version": version.number if version else None,
        "player": seat.player.username if seat.player is not None else None,
        "place": seat.place,
        "total": seat.total,
        "forfeited": seat.forfeited,
    }


class MatchListApi(APIView):
    """`GET /api/matches/?bot=&ruleset=&status=&after=&before=`: newest first, a page at a
    time by cursor (follow `next`): every page costs the same, however deep, and a match
    created meanwhile never shifts the next page. `count` is exact up to 10,000 matches and
    PostgreSQL's estimate past that (`count_exact`); `?page=` still serves the first 200
    pages."""

    class Pagination(KeysetPagination):
        # `key`: the match id, or the bot's seat's match id (`selectors.match_keys`).
        ordering = ("-key",)

    permission_classes = [AllowAny]
    pagination_class = Pagination

    class FilterSerializer(QuerySerializer):
        bot = IdField(required=False, help_text="A bot id: its matches.")
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), required=False)
        status = serializers.ChoiceField(choices=Match.Status.choices, required=False)
        after = serializers.DateTimeField(required=False, help_text="Created at or after.")
        before = serializers.DateTimeField(required=False, help_text="Created before.")

    class OutputSerializer(serializers.Serializer):
        class SeatSerializer(serializers.Serializer):
            seat = serializers.IntegerField()
            bot_id = serializers.IntegerField(source="bot_version.bot_id", allow_null=True)
            bot = serializers.CharField(source="bot_version.bot.name", allow_null=True)
            owner = serializers.CharField(source="bot_version.bot.owner.username", allow_null=True)
            display_name = serializers.CharField(
                source="bot_version.bot.display_name",
                allow_null=True,
                help_text="owner/bot; null for a person's seat",
            )
            version = serializers.IntegerField(source="bot_version.number", allow_null=True)
            player = serializers.CharField(
                source="player.username",
                allow_null=True,
                help_text="The person who played this seat in the browser; null for a bot's.",
            )
            place = serializers.IntegerField(allow_null=True)
            total = serializers.IntegerField(allow_null=True)
            forfeited = serializers.BooleanField()

        id = serializers.IntegerField()
        ruleset = serializers.CharField()
        status = serializers.ChoiceField(choices=Match.Status.choices)
        created = serializers.DateTimeField()
        finished = serializers.DateTimeField(allow_null=True)
        seats = SeatSerializer(many=True)

    @extend_schema(parameters=[FilterSerializer], responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        # Parsed here (an empty value is refused, as the schema says); the selector's FilterSet
        # gets the parsed values: times in UTC (PostgreSQL refuses an offset such as -21:55,
        # which ISO 8601 allows).
        query = self.FilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        keys = match_keys(filters=query.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(keys, request, view=self)
        matches = matches_in_order([row["key"] for row in page])
        response = paginator.get_paginated_response([self.output(match) for match in matches])
        release(matches)
        return response

    @staticmethod
    def output(match: Match) -> dict[str, Any]:
        """What OutputSerializer gives for `match` (the tests hold them equal), built directly:
        the serializers' field machinery was most of a page's CPU (50 matches, 200 seats)."""
        return {
            "id": match.pk,
            "ruleset": match.ruleset,
            "status": match.status,
            "created": _datetime.to_representation(match.created),
            "finished": _datetime.to_representation(match.finished) if match.finished else None,
            "seats": [_seat_output(seat) for seat in match.seats.all()],
        }


class MatchDetailApi(APIView):
    """`GET /api/matches/{id}/`: a match with its seats' results and rating changes."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        class SeatSerializer(serializers.Serializer):
            class RatingChangeSerializer(serializers.Serializer):
                before = serializers.FloatField()
                after = serializers.FloatField()
                delta = serializers.FloatField()

            seat = serializers.IntegerField(source="seat.seat")
            bot_id = serializers.IntegerField(source="seat.bot_version.bot_id", allow_null=True)
            bot = serializers.CharField(source="seat.bot_version.bot.name", allow_null=True)
            owner = serializers.CharField(
                source="seat.bot_version.bot.owner.username", allow_null=True
            )
            display_name = serializers.CharField(
                source="seat.bot_version.bot.display_name",
                allow_null=True,
                help_text="owner/bot; null for a person's seat",
            )
            version_id = serializers.IntegerField(source="seat.bot_version_id", allow_null=True)
            version = serializers.IntegerField(source="seat.bot_version.number", allow_null=True)
            player = serializers.CharField(
                source="seat.player.username",
                allow_null=True,
                help_text="The person who played this seat in the browser; null for a bot's.",
            )
            place = serializers.IntegerField(source="seat.place", allow_null=True)
            total = serializers.IntegerField(source="seat.total", allow_null=True)
            forfeited = serializers.BooleanField(source="seat.forfeited")
            forfeit_reason = serializers.CharField(source="seat.forfeit_reason")
            decisions = serializers.IntegerField(source="seat.decisions")
            think_ms = serializers.FloatField(source="seat.think_ms")
            strikes = serializers.IntegerField(source="seat.strikes")
            faults = serializers.DictField(
                source="seat.faults",
                child=serializers.IntegerField(),
                help_text="Fault counts by kind (timeout, illegal, crashed, ...).",
            )
            fault_details = serializers.DictField(
                source="seat.fault_details",
                child=serializers.CharField(),
                help_text="The first detail of each fault kind (the log has them all).",
            )
            rating_change = RatingChangeSerializer(
                allow_null=True, help_text="Null until the match is rated."
            )
            stderr = serializers.SerializerMethodField(
                help_text="The end of what the bot wrote on stderr in this match (its last "
                "4,000 characters). Only the bot's owner and staff see it (it may quote the "
                "bot's source): null for everyone else."
            )

            @extend_schema_field(serializers.CharField(allow_null=True))
            def get_stderr(self, detail: SeatDetail) -> str | None:
                user = self.context.get("user")
                version = detail.seat.bot_version
                if version is None:
                    return None  # a person's seat
                if user is None or not bot_errors_visible(user=user, bot=version.bot):
                    return None
                return detail.seat.stderr

        id = serializers.IntegerField(source="match.id")
        ruleset = serializers.CharField(source="match.ruleset")
        variants = serializers.DictField(source="match.variants")
        limits = serializers.DictField(
            child=serializers.IntegerField(),
            help_text="The engine limits the game is played under (the ruleset's, with this "
            "match's overrides): the same as its log's header.",
        )
        runtime = serializers.CharField(
            source="match.runtime",
            help_text="The bots' runtime image the match is played on (its log's header says "
            "the same once played): what every bot could use.",
        )
        status = serializers.ChoiceField(source="match.status", choices=Match.Status.choices)
        failure_reason = serializers.CharField(source="match.failure_reason")
        created = serializers.DateTimeField(source="match.created")
        started = serializers.DateTimeField(source="match.started", allow_null=True)
        finished = serializers.DateTimeField(source="match.finished", allow_null=True)
        result = serializers.JSONField(source="match.result", allow_null=True)
        log_sha256 = serializers.CharField(source="match.log_sha256")
        log_pending = serializers.BooleanField(
            help_text="Finished, but the log is not stored yet (the server was out of space): "
            "it will be downloadable once it is; the results above are final."
        )
        seats = SeatSerializer(many=True)
        host = serializers.SerializerMethodField(
            help_text="The host whose worker played the match (or plays it, or lost it): its "
            "last claim. Staff only: null for everyone else."
        )
        pid = serializers.SerializerMethodField(
            help_text="The process on that host that claimed it (staff only)."
        )
        heartbeat = serializers.SerializerMethodField(
            help_text="The last sign of life of the worker playing it, written every few "
            "seconds while it plays (staff only)."
        )

        def _staff(self) -> bool:
            return match_worker_visible(user=self.context.get("user"))

        @extend_schema_field(serializers.CharField(allow_null=True))
        def get_host(self, detail: MatchDetail) -> str | None:
            return detail.match.host if self._staff() else None

        @extend_schema_field(serializers.IntegerField(allow_null=True))
        def get_pid(self, detail: MatchDetail) -> int | None:
            return detail.match.pid if self._staff() else None

        @extend_schema_field(serializers.DateTimeField(allow_null=True))
        def get_heartbeat(self, detail: MatchDetail) -> str | None:
            beat = detail.match.heartbeat
            return (
                serializers.DateTimeField().to_representation(beat)
                if beat and self._staff()
                else None
            )

        queue = serializers.SerializerMethodField(
            help_text="While the match is queued: its place in its queue and about when it "
            "starts; null once a worker has taken it."
        )

        @extend_schema_field(QueueSerializer(allow_null=True))
        def get_queue(self, detail: MatchDetail) -> dict[str, Any] | None:
            place = match_place(detail.match)
            return None if place is None else place.as_dict()

        debug_lines = serializers.SerializerMethodField(
            help_text="Whether the match kept debug lines (what bots wrote on stderr while "
            "they decided) of a seat you may read: GET /api/matches/{id}/debug/ gives them."
        )

        @extend_schema_field(serializers.BooleanField())
        def get_debug_lines(self, detail: MatchDetail) -> bool:
            user = self.context.get("user")
            if user is None:
                return False
            seats = [row.seat for row in detail.seats]
            return match_debug_readable(match=detail.match, seats=seats, user=user)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, match_id: int) -> Response:
        try:
            detail = match_detail(match_id=match_id)
        except Match.DoesNotExist:
            raise Http404 from None
        return Response(self.OutputSerializer(detail, context={"user": request.user}).data)


class MatchDebugApi(APIView):
    """`GET /api/matches/{id}/debug/`: what the bots wrote on stderr while they decided, by
    decision, for the seats you may read (bots/PROTOCOL.md, "Debug lines per decision").

    A seat's lines are its bot's owner's and staff's, or everyone's when the owner made them
    public (the bot's `debug_public`); seats you may not read, and seats that wrote nothing,
    are left out, so another user and an anonymous visitor get `seats: []`.
    """

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        class SeatSerializer(serializers.Serializer):
            class LineSerializer(serializers.Serializer):
                event = serializers.IntegerField(
                    source="at",
                    help_text="The index (from 0) of the log event the decision became, runner "
                    "notes aside: the replay viewer's frame (it shows it as event N+1). 0 for "
                    "what the bot wrote while starting; the last event for after the game.",
                )
                request = serializers.IntegerField(
                    allow_null=True,
                    help_text="The id of the request the bot was answering: 0 before its first "
                    "request, null after the game ended.",
                )
                text = serializers.CharField(help_text="What it wrote, since its last answer.")
                cut = serializers.IntegerField(
                    help_text="Bytes it wrote before `text` for this decision that were cut."
                )

            seat = serializers.IntegerField(source="seat.seat")
            bot_id = serializers.IntegerField(source="seat.bot_version.bot_id")
            display_name = serializers.CharField(
                source="seat.bot_version.bot.display_name", help_text="owner/bot"
            )
            version = serializers.IntegerField(source="seat.bot_version.number")
            public = serializers.BooleanField(
                source="seat.bot_version.bot.debug_public",
                help_text="Whether the bot's owner shows its debug lines to everyone.",
            )
            cut_bytes = serializers.IntegerField(
                source="lines.cut_bytes",
                help_text="Bytes the bot wrote that are not kept: a seat keeps the latest "
                "64 KiB of a match.",
            )
            cut_entries = serializers.IntegerField(
                source="lines.cut_entries",
                help_text="Decisions whose lines were cut whole (the earliest ones).",
            )
            lines = LineSerializer(source="lines.lines", many=True)

        match = serializers.IntegerField()
        seats = SeatSerializer(many=True)

    @extend_schema(
        responses={
            200: OutputSerializer,
            404: OpenApiResponse(description="No such match, or it has not finished."),
        }
    )
    def get(self, request: Request, match_id: int) -> Response:
        seats: list[SeatDebug] | None = match_debug_lines(match_id=match_id, user=request.user)
        if seats is None:
            raise Http404("No finished match with that id.")
        body = self.OutputSerializer({"match": match_id, "seats": seats}).data
        response = Response(body)
        # The owner's lines: never kept by a shared cache.
        response["Cache-Control"] = "private, no-store"
        return response


class LogNotStoredYet(APIException):
    """503: the match is recorded, its log waits in the database for room in storage."""

    status_code = 503
    default_detail = (
        "The log of this match is not available yet: the server is short of storage space, "
        "and the log is kept until it can be written. Try again later."
    )
    default_code = "log_not_stored_yet"
    wait = 60
    """Retry-After: the sweep that writes waiting logs runs every minute."""


class LogExpired(APIException):
    """410: the match's log was deleted by retention (GRASS_MATCH_FILES_KEEP_DAYS)."""

    status_code = 410
    default_detail = (
        "The log of this match was deleted: the site keeps the files of old matches only while "
        "someone watches them. Its results and rating changes are kept."
    )
    default_code = "log_expired"


class MatchLogApi(APIView):
    """`GET /api/matches/{id}/log/`: the finished match's log (gzip-compressed JSON Lines).

    `engine.log.read_log` reads it once decompressed; `grass verify` replays it.
    """

    permission_classes = [AllowAny]

    @extend_schema(
        responses={
            # The bytes of the gzip file, as they are stored (no Content-Encoding: a client
            # gets the file, not its decompressed lines). octet-stream names them so that
            # every client generator reads them as bytes (openapi-python-client knows no
            # application/gzip).
            (200, "application/gzip"): OpenApiTypes.BINARY,
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            404: OpenApiResponse(description="No such match, or it has not finished."),
            410: OpenApiResponse(
                description="The log was deleted by retention (an old match nobody watched)."
            ),
            503: OpenApiResponse(
                description="The match finished but its log is not stored yet (the server "
                "was out of space); Retry-After says when to ask again."
            ),
        }
    )
    def get(self, request: Request, match_id: int) -> FileResponse:
        match = match_finished(match_id=match_id)
        if match is not None and match_log_pending(match=match):
            raise LogNotStoredYet()
        if match is not None and match.files_expired is not None:
            raise LogExpired()
        if match is None or not match.log:
            raise Http404("No finished match with that id.")
        return FileResponse(
            match.log.open("rb"),
            as_attachment=True,
            filename=f"match-{match.pk}.jsonl.gz",
            content_type="application/gzip",
        )
