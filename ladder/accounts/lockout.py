"""Refusing logins after too many failures: what a locked-out client is told.

The counting is django-axes' (settings: AXES_*, from GRASS_LOGIN_FAILURE_LIMIT and
GRASS_LOGIN_LOCKOUT_MINUTES). Every password check goes through `authenticate()`, where axes'
backend refuses a locked-out account or address before the password is looked at, so the
log-in page, the admin's log-in and `POST /api/auth/token/` share one count.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.request import Request


def lockout_seconds() -> int:
    """How long a lockout lasts at most, from the last failed login that counted.

    Failures during a lockout do not extend it (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT
    is off), so this is an honest Retry-After.
    """
    return int(settings.GRASS_LOGIN_LOCKOUT_MINUTES) * 60


def lockout_message() -> str:
    """The words a locked-out client gets, on the page and in the API."""
    minutes = settings.GRASS_LOGIN_LOCKOUT_MINUTES
    return (
        "Too many failed logins for this account or from your address: logging in is "
        f"refused for up to {minutes} minute{'s' if minutes != 1 else ''}. Try again later; "
        "sessions and API tokens already issued keep working."
    )


def login_locked_out(request: HttpRequest | Request) -> bool:
    """Whether axes refused the `authenticate()` just made with `request` (or locked it out
    with that very failure). For views that call `authenticate()` themselves: a DRF request
    keeps the flag on itself, where axes' middleware does not look."""
    return bool(getattr(request, "axes_locked_out", False))


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the answer to a log-in form (the site's or the admin's) that axes
    refused: a page that says why and for how long, 429 with Retry-After."""
    response = render(
        request,
        "registration/locked_out.html",
        {"message": lockout_message()},
        status=429,
    )
    response["Retry-After"] = str(lockout_seconds())
    return response
