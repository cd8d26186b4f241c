"""Protocol version 2: requests that carry what changed, next to version 1.

- The observation an SDK bot rebuilds from version 2 is `observe()`'s, at every decision of many
  seeded games (both rulesets, 2-6 seats, every variant, deals), and its `Observation` is the one
  version 1 gives; `hand_end` is the same line in both versions.
- Version 1 lines are still byte for byte what the runner sent before version 2 (`_old_*` below
  are that runner's code, kept here as the reference), though now written from the texts the
  game's feeds share.
- In real matches, in the sandbox: a version 1 bot (the minimal bot of PROTOCOL.md section 8,
  which exits when `hello.protocol` is not 1) and SDK bots on version 2 at one table; the same
  SDK bots play the same game on either version; a bot's `ready.protocol` cannot make the runner
  speak anything but 1 or 2, and a version 2 bot that breaks the rules is struck as any other.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots import protocol
from bots.runner.botfiles import BotSource, load_bot
from bots.runner.feed import Feeds, TableText, V1Feed
from bots.runner.match import play_match
from bots.runner.seats import TimeControl
from bots.sdk import Bot, _Driver
from engine import Game, Variants, new_game, observe
from engine.log import game_from_header, read_log, replay
from engine.observation import redact
from engine.rules import ruleset_limits
from tests.bots.test_hostile import assert_finished, fault_kinds, play, raw_bot
from tests.tiers import examples

CLOCKS = {"bank_ms": 30_000, "cpu_ms": 31_000, "wall_ms": 93_000}


def _old_act(game: Game, seat: int, since: int, request: int, clocks: dict[str, int]) -> bytes:
    """A version 1 request as the runner wrote it before version 2 existed."""
    view = observe(game, seat, since=since)
    message = {"type": "act", "id": request, **clocks, "observation": view}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _old_hand_end(game: Game, seat: int, since: int, end: int) -> bytes:
    """A `hand_end` as the runner wrote it before version 2 existed."""
    event = game.events[end]
    message = {
        "type": "hand_end",
        "hand": event["hand"],
        "scores": event["scores"],
        "totals": event["totals"],
        "held": event["held"],
        "history": [redact(e, seat) for e in game.events[since : end + 1]],
    }
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _hello(game: Game, seat: int) -> dict[str, Any]:
    return protocol.hello(
        seat=seat,
        players=list(game.names),
        ruleset=game.ruleset.name,
        variants=game.variants.as_dict(),
        limits=ruleset_limits(game.ruleset),
        decision_ms=1000,
        bank_ms=30_000,
        protocols=protocol.PROTOCOLS,
    )


def check_every_decision(game: Game, rng: random.Random) -> int:
    """Play `game` with random legal actions, feeding every seat in both versions as the
    runner does, and check at each decision that the SDK's version 2 observation is
    `observe()`'s and its `Observation` version 1's; returns the number of decisions."""
    n = game.n
    feeds = Feeds(game)  # both versions share the game's texts, as at a mixed table
    v2 = [feeds.for_seat(seat, 2) for seat in range(n)]
    v1 = [feeds.for_seat(seat, 1) for seat in range(n)]
    sdk2, sdk1 = [_Driver(Bot()) for _ in range(n)], [_Driver(Bot()) for _ in range(n)]
    for seat in range(n):
        assert sdk2[seat].start(_hello(game, seat)) == 2
    sent = [0] * n
    requests = [0] * n
    reported = hand_start = decisions = 0
    while not game.over:
        seat = game.table.to_act
        requests[seat] += 1
        since = max(sent[seat], game.table.hand_start_event)
        expected = json.loads(json.dumps(observe(game, seat, since=since)))
        line1 = v1[seat].act(requests[seat], **CLOCKS)
        assert line1 == _old_act(game, seat, since, requests[seat], CLOCKS)
        line2 = v2[seat].act(requests[seat], **CLOCKS)
        sent[seat] = len(game.events)
        rebuilt = sdk2[seat].observation(json.loads(line2))
        assert rebuilt.raw == expected, _difference(rebuilt.raw, expected)
        whole = sdk1[seat].observation(json.loads(line1))
        assert rebuilt.history == whole.history
        assert (rebuilt.bank_ms, rebuilt.cpu_ms, rebuilt.wall_ms) == (30_000, 31_000, 93_000)
        decisions += 1
        game.apply(rng.choice(game.decision.actions))
        while reported < len(game.events):
            kind = game.events[reported]["e"]
            if kind == "hand":
                hand_start = reported
            elif kind == "hand-end":
                for other in range(n):
                    old = _old_hand_end(game, other, max(sent[other], hand_start), reported)
                    sent[other] = reported + 1
                    assert v1[other].hand_end(hand_start, reported) == old
                    assert v2[other].hand_end(hand_start, reported) == old
                    sdk2[other].hand_end(json.loads(old))
            reported += 1
    return decisions


def _difference(got: dict[str, Any], expected: dict[str, Any]) -> str:
    keys = sorted(set(got) | set(expected))
    return "; ".join(
        f"{k}: rebuilt {got.get(k)!r}, observe {expected.get(k)!r}"
        for k in keys
        if got.get(k) != expected.get(k)
    )


variants = st.builds(
    Variants,
    give_me_five=st.booleans(),
    hidden_deals=st.booleans(),
    lucky_or_not=st.booleans(),
    learning_hands=st.booleans(),
    target=st.sampled_from([250_000, 500_000, 1_000_000]),
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["modern", "classic"]),
    st.integers(min_value=2, max_value=6),
    st.integers(min_value=0, max_value=2**32),
    variants,
    st.integers(min_value=1, max_value=4),
    st.sampled_from([1, 2, 3]),
)
def test_the_rebuilt_observation_is_observe_at_every_decision(
    ruleset: str, players: int, seed: int, chosen: Variants, hands: int, deals: int
) -> None:
    limits = {"max_hands": hands, "max_deals_per_turn": deals}
    game = new_game(ruleset, players, seed, chosen, limits)
    assert check_every_decision(game, random.Random(seed)) > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ruleset", "players", "chosen"),
    [
        ("modern", 4, Variants()),
        ("classic", 6, Variants(hidden_deals=True, give_me_five=True, lucky_or_not=True)),
    ],
)
def test_the_rebuilt_observation_is_observe_through_whole_games(
    ruleset: str, players: int, chosen: Variants
) -> None:
    """Full-length games (up to 30 hands): totals and hand scores from every `hand_end`."""
    game = new_game(ruleset, players, 11, chosen)
    check_every_decision(game, random.Random(11))
    assert game.hand_no >= 5


@pytest.mark.parametrize(("ruleset", "players", "seed"), [("modern", 3, 7), ("classic", 2, 50)])
def test_a_new_hand_sends_the_notes_whole(ruleset: str, players: int, seed: int) -> None:
    """Games where a seat's first request of a hand finds as many notes as its last request
    of the hand before (other notes): only the new hand says they are not additions."""
    game = new_game(ruleset, players, seed, Variants(), {"max_hands": 3})
    check_every_decision(game, random.Random(seed))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["modern", "classic"]),
    st.integers(min_value=2, max_value=6),
    st.integers(min_value=0, max_value=2**32),
    variants,
)
def test_every_event_text_is_what_json_writes_of_its_view(
    ruleset: str, players: int, seed: int, chosen: Variants
) -> None:
    """Byte for byte, for every event of many games: the shared text of an event (written
    directly, without `json`) is the compact JSON of the event as the seats outside its secret
    see it, and as each seat inside it sees it. A reordered or repeated key would pass the
    observation tests above (they parse the JSON) but not this one."""
    game = new_game(ruleset, players, seed, chosen, {"max_hands": 2})
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.decision.actions))
    text = TableText(game)
    every = len(game.events)
    text.history(0, every, 0)
    assert text.texts == [
        json.dumps(redact(event, None), separators=(",", ":")) for event in game.events
    ]
    for seat in range(players):
        expected = [json.dumps(redact(e, seat), separators=(",", ":")) for e in game.events]
        assert text.history(0, every, seat) == ",".join(expected)


def test_version_2_requests_are_a_fraction_of_version_1() -> None:
    game = new_game("modern", 4, 3)
    feeds = Feeds(game)
    v2 = [feeds.for_seat(seat, 2) for seat in range(4)]
    v1 = [V1Feed(game, seat) for seat in range(4)]
    rng = random.Random(3)
    sizes: dict[int, list[int]] = {1: [], 2: []}
    while not game.over:
        seat = game.table.to_act
        sizes[1].append(len(v1[seat].act(1, **CLOCKS)))
        sizes[2].append(len(v2[seat].act(1, **CLOCKS)))
        game.apply(rng.choice(game.decision.actions))
    assert sum(sizes[2]) * 3 < sum(sizes[1])
    assert sorted(sizes[2])[len(sizes[2]) // 2] < 1500


def test_applying_changes_leaves_earlier_observations_as_they_were() -> None:
    """A bot may keep its observations: the next request's changes make new lists."""
    before = {
        "seats": [{"cards": 6}, {"cards": 6}],
        "wasted": ["mexico"],
        "notes": [["drew", "panama"]],
        "hand": ["panama"],
        "packet": ["mexico"],
    }
    frozen = json.loads(json.dumps(before))
    after = protocol.apply_changes(
        before,
        {"seats": [None, {"cards": 7}], "wasted_added": ["felony"], "notes_added": [["x"]]},
    )
    assert before == frozen
    assert after["seats"] == [{"cards": 6}, {"cards": 7}]
    assert after["wasted"] == ["mexico", "felony"]
    assert after["notes"] == [["drew", "panama"], ["x"]]
    assert "packet" not in after  # only in the requests that carry it
    scored = protocol.apply_hand_end(
        dict(after, hand_scores=[[1, 2]]),
        {"totals": [5, 0], "scores": [{"score": 5}, {"score": -3}]},
    )
    assert scored["totals"] == [5, 0] and scored["hand_scores"] == [[1, 2], [5, -3]]


