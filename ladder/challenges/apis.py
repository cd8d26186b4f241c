"""REST API of challenges: ask for one, list yours, follow one, a rematch, call one off.

One class per operation; `ChallengesApi` only combines the list and the create of
`/api/challenges/`.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, NotFound, Throttled
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine.rules import RULESETS
from ladder.accounts.selectors import signed_in_user
from ladder.api import Conflict, IdField
from ladder.challenges.models import Challenge
from ladder.challenges.selectors import (
    challenge_get,
    challenge_list,
    challenge_place,
    challenge_state,
    challenge_visible,
    challenge_waiting_ahead,
)
from ladder.challenges.services import (
    MAX_OPPONENTS,
    ChallengeLimited,
    ChallengeUnplayable,
    challenge_cancel,
    challenge_create,
    challenge_rematch,
)
from ladder.challenges.specs import Opponent
from ladder.matches.apis import QueueSerializer
from ladder.matches.models import Match
from ladder.pagination import Pagination as PageNumberPagination

STATES = [
    ("waiting", "waiting for a place among the workers"),
    ("cancelled", "called off while it waited"),
    *Match.Status.choices,
]
"""A challenge's state: its own while it waits, its match's once sent."""


class ChallengeSerializer(serializers.Serializer):
    """A challenge as every challenge API answers it."""

    class SeatSerializer(serializers.Serializer):
        position = serializers.IntegerField(
            help_text="The order asked for: 0 is the challenger's version."
        )
        bot_id = serializers.IntegerField(source="version.bot_id")
        display_name = serializers.CharField(
            source="version.bot.display_name", help_text="owner/bot"
        )
        version = serializers.IntegerField(source="version.number")
        version_id = serializers.IntegerField(source="version.id")

    id = serializers.IntegerField()
    state = serializers.SerializerMethodField(
        help_text="waiting (for a place), cancelled, or its match's status once it has one: "
        "queued, running, finished, failed."
    )
    requester = serializers.CharField(source="requester.username")
    ruleset = serializers.CharField()
    seating = serializers.ChoiceField(choices=Challenge.Seating.choices)
    max_hands = serializers.IntegerField(allow_null=True)
    created = serializers.DateTimeField()
    sent = serializers.DateTimeField(
        allow_null=True, help_text="When its match was created and sent to the workers."
    )
    match = serializers.IntegerField(
        source="match_id", allow_null=True, help_text="Its match's id, once it has one."
    )
    match_url = serializers.SerializerMethodField(help_text="Its match's page, once it has one.")
    rematch_of = serializers.IntegerField(source="rematch_of_id", allow_null=True)
    waiting_ahead = serializers.SerializerMethodField(
        help_text="While it waits: waiting challenges sent before it (accounts in turn)."
    )
    queue = serializers.SerializerMethodField(
        help_text="While it waits, its place among the waiting challenges and about when its "
        "match is sent; once sent, its match's place in the queue until a worker takes it "
        "(lane `challenge`); null after that."
    )
    seats = SeatSerializer(many=True)

    @extend_schema_field(QueueSerializer(allow_null=True))
    def get_queue(self, challenge: Challenge) -> dict[str, Any] | None:
        place = challenge_place(challenge)
        return None if place is None else place.as_dict()

    @extend_schema_field(serializers.ChoiceField(choices=STATES))
    def get_state(self, challenge: Challenge) -> str:
        return challenge_state(challenge)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_match_url(self, challenge: Challenge) -> str | None:
        if challenge.match_id is None:
            return None
        return reverse("match-page", args=[challenge.match_id])

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_waiting_ahead(self, challenge: Challenge) -> int | None:
        if challenge.status != Challenge.Status.WAITING:
            return None
        return challenge_waiting_ahead(challenge=challenge)


def _limited(exc: ChallengeLimited) -> Throttled:
    """DRF's answer to a throttled request: 429, Retry-After, and why."""
    return Throttled(wait=exc.wait, detail=str(exc))


MISSING = OpenApiResponse(description="A bot or version the challenge names is not there.")
UNPLAYABLE = OpenApiResponse(
    description="A bot or version the challenge names cannot play now (no valid version, off the "
    "ladder, another owner's version, a game longer than its ruleset allows): the body says "
    "which, by field."
)


LIMITED = OpenApiResponse(
    description="Past the account's daily quota of challenges (GRASS_CHALLENGES_PER_DAY) or "
    "with too many waiting; Retry-After says when to ask again."
)


class ChallengeListApi(APIView):
    """`GET /api/challenges/`: your challenges, newest first, paginated."""

    permission_classes = [IsAuthenticated]
    pagination_class = PageNumberPagination

    @extend_schema(operation_id="challenges_list", responses=ChallengeSerializer(many=True))
    def get(self, request: Request) -> Response:
        user = signed_in_user(request)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(challenge_list(requester_id=user.pk), request, self)
        return paginator.get_paginated_response(ChallengeSerializer(page, many=True).data)


