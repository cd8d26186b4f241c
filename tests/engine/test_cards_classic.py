"""Per-card rules of the classic (1979) edition, seed 002: each legal and each illegal use.

Positions are built with `helpers.build`: seat 0 is active unless said otherwise and has just
drawn a filler card (a Heat Off that matches no heat in play). Classic deals come between the
draw and the play (D-CLASSIC-DEAL-TIMING), so once the card is played nothing is left to do and
the turn ends by itself (`end`, taken by the engine).
"""

from __future__ import annotations

from collections import Counter

import pytest

from engine import Card, IllegalAction, Phase
from tests.engine.helpers import (
    HEAT_OFFS,
    PAIRS,
    apply_all,
    assert_illegal,
    build,
    pass_fillers,
    pass_turn,
    plays,
    put_under,
    seat,
    snapshot,
    wasted_delta,
)

C = Card
R = "classic"
PARANOIA = [C.SOLD_OUT, C.DOUBLE_CROSSED, C.UTTERLY_WIPED_OUT]


# ---------------------------------------------------------------------------- Market Open


def test_market_open_is_legal_without_a_hassle_pile() -> None:
    """seed 002: Market Open cards "are used to open your Hassle Pile"."""
    game = build(R, seat(C.MARKET_OPEN), seat(), seat())
    game.apply("play market-open")
    assert game.seats[0].market_open and game.seats[0].showing
    assert C.MARKET_OPEN not in game.seats[0].hand


def test_market_open_is_illegal_when_one_is_already_open() -> None:
    """seed 002: "Each player needs only one Market Open card to open their Stash"."""
    game = build(R, seat(C.MARKET_OPEN, market=True), seat(), seat())
    assert_illegal(game, "play market-open")


def test_market_open_is_illegal_when_the_open_market_is_under_heat() -> None:
    """seed 002: "You may not reopen a Hassle Pile with a Market Open"."""
    game = build(R, seat(C.MARKET_OPEN, market=True, heat=[C.BUST]), seat(), seat())
    assert_illegal(game, "play market-open")


# ---------------------------------------------------------------------------- Peddle


def test_peddle_is_legal_with_market_open_showing() -> None:
    """seed 002: "A player may place a Peddle card in his Stash only if he's already tabled a
    Market Open card and only if he or she is not being hindered by a Heat On card"."""
    game = build(R, seat(C.DR_FEELGOOD, market=True, unprotected=[C.MEXICO]), seat(), seat())
    game.apply("play dr-feelgood")
    assert game.seats[0].unprotected == [C.MEXICO, C.DR_FEELGOOD]


def test_peddle_is_illegal_without_market_open() -> None:
    """seed 002: a Market Open card must be tabled before Peddle cards."""
    game = build(R, seat(C.PANAMA), seat(), seat())
    assert_illegal(game, "play panama")


def test_peddle_is_illegal_under_heat() -> None:
    """seed 002: "If a Heat On card is played on your Hassle Pile you lose the ability to place
    Peddle cards in your Stash"."""
    game = build(R, seat(C.PANAMA, market=True, heat=[C.DETAINED]), seat(), seat())
    assert_illegal(game, "play panama")


# ---------------------------------------------------------------------------- Heat On


@pytest.mark.parametrize("target", [1, 2])
def test_heat_on_is_legal_on_any_opponent_with_market_showing(target: int) -> None:
    """seed 002: Heat On cards "are placed on an opponent's Hassle Pile"."""
    game = build(R, seat(C.FELONY, market=True), seat(market=True), seat(market=True))
    game.apply(f"play felony @{target}")
    assert game.seats[target].heat == [C.FELONY]
    assert not game.seats[target].showing


def test_heat_on_is_legal_without_an_own_market() -> None:
    """seed 002: "Even without a Market Open card a player may still lay Heat On cards on any
    opponent who has a Market Open card dispayed"."""
    game = build(R, seat(C.BUST), seat(market=True), seat())
    assert plays(game, C.BUST) == ["play bust @1"]


def test_heat_on_is_illegal_on_an_opponent_without_market() -> None:
    """seed 002: "A Heat-On card may not be placed on an opponent if he or she has not opened
    their Market"."""
    game = build(R, seat(C.BUST, market=True), seat(), seat())
    assert_illegal(game, "play bust @1")


def test_heat_on_stacks_on_an_opponent_already_under_heat() -> None:
    """seed 002 FAQ: "If a Heat-On card is already displayed on an opponent's Hassle Pile, can
    another player discard a Heat-On card on that same Pile? Answer - Yes!"."""
    game = build(R, seat(C.BUST), seat(market=True, heat=[C.FELONY]), seat())
    game.apply("play bust @1")
    assert game.seats[1].heat == [C.FELONY, C.BUST]


def test_stacked_heat_the_top_heat_on_must_be_matched() -> None:
    """seed 002 FAQ: "The top Heat-On card must be matched in order to open the Market"."""
    game = build(
        R,
        seat(C.IMMUNITY, C.HEARSAY_EVIDENCE, C.PANAMA, market=True, heat=[C.BUST, C.FELONY]),
        seat(),
        seat(),
    )
    assert_illegal(game, "play immunity")
    game.apply("play hearsay-evidence")
    me = game.seats[0]
    assert me.heat == [C.BUST]
    assert me.hassle_under == [C.FELONY, C.HEARSAY_EVIDENCE]
    assert me.market_open and not me.showing


def test_stacked_heat_leaves_the_market_closed_until_the_last_is_matched() -> None:
    """seed 002 FAQ: only when no Heat On is left does the Market Open card show again."""
    game = build(
        R,
        seat(C.IMMUNITY, C.HEARSAY_EVIDENCE, C.PANAMA, market=True, heat=[C.BUST, C.FELONY]),
        seat(),
        stack_len=4,
    )
    game.apply("play hearsay-evidence")  # the turn ends by itself
    pass_turn(game)
    assert game.to_act == 0
    assert "play panama" not in game.legal_actions()
    game.apply("play immunity")
    assert game.seats[0].showing


def test_heat_on_is_illegal_while_the_player_is_under_heat() -> None:
    """seed 002 FAQ: "Can you play a ... Heat-On card when the Heat is on You? Answer - No!"."""
    game = build(R, seat(C.BUST, market=True, heat=[C.FELONY]), seat(market=True), seat())
    assert plays(game, C.BUST) == []
    assert_illegal(game, "play bust @1")