# ---------------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("offered", "speaks", "answer"),
    [
        (None, 2, 1),  # a runner from before version 2: its hello offers nothing
        ([1], 2, 1),
        ([1, 2], 2, 2),
        ([1, 2], 1, 1),  # a bot that asks for version 1
        ([1, 2, 3], 2, 2),  # a newer runner: the newest both know
    ],
)
def test_the_sdk_answers_the_newest_version_both_speak(
    offered: list[int] | None, speaks: int, answer: int
) -> None:
    game = new_game("modern", 2, 1)
    hello = _hello(game, 0)
    del hello["protocols"]
    if offered is not None:
        hello["protocols"] = offered
    bot = Bot()
    bot.protocol = speaks
    assert _Driver(bot).start(hello) == answer


def test_the_sdk_follows_the_runner_whatever_it_answered() -> None:
    """An SDK bot that answered 2 to a runner that then speaks version 1 (one that ignores
    `ready.protocol`) still plays: the request says which version it is."""
    game = new_game("modern", 2, 5)
    driver = _Driver(Bot())
    assert driver.start(_hello(game, game.table.to_act)) == 2
    line = V1Feed(game, game.table.to_act).act(1, **CLOCKS)
    obs = driver.observation(json.loads(line))
    assert obs.raw == json.loads(json.dumps(observe(game, game.table.to_act)))


