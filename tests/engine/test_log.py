"""Game logs: round trip, gzip, and rejection of edited logs at the first disagreeing line."""

from __future__ import annotations

import gzip
import io
import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from engine import Variants, new_game
from engine.game import Game
from engine.log import LogError, dumps, game_from_header, read_log, replay, verify, write_log
from engine.position import game_from_position
from engine.rules import CLASSIC, ENGINE_VERSION, readings
from tests.engine import golden
from tests.engine.test_seed_examples import TWO_TURNS, two_turns_position


def finished_game(seed: int = 4, ruleset: str = "modern", **variants: bool) -> Game:
    game = new_game(ruleset, 4, seed, Variants(**variants), limits={"max_hands": 2})
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def lines_of(game: Game) -> list[dict]:
    return [json.loads(line) for line in dumps(game.events).splitlines()]


def test_plain_and_gzip_logs_round_trip(tmp_path: Path) -> None:
    game = finished_game()
    for name in ("game.jsonl", "game.jsonl.gz"):
        path = write_log(game, tmp_path / name)
        again = verify(path)
        assert again.result == game.result
    with gzip.open(tmp_path / "game.jsonl.gz", "rt") as fh:
        first = json.loads(fh.readline())
    assert first["e"] == "header"
    assert first["ruleset"] == "modern"
    assert first["seed"] == 4
    assert first["players"] == ["seat0", "seat1", "seat2", "seat3"]
    assert first["engine"]
    last = read_log(tmp_path / "game.jsonl")[-1]
    assert last["e"] == "result" and last["ranks"] == game.result["ranks"]


def test_same_game_gives_byte_identical_gzip(tmp_path: Path) -> None:
    a = write_log(finished_game(), tmp_path / "a.jsonl.gz").read_bytes()
    b = write_log(finished_game(), tmp_path / "b.jsonl.gz").read_bytes()
    assert a == b


def first_index(lines: list[dict], kind: str, **match: object) -> int:
    return next(
        i
        for i, e in enumerate(lines)
        if e["e"] == kind and all(e.get(k) == v for k, v in match.items())
    )


def test_edited_draw_is_rejected_at_its_line() -> None:
    lines = lines_of(finished_game())
    index = first_index(lines, "draw")
    card = lines[index]["secret"]["card"]
    lines[index]["secret"]["card"] = "dr-feelgood" if card != "dr-feelgood" else "panama"
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == index + 1


def test_edited_action_is_rejected_at_its_line() -> None:
    lines = lines_of(finished_game())
    index = first_index(lines, "act", phase="turn")
    lines[index]["action"] = "play dr-feelgood"
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == index + 1
    assert "illegal action" in str(info.value) or "expected" in str(info.value)


def test_edited_score_and_result_are_rejected() -> None:
    lines = lines_of(finished_game())
    index = first_index(lines, "hand-end")
    lines[index]["scores"][0]["score"] += 5_000
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == index + 1
    lines = lines_of(finished_game())
    lines[-1]["winners"] = [3]
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == len(lines)


def test_missing_extra_and_reordered_lines_are_rejected() -> None:
    lines = lines_of(finished_game())
    with pytest.raises(LogError, match="ends early"):
        replay(lines[:-1])
    with pytest.raises(LogError, match="after the result") as info:
        replay([*lines, lines[-1]])
    assert info.value.line == len(lines) + 1
    index = first_index(lines, "act", phase="turn")
    swapped = list(lines)
    swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
    with pytest.raises(LogError):
        replay(swapped)


def test_auto_actions_cannot_be_forged_as_choices() -> None:
    lines = lines_of(finished_game())
    index = next(i for i, e in enumerate(lines) if e["e"] == "act" and e.get("auto"))
    del lines[index]["auto"]
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == index + 1


