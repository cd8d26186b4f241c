"""The live tables' sockets (ladder/live/consumers.py) under attack, on the real channel layer:
a test channel joined to the match's worker group sees exactly what the consumers pass on.
Wrong seat, illegal action, another user's match, floods, oversized and binary messages, a
page of another site: nothing reaches the worker."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from ladder.live.routing import websocket_urlpatterns
from ladder.matches.lanes import Lane
from ladder.matches.models import Match, MatchSeat
from ladder.relay import groups
from tests.ladder.live.conftest import run_async
from tests.ladder.tournaments.conftest import entrants, make_tournament, organiser  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

RECEIVE_S = 30.0
"""How long a test waits for a message the consumer must send: far longer than it takes, so
that a loaded machine (the suite beside `make run`) does not fail it; a test that expects
silence says how long it listens (`receive_nothing`)."""


def as_user(user: Any) -> Any:
    """The routes with `user` in the scope, as AuthMiddlewareStack would put them."""
    from django.contrib.auth.models import AnonymousUser

    inner = URLRouter(websocket_urlpatterns)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await inner({**scope, "user": user or AnonymousUser()}, receive, send)

    return app


@pytest.fixture
def person_match(owner: Any, valid_version: Any) -> Match:
    """A running match: `owner` (ann) holds seat 1 against a bot."""
    match = Match.objects.create(status=Match.Status.RUNNING, rated=False)
    MatchSeat.objects.create(match=match, seat=0, bot_version=valid_version("rob"))
    MatchSeat.objects.create(match=match, seat=1, player=owner)
    return match


def frame(seq: int, request: dict[str, Any] | None) -> str:
    view = {"players": ["ann/rob", "ann"], "seat": 1, "hand": ["panama"]}
    return json.dumps({"match": 0, "seq": seq, "view": view, "lines": [], "request": request})


REQUEST = {"id": 7, "legal": ["end", "play panama"], "labels": [], "deadline": 0, "seconds": 60}


async def worker_inbox(match_id: int) -> tuple[Any, str]:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(groups.worker(match_id), channel)
    return layer, channel


async def drain(layer: Any, channel: str, wait: float = 0.5) -> list[dict[str, Any]]:
    got = []
    while True:
        try:
            got.append(await asyncio.wait_for(layer.receive(channel), wait))
        except TimeoutError:
            return got


async def connect(user: Any, match_id: int) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    socket = WebsocketCommunicator(as_user(user), f"/ws/matches/{match_id}/")
    connected, _ = await socket.connect()
    assert connected
    hello = await socket.receive_json_from(timeout=RECEIVE_S)
    return socket, hello


def test_the_seated_person_answers_only_the_request_waiting_and_only_with_a_legal_action(
    channel_layer: None, person_match: Match, owner: Any
) -> None:
    async def scenario() -> list[dict[str, Any]]:
        layer, inbox = await worker_inbox(person_match.pk)
        socket, hello = await connect(owner, person_match.pk)
        assert hello == {"type": "hello", "status": "running", "seat": 1}
        sync = await drain(layer, inbox)
        assert sync == [
            {"type": "live.sync", "view": 1, "reply_to": sync[0]["reply_to"]},
        ]
        # Before any request: an answer goes nowhere.
        await socket.send_json_to({"type": "act", "request": 7, "action": "end"})
        seat_group = groups.seat(person_match.pk, 1)
        await layer.group_send(seat_group, {"type": "live.frame", "frame": frame(1, REQUEST)})
        shown = await socket.receive_json_from(timeout=RECEIVE_S)
        assert shown["type"] == "frame" and shown["frame"]["request"]["id"] == 7
        for forged in (
            {"type": "act", "request": 6, "action": "end"},
            {"type": "act", "request": 7, "action": "play felony @0"},
            {"type": "act", "request": True, "action": "end"},
            {"type": "act", "request": "7", "action": "end"},
            {"type": "act", "request": 7, "action": ["end"]},
            {"type": "act", "request": 7},
            {"type": "act", "request": 7, "action": "end", "seat": 0},  # takes seat 1 anyway
        ):
            await socket.send_json_to(forged)
        await socket.send_to(text_data="not json")
        await socket.send_to(text_data="[1, 2]")
        await socket.send_json_to({"type": "act", "request": 7, "action": "play panama"})
        await socket.send_json_to({"type": "act", "request": 7, "action": "end"})  # one per request
        got = await drain(layer, inbox)
        await socket.disconnect()
        return got

    got = run_async(scenario())
    # The forged one naming seat 0 was legal for request 7: it went on, for seat 1 (the
    # seat the database gives ann), and then the request was spent.
    assert got == [{"type": "live.act", "seat": 1, "request": 7, "action": "end"}]


def test_a_person_answering_fast_is_never_throttled(
    channel_layer: None, person_match: Match, owner: Any, settings: Any
) -> None:
    """Answers to the waiting request cost nothing of the rate: a person may answer 30
    requests in a second (bots decide in milliseconds between them) with a rate of 1."""
    settings.GRASS_LIVE_MESSAGES_PER_SECOND = 1

    async def scenario() -> list[dict[str, Any]]:
        layer, inbox = await worker_inbox(person_match.pk)
        socket, _ = await connect(owner, person_match.pk)
        await drain(layer, inbox)
        for n in range(1, 31):
            request = {**REQUEST, "id": n}
            await layer.group_send(
                groups.seat(person_match.pk, 1), {"type": "live.frame", "frame": frame(n, request)}
            )
            await socket.receive_json_from(timeout=RECEIVE_S)
            await socket.send_json_to({"type": "act", "request": n, "action": "end"})
        got = await drain(layer, inbox)
        await socket.disconnect()
        return got

    got = run_async(scenario())
    assert [m["request"] for m in got] == list(range(1, 31))


def test_watchers_anonymous_or_seated_elsewhere_say_nothing_that_reaches_the_worker(
    channel_layer: None, person_match: Match, stranger: Any, owner: Any
) -> None:
    other = Match.objects.create(status=Match.Status.RUNNING, rated=False)
    MatchSeat.objects.create(match=other, seat=0, player=stranger)
    MatchSeat.objects.create(
        match=other, seat=1, bot_version=person_match.seats.get(seat=0).bot_version
    )

    async def scenario() -> tuple[list[Any], list[Any], dict[str, Any]]:
        layer, inbox = await worker_inbox(person_match.pk)
        sockets = []
        for user in (None, stranger):
            socket, hello = await connect(user, person_match.pk)
            assert hello["seat"] is None
            sockets.append(socket)
        await drain(layer, inbox)  # their sync requests
        # A watcher's frames (the group of watchers) reach them; a seat's do not.
        await layer.group_send(
            groups.seat(person_match.pk, 1), {"type": "live.frame", "frame": frame(1, REQUEST)}
        )
        watched = {"match": 0, "seq": 1, "view": {"hand": None}, "lines": []}
        await layer.group_send(
            groups.watchers(person_match.pk),
            {"type": "live.frame", "frame": json.dumps(watched)},
        )
        for socket in sockets:
            shown = await socket.receive_json_from(timeout=RECEIVE_S)
            assert shown["frame"]["view"]["hand"] is None
            for message in (
                {"type": "act", "request": 7, "action": "end"},
                {"type": "resign"},
                {"type": "act", "request": 7, "action": "end", "seat": 1},
            ):
                await socket.send_json_to(message)
        # The stranger in their own match (seat 0 there) cannot act in ann's either.
        own, hello = await connect(stranger, other.pk)
        assert hello["seat"] == 0
        await own.send_json_to({"type": "resign"})
        got = await drain(layer, inbox)
        other_layer, other_inbox = await worker_inbox(other.pk)
        await own.send_json_to({"type": "resign"})
        theirs = await drain(other_layer, other_inbox)
        for socket in [*sockets, own]:
            assert await socket.receive_nothing(0.2)
            await socket.disconnect()
        return got, theirs, hello

    got, theirs, _ = run_async(scenario())
    assert got == []
    assert theirs == [{"type": "live.resign", "seat": 0}]


def test_floods_oversized_and_binary_messages_close_the_socket(
    channel_layer: None, person_match: Match, owner: Any, settings: Any
) -> None:
    settings.GRASS_LIVE_MESSAGES_PER_SECOND = 2

    async def scenario() -> tuple[list[Any], list[int]]:
        layer, inbox = await worker_inbox(person_match.pk)
        codes = []
        flooder, _ = await connect(owner, person_match.pk)
        await drain(layer, inbox)
        for _ in range(200):
            await flooder.send_json_to({"type": "resign"})
        codes.append((await flooder.receive_output(RECEIVE_S))["code"])
        flooded = await drain(layer, inbox)
        big, _ = await connect(owner, person_match.pk)
        await big.send_to(text_data=json.dumps({"type": "resign", "pad": "x" * 2000}))
        codes.append((await big.receive_output(RECEIVE_S))["code"])
        binary, _ = await connect(owner, person_match.pk)
        await binary.send_to(bytes_data=b'{"type": "resign"}')
        codes.append((await binary.receive_output(RECEIVE_S))["code"])
        rest = [m for m in await drain(layer, inbox) if m["type"] != "live.sync"]
        return flooded + rest, codes

    got, codes = run_async(scenario())
    assert codes == [4429, 4413, 4413]
    # The burst (five times the rate) passed; the flood did not.
    assert 1 <= len(got) <= 12
    assert all(message == {"type": "live.resign", "seat": 1} for message in got)


def test_a_socket_for_no_match_is_refused(channel_layer: None, owner: Any) -> None:
    async def scenario() -> Any:
        socket = WebsocketCommunicator(as_user(owner), "/ws/matches/987654/")
        connected, code = await socket.connect()
        return connected, code

    assert run_async(scenario()) == (False, 4404)


def test_a_page_of_another_site_cannot_open_a_socket(
    channel_layer: None, person_match: Match, client: Any, owner: Any
) -> None:
    """The whole ASGI application: the session cookie makes the person; an Origin that is not
    the site's is refused before any consumer runs (another site's page cannot play for a
    visitor who is signed in here)."""
    from ladder.asgi import application

    client.force_login(owner)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    path = f"/ws/matches/{person_match.pk}/"

    async def scenario() -> tuple[Any, Any]:
        ours = WebsocketCommunicator(
            application, path, headers=[(b"origin", b"http://localhost"), (b"cookie", cookie)]
        )
        connected, _ = await ours.connect()
        assert connected
        hello = await ours.receive_json_from(timeout=RECEIVE_S)
        await ours.disconnect()
        theirs = WebsocketCommunicator(
            application, path, headers=[(b"origin", b"https://evil.example"), (b"cookie", cookie)]
        )
        refused = await theirs.connect()
        return hello, refused

    hello, refused = run_async(scenario())
    assert hello["seat"] == 1
    assert refused[0] is False


@pytest.mark.slow  # waits out the socket's once-a-second pace
def test_a_tournaments_socket_follows_its_running_tables_a_frame_a_second(
    channel_layer: None,
    make_tournament: Any,  # noqa: F811
    entrants: Any,  # noqa: F811
    owner: Any,
) -> None:
    """Its running tables (not its queued ones, nor another tournament's), each table's frames
    at most one a second, the newest."""
    from datetime import timedelta

    from ladder.live import consumers
    from ladder.tournaments.services import tournament_register, tournament_tick

    t = make_tournament(format="swiss", seats=2, swiss_rounds=1)
    for bot in entrants(4):
        tournament_register(tournament=t, bot=bot, user=bot.owner)
    tournament_tick(tournament_id=t.pk, now=t.starts_at + timedelta(seconds=1))
    games = list(Match.objects.filter(tournament_game__table__round__tournament=t).order_by("pk"))
    assert len(games) == 2
    running, queued = games
    Match.objects.filter(pk=running.pk).update(status=Match.Status.RUNNING)

    async def scenario() -> list[dict[str, Any]]:
        socket = WebsocketCommunicator(as_user(None), f"/ws/tournaments/{t.pk}/")
        connected, _ = await socket.connect()
        assert connected
        got = [await socket.receive_json_from(timeout=RECEIVE_S)]
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        for seq in range(1, 6):
            frame = {"match": running.pk, "seq": seq, "view": {"hand": None}, "lines": []}
            message = {"type": "live.frame", "match": running.pk, "frame": json.dumps(frame)}
            await layer.group_send(groups.watchers(running.pk), message)
            other = {**message, "match": queued.pk}
            await layer.group_send(groups.watchers(queued.pk), other)
        # (A receive that times out would cancel the consumer: wait for nothing instead.)
        while not await socket.receive_nothing(consumers.TOURNAMENT_FRAME_S * 2):
            got.append(await socket.receive_json_from(timeout=RECEIVE_S))
        await socket.disconnect()
        return got

    got = run_async(scenario())
    assert got[0] == {"type": "tables", "matches": [running.pk]}
    frames = [m["frame"] for m in got[1:]]
    assert frames and all(f["match"] == running.pk for f in frames)
    assert frames[-1]["seq"] == 5 and len(frames) <= 2


def test_resigning_a_game_no_worker_started_ends_it_and_frees_the_person(
    channel_layer: None, person_match: Match, owner: Any, stranger: Any
) -> None:
    from ladder.live.selectors import person_games_active

    Match.objects.filter(pk=person_match.pk).update(status=Match.Status.QUEUED, lane=Lane.PERSON)

    async def scenario() -> list[dict[str, Any]]:
        watcher, _ = await connect(stranger, person_match.pk)
        await watcher.send_json_to({"type": "resign"})  # a watcher's resign: nothing
        socket, hello = await connect(owner, person_match.pk)
        assert hello["status"] == "queued"
        # Where it stands, as the page says it (`matchmaking.waiting`): a place is free.
        assert hello["queue"] == {
            "position": 1,
            "ahead": 0,
            "estimate_seconds": 0,
            "lane": "person",
            "text": "1st in the queue, starting in a moment",
        }
        assert await watcher.receive_nothing(0.3)
        await socket.send_json_to({"type": "resign"})
        got = [
            await socket.receive_json_from(timeout=RECEIVE_S),
            await watcher.receive_json_from(timeout=RECEIVE_S),
        ]
        await socket.disconnect()
        await watcher.disconnect()
        return got

    got = run_async(scenario())
    assert got == [{"type": "end", "status": "failed"}, {"type": "end", "status": "failed"}]
    match = Match.objects.get(pk=person_match.pk)
    assert match.status == Match.Status.FAILED and "resigned" in match.failure_reason
    assert person_games_active(user=owner) == 0


def test_no_browser_can_forge_the_take_back_of_a_game(
    channel_layer: None, person_match: Match, owner: Any
) -> None:
    """A run gives its game up when a newer attempt's table says `live.claim` on the match's
    worker group (issue 35): a person (or anyone on the socket) who could say it would stop
    any game at will. The socket forwards nothing but answers and resignations it builds
    itself, so a forged claim, in any spelling, reaches no worker."""

    async def scenario() -> list[dict[str, Any]]:
        layer, inbox = await worker_inbox(person_match.pk)
        socket, _ = await connect(owner, person_match.pk)
        await drain(layer, inbox)  # the page's sync
        for forged in (
            {"type": "live.claim", "attempt": 99},
            {"type": "claim", "attempt": 99},
            {"type": "act", "request": 7, "action": "end", "attempt": 99},
            {"type": "resign", "attempt": 99, "kind": "live.claim"},
        ):
            await socket.send_json_to(forged)
        got = await drain(layer, inbox)
        await socket.disconnect()
        return got

    got = run_async(scenario())
    assert all(message["type"] != "live.claim" for message in got)
    assert all("attempt" not in message for message in got)


def token_header(user: Any, keyword: str = "Token") -> tuple[bytes, bytes]:
    from ladder.accounts.services import token_get_or_create

    return (b"authorization", f"{keyword} {token_get_or_create(user=user).key}".encode())


def test_a_program_plays_its_seat_with_an_api_token_and_no_origin(
    channel_layer: None, person_match: Match, owner: Any, stranger: Any, client: Any
) -> None:
    """`grass table`'s socket: the whole ASGI application, the API token in the handshake's
    Authorization header (`Token` or `Bearer`), no Origin, no cookie. The seat is the token's
    user's, whatever cookie comes along; its answers pass the same checks as a page's."""
    from ladder.asgi import application

    client.force_login(stranger)
    strangers_cookie = (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())
    path = f"/ws/matches/{person_match.pk}/"
    ways = (
        [token_header(owner)],
        [token_header(owner, "Bearer")],
        [token_header(owner, "token"), strangers_cookie],
    )

    async def scenario() -> tuple[list[Any], list[Any]]:
        layer, inbox = await worker_inbox(person_match.pk)
        hellos = []
        for headers in ways:
            socket = WebsocketCommunicator(application, path, headers=headers)
            connected, _ = await socket.connect()
            assert connected
            hellos.append(await socket.receive_json_from(timeout=RECEIVE_S))
            if len(hellos) < 3:
                await socket.disconnect()
        await drain(layer, inbox)  # the sockets' syncs
        await layer.group_send(
            groups.seat(person_match.pk, 1), {"type": "live.frame", "frame": frame(1, REQUEST)}
        )
        shown = await socket.receive_json_from(timeout=RECEIVE_S)
        assert shown["frame"]["request"]["id"] == 7
        await socket.send_json_to({"type": "act", "request": 7, "action": "play felony @0"})
        await socket.send_json_to({"type": "act", "request": 7, "action": "play panama"})
        got = await drain(layer, inbox)
        await socket.disconnect()
        return hellos, got

    hellos, got = run_async(scenario())
    assert hellos == [{"type": "hello", "status": "running", "seat": 1}] * 3
    assert got == [{"type": "live.act", "seat": 1, "request": 7, "action": "play panama"}]


def test_a_socket_with_a_wrong_or_foreign_authorization_is_refused(
    channel_layer: None, person_match: Match, owner: Any, stranger: Any, client: Any
) -> None:
    """An Authorization header that holds no good token refuses the socket: it never falls
    back to the cookie (nor to watching). `Basic`, which a browser adds from credentials in a
    URL, is refused with it."""
    from django.contrib.auth import get_user_model

    from ladder.asgi import application

    client.force_login(owner)
    cookie = (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())
    origin = (b"origin", b"http://localhost")
    name, good = token_header(owner)
    path = f"/ws/matches/{person_match.pk}/"
    refused_headers: list[list[tuple[bytes, bytes]]] = [
        [(name, b"Token 0123456789abcdef0123456789abcdef01234567"), cookie, origin],
        [(name, b"Basic YW5uOnB3"), cookie, origin],
        [(name, good.split()[1]), cookie, origin],  # the key without its keyword
        [(name, good + b" x")],
        [(name, good), (name, good)],
        [(name, b"Token " + b"a" * 5000)],
        [(name, b"Token \xff\xfe")],
        [(name, b"")],
    ]

    async def scenario() -> list[bool]:
        accepted = []
        for headers in refused_headers:
            socket = WebsocketCommunicator(application, path, headers=headers)
            connected, _ = await socket.connect()
            accepted.append(connected)
            if connected:
                await socket.disconnect()
        return accepted

    assert run_async(scenario()) == [False] * len(refused_headers)
    # A deactivated account's token is refused too, as the REST API refuses it.
    get_user_model().objects.filter(pk=owner.pk).update(is_active=False)

    async def inactive() -> bool:
        socket = WebsocketCommunicator(application, path, headers=[(name, good)])
        connected, _ = await socket.connect()
        return connected

    assert run_async(inactive()) is False


def test_a_token_socket_has_the_same_limits_as_a_page(
    channel_layer: None, person_match: Match, owner: Any, settings: Any
) -> None:
    from ladder.asgi import application

    settings.GRASS_LIVE_MESSAGES_PER_SECOND = 2
    path = f"/ws/matches/{person_match.pk}/"
    token = token_header(owner)

    async def scenario() -> tuple[list[Any], list[int]]:
        layer, inbox = await worker_inbox(person_match.pk)
        codes = []
        for send in (
            [json.dumps({"type": "resign"})] * 200,
            [json.dumps({"type": "resign", "pad": "x" * 2000})],
        ):
            socket = WebsocketCommunicator(application, path, headers=[token])
            connected, _ = await socket.connect()
            assert connected
            await socket.receive_json_from(timeout=RECEIVE_S)
            for text in send:
                await socket.send_to(text_data=text)
            codes.append((await socket.receive_output(RECEIVE_S))["code"])
        got = [m for m in await drain(layer, inbox) if m["type"] != "live.sync"]
        return got, codes

    got, codes = run_async(scenario())
    assert codes == [4429, 4413]
    assert 1 <= len(got) <= 12