def test_only_protocols_offers_version_2() -> None:
    """`hello.protocol` stays 1 (version 1 bots exit on a version they do not know); callers
    that speak only version 1 send the hello they always did."""
    game = new_game("modern", 2, 1)
    offered = _hello(game, 0)
    assert offered["protocol"] == 1 and offered["protocols"] == [1, 2]
    plain = protocol.hello(
        seat=0,
        players=["a", "b"],
        ruleset="modern",
        variants={},
        limits={},
        decision_ms=1,
        bank_ms=1,
    )
    assert "protocols" not in plain and plain["protocol"] == 1


@pytest.mark.parametrize(
    ("value", "version"),
    [
        (2, 2),
        (1, 1),
        (None, 1),
        (2.0, 1),
        ("2", 1),
        (True, 1),
        (3, 1),
        (-2, 1),
        ([2], 1),
        ({"version": 2}, 1),
        (10**400, 1),
    ],
)
def test_the_runner_speaks_only_1_or_2(value: object, version: int) -> None:
    assert protocol.chosen_version({"type": "ready", "protocol": value}) == version


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


@given(json_values)
def test_no_ready_makes_the_runner_speak_another_version(value: object) -> None:
    version = protocol.chosen_version({"type": "ready", "protocol": value})
    assert version == (2 if type(value) is int and value == 2 else 1)


