"""Replay frames: one per event, cards conserved frame by frame, a seat's frames holding only
what that seat could know, and tampered logs rejected at their line."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from engine import Game, Variants, new_game
from engine.log import LogError, dumps, read_log, replay
from engine.position import game_from_position
from engine.replay_frames import (
    _Lines,
    _record,
    deltas,
    document,
    frames,
    omniscient_state,
    seat_state,
    undelta,
)
from tests.engine.test_properties import scramble_hidden
from tests.engine.test_seed_examples import two_turns_position

VARIANTS = [
    ("modern", Variants()),
    ("classic", Variants()),
    ("modern", Variants(give_me_five=True, hidden_deals=True)),
    ("classic", Variants(lucky_or_not=True, learning_hands=True)),
    ("modern", Variants(hidden_deals=True, lucky_or_not=True)),
]


def played(ruleset: str, variants: Variants, seed: int, players: int = 4, hands: int = 2) -> Game:
    game = new_game(ruleset, players, seed, variants, limits={"max_hands": hands})
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def log_of(game: Game) -> list[dict[str, Any]]:
    """The log as a reader gets it back from the file (card kinds as plain strings)."""
    return [json.loads(line) for line in dumps(game.events).splitlines()]


def table_cards(frame: dict[str, Any]) -> Counter[str]:
    cards: Counter[str] = Counter(frame["wasted"])
    for seat in frame["seats"]:
        cards.update(seat["heat"] + seat["hassle_under"] + seat["unprotected"])
        cards.update(["market-open"] if seat["market_open"] else [])
        for group in seat["protected"]:
            cards.update([group["card"], *group["covers"]])
    return cards


@pytest.mark.parametrize(("ruleset", "variants"), VARIANTS)
def test_one_frame_per_event_with_every_card_accounted_for(
    ruleset: str, variants: Variants
) -> None:
    game = played(ruleset, variants, seed=11)
    log = log_of(game)
    shown = frames(log)
    assert len(shown) == len(log)
    assert [f["index"] for f in shown] == list(range(len(log)))
    assert [f["line"] for f in shown] == list(range(1, len(log) + 1))
    assert [f["event"] for f in shown] == [e["e"] for e in log]
    assert shown[-1]["phase"] == "over" and shown[-1]["to_act"] == -1
    assert shown[-1]["totals"] == game.result["totals"]  # type: ignore[index]
    deck = 0
    for number, frame in enumerate(shown):
        assert frame["lines"] and all(isinstance(line, str) for line in frame["lines"])
        if frame["event"] == "hand":
            deck = log[number]["deck"]
        if deck == 0:
            continue
        # Passed cards travel face down together; until the last lands a hand is one short.
        passing = frame["event"] == "pass" or (
            number + 1 < len(log) and log[number + 1]["e"] == "pass"
        )
        held = sum(
            len(s["hand"]) + len(s.get("packet", [])) + len(s.get("kept", []))
            for s in frame["seats"]
        )
        assert [len(s["hand"]) for s in frame["seats"]] == [s["cards"] for s in frame["seats"]]
        total = held + sum(table_cards(frame).values()) + frame["stack"]
        if not passing:
            assert total == deck, (number, frame["event"], frame["lines"])


def test_frames_follow_the_game_event_by_event() -> None:
    game = played("modern", Variants(), seed=3, players=3, hands=1)
    shown = frames(log_of(game))
    header, hand, *dealt = shown[:5]
    assert header["hand"] == 0 and header["to_act"] == -1
    assert hand["stack"] == hand["seats"][0]["cards"] + 104 == 104
    # Every hand is shown from the first `dealt` line; the draw then adds one card.
    assert all(s["cards"] == 6 for f in dealt for s in f["seats"])
    draw = shown[5]
    assert draw["event"] == "draw" and draw["stack"] == dealt[-1]["stack"] - 1
    assert draw["seats"][draw["active"]]["cards"] == 7
    hand_end = next(f for f in shown if f["event"] == "hand-end")
    # The table is still there when the hand is scored.
    assert any(s["unprotected"] or s["protected"] or s["market_open"] for s in hand_end["seats"])
    assert hand_end["lines"][0].startswith("--- Hand 1 scored")


@pytest.mark.parametrize(("ruleset", "variants"), VARIANTS)
def test_a_seat_sees_its_own_hand_and_only_backs_of_the_others(
    ruleset: str, variants: Variants
) -> None:
    game = played(ruleset, variants, seed=5)
    log = log_of(game)
    everything = frames(log)
    for seat in range(game.n):
        shown = frames(log, seat)
        assert len(shown) == len(everything)
        for mine, full in zip(shown, everything, strict=True):
            for index, entry in enumerate(mine["seats"]):
                if index == seat:
                    assert entry["hand"] == full["seats"][index]["hand"]
                else:
                    assert entry["hand"] is None and "packet" not in entry
                    assert entry["cards"] == full["seats"][index]["cards"]
            # The public table is the same for everyone.
            for key in ("stack", "wasted", "totals", "to_act", "phase", "hand"):
                assert mine[key] == full[key]
        text = json.dumps(document(log, seat))
        assert '"secret"' not in text and '"seed"' not in text


def test_a_seat_state_does_not_change_when_hidden_cards_do() -> None:
    """As the observation secrecy test does: scramble what the seat cannot see."""
    rng = random.Random(7)
    for seed in range(6):
        variants = Variants(give_me_five=seed % 2 == 0, hidden_deals=seed % 3 == 0)
        game = new_game("modern", 2 + seed % 5, seed, variants, limits={"max_hands": 1})
        step = 0
        while not game.over:
            if step % 5 == 0:
                for seat in range(game.n):
                    state = seat_state(game, seat)
                    assert seat_state(scramble_hidden(game, seat, rng), seat) == state
            game.apply(rng.choice(game.legal_actions()))
            step += 1


def test_a_seats_lines_never_name_cards_it_did_not_see() -> None:
    """The readable lines of a seat's view are the same whatever the others' secrets were."""
    game = played("modern", Variants(hidden_deals=True, lucky_or_not=True), seed=9)
    log = log_of(game)
    for seat in range(game.n):
        # The secret of every line this seat may not see, garbled; only the lines are compared,
        # since the garbled log would no longer replay.
        garbled = []
        for event in log:
            if "see" in event and seat not in event["see"]:
                event = dict(event)
                if "secret" in event:
                    event["secret"] = {
                        k: ["x"] * len(v) if isinstance(v, list) else "x"
                        for k, v in event["secret"].items()
                    }
                if "action" in event:
                    event["action"] = "garbled"
            garbled.append(event)
        lines = _Lines(log[0], seat)
        assert [lines(e) for e in log] == [lines(e) for e in garbled]
    shown = frames(log, 1)
    others = [f for f, e in zip(shown, log, strict=True) if e["e"] == "draw" and e["seat"] != 1]
    assert others and all(f["lines"][0].endswith("draws a card") for f in others)


def test_deltas_rebuild_the_frames_and_are_much_smaller() -> None:
    game = played("classic", Variants(give_me_five=True), seed=2)
    log = log_of(game)
    for seat in (None, 0):
        full = frames(log, seat)
        compact = deltas(full)
        assert undelta(compact) == full
        assert len(json.dumps(compact)) * 3 < len(json.dumps(full))


def test_runner_notes_join_the_next_frame_and_stay_private() -> None:
    game = played("modern", Variants(), seed=4, players=3, hands=1)
    log = log_of(game)
    at = next(i for i, e in enumerate(log) if e["e"] == "act" and e["seat"] == 2 and i > 6)
    note = {
        "e": "note",
        "seat": 2,
        "kind": "timeout",
        "detail": "no reply in 1000 ms",
        "strike": 1,
        "played": log[at]["action"],
    }
    noted = [*log[:at], note, *log[at:]]
    everything = frames(noted)
    assert len(everything) == len(log)
    assert everything[at]["line"] == at + 2 and everything[at - 1]["line"] == at
    assert everything[at]["notes"] == [
        f"seat2: timeout (no reply in 1000 ms; strike 1; played {note['played']})"
    ]
    assert frames(noted, 0)[at]["notes"] == ["seat2: timeout"]
    assert frames(noted, 2)[at]["notes"] == everything[at]["notes"]
    assert everything[at + 1]["notes"] == []


def test_a_tampered_log_is_rejected_at_its_line() -> None:
    game = played("modern", Variants(), seed=6, players=3, hands=1)
    log = log_of(game)
    draw = next(i for i, e in enumerate(log) if e["e"] == "draw" and i > 10)
    tampered = [dict(e) for e in log]
    card = tampered[draw]["secret"]["card"]
    tampered[draw]["secret"] = {"card": "panama" if card != "panama" else "mexico"}
    with pytest.raises(LogError) as info:
        frames(tampered)
    assert info.value.line == draw + 1
    assert str(info.value).startswith(f"line {draw + 1}: the engine expected")
    with pytest.raises(LogError, match="line 1: the first line must be the header"):
        frames(log[1:])
    with pytest.raises(LogError, match="log ends early"):
        frames(log[:-1])
    with pytest.raises(ValueError, match="no seat 3 in a 3-player game"):
        frames(log, 3)


def test_a_game_from_a_position_replays_too() -> None:
    game = game_from_position(two_turns_position(), "modern", seed=1, limits={"max_hands": 1})
    rng = random.Random(1)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    log = log_of(game)
    shown = frames(log, 0)
    assert len(shown) == len(log)
    # The header frame already shows the set-up table.
    assert shown[0]["seats"][0]["unprotected"] and shown[0]["lines"][1].endswith("position)")
    assert document(read_log_text(dumps(game.events)))["game"]["players"][:3] == [
        "John",
        "Janis",
        "Bob",
    ]


def read_log_text(text: str) -> list[dict[str, Any]]:
    import io

    return read_log(io.BytesIO(text.encode()))


def slow_frames(log: list[dict[str, Any]], seat: int | None) -> list[dict[str, Any]]:
    """The frames by their definition: a full `omniscient_state` or `seat_state` (built from
    `observe`) after every event, at the moments the game's event hook names."""
    states: list[dict[str, Any]] = []

    def snapshot(game: Game, event: dict[str, Any]) -> None:
        states.append(omniscient_state(game) if seat is None else seat_state(game, seat))

    replay(log, on_event=snapshot)
    fast = frames(log, seat)
    assert len(states) == len(fast)
    return [{**frame, **state} for frame, state in zip(fast, states, strict=True)]


GAMES = [
    (ruleset, players, variants)
    for ruleset in ("modern", "classic")
    for players, variants in [
        (2, Variants()),
        (3, Variants(give_me_five=True, hidden_deals=True)),
        (4, Variants(lucky_or_not=True, learning_hands=True)),
        (5, Variants(hidden_deals=True, lucky_or_not=True)),
        (6, Variants(give_me_five=True, learning_hands=True)),
    ]
]


@pytest.mark.slow
@pytest.mark.parametrize(("ruleset", "players", "variants"), GAMES)
def test_frames_built_change_by_change_equal_full_states(
    ruleset: str, players: int, variants: Variants
) -> None:
    """The recorder compares only what may have changed (`_touched`, the Wasted pile by size,
    the totals by identity); its frames equal the full states built from `observe`, and in
    check mode (every seat compared at every event, the shortcuts asserted) nothing differs."""
    for seed in range(2):
        log = log_of(played(ruleset, variants, seed, players=players, hands=2))
        for seat in (None, *range(players)):
            fast = _record(log, seat)
            assert _record(log, seat, check=True) == fast
            assert undelta(fast) == slow_frames(log, seat)