def test_heat_on_is_never_played_on_oneself() -> None:
    """seed 002: Heat On is placed on "an opponent's Hassle Pile"."""
    game = build(R, seat(C.BUST, market=True), seat(), seat())
    assert plays(game, C.BUST) == []
    assert_illegal(game, "play bust @0")


# ---------------------------------------------------------------------------- Heat Off


@pytest.mark.parametrize(("heat_on", "heat_off"), PAIRS)
def test_heat_off_cancels_the_matching_heat_on(heat_on: Card, heat_off: Card) -> None:
    """seed 002: "Place the matching Heat Off card on your 'heated' Hassle Pile, bring the
    Market Open card back to the top of the pile"."""
    game = build(R, seat(heat_off, market=True, heat=[heat_on]), seat(), seat())
    game.apply(f"play {heat_off}")
    me = game.seats[0]
    assert me.heat == []
    assert me.hassle_under == [heat_on, heat_off]
    assert me.showing


@pytest.mark.parametrize(("heat_on", "heat_off"), PAIRS)
def test_heat_off_is_illegal_on_a_different_heat_on(heat_on: Card, heat_off: Card) -> None:
    """seed 002: "WRONG PLAY Wrong corresponding Heat Off card"."""
    others = [off for off in HEAT_OFFS if off is not heat_off]
    game = build(R, seat(*others, market=True, heat=[heat_on]), seat(), seat())
    for off in others:
        assert_illegal(game, f"play {off}")


@pytest.mark.parametrize("heat_off", HEAT_OFFS)
def test_heat_off_is_illegal_without_heat(heat_off: Card) -> None:
    """seed 002: Heat Off is played on a "heated" Hassle Pile."""
    game = build(R, seat(heat_off, market=True), seat(), seat())
    assert_illegal(game, f"play {heat_off}")


# ---------------------------------------------------------------------------- Pay Fine


def test_pay_fine_pays_the_smallest_tabled_peddle_automatically() -> None:
    """seed 002: "pay a fine of your smallest tabled Peddle card to the Wasted (discard)
    Pile. Then move the Market Open card back to the top of the pile"."""
    game = build(
        R,
        seat(
            C.PAY_FINE, market=True, heat=[C.DETAINED], unprotected=[C.PANAMA, C.MEXICO, C.COLOMBIA]
        ),
        seat(),
        seat(),
    )
    assert plays(game, C.PAY_FINE) == ["play pay-fine"]
    assert_illegal(game, "play pay-fine panama")
    wasted = list(game.wasted)
    game.apply("play pay-fine")
    me = game.seats[0]
    assert sorted(me.unprotected) == sorted([C.PANAMA, C.COLOMBIA])
    assert me.heat == [] and me.showing
    assert me.hassle_under == [C.DETAINED, C.PAY_FINE]
    assert wasted_delta(wasted, game.wasted) == Counter([C.MEXICO])


