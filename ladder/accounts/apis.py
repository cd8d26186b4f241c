"""REST API of accounts: sign up, exchange a username and password for a token, and say whom a
token belongs to."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, Throttled
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.lockout import lockout_message, lockout_seconds, login_locked_out
from ladder.accounts.services import (
    UsernameTaken,
    seating_signup_record,
    signup_counted,
    signup_refusal,
    signup_wait,
    token_get_or_create,
    user_signup,
)
from ladder.api import Conflict, StrictCharField
from ladder.clients import client_address

PASSWORD_MIN_LENGTH = 8
"""Django's MinimumLengthValidator's default (settings.AUTH_PASSWORD_VALIDATORS)."""


PASSWORD_PATTERN = r"^[^\x00]*[^\d\x00][^\x00]*$"
"""Not all digits (Django's NumericPasswordValidator): at least one character that is not one;
and no NUL anywhere (DRF refuses it in any string field, ladder.api.NO_NUL_PATTERN)."""


@extend_schema_field(
    {
        "type": "string",
        "format": "password",
        "writeOnly": True,
        "minLength": PASSWORD_MIN_LENGTH,
        "pattern": PASSWORD_PATTERN,
    }
)
class PasswordField(StrictCharField):
    """A new password: the schema states its length and that it is not all digits;
    AUTH_PASSWORD_VALIDATORS check it all (in `user_signup`), so every rule it breaks is said
    in the same words. The two rules a JSON Schema cannot state (not one of the 20,000 common
    passwords, not like the username) are in the field's description."""

    def __init__(self, **kwargs: Any) -> None:
        # The length as the schema states it, refused in MinimumLengthValidator's words.
        too_short = (
            f"This password is too short. It must contain at least {PASSWORD_MIN_LENGTH} "
            "characters."
        )
        super().__init__(
            write_only=True,
            trim_whitespace=False,
            min_length=PASSWORD_MIN_LENGTH,
            error_messages={"min_length": too_short},
            **kwargs,
        )


USERNAME_PATTERN = r"^[\w.@+-]+$"
"""Django's UnicodeUsernameValidator (\\w is any letter or digit, as in Python's re)."""


@extend_schema_field(
    {"type": "string", "minLength": 1, "maxLength": 150, "pattern": USERNAME_PATTERN}
)
class UsernameField(StrictCharField):
    """A new username as the schema states it: 1-150 letters, digits and @ . + - _. Taken as
    sent (spaces are not trimmed into a different name); the user model's validators check
    it (in `user_signup`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=150, trim_whitespace=False, **kwargs)


class SignupApi(APIView):
    """`POST /api/auth/signup/`: a new account and its API token.

    One address (an IPv6 client: its /64) creates at most GRASS_SIGNUPS_PER_HOUR accounts a
    clock hour (with the sign-up page); past that, 429 with Retry-After.
    """

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    class InputSerializer(serializers.Serializer):
        username = UsernameField(
            help_text="Letters, digits and @ . + - _ only; unique on the site.",
        )
        password = PasswordField(
            help_text="At least 8 characters, not all digits, not a common password, and not "
            "like the username."
        )

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        username = serializers.CharField()
        token = serializers.CharField()

    @extend_schema(
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            400: OpenApiResponse(
                description="A malformed username, or a password the rules above refuse; the "
                "body says which and why."
            ),
            409: OpenApiResponse(description="Another account has that username."),
            429: OpenApiResponse(
                description="Too many accounts created from the address this hour; "
                "Retry-After says when to try again."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        address = client_address(request)
        wait = signup_wait(address=address)
        if wait:
            raise Throttled(wait=wait, detail=signup_refusal(wait))
        try:
            user, token = user_signup(**data.validated_data)
        except UsernameTaken as exc:
            raise Conflict(exc.message_dict) from None
        signup_counted(address=address)
        seating_signup_record(user=user, address=address)
        body = {"id": user.pk, "username": user.get_username(), "token": token.key}
        return Response(self.OutputSerializer(body).data, status=status.HTTP_201_CREATED)


class WrongCredentials(APIException):
    """401: well-formed credentials of no account. Not a 400: nothing is wrong with the request,
    only with who it claims to be. (Not DRF's AuthenticationFailed, which a view without
    authentication classes turns into a 403.)"""

    status_code = status.HTTP_401_UNAUTHORIZED
    default_detail = "Unable to log in with the given username and password."
    default_code = "wrong_credentials"
    # DRF's exception handler sends it as WWW-Authenticate, which a 401 must carry.
    auth_header = 'Token realm="api"'


class TokenApi(APIView):
    """`POST /api/auth/token/`: the API token of a username and password.

    Send it as `Authorization: Token <key>`. After GRASS_LOGIN_FAILURE_LIMIT failed logins for
    one account, or from one address (an IPv6 client: its /64), logging in is refused (429
    with Retry-After) for GRASS_LOGIN_LOCKOUT_MINUTES, even with the right password
    (`ladder.accounts.lockout`).
    """

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    class InputSerializer(serializers.Serializer):
        # As sent: a username with spaces around it is no account's (401), not a blank one.
        username = StrictCharField(trim_whitespace=False)
        password = StrictCharField(write_only=True, trim_whitespace=False)

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(description="A field is missing or malformed."),
            401: OpenApiResponse(
                description="The username and password do not belong together (or there is "
                "no such user)."
            ),
            429: OpenApiResponse(
                description="Too many failed logins for the account or from the address; "
                "Retry-After says when to try again."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, **data.validated_data)
        if user is None and login_locked_out(request):
            # DRF's answer to a throttled request: 429, Retry-After, and why.
            raise Throttled(wait=lockout_seconds(), detail=lockout_message())
        if user is None:
            raise WrongCredentials()
        token = token_get_or_create(user=user)
        return Response(self.OutputSerializer({"token": token.key}).data)


class MeApi(APIView):
    """`GET /api/auth/me/`: the account the request is signed in as.

    A client given only a token (`grass login --token`) learns whose it is here, and that the
    site accepts it, before it stores it.
    """

    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        username = serializers.CharField()

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        user = request.user
        body = {"id": user.pk, "username": user.get_username()}
        return Response(self.OutputSerializer(body).data)
