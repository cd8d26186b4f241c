"""The site as a new author meets it, in a real Chromium: sign up, create a bot, upload an
example bot through the form (validated during the request), watch it play rated games (the
matchmaker queues them, a real Celery worker plays them, the bot's page shows them arrive),
open one of its matches and step through the replay, switch to a seat's view and find the
other hands absent from the page, then the bot's rating chart; the leaderboard and a
tournament page with their charts; a phone's width on each.
Screenshots of every key page go to artifacts/screenshots/.
Host-wide state: its Celery worker sweeps the host's dead boxes as it starts, so the file
runs alone, in the host-wide group (tests/conftest.py); Redis is the run's own.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from typing import Any

import pytest

from bots.runner.botfiles import load_bot
from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match
from ladder.matchmaking.services import matchmaker_fill
from tests.browser.conftest import foreign_requests
from tests.ladder.conftest import sandbox_ready  # noqa: F401  (fixture)
from tests.ladder.tournaments.conftest import (  # noqa: F401  (fixtures)
    entrants,
    make_tournament,
    organiser,
    settle_games,
)

pytestmark = pytest.mark.django_db(transaction=True)

USERNAME = "cyd"
PASSWORD = "grass-is-greener-42"
BOT = "leafy"
PHONE = {"viewport": {"width": 375, "height": 812}, "device_scale_factor": 2, "is_mobile": True}


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width


def sign_up_and_upload(page: Any, base: str) -> Bot:
    page.goto(f"{base}/")
    page.get_by_role("link", name="Sign up").click()
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("button", name=f"Log out {USERNAME}").wait_for()

    # Logged out and in again, through the log-in page.
    page.get_by_role("button", name=f"Log out {USERNAME}").click()
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name=f"Log out {USERNAME}").wait_for()

    page.get_by_role("link", name="New bot").click()
    page.get_by_label("Bot name").fill(BOT)
    page.get_by_role("button", name="Create").click()
    page.wait_for_url("**/upload/")
    page.get_by_label("Bot file").set_input_files(
        files=[
            {
                "name": "bot.py",
                "mimeType": "text/x-python",
                "buffer": load_bot("greedy").files["bot.py"],
            }
        ]
    )
    page.get_by_role("button", name="Upload").click()
    # The upload plays its validation game during the request, then shows the bot's page.
    page.get_by_role("heading", name=BOT, level=1).wait_for()
    assert "Version 1 uploaded: valid." in page.get_by_role("status").inner_text()
    bot = Bot.objects.get(name=BOT, owner__username=USERNAME)
    assert bot.versions.get().status == BotVersion.Status.VALID
    return bot


def watch_it_play(page: Any, base: str, bot: Bot, celery: Any, games: int) -> list[Match]:
    """The matchmaker queues `games` three-seat games (the only three bots), a real worker
    plays and rates them, and the bot's page, reloaded as an author would, shows them."""
    celery("worker", concurrency=2)
    queued = matchmaker_fill(ruleset="modern", seats=3, capacity=games)
    assert len(queued) == games
    assert all(m.seats.filter(bot_version__bot=bot).exists() for m in queued)
    page.goto(f"{base}/bots/{bot.pk}/")
    finished = page.get_by_role("row").filter(has_text="finished")
    deadline = time.monotonic() + 120
    while finished.count() < games:
        assert time.monotonic() < deadline, "the worker did not finish the games in 120 s"
        page.wait_for_timeout(500)
        page.reload()
    played = [Match.objects.get(pk=m.pk) for m in queued]
    assert all(m.status == Match.Status.FINISHED and m.rated for m in played)
    return played