def test_pay_fine_smallest_tabled_peddle_may_be_a_protected_one() -> None:
    """seed 002: "the smallest tabled Peddle card in your Stash" - protection covers against
    Nirvana, Paranoia and Skim cards, not fines; the engine counts protected peddles too."""
    game = build(
        R,
        seat(
            C.PAY_FINE,
            market=True,
            heat=[C.BUST],
            unprotected=[C.PANAMA],
            protected=[(C.GRAB_A_SNACK, [C.HOME_GROWN, C.MEXICO])],
        ),
        seat(),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play pay-fine")
    me = game.seats[0]
    assert me.unprotected == [C.PANAMA]
    assert me.protected == [(C.GRAB_A_SNACK, [C.MEXICO])]
    assert wasted_delta(wasted, game.wasted) == Counter([C.HOME_GROWN])


def test_pay_fine_at_equal_value_pays_an_unprotected_peddle_first() -> None:
    """D-PAYFINE: of two $5,000 peddles, the exposed Mexico goes, not the protected Home Grown
    (canonical order alone would pick Home Grown)."""
    game = build(
        R,
        seat(
            C.PAY_FINE,
            market=True,
            heat=[C.BUST],
            unprotected=[C.MEXICO, C.PANAMA],
            protected=[(C.GRAB_A_SNACK, [C.HOME_GROWN])],
        ),
        seat(),
        seat(),
    )
    game.apply("play pay-fine")
    me = game.seats[0]
    assert me.unprotected == [C.PANAMA]
    assert me.protected == [(C.GRAB_A_SNACK, [C.HOME_GROWN])]


def test_deals_come_after_the_draw_and_before_the_play() -> None:
    """seed 002: negotiations are for "the player who has drawn from the Grass Stack and holds
    seven cards" (003: "a en main 7 cartes"): after the draw, before the play
    (D-CLASSIC-DEAL-TIMING)."""
    game = build(R, seat(C.PANAMA, C.MARKET_OPEN), seat(C.BUST), seat(), stack_len=6)
    assert len(game.seats[0].hand) == 7
    assert "deal @1" in game.legal_actions()
    apply_all(game, "deal @1", "give panama", "want bust", "accept")
    assert C.BUST in game.seats[0].hand
    assert "deal @2" in game.legal_actions()  # still before the play
    game.apply("play market-open")
    # Nothing else may follow the play: the turn ends by itself.
    assert game.events[-2]["action"] == "end" and game.events[-2]["auto"]
    assert (game.active, game.to_act) == (1, 1)


def test_a_classic_log_of_engine_1_1_deals_after_the_play() -> None:
    """Logs written before engine 1.2 replay under the rules they were played with."""
    from engine.log import game_from_header

    game = build(R, seat(C.PANAMA, C.MARKET_OPEN), seat(C.BUST), seat(), stack_len=6)
    old = game_from_header({**game.events[0], "engine": "1.1.0"})
    old.apply("play market-open")
    assert "deal @1" in old.legal_actions() and "end" in old.legal_actions()


def test_a_deal_being_drafted_can_be_withdrawn() -> None:
    """D-DEAL-FLOW: the proposer may back out before proposing; the attempt counts."""
    game = build(R, seat(C.PANAMA, market=True), seat(C.MARKET_OPEN), seat())
    hands = [list(s.hand) for s in game.seats]
    apply_all(game, "deal @1", "give panama", "withdraw")
    assert game.phase is Phase.TURN and game.deals_made == 1
    assert [list(s.hand) for s in game.seats] == hands


def test_pay_fine_cancels_only_the_top_of_stacked_heat() -> None:
    """seed 002: Pay Fine is a Heat Off for any Heat On; stacked heat is cancelled from the
    top (FAQ: "The top Heat-On card must be matched")."""
    game = build(
        R,
        seat(C.PAY_FINE, market=True, heat=[C.BUST, C.FELONY], unprotected=[C.PANAMA]),
        seat(),
        seat(),
    )
    game.apply("play pay-fine")
    me = game.seats[0]
    assert me.heat == [C.BUST]
    assert me.hassle_under == [C.FELONY, C.PAY_FINE]
    assert me.unprotected == [] and not me.showing


def test_pay_fine_is_illegal_without_a_tabled_peddle() -> None:
    """seed 002: "If you have no Peddle cards in Your Stash you may not take the heat off with
    this card"."""
    game = build(R, seat(C.PAY_FINE, C.PANAMA, market=True, heat=[C.BUST]), seat(), seat())
    assert_illegal(game, "play pay-fine")


def test_pay_fine_is_illegal_without_heat() -> None:
    """seed 002: Pay Fine is played on your "heated" Hassle Pile."""
    game = build(R, seat(C.PAY_FINE, market=True, unprotected=[C.PANAMA]), seat(), seat())
    assert_illegal(game, "play pay-fine")


# ---------------------------------------------------------------------------- Protected


def test_protected_50000_offers_every_combination_of_50000_or_less() -> None:
    """seed 002: "A $50,000 Protection card may be used to protect a $50,000 Peddle card or
    any combinations of $50,000 or less but not greater than $50,000"."""
    game = build(
        R,
        seat(
            C.LUST_CONQUERS_ALL,
            market=True,
            unprotected=[C.HOME_GROWN, C.JAMAICA, C.COLOMBIA, C.PANAMA],
        ),
        seat(),
        seat(),
    )
    assert sorted(plays(game, C.LUST_CONQUERS_ALL)) == sorted(
        [
            "play lust-conquers-all home-grown",
            "play lust-conquers-all colombia",
            "play lust-conquers-all jamaica",
            "play lust-conquers-all panama",
            "play lust-conquers-all home-grown+colombia",
            "play lust-conquers-all home-grown+jamaica",
            "play lust-conquers-all colombia+jamaica",
        ]
    )
    assert_illegal(game, "play lust-conquers-all home-grown+colombia+jamaica")


@pytest.mark.parametrize("card", [C.GRAB_A_SNACK, C.CATCH_A_BUZZ])
def test_protected_25000_covers_25000_or_less(card: Card) -> None:
    """seed 002: "A $25,000 Protection card may be used to protect a $25,000 Peddle card or
    any combinations of $25,000 or less"."""
    game = build(
        R, seat(card, market=True, unprotected=[C.HOME_GROWN, C.MEXICO, C.PANAMA]), seat(), seat()
    )
    assert sorted(plays(game, card)) == sorted(
        [f"play {card} home-grown", f"play {card} mexico", f"play {card} home-grown+mexico"]
    )
    assert_illegal(game, f"play {card} panama")


def test_protected_can_never_cover_dr_feelgood() -> None:
    """seed 002: "You may not protect Dr. Feelgood"."""
    game = build(
        R, seat(C.LUST_CONQUERS_ALL, market=True, unprotected=[C.DR_FEELGOOD]), seat(), seat()
    )
    assert_illegal(game, "play lust-conquers-all dr-feelgood")
    assert plays(game, C.LUST_CONQUERS_ALL) == []


def test_protected_covers_only_tabled_peddles() -> None:
    """seed 002: "Protection cards can only protect Peddle Money tabled at the time of
    play"."""
    game = build(R, seat(C.GRAB_A_SNACK, C.MEXICO, market=True), seat(), seat())
    assert_illegal(game, "play grab-a-snack mexico")


def test_protected_is_illegal_under_heat() -> None:
    """seed 002 FAQ: "Can you play a 'Protection' card ... when the Heat is on You? Answer -
    No!"."""
    game = build(
        R,
        seat(C.GRAB_A_SNACK, market=True, heat=[C.FELONY], unprotected=[C.MEXICO]),
        seat(),
        seat(),
    )
    assert_illegal(game, "play grab-a-snack mexico")


def test_protected_moves_the_covered_peddles_into_its_group() -> None:
    """seed 002: Protection cards "are played on Peddle cards already in your Stash"."""
    game = build(
        R,
        seat(C.CATCH_A_BUZZ, market=True, unprotected=[C.HOME_GROWN, C.MEXICO, C.PANAMA]),
        seat(),
        seat(),
    )
    game.apply("play catch-a-buzz home-grown+mexico")
    me = game.seats[0]
    assert me.protected == [(C.CATCH_A_BUZZ, [C.HOME_GROWN, C.MEXICO])]
    assert me.unprotected == [C.PANAMA]


# ---------------------------------------------------------------------------- Steal


def test_steal_takes_the_victims_largest_unprotected_peddle() -> None:
    """seed 002: Steal relieves the opponent "of his or her largest tabled Peddle card and
    place[s] it in your own Stash"; protection covers against Skim cards."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(
            market=True,
            unprotected=[C.HOME_GROWN, C.COLOMBIA],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(market=True, unprotected=[C.DR_FEELGOOD, C.MEXICO]),
    )
    assert sorted(plays(game, C.STEAL)) == [
        "play steal-your-neighbours-pot @1",
        "play steal-your-neighbours-pot @2",
    ]
    assert_illegal(game, "play steal-your-neighbours-pot @1 home-grown")
    wasted = list(game.wasted)
    game.apply("play steal-your-neighbours-pot @1")
    assert game.seats[0].unprotected == [C.COLOMBIA]
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert game.seats[1].protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert wasted_delta(wasted, game.wasted) == Counter()  # the Steal card stays (below)


def test_the_steal_card_stays_in_the_victims_hassle_pile_under_its_top_card() -> None:
    """seed 002: "once you've made your haul the opponent places the original top card back on
    top of his hassle pile": the Steal card stays in that pile, under the top card
    (D-CLASSIC-STEAL)."""
    game = build(
        R,
        seat(C.STEAL, C.STEAL, market=True),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(market=True, heat=[C.BUST], unprotected=[C.MEXICO]),
        stack_len=6,
    )
    wasted = list(game.wasted)
    game.apply("play steal-your-neighbours-pot @1")  # the turn ends by itself
    victim = game.seats[1]
    assert victim.hassle_cards() == [C.STEAL, C.MARKET_OPEN]  # Market Open back on top
    assert victim.showing
    assert wasted_delta(wasted, game.wasted) == Counter()
    # Under heat, the Heat On card goes back on top: still under heat, the Steal card beneath.
    pass_turn(game)  # seat 1
    pass_turn(game)  # seat 2
    game.apply("play steal-your-neighbours-pot @2")
    victim = game.seats[2]
    assert victim.hassle_cards() == [C.STEAL, C.MARKET_OPEN, C.BUST]
    assert victim.heat == [C.BUST] and not victim.showing
    assert wasted_delta(wasted, game.wasted) == Counter(
        e["action"].split()[1] for e in game.events if e.get("action", "").startswith("discard")
    )
    assert game.seats[0].unprotected == [C.PANAMA, C.MEXICO]


def test_a_classic_log_of_engine_1_1_still_wastes_the_steal_card() -> None:
    """Logs written before engine 1.2 replay under the rules they were played with."""
    from engine.log import game_from_header

    game = build(R, seat(C.STEAL, market=True), seat(market=True, unprotected=[C.PANAMA]), seat())
    header = {**game.events[0], "engine": "1.1.0"}
    old = game_from_header(header)
    wasted = list(old.wasted)
    old.apply("play steal-your-neighbours-pot @1")
    assert wasted_delta(wasted, old.wasted) == Counter([C.STEAL])
    assert old.seats[1].hassle_cards() == [C.MARKET_OPEN]
    assert old.phase is Phase.TURN and old.to_act == 0  # 1.1: deals still open after the play
    assert "end" in old.legal_actions()


def test_steal_takes_an_unprotectable_dr_feelgood() -> None:
    """seed 002: the largest tabled peddle - Dr. Feelgood can never be protected."""
    game = build(
        R, seat(C.STEAL, market=True), seat(market=True, unprotected=[C.DR_FEELGOOD, C.PANAMA])
    )
    game.apply("play steal-your-neighbours-pot @1")
    assert game.seats[0].unprotected == [C.DR_FEELGOOD]
    assert game.seats[1].unprotected == [C.PANAMA]


def test_steal_is_legal_on_a_victim_under_heat() -> None:
    """seed 002: "You may play it on an opponent while they are under heat"."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(market=True, heat=[C.BUST, C.FELONY], unprotected=[C.PANAMA]),
        seat(),
    )
    game.apply("play steal-your-neighbours-pot @1")
    assert game.seats[0].unprotected == [C.PANAMA]
    assert game.seats[1].heat == [C.BUST, C.FELONY]


