"""REST API of bots: list, create, detail; versions: list, upload, one version, source download.

One class per operation. Where two operations share a URL (`GET` and `POST /api/bots/`), the
URL's class only combines the two operations' classes (`BotsApi(BotListApi, BotCreateApi)`).
"""

from __future__ import annotations

from typing import Any

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, Throttled
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bots.runner.botfiles import BadBot, upload_limit
from ladder.accounts.selectors import signed_in_user
from ladder.api import Conflict, QuerySerializer, StrictCharField
from ladder.bots.models import Bot, BotVersion
from ladder.bots.names import NAME_PATTERN
from ladder.bots.selectors import (
    bot_errors_visible,
    bot_list,
    bot_version_summary,
    bot_versions,
)
from ladder.bots.services import (
    BotNameTaken,
    UploadLimited,
    bot_create,
    bot_debug_publish,
    bot_version_refused,
    bot_version_submit,
)
from ladder.matches.selectors import bot_game_counts
from ladder.pagination import KeysetPagination
from ladder.pagination import Pagination as PageNumberPagination
from ladder.ratings.selectors import bot_ratings


class VersionSerializer(serializers.Serializer):
    """A bot version as every API shows it.

    `validation_error` quotes the bot's stderr (tracebacks are lines of its private source),
    and `build_log` its compiler's messages (which quote its source): they are shown only when
    the serializer's context says `show_errors` (the bot's owner and staff, see
    `bot_errors_visible`), and are null for everyone else, who see the `status`.
    """

    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=BotVersion.Status.choices)
    validation_error = serializers.CharField(
        allow_null=True,
        help_text="Why the version is invalid (forfeit reason, end of its stderr); empty if "
        "valid. Only the bot's owner and staff see it: null for everyone else.",
    )
    language = serializers.CharField(
        help_text="What its entry file says it is written in: python, javascript, cpp, rust, "
        "java or binary (bots/PROTOCOL.md, section 6)."
    )
    build_log = serializers.CharField(
        allow_null=True,
        help_text="What the compiler printed when the version was built (compiled languages; "
        "empty otherwise). Only the bot's owner and staff see it: null for everyone else.",
    )
    size = serializers.IntegerField()
    sha256 = serializers.CharField()
    created = serializers.DateTimeField()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        if not self.context.get("show_errors", False):
            data["validation_error"] = None
            data["build_log"] = None
        return data


def _errors_context(request: Request, bot: Bot) -> dict[str, bool]:
    """The serializer context that shows `bot`'s validation errors to those who may see them."""
    return {"show_errors": bot_errors_visible(user=request.user, bot=bot)}


DISPLAY_NAME_HELP = (
    "How the bot is shown: owner/name. Names are unique per owner only, so two users' bots "
    "may share a name; this tells them apart."
)


class BotSerializer(serializers.Serializer):
    """A bot in lists."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    display_name = serializers.CharField(help_text=DISPLAY_NAME_HELP)
    created = serializers.DateTimeField()
    disabled = serializers.DateTimeField(
        allow_null=True,
        help_text="Set while the bot is off the ladder (forfeits): it is not ranked and may "
        "not enter tournaments until a new version passes validation.",
    )


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 64, "pattern": NAME_PATTERN})
class BotNameField(StrictCharField):
    """A new bot's name, as the schema states it: 1-64 visible characters (no control, format
    or other invisible character: `ladder.bots.names`), no `/`, not only spaces. The service
    tidies its spaces (`tidy_spaces`); the answer holds the name as stored."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=64, trim_whitespace=False, **kwargs)


class StrictBooleanField(serializers.BooleanField):
    """`true` or `false` as JSON writes them, the schema's boolean (DRF's own field also takes
    0, "yes", "on", which a client reading the schema would never send on purpose)."""

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid", input=data)
        raise AssertionError("unreachable: fail raises")


