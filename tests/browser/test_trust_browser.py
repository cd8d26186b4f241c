"""The site as its users meet it (issue 15), in Chromium: two owners' bots of one name told
apart at a phone's width; the replay viewer playing with speeds, at the top of the match page,
a six-seat table and its controls on one 1280x900 screen; money written one way; a phone's
match and bot pages without cut-off tables or broken words; a version's status followed live
while its validation game is played. Screenshots in artifacts/screenshots/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.services import rating_apply
from tests.browser.conftest import foreign_requests
from tests.ladder.replays.test_replays import attach_log, game_log

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"viewport": {"width": 375, "height": 812}, "device_scale_factor": 2, "is_mobile": True}
SIX = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]


def phone_page(browser: Any, live_server: Any) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(**PHONE)
    page = context.new_page()
    return context, page, foreign_requests(page, live_server.url)


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width


def position(page: Any) -> int:
    text = page.locator("#replay [data-role=position]").inner_text()
    found = re.match(r"Event (\d+) of (\d+)", text)
    assert found, text
    return int(found.group(1))


@pytest.fixture
def greedies(valid_version: Any, django_user_model: Any, finished_match: Any) -> Match:
    """ann/greedy and bo/greedy, rated in one game (with ann/other)."""
    from ladder.bots.services import bot_create, bot_version_upload

    bo = django_user_model.objects.create_user(username="bo", password="pw")
    mine, other = valid_version("greedy"), valid_version("other")
    bot = bot_create(owner=bo, name="greedy")
    theirs = bot_version_upload(bot=bot, filename="bot.py", data=mine.file.open("rb").read())
    BotVersion.objects.filter(pk=theirs.pk).update(status=BotVersion.Status.VALID)
    match = finished_match([mine, theirs, other], [1, 2, 3])
    rating_apply(match=match)
    return match


def test_two_owners_bots_of_one_name_are_told_apart_on_a_phone(
    live_server: Any, browser: Any, greedies: Match, screenshot: Any
) -> None:
    context, page, foreign = phone_page(browser, live_server)
    try:
        page.goto(f"{live_server.url}/")
        for name in ("ann/greedy", "bo/greedy"):
            link = page.get_by_role("link", name=name, exact=True)
            assert link.is_visible(), name
        no_sideways_scroll(page)
        screenshot(page, "phone-leaderboard-owner-names")

        page.goto(f"{live_server.url}/matches/{greedies.pk}/")
        for name in ("ann/greedy", "bo/greedy"):
            assert page.get_by_role("link", name=name, exact=True).is_visible(), name
        no_sideways_scroll(page)
    finally:
        context.close()
    assert not foreign


def test_a_bot_off_the_ladder_is_marked_and_not_ranked(
    live_server: Any, page: Any, greedies: Match
) -> None:
    ann = Bot.objects.get(owner__username="ann", name="greedy")
    Bot.objects.filter(pk=ann.pk).update(
        disabled=timezone.now(), disabled_reason="forfeited its last 5 games"
    )
    page.goto(f"{live_server.url}/")
    ranked = page.locator("table.leaderboard")
    assert ranked.get_by_role("link", name="ann/greedy").count() == 0
    off = page.locator("ul.off-ladder li", has_text="ann/greedy")
    assert off.is_visible() and "off the ladder" in off.inner_text()


@pytest.fixture
def six_seats(valid_version: Any, finished_match: Any) -> Match:
    """A finished six-seat match with a real log, one seat far below zero."""
    versions = [valid_version(name) for name in SIX]
    match = attach_log(finished_match(versions, [1, 2, 3, 4, 5, 6]), game_log(SIX, hands=3))
    MatchSeat.objects.filter(match=match, seat=5).update(total=-50_000)
    return match


def open_viewer(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")


def test_the_viewer_plays_and_pauses_at_a_chosen_speed(
    live_server: Any, page: Any, six_seats: Match
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{six_seats.pk}/")
    play = page.locator("#replay [data-role=play]")
    assert play.inner_text().endswith("Play") and play.get_attribute("aria-pressed") == "false"

    page.select_option("#replay [data-role=speed]", "8")
    play.click()
    assert play.get_attribute("aria-pressed") == "true" and play.inner_text().endswith("Pause")
    page.wait_for_function(
        "() => /^Event ([6-9]|\\d\\d+) /.test("
        "document.querySelector('#replay [data-role=position]').textContent)"
    )
    play.click()  # pause
    paused = position(page)
    page.wait_for_timeout(600)  # several steps at 8x, had it kept playing
    assert position(page) == paused and play.inner_text().endswith("Play")

    # Space plays and pauses once the viewer has focus; End then Play starts over.
    page.focus("#replay")
    page.keyboard.press("Space")
    page.wait_for_function(f"() => document.querySelector('#replay').replayViewer.pos > {paused}")
    page.keyboard.press("Space")
    assert play.get_attribute("aria-pressed") == "false"
    page.keyboard.press("End")
    # Every position the viewer goes to from here on, so that "it started over" is checked
    # on what happened, not on a poll catching the first frames (at 8x they last 300 ms,
    # which a busy machine's poller can miss).
    page.evaluate(
        """() => {
            const v = document.querySelector('#replay').replayViewer;
            const go = v.go.bind(v);
            v.visited = [];
            v.go = (i) => { go(i); v.visited.push(v.pos); };
        }"""
    )
    play.click()
    page.wait_for_function("() => document.querySelector('#replay').replayViewer.visited.length")
    play.click()
    visited = page.evaluate("() => document.querySelector('#replay').replayViewer.visited")
    assert visited[0] == 0, visited


def test_the_match_page_opens_on_the_viewer_with_a_six_seat_table_on_one_screen(
    live_server: Any, browser: Any, six_seats: Match, screenshot: Any
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        open_viewer(page, f"{live_server.url}/matches/{six_seats.pk}/")
        # The busiest moment: the frame where the seats' boxes are tallest.
        page.evaluate(
            """() => {
                const v = document.querySelector('#replay').replayViewer;
                let best = 0, height = 0;
                for (let i = 0; i < v.frames.length; i += 1) {
                    v.go(i);
                    const h = document.querySelector('.replay-seats').offsetHeight;
                    if (h > height) { height = h; best = i; }
                }
                v.go(best);
            }"""
        )
        order = page.evaluate(
            """() => ['#replay', '#players', '#scores', '.replay-drop'].map(
                s => document.querySelector(s).getBoundingClientRect().top)"""
        )
        assert order == sorted(order), order  # viewer, players, scores, then the drop zone
        page.screenshot(path=str(screenshot(page, "match-six-seats-1280x900")), full_page=False)
        controls = page.locator("#replay .replay-controls").bounding_box()
        seats = page.locator("#replay .replay-seats").bounding_box()
        assert controls["y"] >= 0 and seats["y"] + seats["height"] <= 900, (controls, seats)
    finally:
        context.close()


def test_money_is_written_one_way_on_the_match_page(
    live_server: Any, page: Any, six_seats: Match
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{six_seats.pk}/")
    row = page.locator("#players + table tbody tr, table.players tbody tr").nth(5)
    assert row.locator("td").nth(2).inner_text() == "-$50,000"
    for cell in page.locator("#scores ~ div table tbody td").all_inner_texts():
        assert re.fullmatch(r"-?\$\d{1,3}(,\d{3})*", cell), cell
    totals = page.locator("#replay .replay-seat .total strong").all_inner_texts()
    assert totals and all(re.fullmatch(r"-?\$\d{1,3}(,\d{3})*", t) for t in totals), totals


def test_a_phone_shows_every_players_column_and_whole_words(
    live_server: Any, browser: Any, six_seats: Match, screenshot: Any
) -> None:
    context, page, foreign = phone_page(browser, live_server)
    try:
        open_viewer(page, f"{live_server.url}/matches/{six_seats.pk}/")
        table = page.locator("table.players")
        table.scroll_into_view_if_needed()
        # Every cell of the players table is inside the screen, labelled with its column.
        boxes = table.locator("tbody td, tbody th").evaluate_all(
            "cells => cells.map(c => [c.getBoundingClientRect().right,"
            " getComputedStyle(c, '::before').content])"
        )
        assert boxes and all(right <= 375 for right, _ in boxes), boxes
        assert any("Total" in label for _, label in boxes)
        no_sideways_scroll(page)
        screenshot(page, "phone-match-players")

        bot = six_seats.seats.get(seat=0).bot_version.bot_id
        rating_apply(match=six_seats)
        page.goto(f"{live_server.url}/bots/{bot}/")
        lines = page.evaluate(
            """() => {
                const cell = [...document.querySelectorAll('tbody th')].find(
                    th => th.textContent.trim() === 'modern');
                const text = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT).nextNode();
                const range = document.createRange();
                range.selectNodeContents(text);
                return range.getClientRects().length;  // one box per line
            }"""
        )
        assert lines == 1  # "modern", not "moder" and "n"
        no_sideways_scroll(page)
    finally:
        context.close()
    assert not foreign


def test_a_new_versions_status_is_followed_live(
    live_server: Any, page: Any, owner: Any, example_file: Any, settings: Any, monkeypatch: Any
) -> None:
    from django.contrib.auth import SESSION_KEY  # noqa: F401  (documents the log-in below)

    from ladder.bots import tasks
    from ladder.bots.services import bot_create

    settings.GRASS_VALIDATE_INLINE = False
    monkeypatch.setattr(tasks.validate_version, "delay", lambda version_id: None)
    bot = bot_create(owner=owner, name="later")
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("button", name="Log out ann").wait_for()

    page.goto(f"{live_server.url}/bots/{bot.pk}/upload/")
    page.get_by_label("Bot file").set_input_files(
        files=[{"name": "bot.py", "mimeType": "text/x-python", "buffer": example_file("greedy")}]
    )
    page.get_by_role("button", name="Upload").click()
    page.get_by_role("heading", name="ann/later", level=1).wait_for()
    status = page.locator("[data-version-status]").first
    assert status.inner_text() == "pending"
    assert "validation game" in page.locator("[data-poll-versions]").inner_text()

    # A worker plays the validation game: the page shows the verdict by itself.
    BotVersion.objects.filter(bot=bot).update(status=BotVersion.Status.VALID)
    page.wait_for_function(
        "() => document.querySelector('[data-version-status]').textContent.trim() === 'valid'"
        " && !document.querySelector('[data-poll-versions]')",
        timeout=20_000,
    )
