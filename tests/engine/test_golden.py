"""Golden games: the engine still plays the games engine 1.1.0 recorded, event for event.

`tests/engine/data/golden-1.1.0.jsonl.gz` holds 286 seeded games of random legal play (both
rulesets, 2-6 seats, every variant, see `tests/engine/golden.py`), recorded before issue 14
made the engine faster and changed three readings of the rules. Each game is started again from
its log's header, so it plays under the rules of the engine version that wrote it, and the same
seeded choices are made: every decision (seat, phase, legal actions in order), every event,
and for one game in four every observation the bot runner would send, must be the same. The
stored logs must still verify, and the replay documents of a few games must be unchanged.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from engine.log import dumps, game_from_header, replay
from tests.engine.golden import frames_digests, load, log_digest, play

GAMES = load()


def _name(entry: dict[str, Any]) -> str:
    spec = entry["spec"]
    on = "+".join(k for k, v in spec["variants"].items() if v is True) or "plain"
    return f"{spec['ruleset']}-{spec['players']}p-{on}-{spec['seed']}"


def _first_difference(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    for number, (a, b) in enumerate(zip(expected, got, strict=False), start=1):
        if a != b:
            return f"line {number}: recorded {a}, now {b}"
    return f"recorded {len(expected)} lines, now {len(got)}"


@pytest.mark.parametrize("entry", GAMES, ids=_name)
def test_recorded_game_plays_the_same(entry: dict[str, Any]) -> None:
    header = entry["header"]
    assert header["engine"] == "1.1.0"
    views = hashlib.sha256() if "views" in entry else None
    game, decisions = play(entry["spec"], game_from_header(header), views)
    if log_digest(game) != entry["events"]:
        detail = f"{len(game.events)} lines, recorded {entry['lines']}"
        if "log" in entry:
            now = [json.loads(line) for line in dumps(game.events).splitlines()]
            detail = _first_difference(entry["log"], now)
        pytest.fail(f"the game's log differs: {detail}")
    assert decisions == entry["decisions"], "same events, but the legal actions differ"
    if views is not None:
        assert views.hexdigest() == entry["views"], "an observation differs"


LOGGED = [entry for entry in GAMES if "log" in entry]


@pytest.mark.parametrize("entry", LOGGED, ids=_name)
def test_recorded_log_verifies(entry: dict[str, Any]) -> None:
    game = replay(entry["log"])
    assert game.result == entry["log"][-1]
    assert game.events[0]["engine"] == "1.1.0"


@pytest.mark.parametrize("entry", [e for e in LOGGED if "frames" in e], ids=_name)
def test_replay_documents_are_unchanged(entry: dict[str, Any]) -> None:
    assert frames_digests(entry["log"]) == entry["frames"]
