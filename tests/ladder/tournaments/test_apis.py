"""The tournaments' REST API and pages: who may do what, shapes, the results archive."""

from __future__ import annotations

import csv
import io
import random
import zipfile
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.accounts.services import token_get_or_create
from ladder.matches.models import Match
from ladder.tournaments.models import Tournament
from ladder.tournaments.services import tournament_progress, tournament_tick
from tests.ladder.tournaments.conftest import settle_games

pytestmark = pytest.mark.django_db


def _client(user: Any | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_get_or_create(user=user).key}")
    return client


def _body(**overrides: Any) -> dict[str, Any]:
    now = timezone.now()
    return {
        "name": "Friday cup",
        "format": "swiss",
        "seats": 2,
        "swiss_rounds": 2,
        "registration_opens": (now - timedelta(hours=1)).isoformat(),
        "registration_closes": (now + timedelta(hours=1)).isoformat(),
        "starts_at": (now + timedelta(hours=2)).isoformat(),
        **overrides,
    }


def test_only_organisers_create_and_bad_settings_say_why(organiser: Any, owner: Any) -> None:
    assert _client(None).post("/api/tournaments/", _body(), format="json").status_code == 401
    assert _client(owner).post("/api/tournaments/", _body(), format="json").status_code == 403
    bad = _client(organiser).post("/api/tournaments/", _body(seats=9), format="json")
    assert bad.status_code == 400 and "seats per table must be 2 to 6" in bad.json()["detail"]
    for limits, message in [
        ({"bogus": 1}, "'bogus'"),
        ({"max_hands": 0}, "max_hands must be a positive integer, not 0"),
    ]:
        bad = _client(organiser).post("/api/tournaments/", _body(limits=limits), format="json")
        assert bad.status_code == 400 and message in bad.json()["detail"], bad.json()
    assert not Tournament.objects.exists()
    created = _client(organiser).post("/api/tournaments/", _body(), format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["status"] == "scheduled" and created.json()["organiser"] == "org"


def test_enter_list_detail_withdraw_and_control_over_the_api(
    organiser: Any, owner: Any, stranger: Any, entrants: Any
) -> None:
    t_id = _client(organiser).post("/api/tournaments/", _body(), format="json").json()["id"]
    tournament_tick(tournament_id=t_id)  # registration opens
    bots = entrants(3)
    for bot in bots:
        answer = _client(bot.owner).post(
            f"/api/tournaments/{t_id}/entries/", {"bot": bot.pk}, format="json"
        )
        assert answer.status_code == 201, answer.json()
    refused = _client(stranger).post(
        f"/api/tournaments/{t_id}/entries/", {"bot": bots[0].pk}, format="json"
    )
    # Entering someone else's bot is refused like uploading to it: 403, saying who may.
    assert refused.status_code == 403 and "owner" in refused.json()["detail"]

    listed = _client(None).get("/api/tournaments/", {"status": "upcoming"}).json()
    assert [t["id"] for t in listed["results"]] == [t_id]
    assert _client(None).get("/api/tournaments/", {"status": "running"}).json()["count"] == 0

    entry = _client(None).get(f"/api/tournaments/{t_id}/").json()["entries"][0]
    gone = _client(stranger).delete(f"/api/tournaments/{t_id}/entries/{entry['id']}/")
    assert gone.status_code == 403
    gone = _client(owner).delete(f"/api/tournaments/{t_id}/entries/{entry['id']}/")
    assert gone.status_code == 200 and gone.json()["withdrawn"]

    t = Tournament.objects.get(pk=t_id)
    tournament_tick(tournament_id=t_id, now=t.starts_at)
    detail = _client(None).get(f"/api/tournaments/{t_id}/").json()
    assert detail["tournament"]["status"] == "running"
    assert detail["tie_breaks"][0].startswith("Opponents' points")
    assert detail["ranked_by"][:2] == ["Points", detail["tie_breaks"][0]]
    table = detail["rounds"][0]["tables"][0]
    assert len(table["seats"]) == 2 and table["matches"][0]["status"] == "queued"

    assert _client(owner).post(f"/api/tournaments/{t_id}/pause/").status_code == 403
    paused = _client(organiser).post(f"/api/tournaments/{t_id}/pause/")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    again = _client(organiser).post(f"/api/tournaments/{t_id}/pause/")
    assert again.status_code == 400 and "only a running tournament" in again.json()["detail"]
    cancelled = _client(organiser).post(f"/api/tournaments/{t_id}/cancel/")
    assert cancelled.json()["status"] == "cancelled"


def test_a_finished_tournament_downloads_as_logs_plus_standings_csv(
    make_tournament: Any, entrants: Any, owner: Any
) -> None:
    from ladder.tournaments.services import tournament_register

    t = make_tournament(format="swiss", seats=2, swiss_rounds=1)
    for bot in entrants(2):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at)
    assert _client(None).get(f"/api/tournaments/{t.pk}/archive/").status_code == 404
    settle_games(t, random.Random(1))
    match = Match.objects.get()
    match.log.save("m.jsonl.gz", ContentFile(b"a stored log"), save=True)
    tournament_progress(tournament_id=t.pk)

    answer = _client(None).get(f"/api/tournaments/{t.pk}/archive/")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    assert archive.read(f"round-1/table-1-game-0-match-{match.pk}.jsonl.gz") == b"a stored log"
    rows = list(csv.reader(io.StringIO(archive.read("standings.csv").decode())))
    assert rows[0][:5] == ["rank", "bot", "owner", "version", "points"]
    assert [r[0] for r in rows[1:]] == ["1", "2"]


