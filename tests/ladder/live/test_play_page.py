"""The Play page and people's matches: made unrated with the person seated, one at a time,
sent to GRASS_PLAY_QUEUE; the match page and API show a person's seat; refusals say why."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from ladder.bots.models import Bot
from ladder.live.services import PlayError, person_game_create
from ladder.matches.models import Match, MatchSeat
from ladder.matches.services import match_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def example(valid_version: Any) -> Bot:
    """An example bot (owned by `examples`, as `manage.py ladder_examples` makes them)."""
    examples = get_user_model().objects.create_user(username="examples")
    bot = valid_version("greedy", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples)
    return Bot.objects.get(pk=bot.pk)


def test_the_play_page_is_for_people_who_are_signed_in(client: Any) -> None:
    # README says Play is in the menu: it is, for everyone; signed out, the page says that
    # playing needs an account and links to both ways in.
    for path in ("/", "/write-a-bot/", "/tournaments/"):
        assert '<li><a href="/play/">Play</a></li>' in client.get(path).content.decode(), path
    response = client.get("/play/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Playing needs an account." in html
    assert 'href="/login/?next=/play/"' in html and 'href="/signup/"' in html
    assert "<form" not in html.split("<main", 1)[1]
    posted = client.post("/play/", {"ruleset": "modern", "hands": "1", "opponent_1": "1"})
    assert posted.status_code == 302 and posted["Location"] == "/login/?next=/play/"
    assert not Match.objects.exists()


def test_readme_says_what_play_asks_of_a_visitor() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    text = " ".join(readme.split())
    assert "**Play** (in the menu; signed out, it asks you to log in or sign up first)" in text


def test_a_person_starts_a_game_and_is_sent_to_its_page(
    client: Any,
    stranger: Any,
    example: Bot,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    from ladder.matches import tasks

    sent: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda *a, **k: sent.append((a, k)))
    settings.GRASS_PLAY_QUEUE = "play"
    settings.GRASS_PLAY_DECISION_SECONDS = 90
    client.force_login(stranger)
    page = client.get("/play/")
    assert page.status_code == 200 and example.display_name in page.content.decode()
    form = {"ruleset": "classic", "hands": "2", "seat": "1", "opponent_1": str(example.pk)}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/play/", form)
    match = Match.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    assert not match.rated and match.ruleset == "classic" and match.limits == {"max_hands": 2}
    assert match.time_control == {"remote_decision_ms": 90_000}
    seats = list(match.seats.order_by("seat"))
    assert [(s.player, s.bot_version_id) for s in seats] == [
        (None, example.versions.get().pk),
        (stranger, None),
    ]
    assert sent == [(((match.pk,),), {"queue": "play", "priority": 0})]

    # The match page has the live table; the API shows the person's seat.
    shown = client.get(f"/matches/{match.pk}/").content.decode()
    assert 'data-ws="/ws/matches/' in shown and "bo (you)" in shown
    api = client.get(f"/api/matches/{match.pk}/").json()
    assert api["seats"][1]["player"] == stranger.username and api["seats"][1]["bot"] is None
    assert api["seats"][0]["player"] is None and api["seats"][0]["bot"] == "greedy"
    listed = client.get("/api/matches/").json()["results"][0]["seats"]
    assert listed[1] == {**listed[1], "player": stranger.username, "bot_id": None}

    # One game at a time: the second is refused, saying why.
    again = client.post("/play/", form)
    assert again.status_code == 400 and "you have a game queued" in again.content.decode()
    assert Match.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"hands": "99"}, "Select a valid choice"),
        ({"opponent_1": "123456"}, "Select a valid choice"),
        ({"ruleset": "poker"}, "Select a valid choice"),
        ({"opponent_2": "EXAMPLE"}, "a bot can hold only one seat"),
    ],
)
def test_a_game_that_cannot_be_made_is_refused_with_the_reason(
    client: Any, stranger: Any, example: Bot, change: dict[str, str], why: str
) -> None:
    client.force_login(stranger)
    form = {"ruleset": "modern", "hands": "1", "opponent_1": str(example.pk)}
    form.update({k: str(example.pk) if v == "EXAMPLE" else v for k, v in change.items()})
    response = client.post("/play/", form)
    assert response.status_code == 400 and why in response.content.decode()
    assert not Match.objects.exists()


def test_a_seat_past_the_games_seats_is_a_clear_error_beside_the_field(
    client: Any, stranger: Any, example: Bot
) -> None:
    """Seats 0 to 5 were offered whatever the number of opponents; a seat past the game's was
    refused with a line above the form ("there are seats 0 to 1"). The page's script now
    offers only the game's seats (tests/browser/test_play_page_browser.py); the server still
    refuses another, beside the field, saying which seats there are."""
    client.force_login(stranger)
    form = {"ruleset": "modern", "hands": "1", "opponent_1": str(example.pk), "seat": "3"}
    response = client.post("/play/", form)
    assert response.status_code == 400
    html = response.content.decode()
    field = html.split('<label for="id_seat">', 1)[1].split("</p>", 1)[0]
    assert (
        '<span class="error" role="alert">With 1 opponent the game has 2 seats, 0 to 1: '
        "choose one of those, or at random.</span>"
    ) in field
    assert "play.js" in html
    assert not Match.objects.exists()
    form["seat"] = "1"
    assert client.post("/play/", form).status_code == 302


def test_the_match_page_names_a_persons_seat_by_username(
    client: Any, stranger: Any, valid_version: Any
) -> None:
    """The seat once read "bo person" (the username, then a badge "person")."""
    match = match_create(
        versions=[valid_version("a")], people={1: stranger}, rated=False, shuffle=False
    )
    anonymous = client.get(f"/matches/{match.pk}/").content.decode()
    assert '<td data-label="Bot">bo (a person, in the browser)</td>' in anonymous
    assert 'class="badge">person<' not in anonymous
    client.force_login(stranger)
    own = client.get(f"/matches/{match.pk}/").content.decode()
    assert '<td data-label="Bot">bo (you)</td>' in own
    # The status the page states outside the live table is marked for the table's script to
    # keep true (it was "queued" while the person was asked for a move).
    assert own.count("<span data-match-status>queued</span>") == 2


def test_the_service_refuses_what_the_form_cannot_catch(stranger: Any, example: Bot) -> None:
    with pytest.raises(PlayError, match="not on the ladder"):
        person_game_create(user=stranger, ruleset="modern", opponents=[9999], seat=0, hands=1)
    Bot.objects.filter(pk=example.pk).update(disabled="2026-01-01T00:00Z")
    with pytest.raises(PlayError, match="not on the ladder"):
        person_game_create(user=stranger, ruleset="modern", opponents=[example.pk], seat=0, hands=1)
    with pytest.raises(PlayError, match="seats 0 to 1"):
        person_game_create(user=stranger, ruleset="modern", opponents=[example.pk], seat=2, hands=1)


def test_a_match_with_a_person_is_never_rated_and_seats_a_person_once(
    stranger: Any, valid_version: Any
) -> None:
    a, b = valid_version("a"), valid_version("b")
    with pytest.raises(ValueError, match="never rated"):
        match_create(versions=[a], people={0: stranger})
    with pytest.raises(ValueError, match="two seats"):
        match_create(versions=[a], people={0: stranger, 1: stranger}, rated=False)
    with pytest.raises(ValueError, match="among the 3 seats"):
        match_create(versions=[a, b], people={3: stranger}, rated=False)
    match = match_create(versions=[a, b], people={1: stranger}, rated=False, shuffle=False)
    seats = MatchSeat.objects.filter(match=match).order_by("seat")
    assert [s.holder for s in seats] == [a.bot.display_name, stranger.username, b.bot.display_name]
    with pytest.raises(ValueError, match="person's seat"):
        _ = seats[1].version


def test_the_bots_sit_in_the_order_the_person_chose_them(
    client: Any,
    stranger: Any,
    valid_version: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 35's walk: the opponents were seated in a random order whatever the order chosen
    (the service let `match_create` shuffle them). Any shuffle here reverses the list, so a
    game that shuffled its bots could not pass by luck."""
    import random

    from ladder.matches import tasks

    monkeypatch.setattr(tasks.run_match, "apply_async", lambda *a, **k: None)
    monkeypatch.setattr(random.SystemRandom, "shuffle", lambda self, items: items.reverse())
    # Chosen in an order that is neither the bots' ids' nor its reverse.
    # The Play page offers the example bots (and the person's own, and the leaderboard's).
    a, b, c, d = (valid_version(name).bot for name in ("ann", "ben", "cy", "di"))
    examples = get_user_model().objects.create_user(username="examples")
    Bot.objects.filter(pk__in=[a.pk, b.pk, c.pk, d.pk]).update(owner=examples)
    chosen = [c, a, d, b]
    client.force_login(stranger)
    form = {"ruleset": "modern", "hands": "1", "seat": "2"}
    form.update({f"opponent_{i}": str(bot.pk) for i, bot in enumerate(chosen, 1)})
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/play/", form).status_code == 302
    seats = Match.objects.get().seats.order_by("seat")
    assert [s.bot_id for s in seats] == [c.pk, a.pk, None, d.pk, b.pk]
    assert seats[2].player == stranger
