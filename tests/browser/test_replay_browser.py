"""The replay viewer in a real browser: stepping by buttons, keys and slider; a seat's view
with the other hands as card backs only; opening a local log, and a tampered one refused with a
message; clear messages for a broken server answer; a phone-width page without sideways scroll.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from typing import Any

import pytest

from ladder.matches.models import Match
from tests.browser.conftest import foreign_requests
from tests.ladder.replays.test_replays import attach_log, game_log

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["alpha", "beta", "gamma"]


@pytest.fixture
def match(valid_version: Any, finished_match: Any) -> Match:
    versions = [valid_version(name) for name in NAMES]
    # Seed 4: a game (engine 1.2) with a moment that shows every kind of pile at once.
    return attach_log(finished_match(versions, [1, 2, 3]), game_log(NAMES, seed=4, hands=2))


def open_viewer(page: Any, url: str) -> Any:
    page.goto(url)
    viewer = page.locator("#replay")
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")
    return viewer


def position(page: Any) -> tuple[int, int]:
    text = page.locator("#replay [data-role=position]").inner_text()
    found = re.match(r"Event (\d+) of (\d+)", text)
    assert found, text
    return int(found.group(1)), int(found.group(2))


def event_line(page: Any) -> str:
    return str(page.locator("#replay [data-role=event]").inner_text())


def choose_view(page: Any, value: str) -> None:
    page.select_option("#replay-view", value)
    page.wait_for_function(
        "v => document.querySelector('#replay').replayViewer.view === v"
        " && !document.querySelector('#replay').hasAttribute('aria-busy')",
        arg=value,
    )


def faces(page: Any, seat: int) -> int:
    return int(page.locator(f'[data-seat="{seat}"] [data-role=hand] .card:not(.back)').count())


def backs(page: Any, seat: int) -> int:
    return int(page.locator(f'[data-seat="{seat}"] [data-role=hand] .card.back').count())


def drop_file(page: Any, selector: str, name: str, text: bytes) -> None:
    """Drop `text`, gzipped, as the file `name` on the element at `selector`: the events a
    browser fires when a file is dragged from the desktop and let go there."""
    page.evaluate(
        """([selector, name, data]) => {
            const bytes = Uint8Array.from(atob(data), c => c.charCodeAt(0));
            const file = new File([bytes], name, {type: "application/gzip"});
            const transfer = new DataTransfer();
            transfer.items.add(file);
            const target = document.querySelector(selector);
            for (const type of ["dragenter", "dragover", "drop"]) {
                target.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true,
                                                          cancelable: true}));
            }
        }""",
        [selector, name, base64.b64encode(gzip.compress(text)).decode()],
    )


def test_stepping_through_a_match_with_buttons_keys_and_slider(
    live_server: Any, page: Any, match: Match, screenshot: Any
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    first, total = position(page)
    assert first == 1 and total > 50
    # By event (steps go by decision by default: tests/browser/test_replay_steps_browser.py).
    page.select_option("#replay [data-role=step]", "event")
    assert event_line(page).startswith("Grass (modern rules")

    page.get_by_role("button", name="Next", exact=True).click()
    assert position(page)[0] == 2 and event_line(page).startswith("--- Hand 1:")
    page.get_by_role("button", name="Previous").click()
    assert position(page)[0] == 1

    page.focus("#replay")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert position(page)[0] == 3 and " is dealt " in event_line(page)
    page.keyboard.press("ArrowLeft")
    assert position(page)[0] == 2
    page.keyboard.press("n")  # the next hand
    assert event_line(page).startswith("--- Hand 2:")
    hand_two = position(page)[0]
    page.keyboard.press("p")
    assert event_line(page).startswith("--- Hand 1:")
    page.keyboard.press("PageDown")
    assert position(page)[0] == hand_two
    page.keyboard.press("End")
    assert position(page) == (total, total)
    assert event_line(page).startswith("=== Game over after 2 hands")
    page.keyboard.press("Home")
    assert position(page)[0] == 1
    page.get_by_role("button", name="Next hand").click()
    assert event_line(page).startswith("--- Hand 1:")
    page.get_by_role("button", name="End").click()
    assert position(page)[0] == total

    # The slider: any event at once, announced with its line.
    page.eval_on_selector(
        "#replay-slider",
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        str(hand_two + 8),
    )
    assert position(page)[0] == hand_two + 9
    slider_text = page.get_attribute("#replay-slider", "aria-valuetext")
    assert slider_text and slider_text.startswith(f"Event {hand_two + 9} of {total}: ")
    # Whose turn it is is highlighted, and every hand is face up in the all-revealed view.
    assert page.locator(".replay-seat.is-turn").count() == 1
    for seat in range(3):
        assert faces(page, seat) > 0 and backs(page, seat) == 0
    assert (
        page.locator("#replay [data-role=wasted] summary").inner_text().startswith("Wasted pile:")
    )
    screenshot(page, "match-replay-all-revealed")


def money(amount: int) -> str:
    return f"{'-' if amount < 0 else ''}${abs(amount):,}"


def cards_in(where: Any) -> list[str]:
    """The cards drawn in a locator's element, as their codes."""
    codes = where.locator(".card").evaluate_all("ns => ns.map(n => n.getAttribute('data-card'))")
    return [str(code) for code in codes]


