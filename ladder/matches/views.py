"""HTML pages of matches: one match with its seats, results and rating changes."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ladder.matches.models import Match
from ladder.matches.selectors import match_detail
from ladder.replays.selectors import UPLOAD_LIMIT


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """`/matches/<id>/`: ruleset, variants, status, seats, per-hand scores, the log's link."""
    try:
        detail = match_detail(match_id=match_id)
    except Match.DoesNotExist:
        raise Http404("No such match.") from None
    result = detail.match.result or {}
    # The engine's result holds one list of seat scores per hand; the template shows a row each.
    hands = [
        {"number": number, "scores": scores}
        for number, scores in enumerate(result.get("hand_scores", []), start=1)
    ]
    context = {
        "match": detail.match,
        "seats": detail.seats,
        "hands": hands,
        "variants": {name: value for name, value in detail.match.variants.items() if value},
        "finished": detail.match.status == Match.Status.FINISHED,
        "log_pending": detail.log_pending,
        # The viewer also takes a log file of the visitor's own, dropped on the page.
        "upload_limit": UPLOAD_LIMIT,
        "upload_limit_mib": UPLOAD_LIMIT // (1024 * 1024),
    }
    return render(request, "matches/match.html", context)
