"""A person plays a whole game against a bot in a real Chromium: the Play page, the match page's
live table over a WebSocket served by a real ASGI server (daphne, as `manage.py runserver`
runs it for `make run`), the game played by a real Celery worker as the worker's unprivileged
user with the bot in its sandbox, the person's requests as buttons; meanwhile an anonymous
visitor watches the same table and is never shown a hidden card, in the page or on the wire.
When the game ends, both pages show the recorded match with its replay.

Host-wide state: its Celery worker sweeps the host's dead boxes as it starts, so the file
runs alone, in the host-wide group (tests/conftest.py); Redis is the run's own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from ladder.bots.models import Bot
from ladder.matches.models import Match
from ladder.ratings.models import RatingChange
from tests.ladder.conftest import sandbox_ready  # noqa: F401  (fixture)
from tests.ladder.live.conftest import channel_layer, layer_url  # noqa: F401  (fixture)
from tests.ladder.tournaments.conftest import entrants, make_tournament, organiser  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "grass-is-greener-42"


def frames_seen(page: Any) -> list[dict[str, Any]]:
    """Every frame the page's WebSockets receive, parsed, as they arrive."""
    frames: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        def received(payload: Any) -> None:
            message = json.loads(payload)
            if message.get("type") == "frame":
                frames.append(message["frame"])

        ws.on("framereceived", received)

    page.on("websocket", on_socket)
    return frames


def visible_faces(page: Any) -> list[str] | None:
    """The cards the page shows face up in players' hands while the game is played (None once
    the live table shows the game over: then every hand is revealed). One look in the page:
    two (is it over? which faces?) could straddle the last frame, which reveals the hands."""
    faces: list[str] | None = page.evaluate(
        """() => document.querySelector("[data-live][data-over]") ? null :
        Array.from(document.querySelectorAll("[data-live] [data-role=hand] .card:not(.back)"),
                   (c) => c.dataset.card)"""
    )
    return faces


@pytest.mark.timeout(900)  # a person's whole game, at a person's pace (the clicks)
@pytest.mark.usefixtures("channel_layer", "sandbox_ready")
def test_a_person_plays_a_whole_game_in_the_browser_and_a_watcher_sees_no_hidden_card(
    browser: Any,
    asgi_server: str,
    celery: Callable[..., Any],
    valid_version: Any,
    django_user_model: Any,
    screenshot: Any,
) -> None:

    # An example bot, as `make run` makes them: the Play page offers the examples.
    examples = django_user_model.objects.create_user(username="examples")
    bot = valid_version("rob", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples)
    worker = celery("worker", concurrency=1, GRASS_CHANNEL_LAYER_URL=layer_url())
    base = asgi_server

    person = browser.new_context(viewport={"width": 1200, "height": 900})
    page = person.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Signed up through the server's own page: its password hasher is production's.
    page.goto(f"{base}/signup/")
    page.get_by_label("Username").fill("pia")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("button", name="Log out pia").wait_for()
    page.get_by_role("link", name="Play").click()
    page.get_by_label("Ruleset").select_option("modern")
    page.get_by_label("Opponent 1").select_option(str(bot.pk))
    page.get_by_label("Your seat").select_option("0")
    page.get_by_label("Hands").select_option("1")
    own = frames_seen(page)
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_url("**/matches/*/")
    match = Match.objects.get()
    assert not match.rated and match.seats.get(seat=0).player.username == "pia"

    # An anonymous visitor watches the same table.
    watcher_context = browser.new_context(viewport={"width": 1200, "height": 900})
    watcher = watcher_context.new_page()
    watched = frames_seen(watcher)
    watcher.on("pageerror", lambda exc: errors.append(f"watcher: {exc}"))
    watcher.goto(f"{base}/matches/{match.pk}/")

    answered: set[str] = set()
    faces_while_playing: list[list[str]] = []
    """The face-up cards in the watcher's hands at each look while the game ran: none."""
    shot = False
    deadline = time.monotonic() + 600
    while Match.objects.filter(pk=match.pk, status__in=["queued", "running"]).exists():
        assert time.monotonic() < deadline, "the game did not end in 10 minutes"
        # A worker whose host cannot run the sandbox says so at once: no waiting it out.
        assert "refuses matches" not in worker.text() and "stops taking" not in worker.text(), (
            worker.text()[-2000:]
        )
        request = page.locator("[data-role=request]:not([hidden])")
        if request.count():
            current = request.get_attribute("data-request") or ""
            buttons = request.locator("button:not([disabled])")
            if current not in answered and buttons.count():
                if not shot:
                    screenshot(page, "play-your-move")
                    screenshot(watcher, "play-watcher")
                    shot = True
                # The last legal action: the safe default is often the first, so this shows
                # that the person's own choice is played.
                buttons.nth(buttons.count() - 1).click()
                answered.add(current)
        if watcher.locator("[data-live] [data-role=hand]").count():
            faces = visible_faces(watcher)
            if faces is not None:
                faces_while_playing.append(faces)
        time.sleep(0.2)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, match.failure_reason
    seat = match.seats.get(seat=0)
    assert len(answered) >= 2 and seat.decisions == len(answered)
    assert seat.strikes == 0, (seat.fault_details, sorted(answered))
    assert not seat.forfeited and seat.place is not None
    assert not RatingChange.objects.filter(match_id=match.pk).exists()

    # Both pages show the recorded match (with its replay) once the game is over.
    for shown in (page, watcher):
        shown.get_by_role("heading", name="Players").wait_for(timeout=30_000)
        shown.locator("[data-replay]").wait_for(timeout=30_000)
    screenshot(page, "play-finished")
    assert "pia" in page.locator("table.players").inner_text()

    # The watcher was never shown a hidden card: no face up in a hand while the game ran, and
    # no frame on the wire with a hand, or the hands, before the game was over.
    assert faces_while_playing and not any(faces_while_playing)
    assert watched, "the watcher got no frame"
    for frame in watched:
        assert frame["view"]["hand"] is None and frame["view"]["legal"] == []
        assert frame["view"]["notes"] == []
        assert "request" not in frame
        assert (frame["hands"] is None) == (not frame["over"])
    # The person got their own hand (and their requests) in their frames.
    assert any(f["view"]["hand"] for f in own) and any(f["request"] for f in own)
    assert all(f["view"]["seat"] == 0 for f in own)
    person.close()
    watcher_context.close()
    assert not errors, errors


