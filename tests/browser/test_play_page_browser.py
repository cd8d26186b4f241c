"""The Play page's and a person's live table's script, in a real browser, with the table's
WebSocket answered by the test (Playwright's `route_web_socket`): no worker, no ASGI server.

What the newcomer saw: seats 0 to 5 offered for a game of two; "queued" under the match's title
while the page asked for a move; a resign question that spoke of a game going on."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from engine import new_game
from engine.replay_frames import cards_info
from engine.transcript import describe_action
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.relay.views import TableViews

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def signed_in(page: Any, live_server: Any, stranger: Any) -> Iterator[Any]:
    """The page with the session of `stranger` (bo)."""
    client = Client()
    client.force_login(stranger)
    cookie = client.cookies["sessionid"]
    page.context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])
    yield page


def enabled_seats(page: Any) -> list[str]:
    return list(
        page.eval_on_selector(
            "#id_seat", "s => Array.from(s.options).filter(o => !o.disabled).map(o => o.value)"
        )
    )


def test_your_seat_offers_only_the_seats_of_the_game(
    signed_in: Any, live_server: Any, valid_version: Any, owner: Any
) -> None:
    page = signed_in
    # The Play page offers the owner's bots to the owner only: the opponents here are examples.
    from django.contrib.auth import get_user_model

    from ladder.bots.models import Bot

    examples = get_user_model().objects.create_user(username="examples")
    a, b = valid_version("greedy", "greedy").bot, valid_version("rob", "random").bot
    Bot.objects.filter(pk__in=[a.pk, b.pk]).update(owner=examples)
    page.goto(f"{live_server.url}/play/")
    page.get_by_label("Opponent 1").select_option(str(a.pk))
    assert enabled_seats(page) == ["", "0", "1"]
    page.get_by_label("Opponent 2").select_option(str(b.pk))
    assert enabled_seats(page) == ["", "0", "1", "2"]
    page.get_by_label("Your seat").select_option("2")
    # One opponent fewer: seat 2 is gone, and the choice falls back to a seat at random.
    page.get_by_label("Opponent 2").select_option("")
    assert enabled_seats(page) == ["", "0", "1"]
    assert page.eval_on_selector("#id_seat", "s => s.value") == ""


def frame(request: bool) -> dict[str, Any]:
    """A person's frame (ladder/relay/views.py) for seat 0 of two, asking for a move."""
    seat = {"market_open": False, "heat": [], "unprotected": [], "protected": [], "cards": 2}
    view = {
        "players": ["bo", "rob"],
        "seats": [seat, seat],
        "totals": [0, 0],
        "hand_number": 1,
        "stack": 40,
        "wasted": [],
        "active": 0,
        "to_act": 0,
        "dealer": 1,
        "phase": "turn",
        "seat": 0,
        "hand": ["x", "y"],
    }
    asked = {"id": 1, "legal": ["end"], "labels": ["End your turn"]}
    asked["deadline"] = int(time.time() * 1000) + 60_000
    return {
        "seq": 1,
        "view": view,
        "lines": ["Hand 1 begins"],
        "request": asked if request else None,
        "out": None,
        "over": False,
    }


def test_the_match_status_follows_the_game_and_resigning_says_what_happens(
    signed_in: Any, live_server: Any, valid_version: Any, stranger: Any
) -> None:
    page = signed_in
    match = match_create(
        versions=[valid_version("rob")], people={0: stranger}, rated=False, shuffle=False
    )
    assert match.status == Match.Status.QUEUED
    sockets: list[Any] = []
    sent: list[dict[str, Any]] = []

    def table(ws: Any) -> None:
        ws.on_message(lambda message: sent.append(json.loads(message)))
        queue = {"position": 2, "ahead": 1, "estimate_seconds": 40, "text": "2nd in the queue"}
        ws.send(json.dumps({"type": "hello", "seat": 0, "status": "queued", "queue": queue}))
        sockets.append(ws)

    page.route_web_socket("**/ws/matches/**", table)
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", answer)
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    status = page.locator("[data-match-status]")
    page.get_by_text("Waiting for a worker to start the game: 2nd in the queue.").wait_for()
    assert status.all_inner_texts() == ["queued", "queued"]
    # The page's own line of where it stands (for a page without scripts) gives way to it.
    line = page.locator("[data-match-queue]")
    assert line.count() == 1 and line.is_hidden()
    page.get_by_role("button", name="Resign this game").click()
    assert questions == ["Resign this game? It has not started yet: it is cancelled."]

    # A worker plays the game and asks bo for a move: the page no longer says "queued".
    sockets[0].send(json.dumps({"type": "frame", "frame": frame(True), "now": time.time() * 1000}))
    page.get_by_role("button", name="End your turn").wait_for()
    assert status.all_inner_texts() == ["running", "running"]
    page.get_by_role("button", name="Resign this game").click()
    assert "forfeit it and are placed last" in questions[-1]
    assert "finish the remaining hands without you in a moment" in questions[-1]
    assert "page then shows the finished game" in questions[-1]
    assert not any(message.get("type") == "resign" for message in sent)  # both dismissed


