"""Tournaments in the Django admin and on the HTML pages, beyond test_apis.py: creating and
re-timing a tournament in the admin moves its clock entries in beat's database schedule; the
list's upcoming, running and finished groups on the API and the page; and a tournament's page
once rounds exist (entrants, tables, places, match links, byes, the tie-break rules)."""

from __future__ import annotations

import html
import json
import random
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.matches.models import Match
from ladder.tournaments.models import Tournament
from ladder.tournaments.services import (
    tournament_cancel,
    tournament_create,
    tournament_pause,
    tournament_progress,
    tournament_register,
    tournament_tick,
)
from tests.ladder.tournaments.conftest import settle_games

pytestmark = pytest.mark.django_db


def _admin_post(admin: Any, opens: datetime, closes: datetime, starts: datetime) -> dict[str, Any]:
    """The admin's add/change form for a Tournament, filled in (the admin splits datetimes)."""
    form: dict[str, Any] = {
        "name": "Admin cup",
        "description": "made in the admin",
        "organiser": admin.pk,
        "ruleset": "classic",
        "variants": '{"hidden_deals": true}',
        "limits": '{"max_hands": 20}',
        "seats": 3,
        "format": "round_robin",
        "swiss_rounds": 5,
        "meetings": 2,
        "duplicate": "on",
        "decision_ms": 500,
        "bank_ms": 10000,
        "eligibility": "open",
        "rated": "on",
        "seed": 42,
        "entries-TOTAL_FORMS": 0,
        "entries-INITIAL_FORMS": 0,
    }
    for name, when in [
        ("registration_opens", opens),
        ("registration_closes", closes),
        ("starts_at", starts),
        ("created", timezone.now()),
    ]:
        form[f"{name}_0"], form[f"{name}_1"] = when.strftime("%Y-%m-%d"), when.strftime("%H:%M:%S")
    return form


def _clock(t: Tournament) -> dict[str, tuple[Any, ...]]:
    """The tournament's entries in beat's schedule: step -> (time, task, args, one-off, on)."""
    from django_celery_beat.models import PeriodicTask

    return {
        p.name.removeprefix(f"tournament {t.pk} "): (
            p.clocked.clocked_time,
            p.task,
            json.loads(p.args),
            p.one_off,
            p.enabled,
        )
        for p in PeriodicTask.objects.filter(name__startswith=f"tournament {t.pk} ")
    }


