"""REST API of people's games: start a game against bots, list yours.

The game is then played over the match's WebSocket (`socket_url`; `ladder.live.consumers`,
its messages in docs/play.md), with the same API token in the handshake's `Authorization`
header: what `grass table` does. The Play page is the same service
(`ladder.live.services.person_game_create`) behind a form.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.rules import RULESETS
from ladder.accounts.selectors import signed_in_user
from ladder.api import Conflict, IdField
from ladder.live.selectors import person_game_seated, person_games_seated
from ladder.live.services import PlayError, PlayLimited, person_game_create
from ladder.matches.models import Match

MAX_OPPONENTS = 5
GAMES_LISTED = 10


def socket_path(match_id: int) -> str:
    """The match's WebSocket (ladder/live/routing.py)."""
    return f"/ws/matches/{match_id}/"


class GameSerializer(serializers.Serializer):
    """A person's game as the games API answers it."""

    id = serializers.IntegerField(help_text="The match's id.")
    status = serializers.ChoiceField(
        choices=Match.Status.choices,
        help_text="queued (waiting for a worker), running, finished, failed (or resigned "
        "before it started).",
    )
    ruleset = serializers.CharField()
    created = serializers.DateTimeField()
    seat = serializers.SerializerMethodField(help_text="Your seat (seats play in turn from 0).")
    players = serializers.SerializerMethodField(
        help_text="Who holds each seat, by seat: `owner/bot` for a bot, a person's username."
    )
    hands = serializers.SerializerMethodField(help_text="The game ends after this many hands.")
    decision_seconds = serializers.SerializerMethodField(
        help_text="Your time for each decision; then the safe default is played for you."
    )
    match_url = serializers.SerializerMethodField(
        help_text="The match's page (its replay once it is over)."
    )
    socket_url = serializers.SerializerMethodField(
        help_text="The WebSocket to play on (ws:// or wss://), opened with the same "
        "`Authorization` header as the API's; its messages are in docs/play.md."
    )

    def _user_id(self) -> int:
        return int(self.context["user_id"])

    @extend_schema_field(serializers.IntegerField())
    def get_seat(self, match: Match) -> int:
        return next(s.seat for s in match.seats.all() if s.player_id == self._user_id())

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_players(self, match: Match) -> list[str]:
        return [seat.holder for seat in match.seats.all()]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_hands(self, match: Match) -> int | None:
        hands = (match.limits or {}).get("max_hands")
        return hands if isinstance(hands, int) else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_decision_seconds(self, match: Match) -> int | None:
        ms = (match.time_control or {}).get("remote_decision_ms")
        return round(ms / 1000) if isinstance(ms, int | float) else None

    def get_match_url(self, match: Match) -> str:
        return reverse("match-page", args=[match.pk])

    def get_socket_url(self, match: Match) -> str:
        request: Request = self.context["request"]
        url = request.build_absolute_uri(socket_path(match.pk))
        return "ws" + url.removeprefix("http")  # http -> ws, https -> wss


def _serialize(request: Request, games: Any, many: bool = False) -> Any:
    context = {"request": request, "user_id": signed_in_user(request).pk}
    return GameSerializer(games, many=many, context=context).data


REFUSED = OpenApiResponse(
    description="The game cannot be made as asked: a bot that is not on the ladder (disabled, "
    "no valid version), a bot named twice, a seat past the game's seats, more hands than the "
    "site allows. The body's `detail` says which."
)
LIMITED = OpenApiResponse(
    description="Not now: you have a game queued or being played (finish or resign it first), "
    "the site's tables for people are all taken, or no worker is up. `detail` says which; "
    "Retry-After, when sent, says when to ask again."
)


class GameListApi(APIView):
    """`GET /api/games/`: your latest games (at most 10), newest first; one queued or running
    is the game you are playing."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="games_list",
        description="Your latest games (at most 10), newest first: one queued or running is "
        "the game you are playing (its `socket_url` to join it again).",
        responses=GameSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        games = person_games_seated(user=signed_in_user(request), limit=GAMES_LISTED)
        return Response(_serialize(request, games, many=True))


class GameCreateApi(APIView):
    """`POST /api/games/`: sit down at a table with 1 to 5 bots of the ladder, as the Play
    page does: an unrated game, queued for a worker, played over `socket_url`."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    class InputSerializer(serializers.Serializer):
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), default="modern")
        opponents = serializers.ListField(
            child=IdField(),
            min_length=1,
            max_length=MAX_OPPONENTS,
            help_text="1 to 5 bots' ids, each once: bots on the ladder, playing their newest "
            "valid version (the examples, yours, anyone's), seated in this order around yours.",
        )
        seat = serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=0,
            max_value=MAX_OPPONENTS,
            help_text="Your seat, 0 to the number of opponents; left out or null: at random.",
        )
        hands = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=max(settings.GRASS_PLAY_MAX_HANDS, 1),
            help_text="The game ends after this many hands (default 1).",
        )

    @extend_schema(
        operation_id="games_create",
        description="Sit down at a table with 1 to 5 bots of the ladder, as the site's Play "
        "page does: an unrated game, queued for a worker, that you play over `socket_url` "
        "(the messages: docs/play.md). One game of yours at a time.",
        request=InputSerializer,
        responses={201: GameSerializer, 409: REFUSED, 429: LIMITED},
    )
    def post(self, request: Request) -> Response:
        data = GameCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given: dict[str, Any] = data.validated_data
        user = signed_in_user(request)
        try:
            match = person_game_create(
                user=user,
                ruleset=given["ruleset"],
                opponents=given["opponents"],
                seat=given.get("seat"),
                hands=given.get("hands", 1),
            )
        except PlayLimited as exc:
            raise Throttled(wait=exc.wait, detail=str(exc)) from None
        except PlayError as exc:
            raise Conflict(str(exc)) from None
        game = person_game_seated(user=user, match_id=match.pk)
        return Response(_serialize(request, game), status=status.HTTP_201_CREATED)


class GamesApi(GameListApi, GameCreateApi):
    """`/api/games/`: `GET` lists your games, `POST` starts one (signed in)."""

    permission_classes = [IsAuthenticated]