def test_unreadable_logs_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="line 2: not JSON"):
        read_log(io.BytesIO(b'{"e":"header"}\n{not json\n'))
    with pytest.raises(LogError, match="line 1: the first line must be the header"):
        replay([{"e": "draw"}])
    with pytest.raises(LogError, match="unknown log format"):
        replay([{"e": "header", "format": "other"}])
    header = lines_of(finished_game())[0]
    with pytest.raises(LogError, match="bad header"):
        replay([{**header, "ruleset": "nonsense"}])
    with pytest.raises(LogError, match="engine"):
        replay([{**header, "engine": "99.0.0"}])
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b" + b"garbage")
    with pytest.raises(LogError, match="gzip"):
        read_log(bad)


def test_a_position_game_replays_from_its_header() -> None:
    game = game_from_position(two_turns_position(), "modern", seed=1)
    for _, action in TWO_TURNS:
        game.apply(action)
    lines = lines_of(game)
    assert "position" in lines[0]
    # The log holds a finished hand plus the start of the next one; replay what exists.
    replayed = game_from_position(two_turns_position(), "modern", seed=1)
    for event in lines[1:]:
        if event["e"] == "act" and not event.get("auto"):
            replayed.apply(event["action"])
    assert lines_of(replayed) == lines


@pytest.mark.parametrize(
    "variants",
    [
        {"hidden_deals": True},
        {"give_me_five": True, "lucky_or_not": True},
        {"learning_hands": True},
    ],
)
def test_variant_games_replay(variants: dict[str, bool]) -> None:
    game = finished_game(7, "classic", **variants)
    assert replay(lines_of(game)).events == game.events


def test_a_lucky_or_not_log_of_engine_1_0_is_refused_by_name() -> None:
    """Engine 1.0 drew Lucky or not's takes from the dealing stream; 1.1 cannot replay those
    games and says so rather than reporting an edited line."""
    lines = lines_of(finished_game(7, "classic", lucky_or_not=True))
    lines[0] = {**lines[0], "engine": "1.0.0"}
    with pytest.raises(LogError) as info:
        replay(lines)
    assert info.value.line == 1
    assert str(info.value).startswith("line 1: log written by engine 1.0.0, which drew Lucky")
    # Other 1.0 games replay as before (1.0 and 1.1 read the rules alike): a golden game of
    # engine 1.1 relabelled.
    plain = next(
        entry["log"]
        for entry in golden.load()
        if "log" in entry and not entry["spec"]["variants"].get("lucky_or_not")
    )
    plain = [{**plain[0], "engine": "1.0.0"}, *plain[1:]]
    assert replay(plain).events[0]["engine"] == "1.0.0"


def test_a_log_plays_under_the_rules_of_the_engine_that_wrote_it() -> None:
    header = lines_of(finished_game(7, "classic"))[0]
    assert header["engine"] == ENGINE_VERSION
    assert game_from_header(header).ruleset == replace(CLASSIC, max_hands=2)
    old = game_from_header({**header, "engine": "1.1.0"}).ruleset
    assert old.engine == "1.1.0"
    assert not (old.deals_before_play_only or old.steal_card_stays)
    assert readings(old).startswith("rules of engine 1.1.0, before the readings of engine 1.2.0")
    assert readings(CLASSIC) == f"rules of engine {ENGINE_VERSION}"


@pytest.mark.parametrize("version", ["1.9.0", "2.0.0", "0.9.0", "1.2", "x.y.z", "", 12, None])
def test_unknown_engine_versions_are_refused(version: object) -> None:
    header = lines_of(finished_game())[0]
    with pytest.raises(LogError) as info:
        game_from_header({**header, "engine": version})
    assert info.value.line == 1 and "engine" in str(info.value)


def test_the_header_may_say_where_the_game_was_played() -> None:
    """The bot runner writes the runtime image into the header: a replay takes it from the
    log (it is not a rule) and verifies every line as before."""
    game = finished_game()
    lines = lines_of(game)
    lines[0]["runtime"] = "1-0123456789ab"
    replayed = replay(lines)
    assert replayed.result == game.result
    assert replayed.events[0]["runtime"] == "1-0123456789ab"
    lines[0]["seed"] += 1  # a rule still is checked
    with pytest.raises(LogError):
        replay(lines)