class ChallengeCreateApi(APIView):
    """`POST /api/challenges/`: ask for an unrated match now between one of your bots and 1 to
    5 opponents (docs/challenges.md); it waits for a place among the workers, then is played."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    class InputSerializer(serializers.Serializer):
        class OpponentSerializer(serializers.Serializer):
            bot = IdField(
                help_text="A bot's id: another owner's bot on the ladder (the examples too), "
                "or one of yours.",
            )
            version = IdField(
                required=False,
                help_text="For one of your own bots: a version number (else its newest valid "
                "version). Others' bots play the version that plays on the ladder.",
            )

        bot = IdField(help_text="Your bot's id.")
        version = IdField(
            required=False,
            help_text="Its version number to play (a valid one); default: its newest valid.",
        )
        opponents = serializers.ListField(
            child=OpponentSerializer(), min_length=1, max_length=MAX_OPPONENTS
        )
        ruleset = serializers.ChoiceField(choices=sorted(RULESETS), default="modern")
        seating = serializers.ChoiceField(
            choices=Challenge.Seating.choices,
            default=Challenge.Seating.RANDOM,
            help_text="random: seats drawn at random; ordered: your bot in seat 0, the "
            "opponents after it in the order given.",
        )
        max_hands = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=30,
            help_text="A shorter game: at most this many hands (default: the ruleset's 30).",
        )

    @extend_schema(
        operation_id="challenges_create",
        request=InputSerializer,
        responses={201: ChallengeSerializer, 404: MISSING, 409: UNPLAYABLE, 429: LIMITED},
    )
    def post(self, request: Request) -> Response:
        data = ChallengeCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given: dict[str, Any] = data.validated_data
        try:
            challenge = challenge_create(
                requester=signed_in_user(request),
                bot_id=given["bot"],
                version=given.get("version"),
                opponents=[Opponent(o["bot"], o.get("version")) for o in given["opponents"]],
                ruleset=given["ruleset"],
                seating=given["seating"],
                max_hands=given.get("max_hands"),
            )
        except ChallengeLimited as exc:
            raise _limited(exc) from None
        except ChallengeUnplayable as exc:
            raise _unplayable(exc) from None
        found = challenge_get(challenge_id=challenge.pk)
        return Response(ChallengeSerializer(found).data, status=status.HTTP_201_CREATED)


class ChallengesApi(ChallengeListApi, ChallengeCreateApi):
    """`/api/challenges/`: `GET` lists yours, `POST` asks for one (signed in)."""

    permission_classes = [IsAuthenticated]


def _unplayable(exc: ChallengeUnplayable) -> APIException:
    detail = exc.message_dict
    return NotFound(detail) if exc.missing else Conflict(detail)


def _own_challenge(request: Request, challenge_id: int) -> Challenge:
    """The challenge if the requester may see it (its author, staff); 404 otherwise, as for
    one that does not exist."""
    challenge = challenge_get(challenge_id=challenge_id)
    if challenge is None or not challenge_visible(user=request.user, challenge=challenge):
        raise Http404("No such challenge of yours.")
    return challenge


class ChallengeDetailApi(APIView):
    """`GET /api/challenges/{id}/`: one of your challenges (its match, once it has one)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ChallengeSerializer)
    def get(self, request: Request, challenge_id: int) -> Response:
        return Response(ChallengeSerializer(_own_challenge(request, challenge_id)).data)


class ChallengeRematchApi(APIView):
    """`POST /api/challenges/{id}/rematch/`: the same challenge again (the same versions,
    ruleset, seating and length), counted in the daily quota."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={201: ChallengeSerializer, 404: MISSING, 409: UNPLAYABLE, 429: LIMITED},
    )
    def post(self, request: Request, challenge_id: int) -> Response:
        challenge = _own_challenge(request, challenge_id)
        user = signed_in_user(request)
        if challenge.requester_id != user.pk:
            raise Http404("No such challenge of yours.")
        try:
            again = challenge_rematch(requester=user, challenge=challenge)
        except ChallengeLimited as exc:
            raise _limited(exc) from None
        except ChallengeUnplayable as exc:
            raise _unplayable(exc) from None
        found = challenge_get(challenge_id=again.pk)
        return Response(ChallengeSerializer(found).data, status=status.HTTP_201_CREATED)


class ChallengeCancelApi(APIView):
    """`POST /api/challenges/{id}/cancel/`: call off a challenge that still waits."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            200: ChallengeSerializer,
            409: OpenApiResponse(description="It no longer waits: its match is being played."),
        },
    )
    def post(self, request: Request, challenge_id: int) -> Response:
        challenge = _own_challenge(request, challenge_id)
        if challenge.requester_id != signed_in_user(request).pk:
            raise Http404("No such challenge of yours.")
        if not challenge_cancel(challenge=challenge):
            raise Conflict("This challenge no longer waits: its match is being played.")
        return Response(ChallengeSerializer(challenge_get(challenge_id=challenge.pk)).data)
