"""The Play page: a signed-in person sets up a game against bots and is sent to its match page,
where they play it (`ladder/static/ladder/live.js` over `ladder.live.consumers`)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from ladder.live.forms import PlayForm
from ladder.live.selectors import person_games, play_opponents
from ladder.live.services import PlayError, person_game_create


def play_page(request: HttpRequest) -> HttpResponse:
    """`/play/`: the form for a signed-in person; for a visitor, what Play is and that it needs
    an account (the menu shows Play to everyone, as README says)."""
    user = request.user
    if not user.is_authenticated:
        if request.method == "POST":
            return redirect_to_login(request.get_full_path())
        return render(request, "live/play_signed_out.html")
    form = PlayForm(request.POST or None, opponents=play_opponents(user=user))
    if request.method == "POST" and form.is_valid():
        try:
            match = person_game_create(
                user=user,
                ruleset=form.cleaned_data["ruleset"],
                opponents=form.opponents(),
                seat=form.cleaned_data["seat"],
                hands=form.cleaned_data["hands"],
            )
        except PlayError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("match-page", match.pk)
    context = {
        "form": form,
        "games": person_games(user=user),
        "decision_seconds": settings.GRASS_PLAY_DECISION_SECONDS,
    }
    return render(request, "live/play.html", context, status=400 if form.errors else 200)
