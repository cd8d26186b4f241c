"""HTML pages of tournaments: the list (upcoming, running, finished), a tournament's page
(entries, rounds, tables, live standings with the tie-break rules, every game's log), a form to
create one, and the POST actions behind the page's buttons. Thin: selectors read, services
write."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from engine.rules import RULESETS
from ladder.bots.models import Bot
from ladder.charts.pages import tournament_chart
from ladder.tournaments import services, standings
from ladder.tournaments.models import Entry, Tournament
from ladder.tournaments.selectors import TournamentDetail, tournament_detail, tournament_list


def tournament_list_page(request: HttpRequest) -> HttpResponse:
    groups = [
        (title, list(tournament_list(group=group)[:50]))
        for title, group in (
            ("Running", "running"),
            ("Upcoming", "upcoming"),
            ("Finished", "finished"),
        )
    ]
    may_create = request.user.has_perm(services.CREATE_PERMISSION)
    return render(request, "tournaments/list.html", {"groups": groups, "may_create": may_create})


def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament = get_object_or_404(Tournament.objects.select_related("organiser"), pk=tournament_id)
    detail = tournament_detail(tournament=tournament)
    user = request.user
    my_bots = []
    if user.is_authenticated and tournament.status == Tournament.Status.REGISTRATION:
        entered = {e.bot_id for e in detail.entries if e.withdrawn is None}
        my_bots = [b for b in Bot.objects.filter(owner=user) if b.pk not in entered]
    context = {
        "t": tournament,
        "detail": detail,
        "my_bots": my_bots,
        "is_organiser": user.is_authenticated
        and (user.pk == tournament.organiser_id or user.is_staff),
        "user_id": user.pk,
        "bye_points": standings.bye_points(tournament.seats),
        "seats_text": seats_text(tournament.seats, detail),
        "progress_chart": tournament_chart(tournament=tournament),
    }
    return render(request, "tournaments/tournament.html", context)


def seats_text(asked: int, detail: TournamentDetail) -> str:
    """What the page says of table sizes: the sizes the tables really have once rounds are
    paired (a field that does not divide by the asked size is split into smaller tables,
    which differ by at most one), else the size asked for."""
    sizes = sorted({len(table.seats) for r in detail.rounds for table in r.tables})
    if not sizes or sizes == [asked]:
        return f"{asked} seats a table"
    played = " or ".join(str(size) for size in sizes)
    return (
        f"tables of {played} seats (at most {asked} asked; "
        f"{len([e for e in detail.entries if e.version_id])} entrants split evenly)"
    )


def _act(
    request: HttpRequest, tournament_id: int, call: Callable[..., object], **kwargs: object
) -> HttpResponse:
    try:
        call(**kwargs)
    except services.TournamentError as exc:
        messages.error(request, str(exc))
    return redirect("tournament-page", tournament_id=tournament_id)


@login_required
@require_POST
def tournament_enter(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament = get_object_or_404(Tournament, pk=tournament_id)
    bot = get_object_or_404(Bot, pk=request.POST.get("bot") or 0)
    return _act(
        request,
        tournament_id,
        services.tournament_register,
        tournament=tournament,
        bot=bot,
        user=request.user,
    )


@login_required
@require_POST
def tournament_withdraw(request: HttpRequest, tournament_id: int, entry_id: int) -> HttpResponse:
    entry = get_object_or_404(Entry, pk=entry_id, tournament_id=tournament_id)
    return _act(
        request, tournament_id, services.tournament_withdraw, entry=entry, user=request.user
    )


@login_required
@require_POST
def tournament_control(request: HttpRequest, tournament_id: int, action: str) -> HttpResponse:
    tournament = get_object_or_404(Tournament, pk=tournament_id)
    return _act(
        request,
        tournament_id,
        services.TOURNAMENT_ACTIONS[action],
        tournament=tournament,
        user=request.user,
    )


class InvitedBotsField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Bot) -> str:
        # Bot names are unique per owner only.
        return obj.display_name


class TournamentForm(forms.ModelForm):
    invited = InvitedBotsField(
        queryset=Bot.objects.select_related("owner").order_by("name", "owner__username"),
        required=False,
        help_text="With “invited bots” eligibility: the bots that may enter.",
    )
    registration_opens = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    registration_closes = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    starts_at = forms.DateTimeField(widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    ruleset = forms.ChoiceField(choices=[(r, r) for r in sorted(RULESETS)])

    class Meta:
        model = Tournament
        fields = [
            "name",
            "description",
            "ruleset",
            "variants",
            "limits",
            "seats",
            "format",
            "swiss_rounds",
            "meetings",
            "duplicate",
            "decision_ms",
            "bank_ms",
            "registration_opens",
            "registration_closes",
            "starts_at",
            "eligibility",
            "invited",
            "top_n",
            "rated",
        ]
        help_texts = {
            "variants": 'Variants as JSON, e.g. {"hidden_deals": true, "target": 500000}; '
            "{} for none.",
            "limits": 'Engine limits for every game as JSON, e.g. {"max_hands": 20}; '
            "max_hands and max_deals_per_turn, positive integers; {} for full games.",
            "swiss_rounds": "Swiss only: the number of rounds.",
            "meetings": "Round robin only: how often every pair shares a table.",
            "decision_ms": "Free thinking time per decision, in milliseconds.",
            "bank_ms": "Extra time per game for slow decisions, in milliseconds.",
            "top_n": "With “top N” eligibility.",
            "duplicate": "Replay each table's cards once per seat rotation; the sum decides.",
        }


@login_required
def tournament_create_page(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(services.CREATE_PERMISSION):
        raise PermissionDenied("Only organisers may create tournaments.")
    form = TournamentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            tournament = services.tournament_create(organiser=request.user, **form.cleaned_data)
        except services.TournamentError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("tournament-page", tournament_id=tournament.pk)
    return render(request, "tournaments/new.html", {"form": form})