# ---------------------------------------------------------------------------- real matches

MINIMAL_V1 = """
import hashlib
import json
import random
import sys

PROTOCOL = 1
rng = random.Random()
digest = hashlib.sha256()  # added for the test: what this bot was sent, to compare
last = None


def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()  # stdout is a pipe: without a flush the runner waits in vain


for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind != "hello":
        digest.update(line.encode())
    if kind == "act":  # the clocks depend on time, not on the protocol: said when they change
        clocks = [message["bank_ms"], message["cpu_ms"], message["wall_ms"]]
        if clocks != last:
            sys.stderr.write("CLOCKS " + json.dumps([message["id"], *clocks]) + "\\n")
            last = clocks
    if kind == "hello":
        if message["protocol"] != PROTOCOL:
            sys.exit(f"protocol {message['protocol']} is not supported")  # message to stderr
        rng.seed(message["rng_seed"])
        send({"type": "ready", "protocol": PROTOCOL, "name": "tiny-random"})
    elif kind == "act":
        legal = message["observation"]["legal"]
        send({"type": "action", "id": message["id"], "action": rng.choice(legal)})
    elif kind == "game_end":
        sys.stderr.write("DIGEST " + digest.hexdigest() + "\\n")
        sys.stderr.flush()
        break
"""
"""PROTOCOL.md's minimal Python bot (section 8), which reports what it was sent on stderr."""


def _expected_v1_digest(events: list[dict[str, Any]], seat: int, stderr: str) -> str:
    """What a version 1 bot in `seat` should have been sent after `hello`, line for line, by
    the runner before version 2: the game replayed from its log, with the clocks each request
    carried (the bot says them when they change)."""
    changed = {}
    for line in stderr.splitlines():
        if line.startswith("CLOCKS "):
            request, bank, cpu, wall = json.loads(line[7:])
            changed[request] = {"bank_ms": bank, "cpu_ms": cpu, "wall_ms": wall}
    log = [e for e in events if e["e"] != "note"]
    game = game_from_header(log[0])
    actions = iter(e["action"] for e in log if e["e"] == "act" and not e.get("auto"))
    digest = hashlib.sha256()
    clocks: dict[str, int] = {}
    sent = request = reported = hand_start = 0
    while not game.over:
        if game.table.to_act == seat:
            request += 1
            clocks = changed.get(request, clocks)
            digest.update(
                _old_act(game, seat, max(sent, game.table.hand_start_event), request, clocks)
            )
            sent = len(game.events)
        game.apply(next(actions))
        while reported < len(game.events):
            kind = game.events[reported]["e"]
            if kind == "hand":
                hand_start = reported
            elif kind == "hand-end":
                digest.update(_old_hand_end(game, seat, max(sent, hand_start), reported))
                sent = reported + 1
            reported += 1
    result = game.result
    assert result is not None
    digest.update(
        json.dumps(
            {"type": "game_end", "result": result, "ranks": result["ranks"]}, separators=(",", ":")
        ).encode()
        + b"\n"
    )
    return digest.hexdigest()


def test_a_version_1_bot_and_version_2_sdk_bots_share_a_match(sandbox_ready: None) -> None:
    bots = [
        BotSource("tiny", {"bot.py": MINIMAL_V1.encode()}),
        load_bot("greedy"),
        load_bot("random"),
    ]
    match = play_match(bots, seed=21, limits={"max_hands": 2}, sandboxed=True)
    assert [s.protocol for s in match.seats] == [1, 2, 2]
    for seat in match.seats:
        assert seat.decisions > 0 and seat.faults == [] and not seat.forfeited, seat
    game = replay(read_log(io.BytesIO(match.log_text().encode())))
    assert game.result == match.result
    tiny = match.seats[0]
    reported = [line[7:] for line in tiny.stderr.splitlines() if line.startswith("DIGEST ")]
    expected = _expected_v1_digest(match.events, 0, tiny.stderr)
    assert reported == [expected], "the version 1 bot was not sent what the old runner sent"


