"""HTML pages of ratings: the leaderboard, the site's home page."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from engine.rules import RULESETS
from ladder.charts.pages import leaderboard_chart
from ladder.ratings.selectors import HOME_RULESET, leaderboard, off_the_ladder

DEFAULT_RULESET = HOME_RULESET
PAGE_SIZE = 50
"""Bots per leaderboard page, as in the API. Rendering costs about 0.15 ms of CPU per row (Django
templates), so a page of 50 keeps the page about as cheap as the API's."""


class RulesetForm(forms.Form):
    ruleset = forms.ChoiceField(
        choices=[(name, name) for name in sorted(RULESETS)], label="Ruleset", required=False
    )


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    """`/?ruleset=&page=`: the rated bots of one ruleset, best first, 50 to a page."""
    form = RulesetForm(request.GET or None, initial={"ruleset": DEFAULT_RULESET})
    ruleset = DEFAULT_RULESET
    if form.is_valid() and form.cleaned_data["ruleset"]:
        ruleset = form.cleaned_data["ruleset"]
    status = 400 if form.errors else 200
    # get_page: a page number out of range or not a number shows the last or first page.
    page = Paginator(leaderboard(ruleset=ruleset), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "ruleset": ruleset,
        "page": page,
        "rows": page.object_list,
        "top_chart": leaderboard_chart(ruleset=ruleset),
        "off_ladder": off_the_ladder(ruleset=ruleset),
        "provisional_games": settings.GRASS_PROVISIONAL_GAMES,
    }
    return render(request, "ratings/leaderboard.html", context, status=status)
