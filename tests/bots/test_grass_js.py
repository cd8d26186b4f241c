"""The JavaScript SDK (bots/sdk/js/grass.js) speaks protocol version 2 as the Python SDK does:
the observation its `choose` sees, rebuilt from what changed, is `observe()`'s at every
decision, in the runtime image's Node.js, in the sandbox.

A harness bot (`run` of grass.js, with a `choose` that writes its observation on a line of its
own before answering) is fed the runner's own lines (`bots.runner.feed`) for one seat of a
game of random legal play; the test reads back each observation it rebuilt.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from bots import protocol
from bots.runner.botfiles import BotSource
from bots.runner.boxes import start_bot, stop_bot
from bots.runner.feed import Feeds
from bots.runner.process import BotProcess
from engine import Game, Variants, new_game, observe
from tests.bots.test_protocol_v2 import CLOCKS, _difference, _hello

HARNESS = """
const { run } = require("grass");
run({
  name: "harness",
  PROTOCOL
  choose(obs) {
    const { bankMs, cpuMs, wallMs, received, ...view } = obs;
    const seen = { type: "seen", view, clocks: [bankMs, cpuMs, wallMs] };
    process.stdout.write(JSON.stringify(seen) + "\\n");
    obs.hand.sort().reverse();  // a bot that changes its observation changes nothing kept
    obs.history.push("x");
    return obs.legal[0];
  },
});
"""

SECONDS = 60.0
"""Each line's deadline: generous, for a loaded machine (the bot answers in milliseconds)."""


def _talk(bot: BotProcess, line: bytes) -> None:
    bot.send(line, time.monotonic() + SECONDS)


def _read(bot: BotProcess) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(bot.readline(time.monotonic() + SECONDS))
    return message


def _harness(protocol_line: str = "") -> BotSource:
    return BotSource("js-harness", {"bot.js": HARNESS.replace("PROTOCOL", protocol_line).encode()})


def _play_watching(game: Game, seat: int, bot: BotProcess, version: int) -> int:
    """Random legal play; at each of `seat`'s decisions, compare what the bot rebuilt with
    `observe()`. Returns the number of decisions checked."""
    rng = random.Random(game.n * 1000 + seat)
    _talk(bot, protocol.encode(_hello(game, seat)))
    ready = _read(bot)
    assert ready["type"] == "ready" and ready["protocol"] == version
    feed = Feeds(game).for_seat(seat, version)
    sent = reported = hand_start = checked = request = 0
    while not game.over:
        if game.table.to_act == seat:
            request += 1
            since = max(sent, game.table.hand_start_event)
            expected = json.loads(json.dumps(observe(game, seat, since=since)))
            _talk(bot, feed.act(request, **CLOCKS))
            sent = len(game.events)
            seen = _read(bot)
            assert seen["view"] == expected, _difference(seen["view"], expected)
            assert seen["clocks"] == [CLOCKS["bank_ms"], CLOCKS["cpu_ms"], CLOCKS["wall_ms"]]
            assert _read(bot) == {"type": "action", "id": request, "action": expected["legal"][0]}
            checked += 1
        game.apply(rng.choice(game.decision.actions))
        while reported < len(game.events):
            kind = game.events[reported]["e"]
            if kind == "hand":
                hand_start = reported
            elif kind == "hand-end":
                sent = reported + 1
                _talk(bot, feed.hand_end(hand_start, reported))
            reported += 1
    return checked


@pytest.mark.parametrize(
    ("ruleset", "players", "chosen", "seat"),
    [
        ("modern", 4, Variants(), 1),
        ("classic", 5, Variants(hidden_deals=True, give_me_five=True, lucky_or_not=True), 3),
        ("modern", 2, Variants(give_me_five=True, learning_hands=True), 0),
    ],
)
def test_the_js_sdk_rebuilds_observe_at_every_decision(
    sandbox_ready: None, ruleset: str, players: int, chosen: Variants, seat: int
) -> None:
    game = new_game(ruleset, players, 23, chosen, {"max_hands": 4})
    bot, box, folder = start_bot(_harness(), sandboxed=True)
    try:
        assert _play_watching(game, seat, bot, version=2) > 20
    finally:
        stop_bot(bot, box, folder)


def test_a_js_bot_may_stay_on_version_1(sandbox_ready: None) -> None:
    game = new_game("modern", 3, 5, Variants(), {"max_hands": 2})
    bot, box, folder = start_bot(_harness("protocol: 1,"), sandboxed=True)
    try:
        assert _play_watching(game, 2, bot, version=1) > 5
    finally:
        stop_bot(bot, box, folder)
