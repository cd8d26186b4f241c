"""A person's whole game through the API, as `grass table` plays it: started with
`POST /api/games/` and an API token, then played to its end over the socket the answer names,
opened with the same token (no cookie, no Origin) on the whole ASGI application, against an
example bot, while a worker's run (`match_run`, in a thread, the bot out of the sandbox) plays
the match. The client is `grass table`'s own session (bots/table.py), its person typing the
first legal action at every request."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from bots.table import SocketClosed, TableSession
from ladder.bots.models import Bot
from ladder.matches.models import Match
from tests.ladder.live.conftest import in_thread, run_async

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

RECEIVE_S = 60.0
"""A receive on the test's socket waits this long: a communicator whose receive times out
cancels the consumer, so `grass table`'s short receives become one long one here."""


class CommunicatorSocket:
    """`bots.table.Socket` over Channels' WebsocketCommunicator, for the session's thread:
    each call runs on the test's event loop."""

    def __init__(self, socket: WebsocketCommunicator, loop: asyncio.AbstractEventLoop) -> None:
        self.socket = socket
        self.loop = loop

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def recv(self, timeout: float) -> str | None:
        output = self._run(self.socket.receive_output(RECEIVE_S))
        if output["type"] == "websocket.close":
            raise SocketClosed(output.get("code"))
        return str(output["text"])

    def send(self, text: str) -> None:
        self._run(self.socket.send_to(text_data=text))

    def close(self) -> None:
        self._run(self.socket.disconnect())


@pytest.mark.timeout(180)
def test_a_person_starts_a_game_with_the_api_and_plays_it_to_the_end_over_the_socket(
    channel_layer: None,
    api: Any,
    stranger: Any,
    valid_version: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ladder.accounts.services import token_get_or_create
    from ladder.asgi import application
    from ladder.matches import tasks
    from ladder.matches.services import match_run

    settings.GRASS_SANDBOXED = False
    settings.GRASS_PLAY_DECISION_SECONDS = 30
    monkeypatch.setattr(tasks.run_match, "apply_async", lambda *a, **k: None)  # run here
    examples = get_user_model().objects.create_user(username="examples")
    bot = valid_version("greedy", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples)

    started = api("stranger").post(
        "/api/games/", {"opponents": [bot.pk], "seat": 0, "hands": 1}, format="json"
    )
    assert started.status_code == 201, started.json()
    game = started.json()
    path = urlsplit(game["socket_url"]).path
    assert path == f"/ws/matches/{game['id']}/"
    token = (b"authorization", f"Token {token_get_or_create(user=stranger).key}".encode())
    prompts: list[str] = []

    def person(prompt: str) -> str:
        prompts.append(prompt)
        return "1"

    async def play() -> tuple[int, str]:
        loop = asyncio.get_running_loop()
        socket = WebsocketCommunicator(application, path, headers=[token])
        connected, _ = await socket.connect()
        assert connected
        out = io.StringIO()
        session = TableSession(lambda: CommunicatorSocket(socket, loop), out=out, ask=person)
        # The worker picks the game up once the person is at the table, as a queued game.
        worker = asyncio.ensure_future(in_thread(match_run, match_id=game["id"]))
        code = await asyncio.to_thread(session.run)
        await asyncio.wait_for(worker, 60)
        return code, out.getvalue()

    code, shown = run_async(play())
    match = Match.objects.get(pk=game["id"])
    assert code == 0, shown
    assert match.status == Match.Status.FINISHED and not match.rated
    seats = list(match.seats.order_by("seat"))
    assert seats[0].player == stranger and seats[1].bot_id == bot.pk
    person_seat = seats[0]
    # Every request the person was asked was answered in time (no strike, no forfeit).
    assert prompts and person_seat.decisions >= len(prompts)
    assert person_seat.strikes == 0 and not person_seat.forfeited
    assert "Waiting for a worker to start the game..." in shown
    assert "Your move:" in shown and "Sent: " in shown
    assert "The game is over. Every hand, face up:" in shown and "Result:" in shown
    assert f"bo (you): ${match.result['totals'][0]:,}".replace("$-", "-$") in shown
    # The API lists it finished.
    listed = api("stranger").get("/api/games/").json()
    assert listed[0]["id"] == game["id"] and listed[0]["status"] == "finished"
    assert json.dumps(listed)  # plain JSON
