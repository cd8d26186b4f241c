"""HTML pages of accounts: sign-up (login and logout are Django's own views, see urls.py)."""

from __future__ import annotations

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from ladder.accounts.forms import SignupForm
from ladder.accounts.services import user_signup


def signup_page(request: HttpRequest) -> HttpResponse:
    """`/signup/`: a new account, signed in at once."""
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user, _token = user_signup(**form.cleaned_data)
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, messages)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})
