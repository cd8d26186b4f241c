"""The worker's side of live tables (ladder/relay): what each view may show, and a person's
seat played through the real channel layer (Redis) by a test standing in for the browser's
consumer."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from bots.runner.seats import TimeControl
from engine import new_game
from engine.game import Game
from engine.observation import PUBLIC_KEYS
from ladder.relay import groups
from ladder.relay.table import LiveTable
from ladder.relay.views import TableViews, watcher_view
from tests.engine.test_properties import scramble_hidden
from tests.ladder.live.conftest import in_thread, run_async

NOBODY = -1
"""A seat no event lets see anything: scrambling for it moves every hidden card."""


def frames_of(game: Game, people: list[int]) -> dict[Any, Any]:
    return TableViews(game, people).frames(game)


@pytest.mark.parametrize("seed", range(6))
def test_a_watchers_frame_holds_no_hidden_card(seed: int) -> None:
    """The watchers' frame does not change when every card nobody sees is moved: the other
    hands, the stack, the packets and the secrets of past events; a person's frame does not
    change when the cards their seat cannot see are moved. (The guard below checks that the
    scramble moves cards.)"""
    rng = random.Random(seed)
    players = 2 + seed % 5
    ruleset = ("modern", "classic")[seed % 2]
    game = new_game(ruleset, players, seed, None, {"max_hands": 1})
    step = 0
    while not game.over:
        if step % 9 == 0:
            watched = frames_of(game, [])[None]
            assert frames_of(scramble_hidden(game, NOBODY, rng), [])[None] == watched
            assert watched["view"]["hand"] is None and watched["hands"] is None
            assert set(watched["view"]) == {*PUBLIC_KEYS, "seat", "hand", "legal", "notes"}
            seat = step % players
            own = frames_of(game, [seat])[seat]
            assert frames_of(scramble_hidden(game, seat, rng), [seat])[seat] == own
        game.apply(rng.choice(game.legal_actions()))
        step += 1
    final = frames_of(game, [])[None]
    assert final["over"] and final["result"] == game.result
    assert [len(hand) for hand in final["hands"]] == [s["cards"] for s in final["view"]["seats"]]


def test_the_scramble_moves_what_watchers_cannot_see() -> None:
    game = new_game("modern", 4, 5)
    other = scramble_hidden(game, NOBODY, random.Random(1))
    assert [s.hand for s in other.seats] != [s.hand for s in game.seats]
    assert watcher_view(other) == watcher_view(game)


def test_lines_tell_a_watcher_that_cards_were_dealt_but_not_which() -> None:
    game = new_game("modern", 3, 2)
    lines = frames_of(game, [])[None]["lines"]
    own = frames_of(game, [0])[0]["lines"]
    # The hidden wording is the engine's, as in a replay (not even how many cards).
    assert f"{game.names[1]} is dealt a hand" in lines
    dealt_to_me = [line for line in own if line.startswith(game.names[0]) and "is dealt" in line]
    assert dealt_to_me and "," in dealt_to_me[0]  # the seat reads its own cards
    # The header is told with the seed hidden: it decides every shuffle.
    assert any("seed (hidden)" in line for line in lines) and any("seed (hidden)" in x for x in own)
    assert not any(f"seed {game.seed}" in line for line in lines + own)


# ---------------------------------------------------------------------- over the channel layer


@pytest.mark.slow  # a whole game through Redis
def test_a_person_plays_through_the_channel_layer_and_forged_answers_change_nothing(
    channel_layer: None,
) -> None:
    """A stand-in for the browser's consumer hears the person's frames and answers: answers
    to another request, with an action that is not legal, for another seat, or malformed, are
    ignored (the request times out after the good answer is held back once); the good answer
    is played."""
    from channels import DEFAULT_CHANNEL_LAYER
    from channels.layers import channel_layers

    match_id = 4242
    table = LiveTable(match_id=match_id, people={1: "ann"}, frames_per_second=50)
    tc = TimeControl(remote_decision_ms=2_500)

    async def browser() -> dict[str, Any]:
        layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        me = await layer.new_channel()
        watcher = await layer.new_channel()
        await layer.group_add(groups.seat(match_id, 1), me)
        await layer.group_add(groups.watchers(match_id), watcher)
        worker = groups.worker(match_id)
        played = asyncio.ensure_future(
            asyncio.to_thread(
                play_match,
                [load_bot("random"), table.agent(1)],
                seed=3,
                limits={"max_hands": 1},
                time_control=tc,
                sandboxed=False,
                watch=table.watch,
            )
        )
        answered = forged = 0
        seen_requests: list[int] = []
        while not played.done():
            try:
                message = await asyncio.wait_for(layer.receive(me), 0.5)
            except TimeoutError:
                continue
            if message["type"] != "live.frame":
                continue
            frame = json.loads(message["frame"])
            request = frame["request"]
            if request is None or request["id"] in seen_requests:
                continue
            seen_requests.append(request["id"])
            legal = request["legal"]
            if request["id"] == 1:
                # Forgeries only: none may be taken, so the first request times out.
                for bad in (
                    {"seat": 1, "request": 2, "action": legal[0]},
                    {"seat": 1, "request": 1, "action": "play nothing-at-all"},
                    {"seat": 0, "request": 1, "action": legal[0]},
                    {"seat": 1, "request": "1", "action": legal[0]},
                    {"seat": True, "request": 1, "action": legal[0]},
                    {"seat": 1, "request": 1, "action": legal[0] * 500},
                    {"seat": 1, "request": 1, "action": ["list"]},
                ):
                    await layer.group_send(worker, {"type": "live.act", **bad})
                    forged += 1
                continue
            good = {"type": "live.act", "seat": 1, "request": request["id"], "action": legal[-1]}
            await layer.group_send(worker, good)
            answered += 1
        result = await played
        watched = []
        while True:
            try:
                watched.append(await asyncio.wait_for(layer.receive(watcher), 0.2))
            except TimeoutError:
                break
        await layer.flush()
        return {"result": result, "answered": answered, "forged": forged, "watched": watched}

    try:
        out = run_async(browser())
    finally:
        table.close()
    result = out["result"]
    person = result.seats[1]
    assert out["forged"] == 7 and out["answered"] >= 1
    assert person.timeouts == 1 and person.faults[0]["kind"] == "timeout"
    assert person.strikes == 1 and not person.forfeited
    assert person.decisions == out["answered"] + 1
    frames = [json.loads(m["frame"]) for m in out["watched"] if m["type"] == "live.frame"]
    assert frames and all(f["view"]["hand"] is None for f in frames)
    assert all("request" not in f for f in frames)


@pytest.mark.slow  # a whole game through Redis
def test_a_person_who_resigns_forfeits_and_the_game_ends(channel_layer: None) -> None:
    from channels import DEFAULT_CHANNEL_LAYER
    from channels.layers import channel_layers

    match_id = 4343
    table = LiveTable(match_id=match_id, people={0: "bo"}, frames_per_second=0)

    async def resign() -> Any:
        layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        me = await layer.new_channel()
        await layer.group_add(groups.seat(match_id, 0), me)
        played = asyncio.ensure_future(
            asyncio.to_thread(
                play_match,
                [table.agent(0), load_bot("random"), load_bot("random")],
                seed=5,
                limits={"max_hands": 1},
                sandboxed=False,
                watch=table.watch,
            )
        )
        while True:
            message = await asyncio.wait_for(layer.receive(me), 30)
            if message["type"] == "live.frame" and json.loads(message["frame"])["request"]:
                break
        await layer.group_send(groups.worker(match_id), {"type": "live.resign", "seat": 0})
        result = await asyncio.wait_for(played, 60)
        await layer.flush()
        return result

    try:
        result = run_async(resign())
    finally:
        table.close()
    assert result.seats[0].forfeited and result.seats[0].forfeit_reason == "gone: resigned"
    assert result.ranks[0] == 3


def test_a_table_nobody_may_watch_starts_no_thread() -> None:
    table = LiveTable(match_id=1, people={}, frames_per_second=0)
    match = play_match(
        [load_bot("random"), load_bot("random")],
        seed=1,
        limits={"max_hands": 1},
        sandboxed=False,
        watch=table.watch,
    )
    table.close()
    assert match.result["hands"] == 1 and table.thread is None


def test_the_frames_carry_each_seats_decisions_and_think_time_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The match page showed "0 ms / 0 decisions" for every seat while the game was played
    (the figures are recorded at the end): the frames carry them as the referee counts them,
    for the watchers and the people alike, the last frame's the match's own."""
    table = LiveTable(match_id=1, people={1: "ann"}, frames_per_second=50)
    monkeypatch.setattr(table, "_kick", lambda: None)  # no thread: the frames stay in the outbox
    built: list[dict[Any, Any]] = []

    def watch(game: Game, reports: Any) -> None:
        table.watch(game, reports)
        if not built or built[-1][None]["seq"] != table.seq:
            built.append({view: json.loads(json.dumps(f)) for view, f in table.outbox.items()})

    person = table.agent(1)
    monkeypatch.setattr(person, "decide", lambda request: request.legal[-1])
    match = play_match(
        [load_bot("random"), person], seed=3, limits={"max_hands": 1}, sandboxed=False, watch=watch
    )
    assert built[0][None]["think"] == [{"decisions": 0, "ms": 0}] * 2
    last = [{"decisions": s.decisions, "ms": round(s.think_ms)} for s in match.seats]
    assert built[-1][None]["over"] and built[-1][None]["think"] == last
    assert all(frames[1]["think"] == frames[None]["think"] for frames in built)
    assert last[0]["decisions"] > 0 and last[1]["decisions"] > 0
    # A watcher that is told no reports (a benchmark's) sends no figures, not zeros.
    bare = LiveTable(match_id=2, people={}, frames_per_second=50)
    monkeypatch.setattr(bare, "_kick", lambda: None)
    bare.watch(new_game("modern", 2, 1))
    assert bare.outbox[None]["think"] is None