@pytest.mark.usefixtures("channel_layer")
def test_a_running_tournaments_page_shows_its_tables_live_with_hidden_cards(
    browser: Any,
    asgi_server: str,
    make_tournament: Any,  # noqa: F811
    entrants: Any,  # noqa: F811
    owner: Any,
) -> None:
    """A tournament's page follows its running table: the frames a worker would send (built
    from a real game by the relay's views) show up as a small table with card backs."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from datetime import timedelta

    from channels.layers import get_channel_layer

    from engine import new_game
    from ladder.relay import groups
    from ladder.relay.views import TableViews
    from ladder.tournaments.services import tournament_register, tournament_tick

    t = make_tournament(format="swiss", seats=2, swiss_rounds=1)
    for bot in entrants(2):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    match = Match.objects.get(tournament_game__table__round__tournament=t)
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    game = new_game("modern", ["owner/bot0", "owner/bot1"], 3)
    frame = TableViews(game, []).frames(game)[None]
    frame.update(match=match.pk, seq=1)

    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{asgi_server}/tournaments/{t.pk}/")
    page.get_by_role("heading", name="Running tables").wait_for()
    page.locator(f'[data-match="{match.pk}"]').wait_for()

    async def send() -> None:
        message = {"type": "live.frame", "match": match.pk, "frame": json.dumps(frame)}
        await get_channel_layer().group_send(groups.watchers(match.pk), message)

    table = page.locator(f'[data-match="{match.pk}"]')
    deadline = time.monotonic() + 30
    while "owner/bot0" not in table.inner_text():
        assert time.monotonic() < deadline, table.inner_text()
        # (Playwright holds this thread's event loop: the frame leaves from a thread of its own.)
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, send()).result()
        time.sleep(0.5)
    assert table.locator(".card.back").count() == sum(s["cards"] for s in frame["view"]["seats"])
    assert table.locator(".card:not(.back)").count() == 0
    context.close()
    assert not errors, errors
