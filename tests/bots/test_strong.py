"""The `strong` example's pieces: its cut-off score is the engine's own scoring of the hand,
its evaluation rewards leading, and it plans legal moves with its belief samples under both
rulesets and other table sizes. (Its strength is measured by games, docs/benchmarks.md.)"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest

from bots.sdk import Observation, rollout
from engine import Variants, new_game, observe

BOT = Path(__file__).resolve().parents[2] / "bots" / "examples" / "strong" / "bot.py"


@pytest.fixture(scope="module")
def strong() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_strong_bot", BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("ruleset", ["modern", "classic"])
def test_the_cut_off_score_is_the_engines(strong: ModuleType, ruleset: str) -> None:
    """Where a Market Close may be played, the hand's score if it ended now is what the
    engine writes once it is played (the Market Close in hand scores nothing)."""
    checked = 0
    for seed in range(30):
        game = new_game(ruleset, 4, seed, limits={"max_hands": 3})
        rng = random.Random(seed)
        while not game.over:
            if "play market-close" in game.moves:
                expected = strong.settled(game)
                ended = game.clone()
                ended.apply("play market-close")
                assert list(ended.totals) == expected
                checked += 1
            legal = list(game.moves)
            game.apply(rollout.choose(game) if rng.random() < 0.7 else rng.choice(legal))
    assert checked > 20


def test_leading_is_worth_a_premium(strong: ModuleType) -> None:
    game = new_game("modern", 4, 3)
    hand = game.hand_no
    standing = strong.settled(game)
    for seat in range(4):
        lead = standing[seat] - max(v for s, v in enumerate(standing) if s != seat)
        value = strong.evaluate_win(game, seat, hand)
        assert value == lead + (strong.FIRST_PREMIUM if lead > 0 else 0)


@pytest.mark.parametrize(
    ("ruleset", "players", "variants"),
    [("modern", 4, Variants()), ("modern", 2, Variants()), ("classic", 6, Variants())],
)
def test_it_plans_legal_moves(
    strong: ModuleType, ruleset: str, players: int, variants: Variants
) -> None:
    """Every answer is legal, including the rest of a plan carried to the turn's next
    decision; in the modern rules it plans swaps with cards and searches its passes."""
    bot = strong.StrongBot(budget_ms=2)
    bot.rng.seed(players)
    searched: set[str] = set()
    swapped_by_plan = 0
    for seed in range(3):
        game = new_game(ruleset, players, seed, variants, limits={"max_hands": 2})
        while not game.over:
            if game.to_act == 0:
                view = observe(game, 0)
                obs = Observation(view, tuple(view["history"]), bank_ms=30_000, cpu_ms=10_000)
                bot.samples = 0
                choice = bot.choose(obs)
                assert choice in view["legal"]
                if bot.samples:
                    searched.add(view["phase"])
                    swapped_by_plan += choice.startswith("swap ") and bool(bot.rest)
                game.apply(choice)
            else:
                game.apply(rollout.choose(game))
    assert "turn" in searched
    # Samples are drawn at the seat's own turn and at its answers to paranoia, nowhere else.
    assert searched <= {"turn", "pass", "waste"}, searched
    if ruleset == "modern" and players == 4:
        assert swapped_by_plan > 0
        assert "pass" in searched


def test_the_rest_of_a_plan_is_played_next(strong: ModuleType) -> None:
    """A plan chosen at the turn's first decision (a swap, then a card) is followed at the
    turn's next decision, and dropped when it is no longer legal there."""
    for seed in range(40):
        game = new_game("modern", 4, seed)
        while not game.over and not (
            game.phase.value == "turn" and not game.played and strong.swap_options(game.moves)
        ):
            game.apply(rollout.choose(game))
        if game.over:
            continue
        me = game.to_act
        view = observe(game, me)
        card = next(a for a in view["legal"] if a.startswith(("play ", "discard ")))
        swap = strong.swap_options(view["legal"])[0]
        bot = strong.StrongBot(budget_ms=2)
        bot.rest = (card,)
        game.apply(swap)
        after = observe(game, me)
        assert bot.choose(Observation(after, tuple(after["history"]), cpu_ms=10_000)) == card
        assert bot.rest == ()
        bot.rest = ("play no-such-card",)
        choice = bot.choose(Observation(after, tuple(after["history"]), cpu_ms=10_000))
        assert choice in after["legal"] and bot.rest != ("play no-such-card",)
        return
    pytest.fail("no turn with a gaining swap in 40 games")


def test_the_race_drops_only_plans_clearly_behind(strong: ModuleType) -> None:
    rng = random.Random(5)
    noise = [rng.gauss(0, 1) for _ in range(32)]
    base, good, close, bad = ("a",), ("b",), ("c",), ("d",)
    values = {
        base: list(noise),
        good: [n + 10 for n in noise],
        close: [n + 10 + rng.gauss(0, 3) for n in noise],
        bad: [n - 5 for n in noise],
    }
    assert strong.race([base, good, close, bad], values, base) == [base, good, close]
    # The baseline stays however far behind it is: it is what the bot falls back on.
    assert base in strong.race([base, good], values, base)
    assert strong.lower_bound(values[good], values[base], 2.5) == pytest.approx(10)


def test_swap_options_keep_the_best_swap_from_each_opponent(strong: ModuleType) -> None:
    legal = [
        "swap home-grown @1 panama",
        "swap home-grown @1 jamaica",
        "swap mexico @2 colombia",
        "swap home-grown @2 jamaica",
        "swap dr-feelgood @3 panama",
        "swap home-grown @3 colombia",
        "end",
    ]
    options = strong.swap_options(legal)
    gains = [strong.swap_gain(a) for a in options]
    assert all(g > 0 for g in gains)
    assert {a.split()[2] for a in options} == {"@1", "@2", "@3"}
    assert options[0] == "swap home-grown @1 panama"  # the biggest gain first
    assert "swap dr-feelgood @3 panama" not in options  # it loses value


def test_closing_the_market_to_win_beats_going_on(strong: ModuleType) -> None:
    """Endgame sense: near the target and ahead, the Market Close that ends the game earns the
    win's premium; the same lead cut off mid-hand earns only the leader's."""
    for seed in range(40):
        game = new_game("modern", 4, seed)
        while not game.over and "play market-close" not in game.moves:
            game.apply(rollout.choose(game))
        if game.over:
            continue
        me, hand = game.to_act, game.hand_no
        game.table.totals[me] = game.ruleset.target  # already there: the hand's end ends it
        going_on = strong.evaluate_win(game, me, hand)
        closed = game.clone()
        closed.apply("play market-close")
        assert closed.over
        won = strong.evaluate_win(closed, me, hand)
        assert going_on > 0 and won - going_on == strong.WIN_PREMIUM - strong.FIRST_PREMIUM
        return
    pytest.fail("no Market Close in 40 games")


def test_the_benchmark_prints_samples_per_decision(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import strong_search

    strong_search.main(["--games", "1", "--samples", "1", "--strong-ms", "2"])
    out = capsys.readouterr().out
    for row in ("| strong_v1 | 60 |", "| strong, whole turn | 2 |"):
        assert row in out
    assert "rollout.choose(game):" in out