@pytest.mark.slow  # a whole game through match_run and Redis
@pytest.mark.django_db(transaction=True)
def test_every_match_a_worker_plays_is_shown_live_and_ends_revealed(
    channel_layer: None, valid_version: Any, settings: Any
) -> None:
    """`match_run` of a ladder match (bots only) sends its watchers frames as it is played,
    every hand face down until the last frame, which reveals them, then the end."""
    from channels.layers import get_channel_layer

    from ladder.matches.models import Match
    from ladder.matches.services import match_create, match_run

    settings.GRASS_SANDBOXED = False
    settings.GRASS_LIVE_FRAMES_PER_SECOND = 50
    match = match_create(
        versions=[valid_version("a"), valid_version("b"), valid_version("c")],
        limits={"max_hands": 1},
    )

    async def watch() -> list[dict[str, Any]]:
        layer = get_channel_layer()
        me = await layer.new_channel()
        await layer.group_add(groups.watchers(match.pk), me)
        played = asyncio.ensure_future(in_thread(match_run, match_id=match.pk))
        got = []
        while True:
            message = await asyncio.wait_for(layer.receive(me), 60)
            got.append(message)
            if message["type"] == "live.end":
                break
        await played
        return got

    got = run_async(watch())
    assert Match.objects.get(pk=match.pk).status == Match.Status.FINISHED
    assert got[-1] == {"type": "live.end", "match": match.pk, "status": "finished"}
    frames = [json.loads(m["frame"]) for m in got[:-1]]
    assert len(frames) >= 2 and [f["seq"] for f in frames] == sorted(f["seq"] for f in frames)
    assert all(f["view"]["hand"] is None and f["hands"] is None for f in frames[:-1])
    assert frames[-1]["over"] and len(frames[-1]["hands"]) == 3
    assert frames[-1]["result"] == Match.objects.get(pk=match.pk).result


