"""REST API of accounts: sign up, exchange a username and password for a token, and say whom a
token belongs to."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.lockout import lockout_message, lockout_seconds, login_locked_out
from ladder.accounts.services import (
    signup_counted,
    signup_refusal,
    signup_wait,
    token_get_or_create,
    user_signup,
)
from ladder.clients import client_address

PASSWORD_MIN_LENGTH = 8
"""Django's MinimumLengthValidator's default (settings.AUTH_PASSWORD_VALIDATORS)."""


@extend_schema_field(
    {"type": "string", "format": "password", "writeOnly": True, "minLength": PASSWORD_MIN_LENGTH}
)
class PasswordField(serializers.CharField):
    """A new password: the schema states its length; AUTH_PASSWORD_VALIDATORS check it all
    (in `user_signup`), so every rule it breaks is said in the same words."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(write_only=True, trim_whitespace=False, **kwargs)


class SignupApi(APIView):
    """`POST /api/auth/signup/`: a new account and its API token.

    One address creates at most GRASS_SIGNUPS_PER_HOUR accounts a clock hour (with the
    sign-up page); past that, 429 with Retry-After.
    """

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(
            max_length=150,
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
                description="A username that is taken or malformed, or a password the rules "
                "above refuse; the body says which and why."
            ),
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
        user, token = user_signup(**data.validated_data)
        signup_counted(address=address)
        body = {"id": user.pk, "username": user.get_username(), "token": token.key}
        return Response(self.OutputSerializer(body).data, status=status.HTTP_201_CREATED)


class TokenApi(APIView):
    """`POST /api/auth/token/`: the API token of a username and password.

    Send it as `Authorization: Token <key>`. After GRASS_LOGIN_FAILURE_LIMIT failed logins for
    one account, or from one address, logging in is refused (429 with Retry-After) for
    GRASS_LOGIN_LOCKOUT_MINUTES, even with the right password (`ladder.accounts.lockout`).
    """

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField()
        password = serializers.CharField(write_only=True, trim_whitespace=False)

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(description="Wrong username or password."),
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
            raise serializers.ValidationError(
                {"non_field_errors": ["Unable to log in with the given username and password."]}
            )
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
