"""REST API of tournaments: list and create, detail with entries, rounds, tables and live
standings, entering and withdrawing, the organiser's pause/resume/cancel, the results archive.

A service's TournamentError (bad input, a step not allowed now) is a 400 whose `detail` names
the problem; a step only the organiser may take is a 403.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.rules import RULESETS
from ladder.api import IdField, QuerySerializer
from ladder.bots.models import Bot
from ladder.pagination import Pagination as PageNumberPagination
from ladder.tournaments import services
from ladder.tournaments.models import Entry, Tournament
from ladder.tournaments.selectors import (
    GROUPS,
    tournament_archive,
    tournament_detail,
    tournament_list,
)


def _service(call: Any, **kwargs: Any) -> Any:
    try:
        return call(**kwargs)
    except services.TournamentForbidden as exc:
        raise PermissionDenied(str(exc)) from None
    except services.TournamentError as exc:
        raise ValidationError({"detail": str(exc)}) from None


class TournamentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    organiser = serializers.CharField(source="organiser.username")
    ruleset = serializers.CharField()
    variants = serializers.DictField()
    limits = serializers.DictField(child=serializers.IntegerField())
    seats = serializers.IntegerField()
    format = serializers.ChoiceField(choices=Tournament.Format.choices)
    swiss_rounds = serializers.IntegerField()
    meetings = serializers.IntegerField()
    duplicate = serializers.BooleanField()
    decision_ms = serializers.IntegerField()
    bank_ms = serializers.IntegerField()
    registration_opens = serializers.DateTimeField()
    registration_closes = serializers.DateTimeField()
    starts_at = serializers.DateTimeField()
    eligibility = serializers.ChoiceField(choices=Tournament.Eligibility.choices)
    top_n = serializers.IntegerField(allow_null=True)
    invited = serializers.SerializerMethodField(
        help_text="With invited eligibility: the ids of the bots that may enter."
    )
    rated = serializers.BooleanField()
    status = serializers.ChoiceField(choices=Tournament.Status.choices)
    status_reason = serializers.CharField()

    def get_invited(self, tournament: Tournament) -> list[int]:
        return [bot.pk for bot in tournament.invited.all()]


class TournamentListApi(APIView):
    """`GET /api/tournaments/?status=upcoming|running|finished`: newest start first."""

    permission_classes = [AllowAny]
    pagination_class = PageNumberPagination

    class FilterSerializer(QuerySerializer):
        status = serializers.ChoiceField(choices=sorted(GROUPS), required=False)

    @extend_schema(
        operation_id="tournaments_list",
        parameters=[FilterSerializer],
        responses=TournamentSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        query = self.FilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            tournament_list(group=query.validated_data.get("status")), request, view=self
        )
        return paginator.get_paginated_response(TournamentSerializer(page, many=True).data)


class TournamentCreateApi(APIView):
    """`POST /api/tournaments/`: a new tournament (staff or users allowed to organise)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        description = serializers.CharField(required=False, allow_blank=True)
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), default="modern")
        variants = serializers.DictField(required=False)
        limits = serializers.DictField(child=serializers.IntegerField(), required=False)
        seats = serializers.IntegerField(default=4)
        format = serializers.ChoiceField(choices=Tournament.Format.choices)
        swiss_rounds = serializers.IntegerField(default=5)
        meetings = serializers.IntegerField(default=1)
        duplicate = serializers.BooleanField(default=False)
        decision_ms = serializers.IntegerField(default=1_000)
        bank_ms = serializers.IntegerField(default=30_000)
        registration_opens = serializers.DateTimeField()
        registration_closes = serializers.DateTimeField()
        starts_at = serializers.DateTimeField()
        eligibility = serializers.ChoiceField(
            choices=Tournament.Eligibility.choices, default="open"
        )
        top_n = serializers.IntegerField(required=False, allow_null=True)
        invited = serializers.ListField(child=IdField(), required=False)
        rated = serializers.BooleanField(default=False)

    @extend_schema(
        operation_id="tournaments_create",
        request=InputSerializer,
        responses={201: TournamentSerializer},
    )
    def post(self, request: Request) -> Response:
        if not request.user.has_perm(services.CREATE_PERMISSION):
            raise PermissionDenied("Only organisers (staff or given the permission) may do this.")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        invited_ids = fields.pop("invited", [])
        invited = list(Bot.objects.filter(pk__in=invited_ids))
        if len(invited) != len(set(invited_ids)):
            raise ValidationError({"invited": "unknown bot ids"})
        tournament = _service(
            services.tournament_create, organiser=request.user, invited=invited, **fields
        )
        return Response(TournamentSerializer(tournament).data, status=status.HTTP_201_CREATED)


class TournamentsApi(TournamentListApi, TournamentCreateApi):
    """`/api/tournaments/`: `GET` lists (anyone), `POST` creates (organisers)."""

    permission_classes = [IsAuthenticatedOrReadOnly]


class EntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    bot_id = serializers.IntegerField()
    bot = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner.username")
    display_name = serializers.CharField(source="bot.display_name", help_text="owner/bot")
    version = serializers.IntegerField(source="version.number", allow_null=True)
    seed_rank = serializers.IntegerField(allow_null=True)
    withdrawn = serializers.DateTimeField(allow_null=True)
    withdrawn_reason = serializers.CharField()