# ---------------------------------------------------------------------- issue 35's walk at a table

TITLES = {code: info["title"] for code, info in cards_info().items()}


def expect(target: Any) -> Any:
    """Playwright's assertions, which wait (imported when used: where Playwright is missing,
    the `page` fixture skips the tests)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


class Table:
    """A game of three, bo in seat 0, played by the test; `frame()` is bo's frame as the worker
    builds it (ladder/relay/views.py), with a request when bo is to decide."""

    def __init__(self) -> None:
        self.game = new_game("modern", ["bo", "rob", "cy"], 0, None, {"max_hands": 1})
        self.views = TableViews(self.game, [0])
        self.seq = 0

    def frame(self, think: list[dict[str, int]] | None = None) -> dict[str, Any]:
        game = self.game
        self.seq += 1
        shown = self.views.frames(game)[0]
        shown.update(match=1, seq=self.seq, out=None, think=think, request=None)
        if game.table.to_act == 0:
            legal = shown["view"]["legal"]
            shown["request"] = {
                "id": self.seq,
                "legal": legal,
                "labels": [describe_action(action, game.names) for action in legal],
                "deadline": int(time.time() * 1000) + 60_000,
                "seconds": 60.0,
            }
        return {"type": "frame", "frame": shown, "now": time.time() * 1000}

    def until_bo_may_deal(self) -> None:
        """Played at random (but never a deal) until bo may propose one."""
        rng = random.Random(0)
        game = self.game
        while not (game.table.to_act == 0 and "deal @1" in game.legal_actions()):
            legal = game.legal_actions()
            game.apply(rng.choice([a for a in legal if not a.startswith("deal")] or legal))


@pytest.fixture
def open_table(signed_in: Any, live_server: Any, valid_version: Any, stranger: Any) -> Any:
    """`open_table(table)`: bo's running match's page, its socket answered by the test with a
    hello and `table`'s frame; returns the socket, to send more frames on."""
    page = signed_in
    match = match_create(
        versions=[valid_version("rob"), valid_version("cy")],
        people={0: stranger},
        rated=False,
        shuffle=False,
    )
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)

    def opened(table: Table, **frame: Any) -> Any:
        sockets: list[Any] = []

        def answer(ws: Any) -> None:
            ws.send(json.dumps({"type": "hello", "seat": 0, "status": "running"}))
            ws.send(json.dumps(table.frame(**frame)))
            sockets.append(ws)

        page.route_web_socket("**/ws/matches/**", answer)
        page.goto(f"{live_server.url}/matches/{match.pk}/")
        page.locator(".replay-seat").first.wait_for()
        return sockets[0]

    return opened


def test_on_a_phone_the_hand_is_right_above_the_actions(
    signed_in: Any, open_table: Any, screenshot: Any
) -> None:
    """At 375 px the person's hand was only in their seat, below the request's buttons: they
    read it there and scrolled back up to act. The request shows the hand right above its
    buttons, the two on one screen, and the seats come after every button."""
    page, width, height = signed_in, 375, 667
    page.set_viewport_size({"width": width, "height": height})
    table = Table()
    table.until_bo_may_deal()
    hand = table.views.frames(table.game)[0]["view"]["hand"]
    open_table(table)
    buttons = page.locator("[data-role=actions] button")
    buttons.first.wait_for()
    screenshot(page, "live-table-phone-request")
    shown = page.locator("[data-role=request-hand] .card")
    assert shown.evaluate_all("cards => cards.map((c) => c.dataset.card)") == hand
    above = page.locator("[data-role=request-hand]").bounding_box()
    first, last = buttons.first.bounding_box(), buttons.last.bounding_box()
    own = page.locator('.replay-seat[data-seat="0"] [data-role=hand]').bounding_box()
    assert above["y"] + above["height"] <= first["y"] < above["y"] + above["height"] + 24
    assert first["y"] + first["height"] - above["y"] <= height  # one screen holds both
    assert last["y"] + last["height"] <= own["y"]  # the seats come after every action
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_during_a_deal_the_page_says_which_deal_is_being_built(
    signed_in: Any, open_table: Any
) -> None:
    """A deal is made in steps (partner, the card given, the card wanted, the answer), one
    button each: the page said nothing of the deal so far. It says it in words at each step,
    to everyone at the table, and nothing once the deal is off."""
    page = signed_in
    table = Table()
    table.until_bo_may_deal()
    game = table.game
    game.apply("deal @1")
    socket = open_table(table)
    deal = page.locator("[data-role=deal]")
    start = "Deal being built (deal 1 this turn): you with rob (seat 1)."
    expect(deal).to_have_text(f"{start} Giving: not chosen yet. Wanting: not chosen yet.")
    assert deal.bounding_box()["y"] < page.locator("[data-role=actions]").bounding_box()["y"]

    give = next(a for a in game.legal_actions() if a.startswith("give ") and a != "give nothing")
    game.apply(give)
    socket.send(json.dumps(table.frame()))
    given = TITLES[give.split()[1]]
    expect(deal).to_have_text(f"{start} Giving: {given}. Wanting: not chosen yet.")

    # A card rob holds: else the engine declines for rob at once (its only move).
    want = next(f"want {card}" for card in game.table.seats[1].hand)
    game.apply(want)
    assert game.table.to_act == 1  # the deal is proposed: rob answers
    socket.send(json.dumps(table.frame()))
    wanted = TITLES[want.split()[1]]
    expect(deal).to_have_text(
        "Deal on the table, waiting for the answer (deal 1 this turn): you with rob (seat 1). "
        f"Giving: {given}. Wanting: {wanted}."
    )
    game.apply("decline")
    socket.send(json.dumps(table.frame()))
    expect(deal).to_be_hidden()