def test_the_admin_creates_a_tournament_with_its_clock_and_moving_the_times_moves_it(
    client: Any, django_user_model: Any
) -> None:
    admin = django_user_model.objects.create_superuser(username="root", password="pw")
    client.force_login(admin)
    day = (timezone.now() + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    opens, closes, starts = day, day + timedelta(hours=2), day + timedelta(hours=3, minutes=30)
    answer = client.post(
        "/admin/tournaments/tournament/add/", _admin_post(admin, opens, closes, starts)
    )
    assert answer.status_code == 302, answer.content.decode()[-3000:]
    t = Tournament.objects.get()
    assert (t.name, t.description, t.organiser, t.ruleset, t.variants, t.limits) == (
        "Admin cup",
        "made in the admin",
        admin,
        "classic",
        {"hidden_deals": True},
        {"max_hands": 20},
    )
    assert (t.seats, t.format, t.meetings, t.duplicate, t.decision_ms, t.bank_ms, t.rated) == (
        3,
        "round_robin",
        2,
        True,
        500,
        10000,
        True,
    )
    assert (t.registration_opens, t.registration_closes, t.starts_at) == (opens, closes, starts)
    assert t.status == Tournament.Status.SCHEDULED
    task = "ladder.tournaments.tasks.tournament_tick"
    assert _clock(t) == {
        "open": (opens, task, [t.pk], True, True),
        "close": (closes, task, [t.pk], True, True),
        "start": (starts, task, [t.pk], True, True),
    }

    later = timedelta(days=1, hours=1)
    answer = client.post(
        f"/admin/tournaments/tournament/{t.pk}/change/",
        _admin_post(admin, opens + later, closes + later, starts + later),
    )
    assert answer.status_code == 302, answer.content.decode()[-3000:]
    t.refresh_from_db()
    assert t.starts_at == starts + later
    assert _clock(t) == {
        "open": (opens + later, task, [t.pk], True, True),
        "close": (closes + later, task, [t.pk], True, True),
        "start": (starts + later, task, [t.pk], True, True),
    }
    # The clocks of the old times went with them.
    from django_celery_beat.models import ClockedSchedule

    assert set(ClockedSchedule.objects.values_list("clocked_time", flat=True)) == {
        opens + later,
        closes + later,
        starts + later,
    }


def test_the_admin_fixes_the_rules_once_registration_opens_and_never_rearms_a_finished_clock(
    client: Any, django_user_model: Any
) -> None:
    from django_celery_beat.models import PeriodicTask

    admin = django_user_model.objects.create_superuser(username="root", password="pw")
    client.force_login(admin)
    now = timezone.now().replace(microsecond=0)
    opens, closes, starts = (
        now - timedelta(hours=1),
        now + timedelta(hours=1),
        now + timedelta(hours=2),
    )
    assert (
        client.post(
            "/admin/tournaments/tournament/add/", _admin_post(admin, opens, closes, starts)
        ).status_code
        == 302
    )
    t = Tournament.objects.get()
    tournament_tick(tournament_id=t.pk)  # registration opens
    t.refresh_from_db()
    assert t.status == Tournament.Status.REGISTRATION
    url = f"/admin/tournaments/tournament/{t.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="seats"' not in page and 'name="starts_at_0"' in page

    form = _admin_post(admin, opens, closes + timedelta(minutes=5), starts)
    form.update(name="Renamed cup", seats=6, format="swiss")
    assert client.post(url, form).status_code == 302
    t.refresh_from_db()
    assert (t.name, t.seats, t.format) == ("Renamed cup", 3, "round_robin")
    assert t.registration_closes == closes + timedelta(minutes=5)

    tournament_cancel(tournament=t, user=admin, reason="rained off")
    assert not PeriodicTask.objects.filter(
        name__startswith=f"tournament {t.pk} ", enabled=True
    ).exists()
    page = client.get(url).content.decode()
    assert 'name="starts_at_0"' not in page and 'name="name"' in page
    form["name"] = "Cancelled cup"
    assert client.post(url, form).status_code == 302
    t.refresh_from_db()
    assert t.name == "Cancelled cup" and t.status == Tournament.Status.CANCELLED
    assert not PeriodicTask.objects.filter(
        name__startswith=f"tournament {t.pk} ", enabled=True
    ).exists()


def _sections(page: str) -> dict[str, set[int]]:
    """The list page's sections: heading -> the ids of the tournaments linked under it."""
    parts = re.split(r"<h2>(\w+)</h2>", page)
    return {
        title: {int(pk) for pk in re.findall(r'href="/tournaments/(\d+)/"', body)}
        for title, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_the_list_groups_upcoming_running_and_finished_on_the_api_and_the_page(
    client: Any, organiser: Any, owner: Any, make_tournament: Any, entrants: Any
) -> None:
    bots = entrants(2)

    def started(name: str) -> Tournament:
        t = make_tournament(name=name, format="swiss", seats=2, swiss_rounds=1)
        for bot in bots:
            tournament_register(tournament=t, bot=bot, user=bot.owner)
        return tournament_tick(tournament_id=t.pk, now=t.starts_at)

    now = timezone.now()
    scheduled = tournament_create(
        organiser=organiser,
        name="later cup",
        registration_opens=now + timedelta(days=1),
        registration_closes=now + timedelta(days=2),
        starts_at=now + timedelta(days=3),
    )
    registration = make_tournament(name="open cup")
    running = started("running cup")
    paused = tournament_pause(tournament=started("paused cup"), user=organiser)
    finished = started("finished cup")
    settle_games(finished, random.Random(1))
    tournament_progress(tournament_id=finished.pk)
    cancelled = tournament_cancel(tournament=make_tournament(name="off cup"), user=organiser)
    groups = {
        "upcoming": [scheduled, registration],
        "running": [running, paused],
        "finished": [finished, cancelled],
    }
    assert {t.name: t.status for t in Tournament.objects.all()} == {
        "later cup": "scheduled",
        "open cup": "registration",
        "running cup": "running",
        "paused cup": "paused",
        "finished cup": "finished",
        "off cup": "cancelled",
    }

    for group, members in groups.items():
        listed = client.get("/api/tournaments/", {"status": group}).json()
        assert sorted(t["id"] for t in listed["results"]) == sorted(t.pk for t in members), group
    assert client.get("/api/tournaments/").json()["count"] == 6
    assert client.get("/api/tournaments/", {"status": "bogus"}).status_code == 400

    page = client.get("/tournaments/").content.decode()
    assert _sections(page) == {
        title: {t.pk for t in groups[title.lower()]}
        for title in ("Running", "Upcoming", "Finished")
    }
    assert list(_sections(page)) == ["Running", "Upcoming", "Finished"]
    assert "Swiss, 2 seats, modern rules, paused;" in page


def test_the_tournament_page_shows_rounds_tables_places_match_links_and_byes(
    client: Any, make_tournament: Any, entrants: Any, owner: Any
) -> None:
    t = make_tournament(name="Table cup", format="swiss", seats=2, swiss_rounds=2)
    for bot in entrants(5):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    assert "<h2>Round 1" not in client.get(f"/tournaments/{t.pk}/").content.decode()
    tournament_tick(tournament_id=t.pk, now=t.starts_at)
    entries = {e.pk: e for e in t.entries.select_related("bot", "version")}
    # owner/bot, with a line-break opportunity after the slash where it is a link.
    name = {pk: e.bot.display_name for pk, e in entries.items()}
    link = {pk: n.replace("/", "/<wbr>") for pk, n in name.items()}
    round_ = t.rounds.get(number=1)
    tables = list(round_.tables.order_by("number"))
    assert len(tables) == 2 and len(round_.byes) == 1
    played, waiting = (table.games.get().match for table in tables)
    for seat in played.seats.all():  # seat 1 wins table 1; table 2 is still queued
        seat.total, seat.place = (10_000, 1) if seat.seat == 1 else (0, 2)
        seat.save(update_fields=["total", "place"])
    played.status = Match.Status.FINISHED
    played.save(update_fields=["status"])
    tournament_progress(tournament_id=t.pk)

    page = html.unescape(client.get(f"/tournaments/{t.pk}/").content.decode())
    assert "<h2>Entrants (5)</h2>" in page
    for pk, e in entries.items():
        assert (
            f'<a href="/bots/{e.bot_id}/">{link[pk]}</a>, '
            f"plays v{e.version.number}, seed {e.seed_rank}"
        ) in page
    assert "<h2>Round 1 (running)</h2>" in page
    assert f"<p>Byes: {name[round_.byes[0]]}</p>" in page
    a, b = tables[0].seats
    c, d = tables[1].seats
    assert f"Table 1: seat 0 {name[a]} (place 2), seat 1 {name[b]} (place 1)." in page
    assert f"Table 2: seat 0 {name[c]}, seat 1 {name[d]}." in page
    assert f'<a href="/matches/{played.pk}/">{played.pk}</a> (finished)' in page
    assert f'<a href="/matches/{waiting.pk}/">{waiting.pk}</a> (queued)' in page
    assert (
        "a bye is worth 0.5 points. Ties are broken by, in order: "
        "Opponents' points (Buchholz); Total money; Table wins." in page
    )
    assert client.get(f"/matches/{played.pk}/").status_code == 200

    settle_games(t, random.Random(2))  # table 2 finishes: round 1 ends, round 2 starts
    tournament_progress(tournament_id=t.pk)
    page = html.unescape(client.get(f"/tournaments/{t.pk}/").content.decode())
    assert "<h2>Round 1 (finished)</h2>" in page and "<h2>Round 2 (running)</h2>" in page
    assert page.count("<p>Byes: ") == 2
    result = t.rounds.get(number=1).tables.get(number=2).result
    places = [result["places"][str(pk)] for pk in (c, d)]
    assert (
        f"Table 2: seat 0 {name[c]} (place {places[0]}), seat 1 {name[d]} (place {places[1]})."
        in page
    )
