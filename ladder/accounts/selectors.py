"""Reading accounts: the signed-in user of a request, and who a bot sits as (its circle)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def user_token(*, user: User) -> Token | None:
    """The user's API token, if they have one (a user has at most one)."""
    return Token.objects.filter(user=user).first()


TOKEN_KEYWORDS = ("token", "bearer")
"""The keywords an API token comes under in an `Authorization` header (any case), as the REST
API takes it (`rest_framework.authentication.TokenAuthentication`, `BearerTokenAuthentication`)."""
TOKEN_HEADER_MAX = 200
"""Longer than any `Token <key>` header (a key is 40 characters): a longer one is not looked up."""


def token_header_user(header: bytes) -> User | None:
    """The active user whose API token an `Authorization` header carries (`Token <key>` or
    `Bearer <key>`), or None: another scheme, a malformed header, an unknown key or an
    inactive user, checked as the REST API checks its tokens (DRF's own check)."""
    if len(header) > TOKEN_HEADER_MAX:
        return None
    try:
        parts = header.decode("ascii").split()
    except UnicodeDecodeError:
        return None
    if len(parts) != 2 or parts[0].lower() not in TOKEN_KEYWORDS:
        return None
    try:
        user, _ = TokenAuthentication().authenticate_credentials(parts[1])
    except AuthenticationFailed:
        return None
    return user  # type: ignore[no-any-return]


def signed_in_user(request: HttpRequest | Request) -> User:
    """The request's user, in a view behind login_required or IsAuthenticated.

    Those guards have already turned anonymous visitors away; this says so to the type checker
    (a user, not `User | AnonymousUser`), and answers 403 rather than act for nobody should a
    view ever lose its guard.
    """
    user = request.user
    if not user.is_authenticated:
        raise PermissionDenied
    return user


def seating_circle(*, bot_id: int, owner_id: int, circle: int | None, house: bool | None) -> int:
    """The circle a bot sits as: its owner's circle (the owner's own id when the owner has no
    Seating row), or for a house bot a circle of its own (`-bot_id`, never a user's id). Two bots
    of one circle never share a rated table (`ladder.accounts.models`)."""
    if house:
        return -bot_id
    return owner_id if circle is None else circle


def circle_members(*, user_id: int) -> list[int]:
    """The ids of the accounts in `user_id`'s circle, itself included, in id order."""
    from ladder.accounts.models import Seating

    seating = Seating.objects.filter(user_id=user_id).first()
    if seating is None or seating.house:
        return [user_id]
    return sorted(Seating.objects.filter(circle=seating.circle).values_list("user_id", flat=True))
