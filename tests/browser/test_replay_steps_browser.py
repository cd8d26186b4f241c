"""A replay worth watching, in a real browser: steps go by decision by default (the events
between two decisions shown together), or by event; jumps to a chosen seat's next decision,
the next hand and the next fault; each step's debug lines beside it, for the bot's owner only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.base import ContentFile

from bots.runner.results import DebugEntry, SeatReport
from ladder.matches.debug import debug_pack
from ladder.matches.models import Match
from tests.browser.test_notifications_browser import sign_in
from tests.browser.test_replay_browser import NAMES, event_line, open_viewer, position
from tests.ladder.replays.test_replays import attach_log, game_log

pytestmark = pytest.mark.django_db(transaction=True)

VIEWER = "document.querySelector('#replay').replayViewer"
FAULTED = 40
"""The game event (its index, from 0: the replay's frame) before which the log carries a
runner's note (a strike of seat 1)."""


def with_a_note(text: str) -> str:
    """The log with a runner's note before its game event FAULTED, as the runner merges a
    strike into the log."""
    lines = text.splitlines()
    note = {"e": "note", "seat": 1, "kind": "timeout", "detail": "no answer", "strike": 1}
    lines.insert(FAULTED, json.dumps(note))
    return "\n".join(lines) + "\n"


def decisions(text: str) -> list[tuple[int, int]]:
    """(frame, seat) of every decision in the log: actions the engine did not take itself."""
    frames = [json.loads(line) for line in text.splitlines()]
    frames = [e for e in frames if e["e"] != "note"]
    return [(i, e["seat"]) for i, e in enumerate(frames) if e["e"] == "act" and "auto" not in e]


@pytest.fixture
def game(valid_version: Any, finished_match: Any) -> tuple[Match, str]:
    versions = [valid_version(name) for name in NAMES]
    text = with_a_note(game_log(NAMES, seed=4, hands=2))
    match = attach_log(finished_match(versions, [1, 2, 3]), text)
    # Seat 0's bot wrote a line at each of its first decisions, and its first bytes were cut.
    report = SeatReport("alpha")
    for number, (frame, _) in enumerate([d for d in decisions(text) if d[1] == 0][:5], 1):
        report.debug.add(DebugEntry(at=frame, request=number, data=f"thinking {number}\n".encode()))
    report.debug.cut_bytes = 1234
    packed = debug_pack([report, SeatReport("beta"), SeatReport("gamma")])
    assert packed is not None
    match.debug.save(f"match-{match.pk}.json.gz", ContentFile(packed))
    return match, text


def at(page: Any) -> int:
    return int(page.evaluate(f"() => {VIEWER}.pos"))


def test_steps_go_from_decision_to_decision_with_the_events_between_shown_together(
    live_server: Any, page: Any, game: tuple[Match, str], screenshot: Any
) -> None:
    match, text = game
    marks = decisions(text)
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    assert at(page) == 0
    status = page.locator("#replay [data-role=status]").inner_text()
    assert f"{len(marks)} decisions" in status

    page.get_by_role("button", name="Next", exact=True).click()
    first, seat = marks[0]
    assert at(page) == first and first > 1
    where = page.locator("#replay [data-role=position]").inner_text()
    assert f"decision 1 of {len(marks)} ({NAMES[seat]})" in where
    # The deal before the first decision is shown with it, above the decision's own line.
    between = page.locator("#replay [data-role=between] li").all_inner_texts()
    assert len(between) == first - 1 and between[0].startswith("--- Hand 1:")
    page.focus("#replay")
    for number in range(1, 6):
        page.keyboard.press("ArrowRight")
        assert at(page) == marks[number][0]
    page.keyboard.press("ArrowLeft")
    assert at(page) == marks[4][0]
    screenshot(page, "replay-decision-steps")

    # By event, a step is one event again.
    page.select_option("#replay [data-role=step]", "event")
    page.focus("#replay")
    page.keyboard.press("ArrowRight")
    assert at(page) == marks[4][0] + 1
    assert page.locator("#replay [data-role=between]").is_hidden()


def test_jumps_to_a_seats_next_decision_the_next_hand_and_the_next_fault(
    live_server: Any, page: Any, game: tuple[Match, str]
) -> None:
    match, text = game
    marks = decisions(text)
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    page.select_option("#replay [data-role=seat]", "2")
    jump = page.get_by_role("button", name="Next decision of")
    expected = [frame for frame, seat in marks if seat == 2]
    for frame in expected[:4]:
        jump.click()
        assert at(page) == frame
        assert page.locator("#replay [data-role=event]").get_attribute("data-decision") == "2"
    page.focus("#replay")
    page.keyboard.press("D")  # the previous one of that seat
    assert at(page) == expected[2]

    page.keyboard.press("Home")
    page.get_by_role("button", name="Next fault").click()
    # A note belongs to the frame of the event it comes before.
    assert at(page) == FAULTED
    details = page.locator("#replay [data-role=details] .runner-note").all_inner_texts()
    assert details == ["Runner: beta: timeout (no answer; strike 1)"]
    page.keyboard.press("f")
    assert at(page) == FAULTED
    assert "No later fault" in page.locator("#replay [data-role=status]").inner_text()

    page.keyboard.press("Home")
    page.keyboard.press("n")
    assert event_line(page).startswith("--- Hand 1:")
    page.keyboard.press("n")
    assert event_line(page).startswith("--- Hand 2:")
    assert position(page)[0] == at(page) + 1


def test_the_owner_reads_each_steps_debug_lines_beside_it(
    live_server: Any, page: Any, game: tuple[Match, str], owner: Any, screenshot: Any
) -> None:
    match, text = game
    own = [frame for frame, seat in decisions(text) if seat == 0][:5]
    sign_in(page, owner, live_server.url)
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    debug = page.locator("#replay [data-role=debug]")
    debug.get_by_text("1,234 bytes of its debug lines were cut").wait_for()
    page.select_option("#replay [data-role=seat]", "0")
    jump = page.get_by_role("button", name="Next decision of")
    for number, frame in enumerate(own, 1):
        jump.click()
        assert at(page) == frame
        entries = debug.locator(".replay-debug-entry")
        assert entries.count() == 1
        assert entries.locator("h4").inner_text() == f"alpha (seat 0), request {number}"
        assert entries.locator("pre").inner_text().strip() == f"thinking {number}"
    screenshot(page, "replay-debug-lines")
    jump.click()  # past the lines kept
    assert debug.get_by_text("No debug lines at this step.").count() == 1


def test_another_visitor_is_never_sent_the_debug_lines(
    live_server: Any, page: Any, game: tuple[Match, str], stranger: Any
) -> None:
    match, _ = game
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    for visitor in (None, stranger):
        if visitor is not None:
            sign_in(page, visitor, live_server.url)
        open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
        page.get_by_role("button", name="Next", exact=True).click()
        assert page.locator("#replay [data-role=debug]").is_hidden()
        assert not [url for url in asked if "/debug/" in url]
        # ...and the API answers them with nothing.
        body = page.evaluate(
            "url => fetch(url).then(r => r.json())", f"/api/matches/{match.pk}/debug/"
        )
        assert body == {"match": match.pk, "seats": []}
        asked.clear()


def test_the_decision_count_says_how_each_view_counts(
    live_server: Any, page: Any, game: tuple[Match, str]
) -> None:
    """The same match once showed 796 decisions face up and 873 from a seat, unexplained: a
    seat's view counts the other seats' forced moves (it cannot tell them from choices,
    ladder/matches/decisions.py). Each count now says what it counts."""
    from ladder.matches.decisions import decision_marks
    from tests.browser.test_replay_browser import choose_view

    match, text = game
    events = [json.loads(line) for line in text.splitlines()]
    face_up, seen_by_1 = len(decision_marks(events, None)), len(decision_marks(events, 1))
    assert seen_by_1 > face_up  # this game has forced moves of seats 0 and 2
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    status = page.locator("#replay [data-role=status]")
    assert (
        f"{face_up} decisions (moves with one legal action, made by the engine, not counted)"
    ) in status.inner_text()
    choose_view(page, "1")
    assert (
        f"{seen_by_1} decisions as seat 1 saw them (other seats' moves with one legal action "
        "count: seat 1 could not tell them from choices; the view of every card leaves them out)"
    ) in status.inner_text()
    page.get_by_role("button", name="Next", exact=True).click()
    where = page.locator("#replay [data-role=position]").inner_text()
    assert f"decision 1 of {seen_by_1} as seat 1 saw them (" in where