class TournamentDetailApi(APIView):
    """`GET /api/tournaments/{id}/`: settings, entries, rounds with tables, live standings."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        class RoundSerializer(serializers.Serializer):
            class TableSerializer(serializers.Serializer):
                number = serializers.IntegerField()
                seats = serializers.SerializerMethodField()
                result = serializers.DictField(allow_null=True)
                matches = serializers.SerializerMethodField()

                def get_seats(self, table: Any) -> list[int]:
                    return [entry.pk for entry, _ in table.seats]

                def get_matches(self, table: Any) -> list[dict[str, Any]]:
                    return [{"rotation": r, "match": m, "status": s} for r, m, s in table.matches]

            number = serializers.IntegerField()
            status = serializers.CharField()
            byes = serializers.SerializerMethodField()
            tables = TableSerializer(many=True)

            def get_byes(self, round_: Any) -> list[int]:
                return [e.pk for e in round_.byes]

        class StandingSerializer(serializers.Serializer):
            rank = serializers.IntegerField()
            entry = serializers.IntegerField(source="entry.pk")
            bot = serializers.CharField(source="entry.bot.name")
            display_name = serializers.CharField(
                source="entry.bot.display_name", help_text="owner/bot"
            )
            points = serializers.FloatField()
            tiebreak = serializers.ListField()
            games = serializers.IntegerField()
            byes = serializers.IntegerField()
            advanced = serializers.IntegerField(
                allow_null=True,
                help_text="Single elimination: the rounds advanced from (ranks before points).",
            )

        tournament = TournamentSerializer()
        entries = EntrySerializer(many=True)
        rounds = RoundSerializer(many=True)
        standings = StandingSerializer(many=True)
        tie_breaks = serializers.ListField(
            child=serializers.CharField(), help_text="The tie-breaks after points, in order."
        )
        ranked_by = serializers.ListField(
            child=serializers.CharField(),
            help_text="The whole order of the standings; a single elimination ranks by the "
            "rounds advanced (the champion first) before points.",
        )

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, tournament_id: int) -> Response:
        tournament = get_object_or_404(Tournament, pk=tournament_id)
        return Response(self.OutputSerializer(tournament_detail(tournament=tournament)).data)


class TournamentEntriesApi(APIView):
    """`POST /api/tournaments/{id}/entries/` `{"bot": id}`: enter one of your bots."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        bot = IdField()

    @extend_schema(request=InputSerializer, responses={201: EntrySerializer})
    def post(self, request: Request, tournament_id: int) -> Response:
        tournament = get_object_or_404(Tournament, pk=tournament_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bot = get_object_or_404(Bot, pk=data.validated_data["bot"])
        entry = _service(
            services.tournament_register, tournament=tournament, bot=bot, user=request.user
        )
        return Response(EntrySerializer(entry).data, status=status.HTTP_201_CREATED)


class TournamentEntryApi(APIView):
    """`DELETE /api/tournaments/{id}/entries/{entry}/`: withdraw (owner or organiser)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: EntrySerializer})
    def delete(self, request: Request, tournament_id: int, entry_id: int) -> Response:
        entry = get_object_or_404(
            Entry.objects.select_related("bot", "tournament"),
            pk=entry_id,
            tournament_id=tournament_id,
        )
        entry = _service(services.tournament_withdraw, entry=entry, user=request.user)
        return Response(EntrySerializer(entry).data)


class TournamentActionApi(APIView):
    """`POST /api/tournaments/{id}/{pause|resume|cancel}/`: the organiser's controls, one
    operation per action (see `ACTION_APIS`); the URL passes the action."""

    permission_classes = [IsAuthenticated]

    def post(self, request: Request, tournament_id: int, action: str) -> Response:
        tournament = get_object_or_404(Tournament, pk=tournament_id)
        tournament = _service(
            services.TOURNAMENT_ACTIONS[action], tournament=tournament, user=request.user
        )
        return Response(TournamentSerializer(tournament).data)


def _action_api(action: str, summary: str) -> type[TournamentActionApi]:
    """The API class of one organiser's action: its own operation id and summary in the
    schema, the shared `post` underneath."""

    @extend_schema(
        operation_id=f"tournaments_{action}",
        summary=summary,
        request=None,
        responses={
            200: TournamentSerializer,
            400: OpenApiResponse(description="Not possible in the tournament's state; says why."),
            403: OpenApiResponse(description="Only the organiser (or staff) may do this."),
        },
    )
    def post(
        self: TournamentActionApi, request: Request, tournament_id: int, action: str
    ) -> Response:
        return TournamentActionApi.post(self, request, tournament_id, action)

    name = f"Tournament{action.capitalize()}Api"
    return type(name, (TournamentActionApi,), {"post": post, "__doc__": summary})


ACTION_APIS: dict[str, type[TournamentActionApi]] = {
    "pause": _action_api("pause", "Pause: queued games finish, no new round starts."),
    "resume": _action_api("resume", "Resume a paused tournament."),
    "cancel": _action_api("cancel", "Cancel: queued games are dropped."),
}


class TournamentArchiveApi(APIView):
    """`GET /api/tournaments/{id}/archive/`: a finished tournament's logs and standings.csv."""

    permission_classes = [AllowAny]

    @extend_schema(
        responses={
            # The bytes of the zip file; octet-stream names them so that every client
            # generator reads them as bytes (openapi-python-client knows no application/zip).
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY),
            (200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY),
            404: OpenApiResponse(description="Not finished (yet)."),
        }
    )
    def get(self, request: Request, tournament_id: int) -> HttpResponse:
        tournament = get_object_or_404(
            Tournament, pk=tournament_id, status=Tournament.Status.FINISHED
        )
        response = HttpResponse(tournament_archive(tournament=tournament), "application/zip")
        response["Content-Disposition"] = f'attachment; filename="tournament-{tournament.pk}.zip"'
        return response