def test_the_table_shows_hassle_piles_protected_peddles_the_stack_and_totals(
    live_server: Any, page: Any, match: Match, screenshot: Any
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    viewer = "document.querySelector('#replay').replayViewer"
    frames = page.evaluate(f"() => {viewer}.frames")
    titles = {
        code: card["title"] for code, card in page.evaluate(f"() => {viewer}.doc.cards").items()
    }
    # The first moment with a protected group, a Market Open under heat and cards under a
    # hassle pile while the stack still holds cards; then the end, with the final totals.
    busy = next(
        i
        for i, f in enumerate(frames)
        if f["stack"] > 0
        and any(s["protected"] for s in f["seats"])
        and any(s["market_open"] and s["heat"] for s in f["seats"])
        and any(s["hassle_under"] for s in f["seats"])
        and f["wasted"]
    )
    assert any(frames[-1]["totals"]), "someone scores in a finished game"
    for at in (busy, len(frames) - 1):
        page.evaluate(f"i => {viewer}.go(i)", at)
        frame = frames[at]
        facts = page.locator("#replay [data-role=facts]").inner_text()
        stack = frame["stack"]
        assert f"Stack: {stack} card{'' if stack == 1 else 's'}" in facts
        for index, seat in enumerate(frame["seats"]):
            box = page.locator(f'#replay [data-seat="{index}"]')
            total = box.locator(".total").inner_text()
            assert total == f"Total {money(frame['totals'][index])}"
            hassle = box.locator("[data-role=hassle]")
            assert cards_in(hassle) == ["market-open"] * seat["market_open"] + seat["heat"]
            under = hassle.locator(".note", has_text="Underneath")
            if seat["hassle_under"]:
                names = ", ".join(titles[code] for code in seat["hassle_under"])
                assert under.inner_text() == f"Underneath: {names}"
            else:
                assert under.count() == 0
            market = box.locator("[data-role=market]")
            assert cards_in(market.locator(":scope > ul.cards")) == seat["unprotected"]
            groups = market.locator(".group")
            assert groups.count() == len(seat["protected"])
            for number, group in enumerate(seat["protected"]):
                assert cards_in(groups.nth(number).locator(".protector")) == [group["card"]]
                assert cards_in(groups.nth(number).locator(".protected")) == group["covers"]
        # The wasted pile, top first, and whose turn it is (nobody's once the game is over).
        wasted = page.locator("#replay [data-role=wasted]")
        assert cards_in(wasted) == list(reversed(frame["wasted"]))
        summary = wasted.locator("summary").inner_text()
        count = len(frame["wasted"])
        assert summary.startswith(f"Wasted pile: {count} card{'' if count == 1 else 's'}")
        if frame["wasted"]:
            assert summary.endswith(f"(top: {titles[frame['wasted'][-1]]})")
        turn = page.locator("#replay .replay-seat.is-turn")
        if frame["phase"] != "over" and frame["active"] >= 0:
            assert turn.count() == 1
            assert turn.get_attribute("data-seat") == str(frame["active"])
            assert f"Turn: {NAMES[frame['active']]}" in facts
        else:
            assert turn.count() == 0 and "Turn:" not in facts
        if at == busy:
            screenshot(page, "match-replay-table")


def test_a_seat_view_shows_only_card_backs_for_the_other_hands(
    live_server: Any, page: Any, match: Match, screenshot: Any
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    page.focus("#replay")
    for _ in range(12):
        page.keyboard.press("ArrowRight")
    at = position(page)[0]
    everything = page.evaluate(
        "i => document.querySelector('#replay').replayViewer.frames[i].seats", at - 1
    )

    choose_view(page, "1")
    assert position(page)[0] == at  # the same moment, seen by seat 1
    assert faces(page, 1) == len(everything[1]["hand"]) and backs(page, 1) == 0
    for seat in (0, 2):
        assert faces(page, seat) == 0
        assert backs(page, seat) == everything[seat]["cards"] > 0
    # Not merely hidden: the browser holds no other hand at all, in any frame.
    hands = page.evaluate(
        "() => document.querySelector('#replay').replayViewer.frames"
        ".map(f => [f.seats[0].hand, f.seats[2].hand])"
    )
    assert all(hand is None for pair in hands for hand in pair)
    assert "seed" not in json.dumps(
        page.evaluate("() => document.querySelector('#replay').replayViewer.doc.game")
    )
    assert page.locator('[data-seat="1"] .badge.you').count() == 1
    screenshot(page, "match-replay-seat-1")

    choose_view(page, "all")
    assert faces(page, 0) > 0 and faces(page, 2) > 0
    assert backs(page, 0) == backs(page, 2) == 0
    assert page.locator(".replay-seat.is-turn").count() == 1


def test_opening_a_local_log_and_refusing_a_tampered_one(
    live_server: Any, page: Any, screenshot: Any
) -> None:
    text = game_log(NAMES, seed=5, hands=1)
    uploads: list[str] = []
    page.on(
        "request",
        lambda request: uploads.append(request.url) if request.method == "POST" else None,
    )
    page.goto(f"{live_server.url}/replay/")
    page.set_input_files(
        "#replay-file",
        files=[
            {
                "name": "game-5.jsonl.gz",
                "mimeType": "application/gzip",
                "buffer": gzip.compress(text.encode()),
            }
        ],
    )
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")
    assert position(page) == (1, len(text.splitlines()))
    assert "alpha, beta, gamma" in page.locator("#replay [data-role=summary]").inner_text()
    choose_view(page, "2")  # the file is sent again for another view
    assert faces(page, 0) == 0 and page.locator("#replay-view").input_value() == "2"
    # ...but not for a view the page already has.
    choose_view(page, "all")
    seen = "() => document.querySelector('#replay').replayViewer.frames[20].seats[0].hand"
    assert isinstance(page.evaluate(seen), list)
    choose_view(page, "2")
    assert page.evaluate(seen) is None
    assert [url.rsplit("?", 1)[-1] for url in uploads] == ["view=all", "view=2"]
    screenshot(page, "upload-replay")

    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if '"e":"draw"' in line and i > 8)
    event = json.loads(lines[number - 1])
    event["secret"]["card"] = "mexico" if event["secret"]["card"] != "mexico" else "panama"
    lines[number - 1] = json.dumps(event, separators=(",", ":"))
    # Drop the file on the page, as a person dragging it from their desktop would.
    drop_file(page, "[data-replay-form]", "tampered.jsonl.gz", "\n".join(lines).encode())
    alert = page.get_by_role("alert")
    alert.wait_for()
    message = alert.inner_text()
    assert message.startswith(f"This log cannot be replayed: line {number}: the engine expected")
    # The game opened before is gone: the message is not mistaken for a comment on it.
    assert page.locator("#replay [data-role=body]").is_hidden()
    screenshot(page, "upload-tampered-log")


def test_a_log_dropped_on_a_match_page_plays_there_and_the_match_comes_back(
    live_server: Any, page: Any, match: Match, screenshot: Any
) -> None:
    open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
    _, match_total = position(page)
    four = ["north", "east", "south", "west"]
    text = game_log(four, seed=11, hands=1)
    drop_file(page, "#replay [data-role=table]", "mine.jsonl.gz", text.encode())
    page.wait_for_function(
        "() => document.querySelector('#replay').replayViewer.doc?.game.players.length === 4"
    )
    assert position(page) == (1, len(text.splitlines()))  # a new game starts at its start
    assert "north, east, south, west" in page.locator("#replay [data-role=summary]").inner_text()
    status = page.locator("#replay [data-role=status]").inner_text()
    assert status.endswith("from your file mine.jsonl.gz, not this match's log.")
    assert page.locator("#replay .replay-seat").count() == 4
    screenshot(page, "match-replay-own-file")

    page.get_by_role("button", name="Back to this match's replay").click()
    page.wait_for_function(
        "() => document.querySelector('#replay').replayViewer.doc?.game.players.length === 3"
    )
    assert position(page)[1] == match_total
    assert "alpha, beta, gamma" in page.locator("#replay [data-role=summary]").inner_text()
    assert page.get_by_role("button", name="Back to this match's replay").is_hidden()


def test_a_broken_server_answer_gives_a_message_not_a_blank_page(
    live_server: Any, page: Any, match: Match
) -> None:
    url = f"{live_server.url}/matches/{match.pk}/"
    page.route(
        "**/replay.json*",
        lambda route: route.fulfill(status=200, body="{not json", content_type="application/json"),
    )
    page.goto(url)
    assert "malformed JSON" in page.get_by_role("alert").inner_text()
    page.unroute("**/replay.json*")
    page.route(
        "**/replay.json*",
        lambda route: route.fulfill(
            status=200, body=json.dumps({"format": "other"}), content_type="application/json"
        ),
    )
    page.goto(url)
    assert "The replay is malformed: unknown format" in page.get_by_role("alert").inner_text()
    page.unroute("**/replay.json*")
    page.route("**/replay.json*", lambda route: route.abort())
    page.goto(url)
    assert "Could not reach the server" in page.get_by_role("alert").inner_text()


@pytest.mark.parametrize("where", ["match", "upload"])
def test_a_phone_shows_the_replay_without_sideways_scrolling(
    live_server: Any, browser: Any, match: Match, screenshot: Any, where: str
) -> None:
    context = browser.new_context(
        viewport={"width": 375, "height": 812},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    foreign = foreign_requests(page, live_server.url)
    try:
        if where == "match":
            open_viewer(page, f"{live_server.url}/matches/{match.pk}/")
        else:
            page.goto(f"{live_server.url}/replay/")
            page.set_input_files(
                "#replay-file",
                files=[
                    {
                        "name": "game.jsonl",
                        "mimeType": "application/json",
                        "buffer": game_log(NAMES, seed=8, hands=2).encode(),
                    }
                ],
            )
            page.wait_for_selector("#replay [data-role=body]:not([hidden])")
        page.evaluate("() => document.querySelector('#replay').replayViewer.go(60)")
        page.click("#replay [data-role=wasted] summary")
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        screenshot(page, f"phone-{where}-replay")
    finally:
        context.close()
    assert not foreign
