"""Reading accounts: the signed-in user of a request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.authtoken.models import Token
from rest_framework.request import Request

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def user_token(*, user: User) -> Token | None:
    """The user's API token, if they have one (a user has at most one)."""
    return Token.objects.filter(user=user).first()


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
