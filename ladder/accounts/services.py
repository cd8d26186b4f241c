"""Writing accounts: signing up, and the API token of a user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def user_signup(*, username: str, password: str) -> tuple[User, Token]:
    """A new user with `password` (checked by AUTH_PASSWORD_VALIDATORS) and an API token.

    Raises ValidationError with the messages by field: a taken or malformed username, a weak
    password.
    """
    user_model = get_user_model()
    user = user_model(username=username)
    # The password is checked by the validators below, not by the model's (hashed) field.
    user.full_clean(exclude=["password"])
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise ValidationError({"password": exc.messages}) from None
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
            token = Token.objects.create(user=user)
    except IntegrityError:
        # Someone took the name between the check above and this insert.
        raise ValidationError({"username": "A user with that username already exists."}) from None
    return user, token


def token_get_or_create(*, user: AbstractBaseUser) -> Token:
    """The user's API token (one per user, created on first use)."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


def token_replace(*, user: User) -> Token:
    """A new API token for `user`, the old one (if any) revoked in the same transaction: a
    token that leaked stops working the moment its replacement exists."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def token_revoke(*, user: User) -> bool:
    """Revoke the user's API token; returns whether there was one. Sessions are untouched:
    the page that revokes it stays signed in."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
