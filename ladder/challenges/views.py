"""HTML pages of challenges: ask for one (and see yours), follow one, a rematch, call one off.
Thin: selectors read, services write, the templates show."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from ladder.accounts.selectors import signed_in_user
from ladder.challenges.forms import ChallengeForm
from ladder.challenges.models import Challenge
from ladder.challenges.selectors import (
    challenge_choices,
    challenge_get,
    challenge_list,
    challenge_place,
    challenge_state,
    challenge_visible,
    opponent_find,
)
from ladder.challenges.services import (
    ChallengeLimited,
    challenge_cancel,
    challenge_create,
    challenge_rematch,
)
from ladder.challenges.specs import Opponent

RECENT = 20
REFRESH_SECONDS = 3
"""How often a challenge's page reloads itself while its match is not over."""


def _initial(request: HttpRequest, own: list[str]) -> dict[str, object]:
    """The form as a link asks for it: `?bot=<id>` (the bot page's "challenge with this bot")
    picks that bot's newest version; `?opponent=owner/bot` ("challenge this bot") types it."""
    initial: dict[str, object] = {}
    bot = request.GET.get("bot", "")
    mine = [value for value in own if value.split(":")[0] == bot]
    if mine:
        initial["version"] = mine[0]
    opponent = request.GET.get("opponent", "").strip()
    if opponent and "\n" not in opponent:
        initial["others"] = opponent
    return initial


@login_required
def challenges_page(request: HttpRequest) -> HttpResponse:
    """`/challenges/`: ask for a match now (unrated) against opponents of your choice; your
    latest challenges and where they are. Past the daily quota: 429 with Retry-After."""
    user = signed_in_user(request)
    examples, own = challenge_choices(requester_id=user.pk)
    form = ChallengeForm(request.POST or None, own=own, examples=examples)
    if request.method != "POST":
        form.initial = _initial(request, form.versions)
    status, retry_after = 200, None
    if request.method == "POST" and form.is_valid():
        opponents: list[Opponent] = []
        for text in form.opponent_texts():
            found = opponent_find(me=user.get_username(), text=text)
            if found is None:
                form.add_error("others", f"No bot is named {text!r} (write owner/bot).")
            else:
                opponents.append(found)
        bot_id, _, number = form.cleaned_data["version"].partition(":")
        if form.is_valid():
            try:
                challenge = challenge_create(
                    requester=user,
                    bot_id=int(bot_id),
                    version=int(number),
                    opponents=opponents,
                    ruleset=form.cleaned_data["ruleset"],
                    seating=form.cleaned_data["seating"],
                    max_hands=form.cleaned_data.get("max_hands"),
                )
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    target = {"bot": "version", "opponents": None}.get(field, field)
                    form.add_error(target if target in form.fields else None, errors)
            except ChallengeLimited as exc:
                form.add_error(None, str(exc))
                status, retry_after = 429, exc.wait
            else:
                return redirect("challenge-page", challenge_id=challenge.pk)
    context = {
        "form": form,
        "has_versions": bool(own),
        "challenges": [
            (challenge, challenge_state(challenge))
            for challenge in challenge_list(requester_id=user.pk)[:RECENT]
        ],
    }
    response = render(request, "challenges/challenges.html", context, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _own(request: HttpRequest, challenge_id: int) -> Challenge:
    challenge = challenge_get(challenge_id=challenge_id)
    if challenge is None or not challenge_visible(user=request.user, challenge=challenge):
        raise Http404("No such challenge of yours.")
    return challenge


@login_required
def challenge_page(request: HttpRequest, challenge_id: int) -> HttpResponse:
    """`/challenges/<id>/`: where the challenge is (waiting, queued, running), reloading itself
    until its match is over; then a link to the match, its replay and a rematch. Its author's
    and staff's only (404 for others)."""
    challenge = _own(request, challenge_id)
    state = challenge_state(challenge)
    context = {
        "challenge": challenge,
        "state": state,
        # While it waits, or its match is queued: where it stands, about when it starts.
        "queue": challenge_place(challenge),
        "refresh": REFRESH_SECONDS if state in ("waiting", "queued", "running") else None,
        "is_requester": request.user.pk == challenge.requester_id,
    }
    return render(request, "challenges/challenge.html", context)


@login_required
@require_POST
def challenge_rematch_page(request: HttpRequest, challenge_id: int) -> HttpResponse:
    """`POST /challenges/<id>/rematch/` (the rematch button): the same challenge again."""
    challenge = _own(request, challenge_id)
    user = signed_in_user(request)
    if challenge.requester_id != user.pk:
        raise Http404("No such challenge of yours.")
    try:
        again = challenge_rematch(requester=user, challenge=challenge)
    except ChallengeLimited as exc:
        messages.error(request, str(exc))
        return redirect("challenge-page", challenge_id=challenge.pk)
    return redirect("challenge-page", challenge_id=again.pk)


@login_required
@require_POST
def challenge_cancel_page(request: HttpRequest, challenge_id: int) -> HttpResponse:
    """`POST /challenges/<id>/cancel/`: call off a challenge that still waits."""
    challenge = _own(request, challenge_id)
    if challenge.requester_id != signed_in_user(request).pk:
        raise Http404("No such challenge of yours.")
    if challenge_cancel(challenge=challenge):
        messages.success(request, f"Challenge {challenge.pk} called off.")
    else:
        messages.error(request, f"Challenge {challenge.pk} no longer waits: it is being played.")
    return redirect("challenge-page", challenge_id=challenge.pk)