def test_steal_is_illegal_while_the_thief_is_under_heat() -> None:
    """seed 002: "You may not place this card on an opponent while the Heat is on your Hassle
    Pile"."""
    game = build(
        R,
        seat(C.STEAL, market=True, heat=[C.BUST]),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(),
    )
    assert_illegal(game, "play steal-your-neighbours-pot @1")


def test_steal_is_illegal_before_the_thiefs_market_is_open() -> None:
    """seed 002 FAQ: "Can you 'Steal Your Neighbor's Pot' before your 'Market' is opened?
    Answer - No!"."""
    game = build(R, seat(C.STEAL), seat(market=True, unprotected=[C.PANAMA]), seat())
    assert_illegal(game, "play steal-your-neighbours-pot @1")


def test_steal_never_takes_a_protected_peddle() -> None:
    """seed 002: protection cards protect tabled peddles "from Nirvana, Paranoia and Skim
    cards"."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(market=True, protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]),
        seat(),
    )
    assert plays(game, C.STEAL) == []
    assert_illegal(game, "play steal-your-neighbours-pot @1")


def test_steal_is_illegal_on_a_victim_without_market() -> None:
    """seed 002: Steal is placed "on the opponents Hassle Pile"; without Market Open there is
    none."""
    game = build(R, seat(C.STEAL, market=True), seat(unprotected=[C.PANAMA]), seat())
    assert_illegal(game, "play steal-your-neighbours-pot @1")


# ---------------------------------------------------------------------------- Stonehigh, Euphoria


def test_stonehigh_takes_each_opponents_smallest_unprotected_peddle() -> None:
    """seed 002: Stonehigh requires "each player to give you the smallest tabled Peddle card
    in their Stash"; "PROTECTED CARDS DO PROTECT YOU FROM THE NIRVANA CARDS"."""
    game = build(
        R,
        seat(C.STONEHIGH),
        seat(
            market=True,
            unprotected=[C.PANAMA, C.COLOMBIA],
            protected=[(C.GRAB_A_SNACK, [C.HOME_GROWN])],
        ),
        seat(market=True, unprotected=[C.MEXICO, C.JAMAICA]),
        seat(market=True, protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]),
    )
    wasted = list(game.wasted)
    game.apply("play stonehigh")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)  # no choices to make
    assert game.seats[0].unprotected == [C.COLOMBIA, C.MEXICO]
    assert game.seats[1].unprotected == [C.PANAMA]
    assert game.seats[1].protected == [(C.GRAB_A_SNACK, [C.HOME_GROWN])]
    assert game.seats[2].unprotected == [C.JAMAICA]
    assert game.seats[3].protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert wasted_delta(wasted, game.wasted) == Counter([C.STONEHIGH])


