"""REST API of matches: list with filters, detail with seats, log download."""

from __future__ import annotations

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
from ladder.api import QuerySerializer
from ladder.bots.selectors import bot_errors_visible
from ladder.matches.models import Match
from ladder.matches.selectors import (
    SeatDetail,
    match_detail,
    match_finished,
    match_list,
    match_log_pending,
)
from ladder.pagination import Pagination as PageNumberPagination


class MatchListApi(APIView):
    """`GET /api/matches/?bot=&ruleset=&status=&after=&before=`: newest first, paginated."""

    permission_classes = [AllowAny]
    pagination_class = PageNumberPagination

    class FilterSerializer(QuerySerializer):
        bot = serializers.IntegerField(required=False, help_text="A bot id: its matches.")
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), required=False)
        status = serializers.ChoiceField(choices=Match.Status.choices, required=False)
        after = serializers.DateTimeField(required=False, help_text="Created at or after.")
        before = serializers.DateTimeField(required=False, help_text="Created before.")

    class OutputSerializer(serializers.Serializer):
        class SeatSerializer(serializers.Serializer):
            seat = serializers.IntegerField()
            bot_id = serializers.IntegerField(source="bot_version.bot_id")
            bot = serializers.CharField(source="bot_version.bot.name")
            owner = serializers.CharField(source="bot_version.bot.owner.username")
            display_name = serializers.CharField(
                source="bot_version.bot.display_name", help_text="owner/bot"
            )
            version = serializers.IntegerField(source="bot_version.number")
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
        matches = match_list(filters=query.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(matches, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


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
            bot_id = serializers.IntegerField(source="seat.bot_version.bot_id")
            bot = serializers.CharField(source="seat.bot_version.bot.name")
            owner = serializers.CharField(source="seat.bot_version.bot.owner.username")
            display_name = serializers.CharField(
                source="seat.bot_version.bot.display_name", help_text="owner/bot"
            )
            version_id = serializers.IntegerField(source="seat.bot_version_id")
            version = serializers.IntegerField(source="seat.bot_version.number")
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
                bot = detail.seat.bot_version.bot
                if user is None or not bot_errors_visible(user=user, bot=bot):
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

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, match_id: int) -> Response:
        try:
            detail = match_detail(match_id=match_id)
        except Match.DoesNotExist:
            raise Http404 from None
        return Response(self.OutputSerializer(detail, context={"user": request.user}).data)


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


class MatchLogApi(APIView):
    """`GET /api/matches/{id}/log/`: the finished match's log (gzip-compressed JSON Lines).

    `engine.log.read_log` reads it once decompressed; `grass verify` replays it.
    """

    permission_classes = [AllowAny]

    @extend_schema(
        responses={
            (200, "application/gzip"): OpenApiTypes.BINARY,
            404: OpenApiResponse(description="No such match, or it has not finished."),
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
        if match is None or not match.log:
            raise Http404("No finished match with that id.")
        return FileResponse(
            match.log.open("rb"),
            as_attachment=True,
            filename=f"match-{match.pk}.jsonl.gz",
            content_type="application/gzip",
        )
