"""Writing accounts: signing up (and how many accounts one address may create), the API token
of a user, and the seating circles that keep one person's bots apart at rated tables."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from ladder import hourly
from ladder.accounts.models import Seating
from ladder.clients import IPV6_SITE_BITS, is_loopback, network_key

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class UsernameTaken(ValidationError):
    """The username belongs to another account (a ValidationError on `username`, so a form
    shows it by the field; the API answers 409)."""

    def __init__(self) -> None:
        super().__init__({"username": "A user with that username already exists."})


HOUSE_USERNAME = "examples"
"""The house's account (`manage.py ladder_examples`): reserved, so that nobody signs up under it
before the site's examples exist and has every bot seated as a circle of its own."""


def user_signup(*, username: str, password: str) -> tuple[User, Token]:
    """A new user with `password` (checked by AUTH_PASSWORD_VALIDATORS) and an API token.

    Raises ValidationError with the messages by field: a malformed username, a weak password;
    UsernameTaken (one of them) for a username another account has, or the house's.
    """
    if username.casefold() == HOUSE_USERNAME:
        raise UsernameTaken()
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
SIGNUPS_48 = "signups48"
"""The bucket of accounts created per IPv6 /48 (IPv4 clients are not counted here: their
address is already the /64 bucket's key)."""


def _signup_limits(address: str | None) -> list[tuple[str, int, str]]:
    """The (bucket, limit, key) pairs a sign-up from `address` counts in: its /64 (or IPv4
    address), and for IPv6 its /48 too."""
    key = network_key(address) or ""
    limits = [(SIGNUPS, settings.GRASS_SIGNUPS_PER_HOUR, key)]
    site = network_key(address, ipv6_bits=IPV6_SITE_BITS)
    if site is not None and ":" in site:
        limits.append((SIGNUPS_48, settings.GRASS_SIGNUPS_PER_HOUR_48, site))
    return limits


def signup_wait(*, address: str | None, now: float | None = None) -> int:
    """0 if `address` may create an account now, else the seconds until it may: its network
    (`network_key`: the address itself for IPv4, its /64 for IPv6) created
    GRASS_SIGNUPS_PER_HOUR this clock hour. Accounts are free and each may upload bots that
    the workers then play, so one client must not make them by the thousand, nor by taking a
    new address of its /64 for each, nor from each /64 of its /48
    (GRASS_SIGNUPS_PER_HOUR_48)."""
    return max(
        hourly.wait(bucket=bucket, limit=limit, client=key, now=now)
        for bucket, limit, key in _signup_limits(address)
    )


def signup_counted(*, address: str | None, now: float | None = None) -> None:
    """Count an account created from `address`'s network (after it was: a refused sign-up, a
    taken name or a weak password, costs nothing)."""
    for bucket, limit, key in _signup_limits(address):
        hourly.spend(bucket=bucket, limit=limit, client=key, now=now)


def signup_refusal(wait: int) -> str:
    """Why a sign-up was refused, in the words the page and the API use."""
    return (
        f"Too many accounts were created from your address (or its network) in the last hour "
        f"(at most {settings.GRASS_SIGNUPS_PER_HOUR}). Try again in {hourly.in_minutes(wait)}."
    )


# --- seating circles (ladder.accounts.models.Seating) --------------------------------------


SIGNUP_LOCK = 0x7365
"""The first key of the PostgreSQL advisory locks that make sign-ups of one network take
turns linking ("se"; the second is the network's hash)."""


def _seating(user_id: int) -> Seating:
    seating, _ = Seating.objects.get_or_create(user_id=user_id, defaults={"circle": user_id})
    return seating