def _owned_bot(request: Request, bot_id: int) -> Bot:
    """The bot, if the requesting user owns it: 404 if there is none, 403 if not theirs."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("Only the bot's owner may do this.")
    return bot


class BotListApi(APIView):
    """`GET /api/bots/?owner=&name=`: bots, oldest first, a page at a time by cursor (follow
    `next`): a page is an index range from the last id seen, so a deep one costs what the
    first does (page numbers sorted every bot up to the page), and no request counts every
    bot (`count` is exact up to 10,000 and PostgreSQL's estimate past that, `count_exact`);
    `?page=` still serves the first 200 pages."""

    class Pagination(KeysetPagination):
        ordering = ("id",)

    permission_classes = [AllowAny]
    pagination_class = Pagination

    class FilterSerializer(QuerySerializer):
        owner = serializers.CharField(required=False, help_text="The owner's username.")
        name = serializers.CharField(required=False, help_text="A part of the name.")

    @extend_schema(
        operation_id="bots_list", parameters=[FilterSerializer], responses=BotSerializer(many=True)
    )
    def get(self, request: Request) -> Response:
        filters = BotListApi.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            bot_list(filters=filters.validated_data), request, view=self
        )
        return paginator.get_paginated_response(BotSerializer(page, many=True).data)


class BotCreateApi(APIView):
    """`POST /api/bots/`: a new bot of the requesting user (name unique per owner)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        name = BotNameField()

    @extend_schema(
        operation_id="bots_create",
        request=InputSerializer,
        responses={
            201: BotSerializer,
            400: OpenApiResponse(description="The name is not allowed; `name` says why."),
            409: OpenApiResponse(description="You already have a bot of that name."),
        },
    )
    def post(self, request: Request) -> Response:
        data = BotCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            bot = bot_create(owner=signed_in_user(request), **data.validated_data)
        except BotNameTaken as exc:
            raise Conflict({"name": exc.messages}) from None
        return Response(BotSerializer(bot).data, status=status.HTTP_201_CREATED)


class BotsApi(BotListApi, BotCreateApi):
    """`/api/bots/`: `GET` lists (anyone), `POST` creates (signed in)."""

    permission_classes = [IsAuthenticatedOrReadOnly]


class BotDetailApi(APIView):
    """`GET /api/bots/{id}/`: a bot, its versions in short, ratings and fault counts.
    `PATCH` (its owner): its settings (`debug_public`)."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    # JSON only: a form's "0" or "off" is not a boolean the schema promises to take.
    parser_classes = [JSONParser]

    class InputSerializer(serializers.Serializer):
        debug_public = StrictBooleanField(
            help_text="Show the bot's debug lines (what it writes on stderr while it decides) "
            "to everyone in its matches' replays; false: to you and staff only."
        )

    class OutputSerializer(serializers.Serializer):
        class VersionsSerializer(serializers.Serializer):
            count = serializers.IntegerField()
            latest = VersionSerializer(allow_null=True)
            playing = VersionSerializer(
                allow_null=True, help_text="The newest valid version: the one that plays."
            )

        class RatingSerializer(serializers.Serializer):
            ruleset = serializers.CharField()
            elo = serializers.IntegerField()
            band = serializers.ListField(child=serializers.IntegerField(), min_length=2)
            games = serializers.IntegerField()
            updated = serializers.DateTimeField()
            provisional = serializers.BooleanField(
                help_text="Fewer rated games in this ruleset than the site's "
                "GRASS_PROVISIONAL_GAMES (15 by default), of the bot or of its newest valid "
                "version: the rating still moves fast, or is still mostly an older version's."
            )

        class GamesSerializer(serializers.Serializer):
            finished = serializers.IntegerField()
            timed_out = serializers.IntegerField(help_text="Games with at least one timeout.")
            crashed = serializers.IntegerField(help_text="Games in which the bot crashed.")

        id = serializers.IntegerField()
        name = serializers.CharField()
        owner = serializers.CharField()
        display_name = serializers.CharField(help_text=DISPLAY_NAME_HELP)
        created = serializers.DateTimeField()
        disabled = serializers.DateTimeField(
            allow_null=True,
            help_text="Set while the bot is off the ladder for forfeiting too many games in a "
            "row; a new version that passes validation puts it back.",
        )
        disabled_reason = serializers.CharField()
        debug_public = serializers.BooleanField(
            help_text="Whether everyone may read the bot's debug lines in its replays (its "
            "owner and staff always may)."
        )
        versions = VersionsSerializer()
        ratings = RatingSerializer(many=True)
        games = GamesSerializer()

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
        return self._answer(request, bot)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            403: OpenApiResponse(description="Not your bot."),
        },
    )
    def patch(self, request: Request, bot_id: int) -> Response:
        bot = _owned_bot(request, bot_id)
        # A PATCH changes what it names and nothing else (the schema's body is all optional).
        data = BotDetailApi.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if "debug_public" in data.validated_data:
            bot_debug_publish(bot=bot, public=data.validated_data["debug_public"])
        return self._answer(request, bot)

    def _answer(self, request: Request, bot: Bot) -> Response:
        versions = bot_version_summary(bot=bot)
        counts = bot_game_counts(bot_id=bot.pk)
        ratings = [
            {
                "ruleset": row.ruleset,
                "elo": row.elo,
                "band": [row.band_low, row.band_high],
                "games": row.games,
                "updated": row.updated,
                "provisional": row.provisional,
            }
            for row in bot_ratings(bot_id=bot.pk)
        ]
        body = {
            "id": bot.pk,
            "name": bot.name,
            "owner": bot.owner.get_username(),
            "display_name": bot.display_name,
            "created": bot.created,
            "disabled": bot.disabled,
            "disabled_reason": bot.disabled_reason,
            "debug_public": bot.debug_public,
            "versions": {
                "count": versions.count,
                "latest": versions.latest,
                "playing": versions.playing,
            },
            "ratings": ratings,
            "games": {
                "finished": counts.games,
                "timed_out": counts.timed_out,
                "crashed": counts.crashed,
            },
        }
        return Response(self.OutputSerializer(body, context=_errors_context(request, bot)).data)


class BotVersionListApi(APIView):
    """`GET /api/bots/{id}/versions/`: the bot's versions, newest first, paginated."""

    permission_classes = [AllowAny]
    pagination_class = PageNumberPagination

    @extend_schema(operation_id="bots_versions_list", responses=VersionSerializer(many=True))
    def get(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot, pk=bot_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(bot_versions(bot=bot), request, view=self)
        versions = VersionSerializer(page, many=True, context=_errors_context(request, bot))
        return paginator.get_paginated_response(versions.data)


class BotVersionUploadApi(APIView):
    """`POST /api/bots/{id}/versions/` (multipart, field `file`): upload a new version.

    Only the bot's owner may upload. The upload is checked (a source file of one of the
    languages, a static executable named `bot`, or a safe `.zip`; its entry file says its
    language; anything else is kept as an invalid version saying why) and stored, then
    validated by a worker: compiled (C++, Rust, Java) in a build
    sandbox, then a short sandboxed game against the example bots. The answer is usually
    `pending`, and the version's page later shows the verdict (with GRASS_VALIDATE_INLINE,
    during the request, and the answer has it).

    An account uploads at most GRASS_UPLOADS_PER_HOUR versions an hour and has at most
    GRASS_PENDING_VERSIONS_PER_ACCOUNT pending at once (all its bots together); past either,
    429 with Retry-After and nothing stored.
    """

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        # An empty file is schema-valid (a file of no bytes): taken, and kept invalid below.
        file = serializers.FileField(
            allow_empty_file=True,
            help_text="The bot: a source file (.py, .js, .cpp, .rs, .java), a static x86-64 "
            "executable named bot, or a .zip archive with an entry file at its top (bot.py, "
            "bot.js, bot.cpp, Cargo.toml or main.rs, Bot.java, bot), as bots/PROTOCOL.md "
            "section 6 lists. A file of any other kind, source that is not UTF-8, or an unsafe "
            "archive, or an empty file, is kept as an `invalid` version whose `validation_error` "
            "says why and lists what is accepted; an oversized one is refused (400).",
        )

    @extend_schema(
        operation_id="bots_versions_create",
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OpenApiResponse(
                VersionSerializer,
                description="Stored, and queued for its validation game: `status` is "
                "`pending` until a worker has played it, then `valid`, or `invalid` with "
                "`validation_error` saying why (GET /api/versions/{id}/ to follow it). A file "
                "that is no bot the ladder runs (its name, encoding or archive) is `invalid` "
                "at once, saying why.",
            ),
            400: OpenApiResponse(
                description="No file, or a file over the size limit; `file` says why. Nothing "
                "was stored."
            ),
            403: OpenApiResponse(description="Not the bot's owner."),
            429: OpenApiResponse(
                description="Your account uploaded as many versions as it may in an hour, or "
                "has as many waiting for their validation game as it may at once; `detail` "
                "names the limit and Retry-After says when to try again. Nothing was stored."
            ),
            507: OpenApiResponse(
                description="The server is out of storage space: nothing was stored; try "
                "again later."
            ),
        },
    )
    def post(self, request: Request, bot_id: int) -> Response:
        bot = _owned_bot(request, bot_id)
        data = BotVersionUploadApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        # Checked before reading: a huge upload is refused without holding it in memory.
        limit = upload_limit(upload.name)
        if upload.size > limit:
            raise serializers.ValidationError(
                {"file": [f"{upload.name} is {upload.size} bytes; the limit is {limit}"]}
            )
        data_bytes = upload.read()
        try:
            try:
                if not data_bytes:
                    raise BadBot("the file is empty: no bot")
                version = bot_version_submit(bot=bot, filename=upload.name, data=data_bytes)
            except BadBot as exc:
                # Not a bot the ladder can run: a version all the same, invalid, saying why.
                version = bot_version_refused(
                    bot=bot, filename=upload.name, data=data_bytes, reason=str(exc)
                )
        except UploadLimited as exc:
            # DRF's answer to a throttled request: 429, Retry-After, and why.
            raise Throttled(wait=exc.wait, detail=str(exc)) from None
        # Only the owner uploads, and the answer carries the verdict it needs.
        body = VersionSerializer(version, context={"show_errors": True}).data
        return Response(body, status=status.HTTP_201_CREATED)


class BotVersionsApi(BotVersionListApi, BotVersionUploadApi):
    """`/api/bots/{id}/versions/`: `GET` lists (anyone), `POST` uploads (the owner)."""

    permission_classes = [IsAuthenticatedOrReadOnly]


class BotVersionDetailApi(APIView):
    """`GET /api/versions/{id}/`: one version and its status, by the id its upload answered.

    What a client polls after an upload until the validation game's verdict is in (`pending`,
    then `valid` or `invalid`), without paging through the bot's versions.
    """

    permission_classes = [AllowAny]

    class OutputSerializer(VersionSerializer):
        bot = serializers.IntegerField(source="bot_id", help_text="The bot's id.")

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, version_id: int) -> Response:
        version = get_object_or_404(BotVersion.objects.select_related("bot"), pk=version_id)
        context = _errors_context(request, version.bot)
        return Response(self.OutputSerializer(version, context=context).data)


class BotVersionSourceApi(APIView):
    """`GET /api/versions/{id}/source/`: the uploaded file, for the bot's owner only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            403: OpenApiResponse(description="Not the bot's owner."),
        },
    )
    def get(self, request: Request, version_id: int) -> FileResponse:
        version = get_object_or_404(BotVersion.objects.select_related("bot"), pk=version_id)
        _owned_bot(request, version.bot_id)
        stored = version.file.name.rsplit("/", 1)[-1]
        extension = "." + stored.rsplit(".", 1)[1] if "." in stored else ""
        return FileResponse(
            version.file.open("rb"),
            as_attachment=True,
            filename=f"{version.bot.name}-v{version.number}{extension}",
            content_type="application/zip" if extension == ".zip" else "application/octet-stream",
        )
