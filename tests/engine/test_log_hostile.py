"""The log reader against hostile files: whatever a file holds, reading and replaying it
(what `grass verify`, `/replay/upload.json` and the match pages do) either works or raises
LogError naming a line. Anything else is a crash a visitor can trigger at will."""

from __future__ import annotations

import io
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import new_game
from engine.log import LogError, dumps, read_log, replay
from engine.replay_frames import document
from tests.tiers import examples


def _log(seed: int = 3) -> list[str]:
    game = new_game("modern", 3, seed, limits={"max_hands": 1})
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    return dumps(game.events).splitlines()


LINES = _log()


def read_and_replay(data: bytes) -> None:
    """The one property: success, or LogError with a line number inside the file."""
    try:
        events = read_log(io.BytesIO(data))
        replay(events)
        document(events, None)
        document(events, 0)
    except LogError as exc:
        assert 1 <= exc.line <= data.count(b"\n") + 2, exc
        str(exc).encode("utf-8")


@pytest.mark.parametrize(
    "bad",
    [
        b"[" * 100_000,
        b"{" * 100_000,
        b"9" * 5_000,
        b'{"e":"act","seat":0,"action":' + b"1" * 5_000 + b"}",
        b'{"e":"note","seat":0,"kind":"x","detail":' + b"[" * 990 + b"]" * 990 + b"}",
        b'{"e":"act","seat":0,"action":' + b"[" * 990 + b"]" * 990 + b"}",
        b'{"e":"act","seat":NaN,"action":"x"}',
        b"\xff\xfe",
    ],
    ids=lambda b: repr(b[:20]),
)
@pytest.mark.parametrize("where", [0, 1, len(LINES) // 2, len(LINES) - 1])
def test_a_hostile_line_anywhere_names_its_line(bad: bytes, where: int) -> None:
    lines = [line.encode() for line in LINES]
    lines[where] = bad
    data = b"\n".join(lines) + b"\n"
    with pytest.raises(LogError) as raised:
        read_and_replay_strict(data)
    assert raised.value.line == where + 1


def read_and_replay_strict(data: bytes) -> None:
    events = read_log(io.BytesIO(data))
    replay(events)
    document(events, None)


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.integers(min_value=0, max_value=len(LINES) - 1),
    st.sampled_from(["e", "seat", "action", "players", "seed", "ruleset", "variants", "kind"]),
    VALUES,
)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_field_of_any_line_set_to_any_value(line: int, key: str, value: object) -> None:
    lines = list(LINES)
    event = json.loads(lines[line])
    event[key] = value
    lines[line] = json.dumps(event)
    read_and_replay("\n".join(lines).encode() + b"\n")


@given(
    st.integers(min_value=0, max_value=len(LINES)),
    VALUES.map(lambda v: {"e": "note", "seat": 0, "kind": v, "detail": v, "strike": v}),
)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_note_anywhere(at: int, note: dict) -> None:
    lines = list(LINES)
    lines.insert(at, json.dumps(note))
    read_and_replay("\n".join(lines).encode() + b"\n")


@given(st.binary(max_size=400))
@settings(max_examples=examples(200), deadline=None)
def test_arbitrary_bytes(data: bytes) -> None:
    read_and_replay(data)