def test_euphoria_takes_each_opponents_highest_unprotected_peddle() -> None:
    """seed 002: Euphoria "requires each player to give you the highest tabled Peddle card in
    their Stash"."""
    game = build(
        R,
        seat(C.EUPHORIA),
        seat(
            market=True,
            unprotected=[C.HOME_GROWN, C.COLOMBIA],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(unprotected=[C.DR_FEELGOOD, C.PANAMA]),
        seat(),
    )
    game.apply("play euphoria")
    assert game.seats[0].unprotected == [C.COLOMBIA, C.DR_FEELGOOD]
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert game.seats[2].unprotected == [C.PANAMA]


@pytest.mark.parametrize("card", [C.STONEHIGH, C.EUPHORIA])
def test_nirvana_gives_an_extra_turn(card: Card) -> None:
    """seed 002: Stonehigh cards "give you an extra turn (one more draw)"; Euphoria "gives you
    an extra turn"."""
    game = build(R, seat(card), seat(), seat(), stack_len=4)
    stack = len(game.stack)
    game.apply(f"play {card}")
    # The turn ends by itself after the play; the extra turn follows.
    assert [e["e"] for e in game.events[-3:]] == ["act", "extra-turn", "draw"]
    assert game.events[-3]["action"] == "end" and game.events[-3]["auto"]
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert len(game.seats[0].hand) == 7  # the extra turn starts with a draw
    assert len(game.stack) == stack - 1
    assert game.seats[0].extra_turns == 0
    pass_turn(game)
    assert game.to_act == 1


@pytest.mark.parametrize("card", [C.STONEHIGH, C.EUPHORIA])
def test_nirvana_clears_all_heat_even_stacked(card: Card) -> None:
    """seed 002: Nirvana cards "eliminate any Heat On Cards (put the Heat On Card underneath
    your Hassle Pile and return Market Open card to the top)"."""
    game = build(
        R, seat(card, C.PANAMA, market=True, heat=[C.BUST, C.FELONY]), seat(), seat(), stack_len=4
    )
    game.apply(f"play {card}")
    me = game.seats[0]
    assert me.heat == []
    assert Counter(me.hassle_under) == Counter([C.BUST, C.FELONY])
    assert me.showing
    assert game.to_act == 0  # the turn ended by itself: this is the extra turn
    game.apply("play panama")
    assert me.unprotected == [C.PANAMA]


@pytest.mark.parametrize("card", [C.STONEHIGH, C.EUPHORIA])
def test_nirvana_from_players_with_nothing_takes_nothing(card: Card) -> None:
    """seed 002: only tabled, unprotected peddles are given; with none nothing moves."""
    game = build(R, seat(card, market=True), seat(market=True), seat())
    before = [list(s.unprotected) for s in game.seats]
    game.apply(f"play {card}")
    assert [s.unprotected for s in game.seats] == before
    assert [e["e"] for e in game.events[-2:]] == ["extra-turn", "draw"]


@pytest.mark.parametrize("card", [C.STONEHIGH, C.EUPHORIA])
def test_nirvana_cannot_be_discarded(card: Card) -> None:
    """seed 002: "Place the Stonehigh card on the Wasted Pile to bring it into play. This is
    not a discard"; "Only Nirvana and Paranoia cards come into play when placed here"."""
    game = build(R, seat(card), seat(), seat())
    assert_illegal(game, f"discard {card}")
    assert plays(game, card) == [f"play {card}"]


# ---------------------------------------------------------------------------- Paranoia


@pytest.mark.parametrize("card", PARANOIA)
def test_paranoia_is_played_without_a_target(card: Card) -> None:
    """seed 002: "When YOU play a Sold Out card you lose one turn": paranoia is played on the
    Wasted Pile and costs the player who plays it."""
    game = build(R, seat(card), seat(market=True), seat())
    assert plays(game, card) == [f"play {card}"]
    assert_illegal(game, f"play {card} @1")


@pytest.mark.parametrize("card", PARANOIA)
def test_paranoia_cannot_be_discarded(card: Card) -> None:
    """seed 002: "Only Nirvana and Paranoia cards come into play when placed here" - putting
    one on the Wasted Pile plays it."""
    game = build(R, seat(card), seat(), seat())
    assert_illegal(game, f"discard {card}")


def test_sold_out_costs_own_smallest_unprotected_peddle_and_one_turn() -> None:
    """seed 002: "When YOU play a Sold Out card you lose one turn and must put your lowest
    tabled unprotected Peddle Card ... on the Wasted Pile"."""
    game = build(
        R,
        seat(
            C.SOLD_OUT,
            market=True,
            unprotected=[C.PANAMA, C.MEXICO, C.COLOMBIA],
            protected=[(C.GRAB_A_SNACK, [C.HOME_GROWN])],
        ),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play sold-out")
    me = game.seats[0]
    assert sorted(me.unprotected) == sorted([C.PANAMA, C.COLOMBIA])
    assert me.protected == [(C.GRAB_A_SNACK, [C.HOME_GROWN])]
    assert me.skips == 1
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert game.seats[1].skips == 0
    assert wasted_delta(wasted, game.wasted) == Counter([C.SOLD_OUT, C.MEXICO])
    assert (game.phase, game.to_act) == (Phase.PASS, 0)


def test_double_crossed_costs_own_highest_unprotected_peddle_and_two_turns() -> None:
    """seed 002: "When you play a Double Crossed card you lose two turns and you must put your
    highest tabled unprotected Peddle card on the Wasted Pile"."""
    game = build(
        R,
        seat(
            C.DOUBLE_CROSSED,
            market=True,
            unprotected=[C.HOME_GROWN, C.DR_FEELGOOD],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play double-crossed")
    me = game.seats[0]
    assert me.unprotected == [C.HOME_GROWN]
    assert me.protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert me.skips == 2
    assert wasted_delta(wasted, game.wasted) == Counter([C.DOUBLE_CROSSED, C.DR_FEELGOOD])


def test_utterly_wiped_out_costs_own_unprotected_peddles_hassle_pile_and_two_turns() -> None:
    """seed 002: "You lose your next two turns and must push all your tabled unprotected
    Peddle cards plus your Hassle Pile cards to the Wasted Pile"; protection still protects."""
    game = build(
        R,
        seat(
            C.UTTERLY_WIPED_OUT,
            market=True,
            heat=[C.DETAINED],
            unprotected=[C.HOME_GROWN, C.PANAMA],
            protected=[(C.GRAB_A_SNACK, [C.JAMAICA])],
        ),
        seat(market=True, unprotected=[C.MEXICO]),
        seat(),
        avoid=[C.IMMUNITY],
    )
    put_under(game, 0, C.BUST, C.IMMUNITY)
    wasted = list(game.wasted)
    game.apply("play utterly-wiped-out")
    me = game.seats[0]
    assert me.unprotected == []
    assert not me.market_open and me.heat == [] and me.hassle_under == []
    assert me.protected == [(C.GRAB_A_SNACK, [C.JAMAICA])]
    assert me.skips == 2
    assert game.seats[1].unprotected == [C.MEXICO] and game.seats[1].market_open
    assert wasted_delta(wasted, game.wasted) == Counter(
        [C.UTTERLY_WIPED_OUT, C.HOME_GROWN, C.PANAMA, C.MARKET_OPEN, C.DETAINED, C.BUST, C.IMMUNITY]
    )


def test_paranoia_with_nothing_tabled_only_costs_turns() -> None:
    """seed 002: "(if none are tabled just lose one turn - this is true of all Paranoia
    cards)"."""
    game = build(R, seat(C.SOLD_OUT), seat(market=True, unprotected=[C.PANAMA]), seat())
    wasted = list(game.wasted)
    game.apply("play sold-out")
    assert game.seats[0].skips == 1
    assert game.seats[1].unprotected == [C.PANAMA]
    assert wasted_delta(wasted, game.wasted) == Counter([C.SOLD_OUT])


def test_paranoia_then_everyone_passes_a_card_left() -> None:
    """seed 002: "When a Paranoia card is played on the Wasted Pile, each player must pass one
    card from his hand, face down, to the player on his or her left"."""
    game = build(R, seat(C.SOLD_OUT, C.BUST), seat(C.DETAINED), seat(C.FELONY))
    hands = [Counter(s.hand) for s in game.seats]
    game.apply("play sold-out")
    order = []
    for card in (C.BUST, C.DETAINED, C.FELONY):
        assert game.phase is Phase.PASS
        order.append(game.to_act)
        game.apply(f"pass {card}")
    assert order == [0, 1, 2]
    # Back in seat 0's turn, with the card played: the turn ends by itself, seat 1 draws.
    assert (game.phase, game.to_act) == (Phase.TURN, 1)
    drawn = Counter([game.events[-1]["secret"]["card"]])
    hands[0] -= Counter([C.SOLD_OUT])
    assert Counter(game.seats[0].hand) == hands[0] - Counter([C.BUST]) + Counter([C.FELONY])
    assert Counter(game.seats[1].hand) == (
        hands[1] - Counter([C.DETAINED]) + Counter([C.BUST]) + drawn
    )
    assert Counter(game.seats[2].hand) == hands[2] - Counter([C.FELONY]) + Counter([C.DETAINED])


def test_passing_after_paranoia_may_pass_a_paranoia_card() -> None:
    """seed 002: "This presents an opportunity for a player to pass another Paranoia card"."""
    game = build(R, seat(C.SOLD_OUT, C.DOUBLE_CROSSED), seat(), seat())
    game.apply("play sold-out")
    game.apply("pass double-crossed")
    pass_fillers(game)
    assert C.DOUBLE_CROSSED in game.seats[1].hand


@pytest.mark.parametrize(("card", "lost"), [(C.SOLD_OUT, 1), (C.DOUBLE_CROSSED, 2)])
def test_skipped_turns_are_passed_over_without_a_draw(card: Card, lost: int) -> None:
    """seed 002: "you lose your next turn to do anything" / "you lose your next two turns"."""
    game = build(R, seat(card), seat(), stack_len=6)
    game.apply(f"play {card}")
    pass_fillers(game)  # then the turn ends by itself
    hand0 = list(game.seats[0].hand)
    for _ in range(lost + 1):
        assert game.to_act == 1
        pass_turn(game)
    assert game.to_act == 0
    assert len(game.seats[0].hand) == len(hand0) + 1  # one draw, on the first turn played
    assert game.seats[0].skips == 0
    assert sum(e.get("e") == "skip" and e["seat"] == 0 for e in game.events) == lost


# ---------------------------------------------------------------------------- The Banker


def test_the_banker_is_never_played() -> None:
    """seed 002: the Banker works for "whoever holds this at the end of the hand"."""
    game = build(R, seat(C.BANKER, market=True), seat(market=True), seat())
    assert plays(game, C.BANKER) == []
    assert_illegal(game, "play the-banker")


def test_the_banker_may_be_discarded() -> None:
    """seed 002: "It may be discarded on the Wasted Pile during a hand, in which case it
    wouldn't come into play"."""
    game = build(R, seat(C.BANKER), seat(), seat())
    game.apply("discard the-banker")
    assert game.wasted[-1] is C.BANKER


def test_the_banker_skims_20_percent_of_unprotected_peddles() -> None:
    """seed 002: "The player who holds the Banker card at the end of the hand can Skim 20% of
    each opponent's unprotected tabled Peddle cards"."""
    game = build(
        R,
        seat(C.MARKET_CLOSE, C.BANKER, market=True, unprotected=[C.PANAMA]),
        seat(
            market=True,
            unprotected=[C.PANAMA, C.COLOMBIA],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(market=True, protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])]),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        avoid=[C.MARKET_CLOSE],
    )
    game.apply("play market-close")
    scores = game.hand_scores[0]
    assert [s.banker for s in scores] == [16_000, -15_000, 0, -1_000]
    assert [s.score for s in scores] == [66_000, 110_000 + 25_000, 25_000, 4_000]


# ---------------------------------------------------------------------------- Market Close


def test_market_close_ends_and_scores_the_hand_at_once() -> None:
    """seed 002: "When any player puts a MARKET CLOSE card on top of his own Hassle Pile ...
    the hand ends"."""
    game = build(
        R,
        seat(C.MARKET_CLOSE, C.PANAMA, C.SOLD_OUT, market=True, unprotected=[C.JAMAICA]),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        avoid=[C.MARKET_CLOSE],
    )
    game.apply("play market-close")
    assert len(game.hand_scores) == 1
    scores = game.hand_scores[0]
    assert [s.fines for s in scores] == [25_000, 0]
    assert [s.best_held for s in scores] == [50_000, 0]
    assert [s.score for s in scores] == [-50_000, 30_000]
    assert game.totals == [-50_000, 30_000]  # classic totals may go below zero
    assert game.hand_no == 2


def test_market_close_is_illegal_without_market() -> None:
    """seed 002: the Hassle Pile "must be started"."""
    game = build(R, seat(C.MARKET_CLOSE), seat(), seat())
    assert_illegal(game, "play market-close")


def test_market_close_is_illegal_under_heat() -> None:
    """seed 002: the Hassle Pile "cannot have a Heat On Card on top of it"."""
    game = build(R, seat(C.MARKET_CLOSE, market=True, heat=[C.BUST]), seat(), seat())
    assert_illegal(game, "play market-close")


def test_market_close_may_be_discarded_without_ending_the_hand() -> None:
    """seed 002: "A Market Close card may be discarded at any time on the Wasted Pile without
    stopping or hindering the game"."""
    game = build(R, seat(C.MARKET_CLOSE, market=True), seat(), seat())
    game.apply("discard market-close")  # the turn ends by itself
    assert game.wasted[-1] is C.MARKET_CLOSE
    assert (game.phase, game.to_act, game.hand_scores) == (Phase.TURN, 1, [])


# ---------------------------------------------------------------------------- Discard

UNDISCARDABLE = [C.STONEHIGH, C.EUPHORIA, *PARANOIA]


@pytest.mark.parametrize("card", [c for c in Card if c not in UNDISCARDABLE])
def test_discard_any_card_but_nirvana_and_paranoia(card: Card) -> None:
    """seed 002: "If a player does not wish to play a card on his turn, he may discard";
    Nirvana and Paranoia cards "come into play" on the Wasted Pile instead."""
    game = build(R, seat(card), seat(), seat())
    wasted = list(game.wasted)
    game.apply(f"discard {card}")
    assert wasted_delta(wasted, game.wasted) == Counter([card])
    assert len(game.seats[0].hand) == 6


# ---------------------------------------------------------------------------- No forced swap


def test_there_is_no_forced_swap_in_classic() -> None:
    """seed 002 has no forced exchange: stash cards move only by negotiation."""
    game = build(
        R,
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(),
    )
    assert not [a for a in game.legal_actions() if a.startswith("swap")]
    assert_illegal(game, "swap home-grown @1 panama")


# ---------------------------------------------------------------------------- Deals


def test_hand_to_hand_deal_accepted_exchanges_the_cards() -> None:
    """seed 002: "Direct hand to hand, one card for one card exchanges"."""
    game = build(R, seat(C.PANAMA), seat(C.MARKET_OPEN), seat())
    apply_all(game, "deal @1", "give panama", "want market-open")
    assert (game.phase, game.to_act) == (Phase.DEAL_ANSWER, 1)
    game.apply("accept")
    assert C.MARKET_OPEN in game.seats[0].hand and C.PANAMA in game.seats[1].hand
    assert [len(s.hand) for s in game.seats] == [7, 6, 6]


def test_hand_to_hand_deal_declined_changes_nothing() -> None:
    """seed 002: negotiation needs both players' agreement."""
    game = build(R, seat(C.PANAMA), seat(C.MARKET_OPEN), seat())
    hands = [list(s.hand) for s in game.seats]
    apply_all(game, "deal @1", "give panama", "want market-open", "decline")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert [s.hand for s in game.seats] == hands


def test_deal_for_a_card_the_partner_lacks_is_declined_automatically() -> None:
    """The partner cannot hand over a card it does not hold; the only answer is decline."""
    game = build(R, seat(C.PANAMA), seat(), seat())
    apply_all(game, "deal @1", "give panama", "want market-open")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert game.events[-1]["action"] == "decline" and game.events[-1].get("auto")


def test_at_most_three_deal_proposals_per_turn() -> None:
    """Platform limit (rules.py `max_deals_per_turn`): three proposals per turn."""
    game = build(R, seat(C.PANAMA), seat(C.MARKET_OPEN), seat())
    for _ in range(3):
        apply_all(game, "deal @1", "give panama", "want market-open", "decline")
    assert_illegal(game, "deal @1")
    assert_illegal(game, "deal @2")


def test_stash_to_stash_deal_moves_peddles_both_ways() -> None:
    """seed 002: "You may negotiate for and with table Peddle money. In this case, payment is
    made only from one Stash to another Stash, (one or more Peddle cards may be
    exchanged)"."""
    game = build(
        R,
        seat(market=True, unprotected=[C.PANAMA, C.HOME_GROWN]),
        seat(market=True, unprotected=[C.COLOMBIA, C.JAMAICA]),
        seat(),
    )
    hands = [list(s.hand) for s in game.seats]
    apply_all(game, "deal @1", "give nothing")
    assert game.phase is Phase.DEAL_STASH
    assert_illegal(game, "done")  # nothing on either side yet
    game.apply("offer panama")
    assert_illegal(game, "done")  # a stash-only deal needs both sides
    apply_all(game, "ask colombia", "ask jamaica", "done")
    assert (game.phase, game.to_act) == (Phase.DEAL_ANSWER, 1)
    game.apply("accept")
    assert sorted(game.seats[0].unprotected) == sorted([C.HOME_GROWN, C.COLOMBIA, C.JAMAICA])
    assert game.seats[1].unprotected == [C.PANAMA]
    assert [s.hand for s in game.seats] == hands


def test_stash_to_stash_deal_declined_changes_nothing() -> None:
    """seed 002: a negotiation the partner refuses moves nothing."""
    game = build(
        R,
        seat(market=True, unprotected=[C.PANAMA]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    apply_all(game, "deal @1", "give nothing", "offer panama", "ask colombia", "done")
    assert (game.phase, game.to_act) == (Phase.DEAL_ANSWER, 1)
    game.apply("decline")
    assert game.seats[0].unprotected == [C.PANAMA]
    assert game.seats[1].unprotected == [C.COLOMBIA]


def test_stash_deal_is_not_offered_when_the_partner_has_no_tabled_peddle() -> None:
    """seed 002: a stash-to-stash exchange needs peddles on both tables."""
    game = build(R, seat(market=True, unprotected=[C.PANAMA]), seat(market=True), seat())
    game.apply("deal @1")
    assert_illegal(game, "give nothing")


def test_protected_peddles_cannot_be_offered_or_asked() -> None:
    """seed 002: protected peddles are covered "until the end of the hand"; only unprotected
    stash peddles change hands."""
    game = build(
        R,
        seat(
            market=True, unprotected=[C.HOME_GROWN], protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]
        ),
        seat(market=True, unprotected=[C.MEXICO], protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])]),
        seat(),
    )
    apply_all(game, "deal @1", "give nothing")
    assert sorted(game.legal_actions()) == ["ask mexico", "offer home-grown", "withdraw"]
    assert_illegal(game, "offer panama")
    assert_illegal(game, "ask colombia")


