"""`grass table` without a site (bots/table.py): the table as text, the choices a person
types, and a game's messages from `hello` to `end` on a scripted socket: answers, a lost
connection, Ctrl-C, the end of standard input, close codes."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from bots.client import LadderError
from bots.table import (
    Choice,
    SocketClosed,
    TableSession,
    new_lines,
    parse_choice,
    render_actions,
    render_result,
    render_table,
    socket_url,
)
from engine import new_game
from engine.observation import observe
from engine.transcript import describe_action

NOW_MS = 1_767_312_000_000


def real_frame(*, over: bool = False, seq: int = 1) -> dict[str, Any]:
    """A frame of seat 1 as the worker builds it (ladder/relay): its observation without the
    history, and for a game not over, a request with the seat's legal actions."""
    game = new_game("modern", ["examples/greedy", "pia"], seed=3, limits={"max_hands": 1})
    chooser = random.Random(1)
    while not game.over and (over or game.decision.seat != 1 or len(game.legal_actions()) < 3):
        game.apply(chooser.choice(game.legal_actions()))
    view = {k: v for k, v in observe(game, 1).items() if k != "history"}
    frame: dict[str, Any] = {
        "match": 12,
        "seq": seq,
        "view": view,
        "lines": ["--- Hand 1: examples/greedy deals, 104 cards ---", "pia draws Jamaica"],
        "over": game.over,
        "hands": None,
        "result": game.result if game.over else None,
        "out": None,
        "request": None,
    }
    if game.over:
        frame["hands"] = [["mexico"], ["panama", "felony"]]
    else:
        legal = game.legal_actions()
        frame["request"] = {
            "id": 4,
            "legal": legal,
            "labels": [describe_action(a, game.names) for a in legal],
            "deadline": NOW_MS + 120_000,
            "seconds": 120.0,
        }
    return frame


def test_the_table_is_text_with_your_hand_and_the_others_face_down() -> None:
    frame = real_frame()
    text = "\n".join(render_table(frame))
    view = frame["view"]
    assert text.startswith("Hand 1 · stack ")
    assert "seat 0  examples/greedy (dealer): $0" in text
    assert "seat 1  pia (you): $0" in text
    assert text.count("hand: ") == 1  # only the person's own hand
    assert "Market Open" in text and "Panama $50,000" in text  # titles, a peddle's value
    assert f"{view['seats'][0]['cards']} cards in hand" in text
    over = real_frame(over=True)
    revealed = "\n".join(render_table(over))
    assert revealed.count("hand: ") == 2 and "Felony" in revealed


def test_actions_are_numbered_in_words_with_their_text() -> None:
    request = {"id": 1, "legal": ["end", "play panama"], "labels": ["ends the turn"]}
    assert render_actions(request) == ["   1. ends the turn   [end]", "   2. play panama"]


def test_the_result_lists_places_and_totals() -> None:
    frame = real_frame(over=True)
    frame["result"] = {
        "totals": [5000, -30000],
        "ranks": [1, 2],
        "reason": "hand-limit",
        "hands": 1,
    }
    assert render_result(frame) == [
        "   1. examples/greedy: $5,000",
        "   2. pia (you): -$30,000",
        "  (after 1 hand(s): hand-limit)",
    ]


@pytest.mark.parametrize(
    ("typed", "choice"),
    [
        ("2", Choice("act", "play panama")),
        (" 1 \n", Choice("act", "end")),
        ("play panama", Choice("act", "play panama")),
        ("3", Choice("bad", "choose 1 to 2")),
        ("0", Choice("bad", "choose 1 to 2")),
        ("-1", Choice("bad", "type an action's number (t: the table, r: resign, ?: the actions)")),
        (
            "play felony",
            Choice("bad", "type an action's number (t: the table, r: resign, ?: the actions)"),
        ),
        ("", Choice("help")),
        ("?", Choice("help")),
        ("t", Choice("table")),
        ("r", Choice("resign")),
        ("resign", Choice("resign")),
    ],
)
def test_what_a_person_types(typed: str, choice: Choice) -> None:
    assert parse_choice(typed, ["end", "play panama"]) == choice


