"""engine.flows: what each seat gave each other seat, read from the log (issue 33)."""

from __future__ import annotations

import copy
import random

import pytest

from engine import Card, new_game
from engine.flows import card_value, game_flows
from engine.log import LogError
from engine.rules import MODERN
from tests.engine.helpers import build, seat

C = Card
R = "modern"


def random_game(seed: int, players: int = 4) -> list[dict[str, object]]:
    game = new_game(R, players, seed)
    rng = random.Random(seed)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    return game.events  # type: ignore[return-value]


def test_card_value_is_the_engines_scoring() -> None:
    assert card_value(MODERN, "panama") == 50_000
    assert card_value(MODERN, "dr-feelgood") == 100_000
    assert card_value(MODERN, "utterly-wiped-out") == -100_000
    assert card_value(MODERN, "sold-out") == -25_000
    assert card_value(MODERN, "market-open") == 0
    assert card_value(MODERN, "lust-conquers-all") == 0  # a coverage, not money
    assert card_value(MODERN, "no-such-card") == 0


def test_a_forced_swap_of_a_big_peddle_for_a_small_one_is_a_gift() -> None:
    game = build(
        R,
        seat(market=True, unprotected=[C.PANAMA]),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.JAMAICA]),
    )
    game.apply("swap panama @1 home-grown")
    flows = game_flows(game.events)
    assert (flows[0, 1].swaps, flows[0, 1].swap_value) == (1, 45_000)
    assert flows[1, 0].swaps == 0
    assert flows[0, 2].swaps == 0


def test_a_stonehigh_giver_that_picks_its_best_peddle_shows_the_excess() -> None:
    game = build(
        R,
        seat(C.STONEHIGH),
        seat(market=True, unprotected=[C.HOME_GROWN, C.PANAMA]),
        seat(market=True, unprotected=[C.MEXICO, C.JAMAICA]),
    )
    game.apply("play stonehigh")
    game.apply("surrender panama")  # seat 1 gives its best: 45,000 more than it had to
    game.apply("surrender mexico")  # seat 2 gives its cheapest
    flows = game_flows(game.events)
    assert (flows[1, 0].gifts, flows[1, 0].gift_value, flows[1, 0].gift_excess) == (
        1,
        50_000,
        45_000,
    )
    assert (flows[2, 0].gifts, flows[2, 0].gift_value, flows[2, 0].gift_excess) == (1, 5_000, 0)


def test_an_attack_withheld_is_a_chance_not_taken() -> None:
    game = build(
        R,
        seat(C.BUST, C.FELONY, market=True),
        seat(market=True),
        seat(market=True),
    )
    game.apply("play felony @2")
    game.apply("end")
    flows = game_flows(game.events)
    assert (flows[0, 2].attacks, flows[0, 2].attack_chances) == (1, 1)
    assert (flows[0, 1].attacks, flows[0, 1].attack_chances) == (0, 1)  # bust @1 was legal


def test_a_deal_bad_for_the_acceptor_moves_value_to_the_proposer() -> None:
    game = build(
        R,
        seat(C.MEXICO),
        seat(C.PANAMA),
        seat(),
    )
    for action in ("deal @1", "give mexico", "want panama", "accept"):
        game.apply(action)
    flows = game_flows(game.events)
    assert (flows[1, 0].deals, flows[1, 0].deal_value) == (1, 45_000)
    assert (flows[0, 1].deals, flows[0, 1].deal_value) == (1, -45_000)
    assert (flows[1, 0].asked, flows[1, 0].granted, flows[1, 0].granted_value) == (1, 1, 45_000)
    assert (flows[0, 1].asked, flows[0, 1].granted, flows[0, 1].granted_value) == (0, 0, 0)


@pytest.mark.parametrize("seed", range(6))
def test_flows_of_random_games_are_consistent(seed: int) -> None:
    players = 2 + seed % 5
    flows = game_flows(random_game(seed, players))
    assert len(flows) == players * (players - 1)
    for (a, b), flow in flows.items():
        back = flows[b, a]
        assert flow.deals == back.deals
        assert flow.deal_value == -back.deal_value
        assert flow.granted <= flow.asked
        assert flow.attacks <= flow.attack_chances
        assert flow.gift_excess >= 0
        if (a + 1) % players != b:
            assert flow.passes == 0  # paranoia passes go to the left only


def test_random_games_have_something_to_count() -> None:
    """The counters are fed at all: random play deals, swaps, surrenders and attacks."""
    totals: dict[str, int] = {}
    for seed in range(4):
        for flow in game_flows(random_game(seed)).values():
            for name, value in flow.as_dict().items():
                totals[name] = totals.get(name, 0) + abs(value)
    for name in ("deals", "asked", "granted", "swaps", "gifts", "passes", "attacks"):
        assert totals[name] > 0, name


def test_a_forged_log_is_refused() -> None:
    events = random_game(3)
    index = next(i for i, e in enumerate(events) if e["e"] == "exchange")
    forged = copy.deepcopy(events)
    forged[index]["ask"] = ["dr-feelgood"]  # type: ignore[index]
    with pytest.raises(LogError):
        game_flows(forged)
    acted = next(i for i, e in enumerate(events) if e["e"] == "act" and not e.get("auto"))
    forged = copy.deepcopy(events)
    forged[acted]["action"] = "play dr-feelgood"  # type: ignore[index]
    with pytest.raises(LogError):
        game_flows(forged)
