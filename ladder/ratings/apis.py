"""REST API of ratings: the public leaderboard."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.rules import RULESETS
from ladder.api import QuerySerializer
from ladder.pagination import Pagination as PageNumberPagination
from ladder.ratings.selectors import LeaderboardRow, leaderboard

_datetime = serializers.DateTimeField()

PROVISIONAL_HELP = (
    "Fewer rated games in this ruleset than the site's GRASS_PROVISIONAL_GAMES (15 by "
    "default): the rating still moves fast. By the bot's games only; its page and "
    "/api/bots/{id}/ also mark a new version's first games."
)


class LeaderboardApi(APIView):
    """`GET /api/leaderboard/?ruleset=modern`: ranked bots, paginated."""

    permission_classes = [AllowAny]

    class InputSerializer(QuerySerializer):
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), default="modern")

    class OutputSerializer(serializers.Serializer):
        rank = serializers.IntegerField()
        bot_id = serializers.IntegerField()
        bot = serializers.CharField()
        owner = serializers.CharField()
        display_name = serializers.CharField(help_text="owner/bot: how the bot is shown.")
        elo = serializers.IntegerField()
        band = serializers.SerializerMethodField()
        games = serializers.IntegerField()
        win_rate = serializers.FloatField()
        last_game = serializers.DateTimeField()
        provisional = serializers.BooleanField(help_text=PROVISIONAL_HELP)

        @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
        def get_band(self, row: LeaderboardRow) -> list[int]:
            return [row.band_low, row.band_high]

    class Pagination(PageNumberPagination):
        page_size = 50

    pagination_class = Pagination

    @extend_schema(parameters=[InputSerializer], responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = leaderboard(ruleset=query.validated_data["ruleset"])
        paginator = self.pagination_class()
        # DRF pages anything Django's Paginator takes (the Leaderboard is a lazy sequence).
        page: list[LeaderboardRow] | None
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response([self.output(row) for row in page or []])

    @staticmethod
    def output(row: LeaderboardRow) -> dict[str, Any]:
        """What OutputSerializer gives for `row` (the tests hold them equal), built directly:
        the serializer's field machinery cost about 40% of the request's CPU time."""
        return {
            "rank": row.rank,
            "bot_id": row.bot_id,
            "bot": row.bot,
            "owner": row.owner,
            "display_name": row.display_name,
            "elo": row.elo,
            "band": [row.band_low, row.band_high],
            "games": row.games,
            "win_rate": row.win_rate,
            "last_game": _datetime.to_representation(row.last_game),
            "provisional": row.provisional,
        }