def test_lines_already_shown_are_not_shown_again() -> None:
    assert new_lines([], ["a", "b"]) == ["a", "b"]
    assert new_lines(["a", "b"], ["a", "b", "c"]) == ["c"]
    assert new_lines(["a", "b", "c"], ["b", "c", "d", "e"]) == ["d", "e"]  # the window slid
    assert new_lines(["a", "b"], ["a", "b"]) == []
    assert new_lines(["a", "b"], ["x", "y"]) == ["x", "y"]  # missed some: all of it


def test_the_socket_is_on_the_site_the_token_belongs_to() -> None:
    """The path the API answered, on the logged-in site: the token never goes to a host an
    answer names."""
    assert socket_url("https://ladder.example.org/", "wss://elsewhere.example/ws/matches/3/") == (
        "wss://ladder.example.org/ws/matches/3/"
    )
    assert socket_url("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws/matches/3/") == (
        "ws://127.0.0.1:8000/ws/matches/3/"
    )


# ---------------------------------------------------------------------- a game, scripted


SILENT = object()
"""In a FakeSocket's script: a receive that hears nothing."""


class FakeSocket:
    """Messages the server sends, in order (a SocketClosed in the list closes the socket);
    what the client sends is kept."""

    def __init__(self, script: list[Any], sent: list[dict[str, Any]]) -> None:
        self.script = script
        self.sent = sent
        self.closed = False

    def recv(self, timeout: float) -> str | None:
        if not self.script:
            raise AssertionError("the client waits for more than the server says")
        item = self.script.pop(0)
        if isinstance(item, SocketClosed):
            raise item
        if item is SILENT:
            return None  # nothing said within the timeout
        return json.dumps(item)

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))

    def close(self) -> None:
        self.closed = True


def session(
    scripts: list[list[Any]], answers: list[Any]
) -> tuple[TableSession, list[dict[str, Any]], io.StringIO]:
    sent: list[dict[str, Any]] = []
    sockets: Iterator[list[Any]] = iter(scripts)
    typed: Iterator[Any] = iter(answers)

    def ask(prompt: str) -> str:
        answer = next(typed, EOFError())
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)

    out = io.StringIO()
    table = TableSession(
        lambda: FakeSocket(next(sockets), sent),
        out=out,
        ask=ask,
        clock=lambda: NOW_MS / 1000,
        sleep=lambda s: None,
    )
    return table, sent, out


def hello(status: str = "running", seat: int | None = 1) -> dict[str, Any]:
    return {"type": "hello", "status": status, "seat": seat}


def framed(frame: dict[str, Any]) -> dict[str, Any]:
    return {"type": "frame", "now": NOW_MS, "frame": frame}


def test_a_game_played_to_its_end() -> None:
    asked, over = real_frame(seq=1), real_frame(over=True, seq=2)
    over["lines"] = [*asked["lines"], "pia discards Jamaica", "=== Game over ==="]
    legal = asked["request"]["legal"]
    table, sent, out = session(
        [[hello(), framed(asked), framed(over), {"type": "end", "status": "finished"}]],
        ["wat", "99", "t", "?", "2"],
    )
    assert table.run() == 0
    assert sent == [{"type": "act", "request": 4, "action": legal[1]}]
    text = out.getvalue()
    assert "The game is being played." in text and "Your move:" in text
    assert f"   2. {asked['request']['labels'][1]}" in text
    assert "Not an action: type an action's number" in text and "Not an action: choose 1 to" in text
    assert f"Sent: {legal[1]}" in text
    assert text.count("  · pia draws Jamaica") == 1 and "  · === Game over ===" in text
    assert "The game is over. Every hand, face up:" in text and "Result:" in text


def test_a_lost_connection_is_opened_again_and_the_request_still_waiting_is_asked() -> None:
    asked = real_frame(seq=1)
    legal = asked["request"]["legal"]
    table, sent, out = session(
        [
            [hello(), SocketClosed(1006)],
            [hello(), framed(asked), {"type": "end", "status": "finished"}],
        ],
        ["1"],
    )
    assert table.run() == 0
    assert sent == [{"type": "act", "request": 4, "action": legal[0]}]
    assert "Connection lost; connecting again in 1 s..." in out.getvalue()
    assert "Connected again." in out.getvalue()