def test_a_request_not_answered_is_sent_again_until_it_is(
    channel_layer: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame the channel layer dropped on its way to a person (a socket lagging past the
    layer's capacity or expiry) would leave them without their request until its time ran out:
    a strike for nothing. The frame with the request is sent again every RESEND_S while it
    waits, the same frame (the same seq: a page keeps one answer per request), and not
    after the answer."""
    from channels import DEFAULT_CHANNEL_LAYER
    from channels.layers import channel_layers

    from bots.runner.remote import RemoteRequest
    from engine.observation import observe
    from ladder.relay import table as relay

    monkeypatch.setattr(relay, "RESEND_S", 0.2)
    match_id = 4343
    table = LiveTable(match_id=match_id, people={0: "ann"}, frames_per_second=0)
    game = new_game("modern", 2, 7, None, {"max_hands": 1})
    table.watch(game)
    request = RemoteRequest(
        seat=0,
        request=1,
        observation=observe(game, 0),
        legal=tuple(game.legal_actions()),
        timeout_s=30.0,
    )

    async def person() -> tuple[list[dict[str, Any]], str | None, int]:
        layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        me = await layer.new_channel()
        await layer.group_add(groups.seat(match_id, 0), me)
        deciding = asyncio.ensure_future(in_thread(table.agent(0).decide, request))
        frames: list[dict[str, Any]] = []
        while len(frames) < 4:  # the first, then three sent again: none answered
            message = await asyncio.wait_for(layer.receive(me), 10)
            if message["type"] == "live.frame":
                frames.append(json.loads(message["frame"]))
        answer = {"seat": 0, "request": 1, "action": request.legal[-1]}
        await layer.group_send(groups.worker(match_id), {"type": "live.act", **answer})
        action = await asyncio.wait_for(deciding, 10)
        after = 0
        try:
            while True:
                message = await asyncio.wait_for(layer.receive(me), 1.0)
                after += message["type"] == "live.frame"
        except TimeoutError:
            pass
        await layer.flush()
        return frames, action, after

    try:
        frames, action, after = run_async(person())
    finally:
        table.close()
    assert action == request.legal[-1]
    assert all(f["request"] and f["request"]["id"] == 1 for f in frames), frames
    assert len({f["seq"] for f in frames}) == 1  # one frame, sent again
    assert after == 0  # answered: nothing more sent for it