def test_a_peddle_can_be_offered_only_as_often_as_it_is_tabled() -> None:
    """A stash offer lists tabled cards; one Panama on the table is one Panama to offer."""
    game = build(
        R,
        seat(market=True, unprotected=[C.PANAMA, C.HOME_GROWN]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    apply_all(game, "deal @1", "give nothing", "offer panama")
    assert_illegal(game, "offer panama")


def test_combination_deal_exchanges_hand_cards_and_stash_peddles() -> None:
    """seed 002: "You may negotiate a combination deal of (1) and (2) but when completed, each
    player must still have six cards in his hand"."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN]),
        seat(C.MARKET_OPEN, market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    apply_all(game, "deal @1", "give panama", "want market-open")
    assert game.phase is Phase.DEAL_STASH
    assert "done" in game.legal_actions()  # the hand part alone is a deal
    apply_all(game, "offer home-grown", "ask colombia", "done", "accept")
    assert C.MARKET_OPEN in game.seats[0].hand and C.PANAMA in game.seats[1].hand
    assert game.seats[0].unprotected == [C.COLOMBIA]
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert [len(s.hand) for s in game.seats] == [7, 6, 6]


def test_combination_deal_may_pay_peddles_one_way() -> None:
    """seed 002: "payment is made only from one Stash to another Stash": a hand card may be
    bought with stash money."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN]),
        seat(C.MARKET_OPEN, market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    apply_all(game, "deal @1", "give panama", "want market-open", "offer home-grown", "done")
    game.apply("accept")
    assert game.seats[0].unprotected == []
    assert sorted(game.seats[1].unprotected) == sorted([C.COLOMBIA, C.HOME_GROWN])


def test_combination_deal_may_pay_peddles_to_a_partner_with_an_empty_stash() -> None:
    """seed 002: "You may negotiate for and with table Peddle money. In this case, payment is
    made only from one Stash to another Stash"; "You may negotiate a combination deal of (1)
    and (2)". Paying stash money for a hand card does not need the partner to have any."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN, C.MEXICO]),
        seat(C.MARKET_OPEN),
        seat(),
    )
    apply_all(game, "deal @1", "give panama", "want market-open")
    assert game.phase is Phase.DEAL_STASH
    apply_all(game, "offer home-grown", "done", "accept")
    assert game.seats[0].unprotected == [C.MEXICO]
    assert game.seats[1].unprotected == [C.HOME_GROWN]


def test_combination_deal_may_ask_peddles_from_a_partner_when_own_stash_is_empty() -> None:
    """seed 002: as above, the other way: a hand card sold for the partner's stash money."""
    game = build(
        R,
        seat(C.MARKET_OPEN, market=True),
        seat(C.PANAMA, market=True, unprotected=[C.COLOMBIA, C.JAMAICA]),
        seat(),
    )
    apply_all(game, "deal @1", "give market-open", "want panama")
    assert game.phase is Phase.DEAL_STASH
    apply_all(game, "ask colombia", "done", "accept")
    assert game.seats[0].unprotected == [C.COLOMBIA]
    assert game.seats[1].unprotected == [C.JAMAICA]


def test_combination_deal_for_a_card_the_partner_lacks_is_declined() -> None:
    """A hand-to-hand part needs the wanted card in the partner's hand."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    apply_all(game, "deal @1", "give panama", "want market-open", "offer home-grown", "done")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert game.seats[0].unprotected == [C.HOME_GROWN]
    assert game.seats[1].unprotected == [C.COLOMBIA]


# ---------------------------------------------------------------------------- End of the hand


def test_the_player_who_draws_the_last_card_finishes_the_turn_then_the_hand_ends() -> None:
    """seed 002: the hand "ends automatically when the Grass Stack dwindles to nothing"; the
    player who draws the last card still plays the turn."""
    game = build(
        R,
        seat(C.PANAMA, market=True),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
        stack=[C.JAMAICA],
        stack_len=1,
    )
    assert game.stack == [] and game.hand_scores == []
    game.apply("play panama")  # the turn, and with it the hand, ends by itself
    assert len(game.hand_scores) == 1
    scores = game.hand_scores[0]
    assert [s.at_risk for s in scores] == [50_000, 25_000, 0]
    assert [s.best_held for s in scores] == [25_000, 0, 0]
    assert game.hand_no == 2


def test_nirvana_extra_turn_is_lost_when_the_stack_is_used_up() -> None:
    """seed 002: the hand ends with the Grass Stack; the extra turn has no card to draw."""
    game = build(R, seat(C.STONEHIGH), seat(), seat(), stack_len=1)
    game.apply("play stonehigh")  # the turn ends by itself, and the hand with it
    assert len(game.hand_scores) == 1


# ---------------------------------------------------------------------------- Illegal actions


@pytest.mark.parametrize(
    "action",
    ["", "end", "play sold-out @1", "play pay-fine", "give nothing", "discard stonehigh", None],
)
def test_an_illegal_action_raises_and_changes_nothing(action: object) -> None:
    """An action not among the legal ones raises IllegalAction and leaves the game as it was."""
    game = build(R, seat(C.SOLD_OUT, C.STONEHIGH), seat(market=True), seat())
    before = snapshot(game)
    with pytest.raises(IllegalAction):
        game.apply(action)  # type: ignore[arg-type]
    assert snapshot(game) == before


def test_an_illegal_action_inside_a_deal_changes_nothing() -> None:
    """Within a deal only the deal's own steps are legal."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    game.apply("deal @1")
    assert_illegal(game, "play panama")
    assert_illegal(game, "offer colombia")
    assert_illegal(game, "ask home-grown")