def test_a_silent_socket_is_opened_again_and_a_lost_end_is_heard() -> None:
    """The end (or any message) the server's channel layer dropped: after SILENCE_S of
    silence the socket is opened again, and its hello and end tell the game is over."""
    from bots import table as module

    now = [0.0]
    sent: list[dict[str, Any]] = []
    scripts = iter(
        [
            [hello(), *[SILENT] * 100],
            [hello(status="finished"), {"type": "end", "status": "finished"}],
        ]
    )

    def tick() -> float:
        now[0] += module.RECV_TICK_S
        return now[0]

    out = io.StringIO()
    table = TableSession(
        lambda: FakeSocket(next(scripts), sent), out=out, ask=lambda _: "", clock=tick
    )
    assert table.run() == 0
    assert f"Nothing heard for {module.SILENCE_S:g} s; connecting again..." in out.getvalue()
    assert sent == []


@pytest.mark.parametrize(("code", "why"), [(4404, "no such match"), (4429, "too many")])
def test_a_socket_closed_for_good_is_one_line(code: int, why: str) -> None:
    table, _, _ = session([[hello(), SocketClosed(code)]], [])
    with pytest.raises(LadderError, match=why):
        table.run()


def test_ctrl_c_asks_and_resigns() -> None:
    asked = real_frame(seq=1)
    table, sent, out = session(
        [[hello(), framed(asked), {"type": "end", "status": "finished"}]],
        [KeyboardInterrupt(), "y"],
    )
    assert table.run() == 0
    assert sent == [{"type": "resign"}]
    assert "Resigned: the bots finish the game without you..." in out.getvalue()


def test_ctrl_c_answered_no_goes_on_and_twice_leaves_without_resigning() -> None:
    asked = real_frame(seq=1)
    table, sent, out = session(
        [[hello(), framed(asked)]],
        [KeyboardInterrupt(), "n", KeyboardInterrupt(), KeyboardInterrupt()],
    )
    assert table.run() == 130
    assert sent == []
    text = out.getvalue()
    assert "Not resigned: the game goes on" in text
    assert "Left the table: the game goes on without you" in text and "--resume" in text


def test_the_end_of_standard_input_leaves_without_resigning() -> None:
    table, sent, out = session([[hello(), framed(real_frame(seq=1))]], [])
    assert table.run() == 130 and sent == []
    assert "Standard input ended. Left the table" in out.getvalue()


def test_resigning_a_game_not_started_yet_cancels_it() -> None:
    table, sent, out = session([[hello("queued"), {"type": "end", "status": "failed"}]], ["yes"])
    # The Ctrl-C comes while it waits for a worker: the first receive is interrupted.
    script = table.line.connect
    calls = {"n": 0}

    def connect() -> Any:
        socket = script()
        real_recv = socket.recv

        def recv(timeout: float) -> str | None:
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt
            return real_recv(timeout)

        socket.recv = recv  # type: ignore[method-assign]
        return socket

    table.line.connect = connect
    assert table.run() == 1
    assert sent == [{"type": "resign"}]
    assert "Waiting for a worker to start the game..." in out.getvalue()
    assert "You resigned before the game started: it is cancelled." in out.getvalue()


def test_an_answer_after_the_deadline_says_so() -> None:
    asked = real_frame(seq=1)
    asked["request"]["deadline"] = NOW_MS - 1000
    table, sent, out = session(
        [[hello(), framed(asked), {"type": "end", "status": "finished"}]], ["1"]
    )
    assert table.run() == 0
    assert len(sent) == 1 and "Too late: the time ran out" in out.getvalue()


def test_older_frames_and_stray_messages_are_ignored() -> None:
    newer, older = real_frame(seq=5), real_frame(seq=3)
    newer["request"] = None
    table, sent, _ = session(
        [
            [
                hello(),
                framed(newer),
                framed(older),
                {"type": "?"},
                [1],
                {"type": "end", "status": "finished"},
            ]
        ],
        [],
    )
    assert table.run() == 0 and sent == []