def test_pages_list_show_and_guard_the_create_form(
    client: Any, organiser: Any, owner: Any, make_tournament: Any
) -> None:
    t = make_tournament(format="round_robin", seats=3, description="Friday night")
    assert t.name in client.get("/tournaments/").content.decode()
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert "Friday night" in page and "points (Buchholz)" in page
    assert "Rounds advanced" not in page and "the champion ranks first" not in page
    knockout = make_tournament(format="elimination", seats=3)
    page = client.get(f"/tournaments/{knockout.pk}/").content.decode()
    assert "the champion ranks first" in page
    detail = _client(None).get(f"/api/tournaments/{knockout.pk}/").json()
    assert detail["ranked_by"][0].startswith("Rounds advanced (the champion first")
    client.force_login(owner)
    assert client.get("/tournaments/new/").status_code == 403
    client.force_login(organiser)
    form = client.get("/tournaments/new/")
    assert form.status_code == 200 and "Swiss only" in form.content.decode()
    now = timezone.now()
    posted = client.post(
        "/tournaments/new/",
        {
            "name": "late start",
            "ruleset": "modern",
            "seats": 4,
            "format": "swiss",
            "swiss_rounds": 3,
            "meetings": 1,
            "decision_ms": 1000,
            "bank_ms": 30000,
            "registration_opens": now.strftime("%Y-%m-%dT%H:%M"),
            "registration_closes": (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
            "starts_at": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"),
            "eligibility": "open",
        },
    )
    assert posted.status_code == 200
    assert "cannot start before registration closes" in posted.content.decode()


def test_the_create_form_invites_bots_and_the_page_and_api_list_them(
    client: Any, organiser: Any, owner: Any, entrants: Any
) -> None:
    from ladder.tournaments.services import TournamentError, tournament_register

    bots = entrants(3)
    client.force_login(organiser)
    form = client.get("/tournaments/new/").content.decode()
    assert 'name="invited"' in form
    assert f'<option value="{bots[2].pk}">{bots[2].owner.username}/bot2</option>' in form
    now = timezone.now()
    answer = client.post(
        "/tournaments/new/",
        {
            "name": "Invitational",
            "ruleset": "modern",
            "variants": "{}",
            "limits": "{}",
            "seats": 2,
            "format": "swiss",
            "swiss_rounds": 2,
            "meetings": 1,
            "decision_ms": 1000,
            "bank_ms": 30000,
            "registration_opens": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"),
            "registration_closes": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"),
            "starts_at": (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
            "eligibility": "invited",
            "invited": [bots[0].pk, bots[2].pk],
        },
    )
    t = Tournament.objects.get()
    assert answer.status_code == 302, answer.content.decode()
    assert set(t.invited.values_list("pk", flat=True)) == {bots[0].pk, bots[2].pk}

    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert f"invited bots only: ann/bot0, {bots[2].owner.username}/bot2" in page
    detail = _client(None).get(f"/api/tournaments/{t.pk}/").json()["tournament"]
    assert sorted(detail["invited"]) == sorted([bots[0].pk, bots[2].pk])
    assert detail["limits"] == {}
    t = tournament_tick(tournament_id=t.pk)  # registration opens
    with pytest.raises(TournamentError, match="bot1 is not invited"):
        tournament_register(tournament=t, bot=bots[1], user=bots[1].owner)
    tournament_register(tournament=t, bot=bots[2], user=bots[2].owner)


def test_a_tournament_games_match_page_names_its_tournament_round_and_table(
    client: Any, make_tournament: Any, entrants: Any, owner: Any
) -> None:
    from ladder.tournaments.services import tournament_register

    t = make_tournament(format="swiss", seats=2, swiss_rounds=1, name="Night cup")
    for bot in entrants(2):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at)
    page = client.get(f"/matches/{Match.objects.get().pk}/").content.decode()
    assert f'href="/tournaments/{t.pk}/">Night cup</a>, round 1, table 1' in page


@pytest.mark.parametrize(
    ("starts_in_days", "limits", "error"),
    [
        (1, "{}", "cannot start before registration closes"),
        (3, '{"max_hands": 0}', "bad limits: max_hands must be a positive integer, not 0"),
        (3, '{"bogus": 1}', "bad limits: only max_hands, max_deals_per_turn"),
    ],
)
def test_the_admin_form_refuses_bad_settings(
    client: Any, django_user_model: Any, starts_in_days: int, limits: str, error: str
) -> None:
    admin = django_user_model.objects.create_superuser(username="root", password="pw")
    client.force_login(admin)
    now = timezone.now()
    answer = client.post(
        "/admin/tournaments/tournament/add/",
        {
            "name": "bad",
            "organiser": admin.pk,
            "ruleset": "modern",
            "variants": "{}",
            "limits": limits,
            "seats": 4,
            "format": "swiss",
            "swiss_rounds": 3,
            "meetings": 1,
            "decision_ms": 1000,
            "bank_ms": 30000,
            "registration_opens_0": now.strftime("%Y-%m-%d"),
            "registration_opens_1": "00:00:00",
            "registration_closes_0": (now + timedelta(days=2)).strftime("%Y-%m-%d"),
            "registration_closes_1": "00:00:00",
            "starts_at_0": (now + timedelta(days=starts_in_days)).strftime("%Y-%m-%d"),
            "starts_at_1": "00:00:00",
            "eligibility": "open",
            "seed": 1,
            "created_0": now.strftime("%Y-%m-%d"),
            "created_1": "00:00:00",
            "entries-TOTAL_FORMS": 0,
            "entries-INITIAL_FORMS": 0,
        },
    )
    assert answer.status_code == 200
    assert error in answer.content.decode()
    assert not Tournament.objects.exists()


@pytest.mark.parametrize(
    ("variants", "limits", "error"),
    [
        ('{"hidden_deals": true}', '{"max_hands": 20}', None),
        ('{"no_such_variant": true}', "{}", "bad variants"),
        ("{}", '{"max_hands": 0}', "bad limits: max_hands must be a positive integer, not 0"),
    ],
)
def test_the_create_form_makes_a_scheduled_tournament_with_its_variants(
    client: Any, organiser: Any, variants: str, limits: str, error: str | None
) -> None:
    client.force_login(organiser)
    now = timezone.now()
    answer = client.post(
        "/tournaments/new/",
        {
            "name": "Friday classic cup",
            "ruleset": "classic",
            "variants": variants,
            "limits": limits,
            "seats": 6,
            "format": "swiss",
            "swiss_rounds": 5,
            "meetings": 1,
            "decision_ms": 1000,
            "bank_ms": 30000,
            "registration_opens": now.strftime("%Y-%m-%dT%H:%M"),
            "registration_closes": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"),
            "starts_at": (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
            "eligibility": "open",
        },
    )
    if error:
        assert answer.status_code == 200 and error in answer.content.decode()
        assert not Tournament.objects.exists()
        return
    t = Tournament.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/tournaments/{t.pk}/"
    assert (t.ruleset, t.variants, t.limits, t.seats, t.status) == (
        "classic",
        {"hidden_deals": True},
        {"max_hands": 20},
        6,
        "scheduled",
    )