def test_what_happened_reads_oldest_first_numbered_from_the_start(
    signed_in: Any, open_table: Any
) -> None:
    """The list showed the newest line first, numbered 1: it read as the game's first event.
    It reads oldest first, numbered as the game told them (the frame keeps the last 40), and
    follows the newest line unless its reader scrolled back up."""
    page = signed_in
    table = Table()
    rng = random.Random(1)
    while table.views.frames(table.game)[0]["line_first"] < 10:
        table.game.apply(rng.choice(table.game.legal_actions()))
    sent = table.frame()["frame"]  # as the page's first frame (no event in between)
    socket = open_table(table)
    lines = page.locator("[data-role=lines] li")
    expect(lines).to_have_text(sent["lines"])
    box = page.locator("[data-role=lines]")
    first = sent["line_first"]
    assert first >= 10 and box.evaluate("ol => ol.start") == first  # numbered first, first + 1...
    at_end = "b => b.scrollTop + b.clientHeight >= b.scrollHeight - 2"
    assert box.evaluate("b => b.scrollHeight > b.clientHeight") and box.evaluate(at_end)
    # Scrolled back up, the reader keeps their place when more lines come.
    box.evaluate("b => { b.scrollTop = 0; }")
    while table.views.frames(table.game)[0]["lines"][-1] == sent["lines"][-1]:
        table.game.apply(rng.choice(table.game.legal_actions()))
    more = table.frame()
    socket.send(json.dumps(more))
    expect(lines.last).to_have_text(more["frame"]["lines"][-1])
    assert box.evaluate("b => b.scrollTop") == 0


def test_the_players_think_time_shows_the_live_figures(signed_in: Any, open_table: Any) -> None:
    """The players' table said "0 ms / 0 decisions" for every seat while the game was played
    (the figures are recorded at the end): a dash until a frame carries them, then the figures."""
    page = signed_in
    table = Table()
    socket = open_table(table)
    cells = page.locator("[data-think-seat]")
    expect(cells).to_have_text(["\u2013"] * 3)  # an en dash, as for the places
    think = [{"decisions": 4, "ms": 1234}, {"decisions": 1, "ms": 56}, {"decisions": 0, "ms": 0}]
    socket.send(json.dumps(table.frame(think=think)))
    expect(cells).to_have_text(
        ["1234 ms / 4 decisions", "56 ms / 1 decision", "0 ms / 0 decisions"]
    )


def test_a_silent_socket_is_opened_again_and_a_lost_end_is_heard(
    signed_in: Any, live_server: Any, valid_version: Any, stranger: Any
) -> None:
    """The game's end (or any message) dropped by the server's channel layer: after a minute
    of silence the page opens its socket again, and the new socket's hello and end tell that
    the game is over (the page's clock is Playwright's, run forward)."""
    page = signed_in
    match = match_create(
        versions=[valid_version("rob"), valid_version("cy")],
        people={0: stranger},
        rated=False,
        shuffle=False,
    )
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    table = Table()
    opened: list[Any] = []

    def answer(ws: Any) -> None:
        opened.append(ws)
        if len(opened) == 1:  # the game, then silence: its end never comes on this socket
            ws.send(json.dumps({"type": "hello", "seat": 0, "status": "running"}))
            ws.send(json.dumps(table.frame()))
        else:
            ws.send(json.dumps({"type": "hello", "seat": 0, "status": "finished"}))
            ws.send(json.dumps({"type": "end", "status": "finished"}))

    page.clock.install()
    page.route_web_socket("**/ws/matches/**", answer)
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.locator(".replay-seat").first.wait_for()
    page.clock.run_for("00:30")
    assert len(opened) == 1  # half a minute of silence: nothing yet
    page.clock.run_for("00:40")  # then opened again, told the end (and reloaded, maybe)
    page.get_by_text("The game is over; the page shows its replay in a moment.").wait_for()
    assert len(opened) >= 2
