"""HTML pages of ratings: the leaderboard, the site's home page."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from engine.rules import RULESETS
from ladder.ratings.selectors import leaderboard

DEFAULT_RULESET = "modern"


class RulesetForm(forms.Form):
    ruleset = forms.ChoiceField(
        choices=[(name, name) for name in sorted(RULESETS)], label="Ruleset", required=False
    )


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    """`/?ruleset=`: every rated bot of one ruleset, best first."""
    form = RulesetForm(request.GET or None, initial={"ruleset": DEFAULT_RULESET})
    ruleset = DEFAULT_RULESET
    if form.is_valid() and form.cleaned_data["ruleset"]:
        ruleset = form.cleaned_data["ruleset"]
    status = 400 if form.errors else 200
    context = {"form": form, "ruleset": ruleset, "rows": leaderboard(ruleset=ruleset)}
    return render(request, "ratings/leaderboard.html", context, status=status)
