"""The Play page's and a person's live table's script, in a real browser, with the table's
WebSocket answered by the test (Playwright's `route_web_socket`): no worker, no ASGI server.

What the newcomer saw: seats 0 to 5 offered for a game of two; "queued" under the match's title
while the page asked for a move; a resign question that spoke of a game going on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from ladder.matches.models import Match
from ladder.matches.services import match_create

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
        ws.send(json.dumps({"type": "hello", "seat": 0, "status": "queued"}))
        sockets.append(ws)

    page.route_web_socket("**/ws/matches/**", table)
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", answer)
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    status = page.locator("[data-match-status]")
    page.get_by_text("Waiting for a worker to start the game").wait_for()
    assert status.all_inner_texts() == ["queued", "queued"]
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
