"""HTML pages of accounts: sign-up, the API token page (login and logout are Django's own
views, see urls.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from ladder.accounts.forms import SignupForm
from ladder.accounts.selectors import signed_in_user, user_token
from ladder.accounts.services import (
    seating_signup_record,
    signup_counted,
    signup_refusal,
    signup_wait,
    token_replace,
    token_revoke,
    user_signup,
)
from ladder.clients import client_address

NEW_TOKEN = "new-api-token"
"""The session key that carries a new account's API token from sign-up to the token page."""


def signup_page(request: HttpRequest) -> HttpResponse:
    """`/signup/`: a new account, signed in at once (429 and the form again past
    GRASS_SIGNUPS_PER_HOUR accounts from the address)."""
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        address = client_address(request)
        wait = signup_wait(address=address)
        if wait:
            form.add_error(None, signup_refusal(wait))
            response = render(request, "accounts/signup.html", {"form": form}, status=429)
            response["Retry-After"] = str(wait)
            return response
        try:
            user, token = user_signup(**form.cleaned_data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            signup_counted(address=address)
            seating_signup_record(user=user, address=address)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            # The token made with the account is shown once, on the token page (the session
            # holds it until then: it is the user's own, in their own session).
            request.session[NEW_TOKEN] = token.key
            messages.success(request, f"Welcome, {user.get_username()}: your account is ready.")
            return redirect("tokens-page")
    return render(request, "accounts/signup.html", {"form": form})


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    """`/account/tokens/`: the signed-in user's API token: create (or replace) it, shown in
    full once, right after; revoke it. A script uses it as `Authorization: Token <key>`, so
    nobody needs to send a password to `POST /api/auth/token/`."""
    user = signed_in_user(request)
    created = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            created = token_replace(user=user)
        elif action == "revoke":
            if token_revoke(user=user):
                messages.success(request, "Your API token is revoked: it no longer works.")
            return redirect("tokens-page")
    token = user_token(user=user) if created is None else created
    # Just signed up: the token made with the account, shown in full this once.
    signed_up = token is not None and request.session.pop(NEW_TOKEN, None) == token.key
    if signed_up:
        created = token
    context = {"token": token, "created": created, "signed_up": signed_up}
    return render(request, "accounts/tokens.html", context)
