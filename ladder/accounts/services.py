"""Writing accounts: signing up (and how many accounts one address may create), and the API
token of a user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from ladder import hourly
from ladder.clients import network_key

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class UsernameTaken(ValidationError):
    """The username belongs to another account (a ValidationError on `username`, so a form
    shows it by the field; the API answers 409)."""

    def __init__(self) -> None:
        super().__init__({"username": "A user with that username already exists."})


def user_signup(*, username: str, password: str) -> tuple[User, Token]:
    """A new user with `password` (checked by AUTH_PASSWORD_VALIDATORS) and an API token.

    Raises ValidationError with the messages by field: a malformed username, a weak password;
    UsernameTaken (one of them) for a username another account has.
    """
    user_model = get_user_model()
    user = user_model(username=username)
    # The password is checked by the validators below, not by the model's (hashed) field.
    try:
        user.full_clean(exclude=["password"])
    except ValidationError as exc:
        if any(error.code == "unique" for error in exc.error_dict.get("username", [])):
            raise UsernameTaken() from None
        raise
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
        raise UsernameTaken() from None
    return user, token


SIGNUPS = "signups"
"""The `ladder.hourly` bucket of accounts created, per network (`ladder.clients.network_key`:
an IPv4 address, or an IPv6 address's /64)."""


def signup_wait(*, address: str | None, now: float | None = None) -> int:
    """0 if `address` may create an account now, else the seconds until it may: its network
    (`network_key`: the address itself for IPv4, its /64 for IPv6) created
    GRASS_SIGNUPS_PER_HOUR this clock hour. Accounts are free and each may upload bots that
    the workers then play, so one client must not make them by the thousand, nor by taking a
    new address of its /64 for each."""
    return hourly.wait(
        bucket=SIGNUPS,
        limit=settings.GRASS_SIGNUPS_PER_HOUR,
        client=network_key(address) or "",
        now=now,
    )


def signup_counted(*, address: str | None, now: float | None = None) -> None:
    """Count an account created from `address`'s network (after it was: a refused sign-up, a
    taken name or a weak password, costs nothing)."""
    hourly.spend(
        bucket=SIGNUPS,
        limit=settings.GRASS_SIGNUPS_PER_HOUR,
        client=network_key(address) or "",
        now=now,
    )


def signup_refusal(wait: int) -> str:
    """Why a sign-up was refused, in the words the page and the API use."""
    return (
        f"Too many accounts were created from your address in the last hour "
        f"(at most {settings.GRASS_SIGNUPS_PER_HOUR}). Try again in {hourly.in_minutes(wait)}."
    )


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
