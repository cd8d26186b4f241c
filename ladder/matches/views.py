"""HTML pages of matches: one match with its seats, results and rating changes."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ladder.bots.selectors import bot_errors_visible
from ladder.matches.models import Match
from ladder.matches.selectors import (
    match_debug_readable,
    match_detail,
    match_worker_visible,
    seat_stderr,
)
from ladder.matchmaking.waiting import match_place
from ladder.replays.selectors import UPLOAD_LIMIT


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """`/matches/<id>/`: the replay viewer first (while it waits for a worker, its place in
    the queue; while it is played, the live table), then the seats, per-hand scores, the facts
    (ruleset, variants, effective limits), the log's link and a drop zone for one's own log."""
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
    finished = detail.match.status == Match.Status.FINISHED
    # Each seat with whether the visitor may read its bot's stderr (its owner, staff).
    seats = [
        (
            seat,
            seat.seat.bot_version is not None
            and bot_errors_visible(user=request.user, bot=seat.seat.bot_version.bot),
        )
        for seat in detail.seats
    ]
    # The viewer fetches the debug lines only for a visitor who may read some seat's.
    readable = finished and match_debug_readable(
        match=detail.match, seats=[row.seat for row in detail.seats], user=request.user
    )
    context = {
        "debug_url": reverse("match-debug", args=[match_id]) if readable else None,
        "match": detail.match,
        "seats": seats,
        "any_stderr": finished and any(own for _, own in seats),
        "limits": detail.limits,
        "hands": hands,
        "variants": {name: value for name, value in detail.match.variants.items() if value},
        "finished": finished,
        "log_pending": detail.log_pending,
        # While queued: its place in its queue and about when it starts.
        "queue": match_place(detail.match),
        # Which host and process played it: the site's machines, for staff only.
        "worker_visible": match_worker_visible(user=request.user),
        # The viewer also takes a log file of the visitor's own, dropped on the page.
        "upload_limit": UPLOAD_LIMIT,
        "upload_limit_mib": UPLOAD_LIMIT // (1024 * 1024),
    }
    return render(request, "matches/match.html", context)


@login_required
def seat_stderr_page(request: HttpRequest, match_id: int, seat: int) -> HttpResponse:
    """`/matches/<id>/seats/<seat>/stderr/`: what the seat's bot wrote on stderr in this match,
    as plain text, for the bot's owner and staff only (it may quote the bot's source); others
    get 403. The runner keeps the last 4,000 characters."""
    found = seat_stderr(match_id=match_id, seat=seat)
    if found is None:
        raise Http404("No such seat in a finished match.")
    assert found.bot_version is not None  # the selector finds bots' seats only
    bot = found.bot_version.bot
    if not bot_errors_visible(user=request.user, bot=bot):
        raise PermissionDenied("Only the bot's owner may read its stderr.")
    heading = (
        f"stderr of {bot.display_name} v{found.bot_version.number}, seat {seat} of match "
        f"{match_id} (the last 4,000 characters)\n\n"
    )
    body = found.stderr or "(the bot wrote nothing on stderr)"
    response = HttpResponse(heading + body, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