def test_sign_up_upload_play_replay_and_chart(
    live_server: Any,
    browser: Any,
    page: Any,
    screenshot: Any,
    sandbox_ready: None,  # noqa: F811
    valid_version: Any,
    owners: Any,
    celery: Any,
) -> None:
    base = live_server.url
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    bot = sign_up_and_upload(page, base)

    # Watch it play: two rated games against two random bots, then the leaderboard shows it.
    # Two other owners' bots: one owner's two bots never share a rated table.
    valid_version("rando", "random")
    valid_version("<script>alert(1)<\\script>", by=owners(1)[0])  # no '/' in a bot's name
    matches = watch_it_play(page, base, bot, celery, 2)
    page.goto(f"{base}/")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=BOT))
    assert row.get_by_role("cell").nth(3).inner_text() == "2"  # rated games
    top = page.locator("#top-modern svg.chart-svg")
    top.wait_for()
    assert top.is_visible() and top.get_attribute("role") == "img"
    assert page.locator("#top-modern").get_by_text(BOT).count() >= 1
    screenshot(page, "site-leaderboard")

    # Its page: rated games, the rating chart with its band, results by seat and opponent.
    page.get_by_role("link", name=BOT).first.click()
    page.get_by_role("heading", name=BOT, level=1).wait_for()
    chart = page.locator("#rating-modern svg.chart-svg")
    assert chart.is_visible() and chart.bounding_box()["height"] > 100
    assert page.locator("#rating-modern polygon.band").count() == 1
    assert page.get_by_role("img", name="Rating history, modern rules").is_visible()
    for ident in ("results-by-seat", "results-by-opponent"):
        assert page.locator(f"#{ident} svg.chart-svg").is_visible()
    # The numbers are one click away for whoever cannot see the chart.
    page.locator("#rating-modern summary").click()
    assert page.locator("#rating-modern table tbody tr").count() == 3  # start and two games
    # A hostile opponent name is drawn as text, never run.
    hostile = "author0/<script>alert(1)<\\script>"  # its owner: `owners` fixture's first
    assert page.locator("#results-by-opponent").get_by_text(hostile).count()
    screenshot(page, "site-bot-page-with-chart")

    # One of its matches, stepped through, then seen from the seat the bot held.
    match = matches[-1]
    page.get_by_role("link", name=str(match.pk), exact=True).click()
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")
    position = page.locator("#replay [data-role=position]")
    assert position.inner_text().startswith("Event 1 of ")
    # By event (steps go by decision by default: tests/browser/test_replay_steps_browser.py).
    page.select_option("#replay [data-role=step]", "event")
    for _ in range(3):
        page.get_by_role("button", name="Next", exact=True).click()
    assert position.inner_text().startswith("Event 4 of ")
    page.focus("#replay")
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    assert position.inner_text().startswith("Event 12 of ")

    seat = match.seats.get(bot_version__bot=bot).seat
    page.select_option("#replay-view", str(seat))
    page.wait_for_function(
        "v => document.querySelector('#replay').replayViewer.view === v"
        " && !document.querySelector('#replay').hasAttribute('aria-busy')",
        arg=str(seat),
    )
    hand = "[data-role=hand] .card"
    assert page.locator(f'[data-seat="{seat}"] {hand}:not(.back)').count() > 0
    for other in {0, 1, 2} - {seat}:
        assert page.locator(f'[data-seat="{other}"] {hand}:not(.back)').count() == 0
        assert page.locator(f'[data-seat="{other}"] {hand}.back').count() > 0
    # Not hidden by a style: no frame the page received holds another seat's hand.
    hands = page.evaluate(
        "s => document.querySelector('#replay').replayViewer.frames"
        ".flatMap(f => f.seats.filter((_, i) => i !== s).map(x => x.hand))",
        seat,
    )
    assert hands and all(h is None for h in hands)
    screenshot(page, "site-match-seat-view")

    # Back on the bot's page, the rating chart is there on a phone, without sideways scroll.
    phone = browser.new_context(**PHONE)
    try:
        small = phone.new_page()
        foreign = foreign_requests(small, base)
        for path, name, ident in (
            (f"/bots/{bot.pk}/", "site-phone-bot-page", "rating-modern"),
            ("/", "site-phone-leaderboard", "top-modern"),
        ):
            small.goto(f"{base}{path}")
            assert small.locator(f"#{ident} svg.chart-svg").is_visible()
            box = small.locator(f"#{ident} svg.chart-svg").bounding_box()
            assert box["width"] <= 375
            no_sideways_scroll(small)
            screenshot(small, name)
    finally:
        phone.close()
    assert not foreign
    assert not dialogs


def test_a_tournament_page_charts_its_standings_by_round(
    live_server: Any,
    browser: Any,
    page: Any,
    screenshot: Any,
    make_tournament: Any,  # noqa: F811
    entrants: Any,  # noqa: F811
    owner: Any,
) -> None:
    from ladder.tournaments.services import (
        tournament_progress,
        tournament_register,
        tournament_tick,
    )

    t = make_tournament(name="Spring cup", format="swiss", seats=3, swiss_rounds=3)
    for bot in entrants(7):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    rng = random.Random(11)
    for _ in range(2):  # two rounds settled, the third under way
        settle_games(t, rng)
        tournament_progress(tournament_id=t.pk)

    page.goto(f"{live_server.url}/tournaments/{t.pk}/")
    chart = page.get_by_role("img", name="Standings by round")
    assert chart.is_visible()
    assert page.locator("#standings-by-round .chart-legend li").count() == 7
    page.locator("#standings-by-round summary").click()
    header = page.locator("#standings-by-round thead th").all_inner_texts()
    assert header == ["Bot", "Round 1", "Round 2"]
    screenshot(page, "site-tournament")

    phone = browser.new_context(**PHONE)
    try:
        small = phone.new_page()
        foreign = foreign_requests(small, live_server.url)
        small.goto(f"{live_server.url}/tournaments/{t.pk}/")
        assert small.locator("#standings-by-round svg.chart-svg").is_visible()
        no_sideways_scroll(small)
        screenshot(small, "site-phone-tournament")
    finally:
        phone.close()
    assert not foreign