def seating_signup_record(
    *, user: User, address: str | None, now: datetime | None = None
) -> list[int]:
    """Record where `user` signed up from and link it to the accounts signed up from the same
    network (an IPv4 address, an IPv6 /48) within GRASS_LINK_SIGNUP_DAYS; returns the ids of the
    accounts linked to it (none for a loopback or missing address: the machine itself stands
    for nobody). Their bots never share a rated table: one person making several accounts to
    seat a feeder beside a partner finds them apart (docs/fairplay.md)."""
    now = now or timezone.now()
    site = None if is_loopback(address) else network_key(address, ipv6_bits=IPV6_SITE_BITS)
    try:
        network = str(ipaddress.ip_address(site)) if site else None
    except ValueError:
        network = None  # not an IP address (a Unix socket's REMOTE_ADDR): counted alone
    with transaction.atomic():
        if network is not None and connection.vendor == "postgresql":
            # Sign-ups from one network take turns here: two at once would each miss the
            # other's uncommitted row and stay unlinked (a script signing up in parallel).
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [SIGNUP_LOCK, network]
                )
        seating = _seating(user.pk)
        seating.signup_network, seating.signed_up = network, now
        seating.save(update_fields=["signup_network", "signed_up"])
        days = settings.GRASS_LINK_SIGNUP_DAYS
        if network is None or days <= 0:
            return []
        others = list(
            Seating.objects.filter(
                signup_network=network, signed_up__gte=now - timedelta(days=days), house=False
            )
            .exclude(user_id=user.pk)
            .values_list("user_id", flat=True)
        )
        if others:
            accounts_link(user_ids=[user.pk, *others], reason=f"signed up from {network}")
    return others


def accounts_link(*, user_ids: Iterable[int], reason: str) -> int:
    """Link the accounts `user_ids` (and every account already linked to one of them) into one
    circle, whose id is the smallest user id among them; returns it. Staff link accounts they
    know to be one person's (the admin's action, `manage.py accounts_link`); sign-ups from one
    network are linked by `seating_signup_record`. A house account is never linked."""
    ids = sorted(set(user_ids))
    if not ids:
        raise ValueError("no accounts to link")
    with transaction.atomic():
        seatings = [_seating(pk) for pk in ids]
        if any(s.house for s in seatings):
            raise ValueError("the house's accounts are never linked: each of their bots sits alone")
        circles = {s.circle for s in seatings}
        # Whole circles merge: an account linked to one of these joins with it.
        members = Seating.objects.select_for_update().filter(circle__in=circles)
        circle = min(circles)  # a circle's id is its smallest member's, so this is the union's
        members.update(circle=circle, linked_reason=reason[:200])
        Seating.objects.filter(user_id__in=ids).update(circle=circle, linked_reason=reason[:200])
    return circle


def account_unlink(*, user_id: int, reason: str) -> None:
    """Take one account out of its circle (a circle of its own again): staff undo a wrong
    link. The others stay linked together."""
    with transaction.atomic():
        seating = _seating(user_id)
        old = seating.circle
        rest = list(
            Seating.objects.select_for_update()
            .filter(circle=seating.circle)
            .exclude(user_id=user_id)
            .values_list("user_id", flat=True)
        )
        seating.circle, seating.linked_reason = user_id, reason[:200]
        seating.save(update_fields=["circle", "linked_reason"])
        if rest and old == user_id:
            # The circle was named after this account: the rest take the smallest of theirs.
            Seating.objects.filter(user_id__in=rest).update(circle=min(rest))


def account_house_set(*, user_id: int) -> None:
    """Make `user_id` a house account (the examples' owner): each of its bots sits as a circle
    of its own, so the examples may share tables with each other (their code is the site's)."""
    with transaction.atomic():
        seating = _seating(user_id)
        if seating.house:
            return
        user = get_user_model().objects.get(pk=user_id)
        if user.has_usable_password() or seating.signup_network is not None:
            # Someone's own account (signed up, or given a password): never the house, whose
            # bots would each sit as a circle of its own.
            raise ValueError(f"{user} is a person's account, not the house's")
        account_unlink(user_id=user_id, reason="the house")
        Seating.objects.filter(user_id=user_id).update(house=True)


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