def _sdk_bot(name: str, version: int) -> BotSource:
    """Example bot `name` asking for protocol `version` (the SDK's `Bot.protocol`)."""
    source = load_bot(name)
    text = source.files["bot.py"].decode()
    marker = '\n\nif __name__ == "__main__":'
    assert marker in text
    setting = f"\n\nimport bots.sdk\n\nbots.sdk.Bot.protocol = {version}"
    patched = text.replace(marker, setting + marker, 1)
    return BotSource(f"{name}-v{version}", {**source.files, "bot.py": patched.encode()})


def test_sdk_bots_play_the_same_game_on_either_version(sandbox_ready: None) -> None:
    def game(version: int) -> tuple[list[int], str]:
        bots = [
            _sdk_bot("greedy", version),
            _sdk_bot("random", version),
            _sdk_bot("greedy", version),
        ]
        match = play_match(bots, seed=8, limits={"max_hands": 2}, sandboxed=True)
        assert all(s.faults == [] for s in match.seats)
        log = [e for e in match.events if e["e"] != "note"]
        return [s.protocol for s in match.seats], json.dumps(log[1:])

    (one, log1), (two, log2) = game(1), game(2)
    assert one == [1, 1, 1] and two == [2, 2, 2]
    assert log1 == log2


ASKS_FOR = """
    import json, sys
    seen = set()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            sys.stdout.write(json.dumps({"type": "ready", "protocol": VALUE}) + "\\n")
        elif message["type"] == "act":
            seen.add(" ".join(sorted(k for k in ("observation", "changes") if k in message)))
            view = message.get("observation") or message["changes"]
            sys.stdout.write(json.dumps({"type": "action", "id": message["id"],
                                         "action": view["legal"][0]}) + "\\n")
        elif message["type"] == "game_end":
            sys.stderr.write("SEEN " + json.dumps(sorted(seen)) + "\\n")
            break
        sys.stdout.flush()
"""


@pytest.mark.parametrize("value", ["2.0", '"2"', "True", "3", "[2]", "2"])
def test_ready_protocol_picks_version_1_unless_it_is_2(sandbox_ready: None, value: str) -> None:
    bot = raw_bot(ASKS_FOR.replace("VALUE", value), name="asks")
    match = play(bot)
    asker = match.seats[0]
    wanted = 2 if value == "2" else 1
    assert asker.protocol == wanted and asker.faults == []
    seen = [line[5:] for line in asker.stderr.splitlines() if line.startswith("SEEN ")]
    assert seen == [json.dumps(["changes" if wanted == 2 else "observation"])]
    assert_finished(match, attacker_forfeits=False)


V2_ABUSER = """
    import json, sys
    REPLIES = {  # by request id; bytes are sent as they are
        1: b"this is {not json",
        2: {"type": "action", "action": "fly to the moon"},
        3: {"type": "action", "id": 1000, "action": "end"},
        4: {"type": "action", "action": ["play"]},
        5: b'{"type": "action", "id": 5, "changes": {"legal": []}}',
    }
    out = sys.stdout.buffer
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            reply = {"type": "ready", "protocol": 2, "name": "v2-abuser"}
        elif message["type"] == "act":
            n = message["id"]
            reply = REPLIES.get(n) or {"type": "action", "action": message["changes"]["legal"][0]}
            if isinstance(reply, dict) and "id" not in reply:
                reply = dict(reply, id=n)
        elif message["type"] == "game_end":
            break
        else:
            continue
        out.write(reply if isinstance(reply, bytes) else json.dumps(reply).encode())
        out.write(b"\\n")
        out.flush()
"""


def test_a_version_2_bot_that_breaks_the_rules_is_struck_as_any_other(
    sandbox_ready: None,
) -> None:
    tc = TimeControl(decision_ms=200, bank_ms=300, max_strikes=10)
    match = play(raw_bot(V2_ABUSER, name="v2-abuser"), time_control=tc)
    attacker = match.seats[0]
    assert attacker.protocol == 2
    assert fault_kinds(attacker) == ["protocol", "illegal", "protocol", "protocol", "protocol"]
    assert attacker.decisions > 5 and attacker.timeouts == 0
    assert_finished(match, attacker_forfeits=False)
