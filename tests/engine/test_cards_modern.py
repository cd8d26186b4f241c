"""Per-card rules of the modern (2018) edition, seed 000: each legal and each illegal use.

Positions are built with `helpers.build`: seat 0 is active unless said otherwise and has just
drawn a filler card (a Heat Off that matches no heat in play).
"""

from __future__ import annotations

from collections import Counter

import pytest

from engine import INFO, Card, Game, IllegalAction, Phase
from engine.log import game_from_header
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
R = "modern"


# ---------------------------------------------------------------------------- Market Open


def test_market_open_is_legal_without_a_hassle_pile() -> None:
    """seed 000: the Market Open card "is always the first card in the HASSLE PILE"."""
    game = build(R, seat(C.MARKET_OPEN), seat(), seat())
    game.apply("play market-open")
    assert game.seats[0].market_open
    assert game.seats[0].showing
    assert C.MARKET_OPEN not in game.seats[0].hand


def test_market_open_is_illegal_when_one_is_already_open() -> None:
    """seed 000: the Market Open card is the first card of the hassle pile; one is enough."""
    game = build(R, seat(C.MARKET_OPEN, market=True), seat(), seat())
    assert_illegal(game, "play market-open")


def test_market_open_is_illegal_when_the_open_market_is_under_heat() -> None:
    """seed 000: heat is cancelled by Heat Off, not by opening the market again."""
    game = build(R, seat(C.MARKET_OPEN, market=True, heat=[C.BUST]), seat(), seat())
    assert_illegal(game, "play market-open")


# ---------------------------------------------------------------------------- Peddle


def test_peddle_is_legal_with_market_open_showing() -> None:
    """seed 000: "You can only play a Peddle card if you have already played a Market Open
    card and it is visible"."""
    game = build(R, seat(C.PANAMA, C.HOME_GROWN, market=True), seat(), seat())
    game.apply("play panama")
    assert game.seats[0].unprotected == [C.PANAMA]
    assert game.seats[0].hand.count(C.PANAMA) == 0
    assert "play home-grown" not in game.legal_actions()  # one card per turn


def test_peddle_is_illegal_without_market_open() -> None:
    """seed 000: "Until you have opened your market, you cannot play any peddle cards"."""
    game = build(R, seat(C.PANAMA), seat(), seat())
    assert_illegal(game, "play panama")


def test_peddle_is_illegal_under_heat() -> None:
    """seed 000: under a Heat On "that player can no longer play Peddle or Protected cards"."""
    game = build(R, seat(C.PANAMA, market=True, heat=[C.FELONY]), seat(), seat())
    assert_illegal(game, "play panama")


# ---------------------------------------------------------------------------- Heat On


@pytest.mark.parametrize("target", [1, 2])
def test_heat_on_is_legal_on_any_opponent_with_market_showing(target: int) -> None:
    """seed 000: Heat On targets "an opponent ... who has a Market Open card face up"."""
    game = build(R, seat(C.BUST), seat(market=True), seat(market=True))
    game.apply(f"play bust @{target}")
    assert game.seats[target].heat == [C.BUST]
    assert not game.seats[target].showing
    assert all(not s.heat for i, s in enumerate(game.seats) if i != target)


def test_heat_on_is_legal_without_an_own_market() -> None:
    """seed 000 sets no condition on the player's own hassle pile for Heat On."""
    game = build(R, seat(C.DETAINED), seat(market=True), seat())
    assert plays(game, C.DETAINED) == ["play detained @1"]


def test_heat_on_is_illegal_on_an_opponent_without_market() -> None:
    """seed 000: the target must have "a Market Open card face up in front of them"."""
    game = build(R, seat(C.BUST, market=True), seat(), seat())
    assert_illegal(game, "play bust @1")


def test_heat_on_is_illegal_on_an_opponent_already_under_heat() -> None:
    """seed 000: "a Heat On card cannot be played on top of another Heat On card"."""
    game = build(R, seat(C.BUST), seat(market=True, heat=[C.FELONY]), seat())
    assert_illegal(game, "play bust @1")


def test_heat_on_is_legal_while_the_player_is_under_heat() -> None:
    """seed 000 does not forbid a player under heat from putting heat on others."""
    game = build(R, seat(C.BUST, market=True, heat=[C.FELONY]), seat(market=True), seat())
    game.apply("play bust @1")
    assert game.seats[1].heat == [C.BUST]
    assert game.seats[0].heat == [C.FELONY]


def test_heat_on_is_never_played_on_oneself() -> None:
    """seed 000: Heat On is played on "an opponent's HASSLE PILE"."""
    game = build(R, seat(C.BUST, market=True), seat(), seat())
    assert_illegal(game, "play bust @0")
    assert plays(game, C.BUST) == []


# ---------------------------------------------------------------------------- Heat Off


def test_the_four_heat_pairs_are_the_printed_ones() -> None:
    """seed 000: "There are four different types of Heat Off cards, corresponding to the 4
    types of Heat On cards"."""
    assert {INFO[off].cancels: off for off in HEAT_OFFS} == dict(PAIRS)
    assert len(PAIRS) == 4


@pytest.mark.parametrize(("heat_on", "heat_off"), PAIRS)
def test_heat_off_cancels_the_matching_heat_on(heat_on: Card, heat_off: Card) -> None:
    """seed 000: "A Heat Off card is played on the corresponding Heat On card ... The two
    cards cancel out, and are placed at the bottom of this pile. The Market Open card shows
    and becomes active again."""
    game = build(R, seat(heat_off, market=True, heat=[heat_on]), seat(), seat())
    game.apply(f"play {heat_off}")
    me = game.seats[0]
    assert me.heat == []
    assert me.hassle_under == [heat_on, heat_off]
    assert me.market_open and me.showing


@pytest.mark.parametrize(("heat_on", "heat_off"), PAIRS)
def test_heat_off_is_illegal_on_a_different_heat_on(heat_on: Card, heat_off: Card) -> None:
    """seed 000: Heat Off is played on "the corresponding Heat On card" only."""
    others = [off for off in HEAT_OFFS if off is not heat_off]
    game = build(R, seat(*others, market=True, heat=[heat_on]), seat(), seat())
    for off in others:
        assert_illegal(game, f"play {off}")


@pytest.mark.parametrize("heat_off", HEAT_OFFS)
def test_heat_off_is_illegal_without_heat(heat_off: Card) -> None:
    """seed 000: there is nothing to cancel without a Heat On on one's hassle pile."""
    game = build(R, seat(heat_off, market=True), seat(), seat())
    assert_illegal(game, f"play {heat_off}")


def test_heat_off_is_illegal_on_an_opponents_heat() -> None:
    """seed 000: Heat Off is played on the Heat On "showing on your HASSLE PILE"."""
    game = build(R, seat(C.IMMUNITY, market=True), seat(market=True, heat=[C.BUST]), seat())
    assert_illegal(game, "play immunity")
    assert not [a for a in game.legal_actions() if a.startswith("play immunity")]


# ---------------------------------------------------------------------------- Pay Fine


def test_pay_fine_offers_every_tabled_peddle_protected_or_not() -> None:
    """seed 000: "you must discard a Peddle card already played in your MARKETPLACE (whether
    protected or not)" - the player chooses which."""
    game = build(
        R,
        seat(
            C.PAY_FINE,
            market=True,
            heat=[C.DETAINED],
            unprotected=[C.HOME_GROWN, C.PANAMA, C.HOME_GROWN],
            protected=[(C.LUST_CONQUERS_ALL, [C.COLOMBIA])],
        ),
        seat(),
        seat(),
    )
    assert sorted(plays(game, C.PAY_FINE)) == sorted(
        [
            "play pay-fine home-grown",
            "play pay-fine panama",
            "play pay-fine colombia(p)",
        ]
    )


def test_pay_fine_with_an_unprotected_peddle_wastes_it_and_reopens_the_market() -> None:
    """seed 000: Pay Fine cancels "any Heat On card ... as if it were the corresponding Heat
    Off card"; "The discarded Peddle card goes into the WASTED PILE"."""
    game = build(
        R,
        seat(
            C.PAY_FINE,
            market=True,
            heat=[C.SEARCH_AND_SEIZURE],
            unprotected=[C.HOME_GROWN, C.PANAMA],
        ),
        seat(),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play pay-fine panama")
    me = game.seats[0]
    assert me.unprotected == [C.HOME_GROWN]
    assert me.heat == [] and me.showing
    assert me.hassle_under == [C.SEARCH_AND_SEIZURE, C.PAY_FINE]
    assert wasted_delta(wasted, game.wasted) == Counter([C.PANAMA])


def test_pay_fine_with_a_protected_peddle_takes_it_out_of_its_group() -> None:
    """seed 000: the fine may be a protected Peddle card; it goes to the Wasted pile."""
    game = build(
        R,
        seat(
            C.PAY_FINE,
            market=True,
            heat=[C.BUST],
            unprotected=[C.HOME_GROWN],
            protected=[(C.LUST_CONQUERS_ALL, [C.COLOMBIA, C.MEXICO])],
        ),
        seat(),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play pay-fine colombia(p)")
    me = game.seats[0]
    assert me.protected == [(C.LUST_CONQUERS_ALL, [C.MEXICO])]
    assert me.unprotected == [C.HOME_GROWN]
    assert me.showing
    assert wasted_delta(wasted, game.wasted) == Counter([C.COLOMBIA])


def test_pay_fine_is_illegal_without_a_tabled_peddle() -> None:
    """seed 000: Pay Fine needs "a Peddle card already played in your MARKETPLACE"."""
    game = build(R, seat(C.PAY_FINE, C.PANAMA, market=True, heat=[C.BUST]), seat(), seat())
    assert plays(game, C.PAY_FINE) == []
    assert_illegal(game, "play pay-fine panama")


def test_pay_fine_is_illegal_without_heat() -> None:
    """seed 000: Pay Fine cancels "any Heat On card played on your HASSLE PILE"."""
    game = build(R, seat(C.PAY_FINE, market=True, unprotected=[C.PANAMA]), seat(), seat())
    assert plays(game, C.PAY_FINE) == []
    assert_illegal(game, "play pay-fine panama")


def test_pay_fine_has_no_automatic_form_in_modern() -> None:
    """seed 000: the player chooses the peddle; the classic "smallest" form does not exist."""
    game = build(
        R, seat(C.PAY_FINE, market=True, heat=[C.BUST], unprotected=[C.PANAMA]), seat(), seat()
    )
    assert_illegal(game, "play pay-fine")
    game.apply("play pay-fine panama")
    assert game.seats[0].unprotected == []


# ---------------------------------------------------------------------------- Protected


def test_protected_offers_every_set_within_its_coverage() -> None:
    """seed 000: "The total amount of the protected cards must be equal to or less than the
    coverage value of the card"."""
    game = build(
        R,
        seat(C.LUST_CONQUERS_ALL, market=True, unprotected=[C.HOME_GROWN, C.COLOMBIA, C.PANAMA]),
        seat(),
        seat(),
    )
    assert sorted(plays(game, C.LUST_CONQUERS_ALL)) == sorted(
        [
            "play lust-conquers-all home-grown",
            "play lust-conquers-all colombia",
            "play lust-conquers-all panama",
            "play lust-conquers-all home-grown+colombia",
        ]
    )
    assert_illegal(game, "play lust-conquers-all colombia+panama")
    assert_illegal(game, "play lust-conquers-all home-grown+panama")


@pytest.mark.parametrize("card", [C.GRAB_A_SNACK, C.CATCH_A_BUZZ])
def test_protected_25000_cannot_cover_more_than_25000(card: Card) -> None:
    """seed 000: "The Protected cards have a coverage value of $25 or 50,000"."""
    game = build(
        R, seat(card, market=True, unprotected=[C.MEXICO, C.JAMAICA, C.PANAMA]), seat(), seat()
    )
    assert sorted(plays(game, card)) == sorted([f"play {card} mexico", f"play {card} jamaica"])
    assert_illegal(game, f"play {card} panama")
    assert_illegal(game, f"play {card} mexico+jamaica")


def test_protected_can_never_cover_dr_feelgood() -> None:
    """seed 000: "Don't forget: the Dr. Feelgood card can never be protected"."""
    game = build(
        R, seat(C.LUST_CONQUERS_ALL, market=True, unprotected=[C.DR_FEELGOOD]), seat(), seat()
    )
    assert plays(game, C.LUST_CONQUERS_ALL) == []
    assert_illegal(game, "play lust-conquers-all dr-feelgood")
    game = build(
        R,
        seat(C.LUST_CONQUERS_ALL, market=True, unprotected=[C.DR_FEELGOOD, C.MEXICO]),
        seat(),
        seat(),
    )
    assert plays(game, C.LUST_CONQUERS_ALL) == ["play lust-conquers-all mexico"]


def test_protected_covers_only_tabled_peddles() -> None:
    """seed 000: "A Protected is placed on one or more Peddle cards previously played in your
    MARKETPLACE"."""
    game = build(R, seat(C.LUST_CONQUERS_ALL, C.PANAMA, market=True), seat(), seat())
    assert plays(game, C.LUST_CONQUERS_ALL) == []
    assert_illegal(game, "play lust-conquers-all panama")


def test_protected_is_illegal_under_heat() -> None:
    """seed 000: under a Heat On "that player can no longer play Peddle or Protected cards"."""
    game = build(
        R,
        seat(C.LUST_CONQUERS_ALL, market=True, heat=[C.BUST], unprotected=[C.PANAMA]),
        seat(),
        seat(),
    )
    assert_illegal(game, "play lust-conquers-all panama")


def test_protected_is_illegal_without_market_open() -> None:
    """seed 000: Protected cards are blocked unless the Market Open card is showing."""
    game = build(R, seat(C.LUST_CONQUERS_ALL, unprotected=[C.PANAMA]), seat(), seat())
    assert_illegal(game, "play lust-conquers-all panama")


def test_protected_moves_the_covered_peddles_into_its_group() -> None:
    """seed 000: "The Protected card protects these cards ... until the end of the hand"."""
    game = build(
        R,
        seat(C.LUST_CONQUERS_ALL, market=True, unprotected=[C.HOME_GROWN, C.COLOMBIA, C.PANAMA]),
        seat(),
        seat(),
    )
    game.apply("play lust-conquers-all home-grown+colombia")
    me = game.seats[0]
    assert me.protected == [(C.LUST_CONQUERS_ALL, [C.HOME_GROWN, C.COLOMBIA])]
    assert me.unprotected == [C.PANAMA]
    assert me.protected_value == 30_000
    assert me.at_risk == 50_000


# ---------------------------------------------------------------------------- Steal


def test_steal_offers_each_unprotected_peddle_of_each_showing_opponent() -> None:
    """seed 000: Steal is played "on an opponent whose Market is open and who has at least
    one unprotected Peddle card"; the thief nicks "an unprotected Peddle card"."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(market=True, unprotected=[C.HOME_GROWN, C.PANAMA, C.PANAMA]),
        seat(market=True, unprotected=[C.JAMAICA]),
    )
    assert sorted(plays(game, C.STEAL)) == sorted(
        [
            "play steal-your-neighbours-pot @1 home-grown",
            "play steal-your-neighbours-pot @1 panama",
            "play steal-your-neighbours-pot @2 jamaica",
        ]
    )


def test_steal_takes_the_chosen_peddle_into_the_thiefs_marketplace() -> None:
    """seed 000: "Place the Steal card in the WASTED PILE, then nick an unprotected Peddle
    card from your opponent and immediately place it in your own MARKETPLACE"."""
    game = build(
        R,
        seat(C.STEAL, market=True, unprotected=[C.MEXICO]),
        seat(market=True, unprotected=[C.HOME_GROWN, C.PANAMA]),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play steal-your-neighbours-pot @1 home-grown")
    assert game.seats[0].unprotected == [C.MEXICO, C.HOME_GROWN]
    assert game.seats[1].unprotected == [C.PANAMA]
    assert wasted_delta(wasted, game.wasted) == Counter([C.STEAL])


def test_steal_is_illegal_without_own_market() -> None:
    """seed 000: "To play Steal Your Neighbour's Pot, your Market Open card must also be
    showing"."""
    game = build(R, seat(C.STEAL), seat(market=True, unprotected=[C.PANAMA]), seat())
    assert_illegal(game, "play steal-your-neighbours-pot @1 panama")


def test_steal_is_illegal_while_the_thief_is_under_heat() -> None:
    """seed 000: the thief's "Market Open card must also be showing"."""
    game = build(
        R,
        seat(C.STEAL, market=True, heat=[C.BUST]),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(),
    )
    assert_illegal(game, "play steal-your-neighbours-pot @1 panama")


def test_steal_is_illegal_on_a_victim_under_heat() -> None:
    """seed 000: "His/her Market open card must be showing; you cannot steal from someone who
    has existing problems"."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(market=True, heat=[C.FELONY], unprotected=[C.PANAMA]),
        seat(),
    )
    assert_illegal(game, "play steal-your-neighbours-pot @1 panama")


def test_steal_is_illegal_on_a_victim_without_market() -> None:
    """seed 000: Steal is played "on an opponent whose Market is open"."""
    game = build(R, seat(C.STEAL, market=True), seat(unprotected=[C.PANAMA]), seat())
    assert_illegal(game, "play steal-your-neighbours-pot @1 panama")


def test_steal_never_takes_a_protected_peddle() -> None:
    """seed 000: the thief nicks "an unprotected Peddle card"."""
    game = build(
        R,
        seat(C.STEAL, market=True),
        seat(
            market=True, unprotected=[C.HOME_GROWN], protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]
        ),
        seat(market=True, protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])]),
    )
    assert plays(game, C.STEAL) == ["play steal-your-neighbours-pot @1 home-grown"]
    assert_illegal(game, "play steal-your-neighbours-pot @1 panama")
    assert_illegal(game, "play steal-your-neighbours-pot @2 colombia")


def test_steal_without_a_chosen_peddle_is_illegal() -> None:
    """seed 000: the thief picks the peddle; there is no classic "largest" form."""
    game = build(R, seat(C.STEAL, market=True), seat(market=True, unprotected=[C.PANAMA]), seat())
    assert_illegal(game, "play steal-your-neighbours-pot @1")


# ---------------------------------------------------------------------------- Stonehigh, Euphoria


def test_stonehigh_givers_choose_their_peddle_in_turn() -> None:
    """seed 000: "each player must give you an unprotected Peddle card from their
    MARKETPLACE"; "The cards you receive go directly into your MARKETPLACE"."""
    game = build(
        R,
        seat(C.STONEHIGH),
        seat(market=True, unprotected=[C.HOME_GROWN, C.PANAMA]),
        seat(market=True, unprotected=[C.MEXICO, C.JAMAICA]),
    )
    wasted = list(game.wasted)
    game.apply("play stonehigh")
    assert (game.phase, game.to_act) == (Phase.SURRENDER, 1)
    assert sorted(game.legal_actions()) == ["surrender home-grown", "surrender panama"]
    game.apply("surrender panama")
    assert (game.phase, game.to_act) == (Phase.SURRENDER, 2)
    game.apply("surrender mexico")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert game.seats[0].unprotected == [C.PANAMA, C.MEXICO]
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert game.seats[2].unprotected == [C.JAMAICA]
    assert wasted_delta(wasted, game.wasted) == Counter([C.STONEHIGH])


def test_stonehigh_players_with_nothing_or_only_protected_give_nothing() -> None:
    """seed 000: "Players who have no cards in their MARKETPLACE or have protected all their
    cards, do not give you anything"."""
    game = build(
        R,
        seat(C.STONEHIGH, market=True),
        seat(market=True, protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]),
        seat(),
        seat(market=True, unprotected=[C.HOME_GROWN], protected=[(C.GRAB_A_SNACK, [C.MEXICO])]),
    )
    game.apply("play stonehigh")  # seat 3 has one choice: taken automatically
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert game.seats[0].unprotected == [C.HOME_GROWN]
    assert game.seats[1].protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert game.seats[3].protected == [(C.GRAB_A_SNACK, [C.MEXICO])]
    assert game.seats[3].unprotected == []


def test_stonehigh_gives_no_extra_turn_and_leaves_heat() -> None:
    """seed 000 gives Stonehigh no extra turn and no power over heat (unlike classic)."""
    game = build(
        R,
        seat(C.STONEHIGH, market=True, heat=[C.BUST]),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(),
    )
    game.apply("play stonehigh")
    me = game.seats[0]
    assert me.heat == [C.BUST] and not me.showing
    assert me.extra_turns == 0
    assert me.unprotected == [C.PANAMA]
    game.apply("end")
    assert game.to_act == 1


def test_euphoria_takes_each_opponents_highest_unprotected_peddle() -> None:
    """seed 000: "each player must give you their highest value unprotected Peddle card"."""
    game = build(
        R,
        seat(C.EUPHORIA),
        seat(
            market=True,
            unprotected=[C.HOME_GROWN, C.COLOMBIA],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(market=True, unprotected=[C.DR_FEELGOOD, C.PANAMA]),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play euphoria")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert game.seats[0].unprotected == [C.COLOMBIA, C.DR_FEELGOOD]
    assert game.seats[1].unprotected == [C.HOME_GROWN]
    assert game.seats[1].protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert game.seats[2].unprotected == [C.PANAMA]
    assert game.seats[0].extra_turns == 0
    assert wasted_delta(wasted, game.wasted) == Counter([C.EUPHORIA])


@pytest.mark.parametrize("card", [C.STONEHIGH, C.EUPHORIA])
def test_nirvana_may_be_discarded_in_modern(card: Card) -> None:
    """seed 000 forbids discarding only the paranoia cards."""
    game = build(R, seat(card), seat(market=True, unprotected=[C.PANAMA]), seat())
    game.apply(f"discard {card}")
    assert game.seats[1].unprotected == [C.PANAMA]
    assert game.wasted[-1] is card


# ---------------------------------------------------------------------------- Paranoia


@pytest.mark.parametrize("card", [C.SOLD_OUT, C.DOUBLE_CROSSED, C.UTTERLY_WIPED_OUT])
def test_paranoia_is_played_on_any_opponent_even_without_market(card: Card) -> None:
    """seed 000: played "on the HASSLE PILE of one of your opponents"; in the "Example of two
    turns" Janis plays Sold Out on Bob, whose market is not open."""
    game = build(R, seat(card), seat(market=True), seat(), seat(market=True, heat=[C.BUST]))
    assert sorted(plays(game, card)) == [f"play {card} @1", f"play {card} @2", f"play {card} @3"]
    assert_illegal(game, f"play {card} @0")
    assert_illegal(game, f"play {card}")


@pytest.mark.parametrize("card", [C.SOLD_OUT, C.DOUBLE_CROSSED, C.UTTERLY_WIPED_OUT])
def test_paranoia_cannot_be_discarded_in_modern(card: Card) -> None:
    """seed 000: "you cannot discard Sold Out, Double-crossed, or Utterly Wiped Out cards in
    the WASTED PILE"."""
    game = build(R, seat(card), seat(), seat())
    assert_illegal(game, f"discard {card}")


def test_sold_out_victim_chooses_the_unprotected_peddle_to_waste() -> None:
    """seed 000: the victim "must take the unprotected Peddle card of their choice from their
    MARKETPLACE and put it into the WASTED PILE"."""
    game = build(
        R,
        seat(C.SOLD_OUT),
        seat(
            market=True,
            unprotected=[C.HOME_GROWN, C.PANAMA],
            protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])],
        ),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play sold-out @1")
    assert (game.phase, game.to_act) == (Phase.WASTE, 1)
    assert sorted(game.legal_actions()) == ["waste home-grown", "waste panama"]
    game.apply("waste home-grown")
    victim = game.seats[1]
    assert victim.unprotected == [C.PANAMA]
    assert victim.protected == [(C.GRAB_A_SNACK, [C.COLOMBIA])]
    assert victim.skips == 0
    assert wasted_delta(wasted, game.wasted) == Counter([C.SOLD_OUT, C.HOME_GROWN])
    assert (game.phase, game.to_act) == (Phase.PASS, 0)


def test_sold_out_on_a_victim_with_nothing_unprotected_goes_straight_to_passing() -> None:
    """seed 000 example: Janis's victim had nothing to lose; everyone still passes a card."""
    game = build(
        R, seat(C.SOLD_OUT), seat(market=True, protected=[(C.GRAB_A_SNACK, [C.MEXICO])]), seat()
    )
    game.apply("play sold-out @1")
    assert (game.phase, game.to_act) == (Phase.PASS, 0)
    assert game.seats[1].protected == [(C.GRAB_A_SNACK, [C.MEXICO])]


def test_double_crossed_wastes_the_highest_unprotected_peddle_and_a_turn() -> None:
    """seed 000: the victim "must place his/her highest value unprotected Peddle card in the
    WASTED PILE. In addition, he/she must skip a turn"."""
    game = build(
        R,
        seat(C.DOUBLE_CROSSED),
        seat(
            market=True,
            unprotected=[C.HOME_GROWN, C.PANAMA, C.COLOMBIA],
            protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])],
        ),
        seat(),
    )
    wasted = list(game.wasted)
    game.apply("play double-crossed @1")
    victim = game.seats[1]
    assert sorted(victim.unprotected) == sorted([C.HOME_GROWN, C.COLOMBIA])
    assert victim.protected == [(C.LUST_CONQUERS_ALL, [C.PANAMA])]
    assert victim.skips == 1
    assert game.seats[0].skips == 0
    assert wasted_delta(wasted, game.wasted) == Counter([C.DOUBLE_CROSSED, C.PANAMA])
    assert (game.phase, game.to_act) == (Phase.PASS, 0)


def test_utterly_wiped_out_wastes_unprotected_peddles_and_the_whole_hassle_pile() -> None:
    """seed 000: the victim "must put all their unprotected Peddle cards in the WASTED PILE,
    along with their entire HASSLE PILE, including their Market Open card!! ... In addition,
    they must skip a turn"."""
    game = build(
        R,
        seat(C.UTTERLY_WIPED_OUT, C.IMMUNITY),
        seat(
            market=True,
            heat=[C.BUST],
            unprotected=[C.HOME_GROWN, C.PANAMA],
            protected=[(C.LUST_CONQUERS_ALL, [C.COLOMBIA])],
        ),
        seat(),
        avoid=[C.HEARSAY_EVIDENCE],
    )
    put_under(game, 1, C.FELONY, C.HEARSAY_EVIDENCE)  # an earlier, cancelled Heat On
    wasted = list(game.wasted)
    game.apply("play utterly-wiped-out @1")
    victim = game.seats[1]
    assert victim.unprotected == []
    assert not victim.market_open and victim.heat == [] and victim.hassle_under == []
    assert victim.protected == [(C.LUST_CONQUERS_ALL, [C.COLOMBIA])]
    assert victim.skips == 1
    assert wasted_delta(wasted, game.wasted) == Counter(
        [
            C.UTTERLY_WIPED_OUT,
            C.HOME_GROWN,
            C.PANAMA,
            C.MARKET_OPEN,
            C.BUST,
            C.FELONY,
            C.HEARSAY_EVIDENCE,
        ]
    )
    assert (game.phase, game.to_act) == (Phase.PASS, 0)


def test_utterly_wiped_out_victim_must_open_a_new_market() -> None:
    """seed 000: "they must play another Market Open card before they can start to deal
    again"."""
    game = build(
        R,
        seat(C.UTTERLY_WIPED_OUT),
        seat(C.MARKET_OPEN, C.PANAMA, market=True),
        active=0,
    )
    game.apply("play utterly-wiped-out @1")
    pass_fillers(game)
    game.apply("end")
    # Seat 1 skips its turn; seat 0 plays again, then seat 1 may reopen.
    assert game.to_act == 0
    pass_turn(game)
    assert game.to_act == 1
    assert "play panama" not in game.legal_actions()
    game.apply("play market-open")
    assert game.seats[1].market_open


def wiped_out_seat_one(engine: str | None = None) -> Game:
    """Seat 0 plays Utterly Wiped Out on seat 1; at seat 1's next turn (after the skip) it
    holds a Market Open and a Panama, and seat 2 has a peddle a swap could take."""
    game = build(
        R,
        seat(C.UTTERLY_WIPED_OUT),
        seat(C.MARKET_OPEN, C.PANAMA, market=True, unprotected=[C.MEXICO]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        stack_len=8,
    )
    if engine is not None:
        game = game_from_header({**game.events[0], "engine": engine})
    game.apply("play utterly-wiped-out @1")
    pass_fillers(game)
    game.apply("end")
    pass_turn(game)  # seat 2 (seat 1 skipped)
    pass_turn(game)  # seat 0
    assert game.to_act == 1 and not game.seats[1].market_open
    return game


def test_a_wiped_out_seat_may_not_deal_until_it_opens_a_new_market() -> None:
    """seed 000: the victim "must play another Market Open card before they can start to deal
    again"; "deal" is section 3's negotiating, the swap included (D-UWO-DEAL)."""
    game = wiped_out_seat_one()
    assert not [a for a in game.legal_actions() if a.startswith(("deal", "swap"))]
    assert_illegal(game, "deal @0")
    game.apply("play market-open")
    assert "deal @0" in game.legal_actions() and "deal @2" in game.legal_actions()


def test_others_may_still_deal_with_a_wiped_out_seat() -> None:
    """Only starting a deal is barred: the wiped-out seat may answer one (D-UWO-DEAL)."""
    game = wiped_out_seat_one()
    game.apply("discard panama")  # nothing else is open to seat 1: its turn ends by itself
    assert game.to_act == 2
    assert "deal @1" in game.legal_actions()


def test_a_modern_log_of_engine_1_1_lets_a_wiped_out_seat_deal() -> None:
    """Logs written before engine 1.2 replay under the rules they were played with."""
    game = wiped_out_seat_one("1.1.0")
    assert game.events[0]["engine"] == "1.1.0"
    assert "deal @0" in game.legal_actions()


def test_paranoia_then_everyone_passes_a_card_left() -> None:
    """seed 000: "Each player (including you) then secretly selects a card from their hand and
    gives it to the player to their left"."""
    game = build(
        R,
        seat(C.SOLD_OUT, C.BUST),
        seat(C.DETAINED),
        seat(C.FELONY),
    )
    hands = [Counter(s.hand) for s in game.seats]
    game.apply("play sold-out @2")
    assert (game.phase, game.to_act) == (Phase.PASS, 0)
    game.apply("pass bust")
    assert game.to_act == 1
    game.apply("pass detained")
    assert game.to_act == 2
    game.apply("pass felony")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    hands[0] -= Counter([C.SOLD_OUT])
    assert Counter(game.seats[0].hand) == hands[0] - Counter([C.BUST]) + Counter([C.FELONY])
    assert Counter(game.seats[1].hand) == hands[1] - Counter([C.DETAINED]) + Counter([C.BUST])
    assert Counter(game.seats[2].hand) == hands[2] - Counter([C.FELONY]) + Counter([C.DETAINED])
    assert [len(s.hand) for s in game.seats] == [6, 6, 6]


def test_passing_starts_with_the_player_of_the_card_when_not_seat_zero() -> None:
    """seed 000: everyone passes, the player of the card included; the engine goes clockwise
    from that player."""
    game = build(R, seat(), seat(C.DOUBLE_CROSSED), seat(), active=1)
    game.apply("play double-crossed @0")
    order = []
    while game.phase is Phase.PASS:
        order.append(game.to_act)
        game.apply(game.legal_actions()[0])
    assert order == [1, 2, 0]
    assert game.seats[0].skips == 1


def test_a_skipped_turn_is_passed_over_without_a_draw() -> None:
    """seed 000: Double Crossed: "he/she must skip a turn"."""
    game = build(R, seat(C.DOUBLE_CROSSED), seat(), seat(), stack_len=4)
    game.apply("play double-crossed @1")
    while game.phase is Phase.PASS:
        game.apply(game.legal_actions()[0])
    stack = len(game.stack)
    hand1 = list(game.seats[1].hand)
    game.apply("end")
    assert game.to_act == 2
    assert len(game.stack) == stack - 1  # only seat 2 drew
    assert game.seats[1].hand == hand1
    assert game.seats[1].skips == 0
    assert any(e.get("e") == "skip" and e["seat"] == 1 for e in game.events)
    pass_turn(game)
    assert game.to_act == 0
    pass_turn(game)
    assert game.to_act == 1  # the skip is used up


# ---------------------------------------------------------------------------- The Banker


def test_the_banker_is_never_played() -> None:
    """seed 000: "This card is only used at the end of the hand"."""
    game = build(R, seat(C.BANKER, market=True), seat(market=True), seat())
    assert plays(game, C.BANKER) == []
    assert_illegal(game, "play the-banker")


def test_the_banker_may_be_discarded() -> None:
    """The Banker is no paranoia card, so seed 000 does not forbid discarding it."""
    game = build(R, seat(C.BANKER), seat(), seat())
    game.apply("discard the-banker")
    assert game.wasted[-1] is C.BANKER
    assert C.BANKER not in game.seats[0].hand


def test_the_banker_takes_5000_from_each_opponent_with_at_risk_profit() -> None:
    """seed 000: "the player who has this card collects $5,000 from all players whose Peddle
    cards are not protected ... He/she cannot take anything from someone who has nothing, or
    who thought to protect their profits"."""
    game = build(
        R,
        seat(C.MARKET_CLOSE, C.BANKER, market=True),
        seat(market=True, unprotected=[C.PANAMA, C.COLOMBIA]),
        seat(market=True, protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        avoid=[C.MARKET_CLOSE],
    )
    game.apply("play market-close")
    scores = game.hand_scores[0]
    assert [s.banker for s in scores] == [10_000, -5_000, 0, -5_000]
    assert [s.at_risk for s in scores] == [0, 75_000, 0, 5_000]


def test_the_banker_discarded_skims_nothing() -> None:
    """The Banker works only from the hand at the end of the hand."""
    game = build(
        R,
        seat(C.BANKER, market=True),
        seat(C.MARKET_CLOSE, market=True, unprotected=[C.PANAMA]),
        avoid=[C.MARKET_CLOSE],
    )
    game.apply("discard the-banker")
    game.apply("end")
    game.apply("play market-close")
    assert [s.banker for s in game.hand_scores[0]] == [0, 0]


# ---------------------------------------------------------------------------- Market Close


def test_market_close_ends_and_scores_the_hand_at_once() -> None:
    """seed 000: "Playing a Market Close card immediately ends the current hand"."""
    game = build(
        R,
        seat(C.MARKET_CLOSE, C.MEXICO, market=True, unprotected=[C.PANAMA]),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
        avoid=[C.MARKET_CLOSE],
    )
    game.apply("play market-close")
    assert len(game.hand_scores) == 1
    scores = game.hand_scores[0]
    assert [s.at_risk for s in scores] == [50_000, 25_000, 0]
    assert [s.best_held for s in scores] == [5_000, 0, 0]
    assert [s.score for s in scores] == [70_000, 25_000, 0]
    assert game.totals == [70_000, 25_000, 0]
    assert game.hand_no == 2


def test_market_close_is_illegal_without_market() -> None:
    """seed 000: "This card can only be played by a player whose Market is open"."""
    game = build(R, seat(C.MARKET_CLOSE), seat(), seat())
    assert_illegal(game, "play market-close")


def test_market_close_is_illegal_under_heat() -> None:
    """seed 000: only by a player "who has no Heat On card showing on his/her HASSLE PILE"."""
    game = build(R, seat(C.MARKET_CLOSE, market=True, heat=[C.BUST]), seat(), seat())
    assert_illegal(game, "play market-close")


def test_market_close_may_be_discarded_without_ending_the_hand() -> None:
    """A discard is not a play: the hand goes on (seed 000 forbids discarding only paranoia)."""
    game = build(R, seat(C.MARKET_CLOSE, market=True), seat(), seat())
    game.apply("discard market-close")
    assert game.wasted[-1] is C.MARKET_CLOSE
    assert game.hand_scores == []
    game.apply("end")
    assert (game.phase, game.to_act, game.hand_no) == (Phase.TURN, 1, 1)


# ---------------------------------------------------------------------------- Discard

DISCARDABLE = [c for c in Card if c not in (C.SOLD_OUT, C.DOUBLE_CROSSED, C.UTTERLY_WIPED_OUT)]


@pytest.mark.parametrize("card", DISCARDABLE)
def test_discard_any_card_but_paranoia(card: Card) -> None:
    """seed 000 forbids discarding only Sold Out, Double-crossed and Utterly Wiped Out."""
    game = build(R, seat(card), seat(), seat())
    wasted = list(game.wasted)
    game.apply(f"discard {card}")
    assert wasted_delta(wasted, game.wasted) == Counter([card])
    assert len(game.seats[0].hand) == 6
    assert_illegal(game, f"discard {game.seats[0].hand[0]}")  # one card per turn


# ---------------------------------------------------------------------------- Forced swap


def test_forced_swap_exchanges_two_unprotected_peddles() -> None:
    """seed 000: "Once per turn, you can also exchange (without asking his/her opinion!) one of
    your Peddle cards showing in front of you ... with a Peddle card showing in front of an
    opponent"."""
    game = build(
        R,
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.PANAMA]),
        seat(market=True, unprotected=[C.HOME_GROWN, C.JAMAICA]),
    )
    swaps = sorted(a for a in game.legal_actions() if a.startswith("swap"))
    assert swaps == ["swap home-grown @1 panama", "swap home-grown @2 jamaica"]
    game.apply("swap home-grown @1 panama")
    assert game.seats[0].unprotected == [C.PANAMA]
    assert game.seats[1].unprotected == [C.HOME_GROWN]


def test_forced_swap_only_once_per_turn() -> None:
    """seed 000: "Once per turn"."""
    game = build(
        R,
        seat(market=True, unprotected=[C.HOME_GROWN, C.MEXICO]),
        seat(market=True, unprotected=[C.PANAMA, C.COLOMBIA]),
        seat(),
    )
    game.apply("swap home-grown @1 panama")
    assert not [a for a in game.legal_actions() if a.startswith("swap")]
    assert_illegal(game, "swap mexico @1 colombia")


def test_forced_swap_never_touches_protected_peddles() -> None:
    """seed 000: "These cards must not be protected"."""
    game = build(
        R,
        seat(market=True, unprotected=[C.HOME_GROWN], protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])]),
        seat(market=True, unprotected=[C.MEXICO], protected=[(C.LUST_CONQUERS_ALL, [C.PANAMA])]),
        seat(),
    )
    assert sorted(a for a in game.legal_actions() if a.startswith("swap")) == [
        "swap home-grown @1 mexico"
    ]
    assert_illegal(game, "swap home-grown @1 panama")
    assert_illegal(game, "swap colombia @1 mexico")


def test_forced_swap_needs_an_unprotected_peddle_of_ones_own() -> None:
    """seed 000 example: Janis "cannot exchange any of her Peddle cards because they are all
    protected"."""
    game = build(
        R,
        seat(market=True, protected=[(C.GRAB_A_SNACK, [C.COLOMBIA])]),
        seat(market=True, unprotected=[C.MEXICO]),
        seat(),
    )
    assert not [a for a in game.legal_actions() if a.startswith("swap")]


def test_forced_swap_works_without_an_open_market_and_after_playing() -> None:
    """seed 000 ties the swap to the peddles in the marketplace, not to the hassle pile; in
    the example Amy swaps after playing her Panama."""
    game = build(
        R,
        seat(C.MEXICO, unprotected=[C.HOME_GROWN]),
        seat(market=True, heat=[C.BUST], unprotected=[C.PANAMA]),
        seat(),
    )
    game.apply("discard mexico")
    game.apply("swap home-grown @1 panama")
    assert game.seats[0].unprotected == [C.PANAMA]
    assert game.seats[1].unprotected == [C.HOME_GROWN]


def test_forced_swap_of_identical_peddles_is_not_offered() -> None:
    """Swapping a Home Grown for a Home Grown would change nothing; the engine omits it."""
    game = build(
        R,
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(market=True, unprotected=[C.HOME_GROWN]),
        seat(),
    )
    assert_illegal(game, "swap home-grown @1 home-grown")


# ---------------------------------------------------------------------------- Deals


def test_hand_to_hand_deal_accepted_exchanges_the_cards() -> None:
    """seed 000: "You can negotiate with any opponent to exchange a card from your hand for
    one from his/her hand"; the example: Bob trades a Panama for Amy's Market Open."""
    game = build(R, seat(C.PANAMA), seat(), seat(C.MARKET_OPEN))
    apply_all(game, "deal @2", "give panama", "want market-open")
    assert (game.phase, game.to_act) == (Phase.DEAL_ANSWER, 2)
    assert sorted(game.legal_actions()) == ["accept", "decline"]
    game.apply("accept")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert C.MARKET_OPEN in game.seats[0].hand and C.PANAMA not in game.seats[0].hand
    assert C.PANAMA in game.seats[2].hand and C.MARKET_OPEN not in game.seats[2].hand
    assert [len(s.hand) for s in game.seats] == [7, 6, 6]
    game.apply("play market-open")  # the card just received can be played at once
    assert game.seats[0].market_open


def test_hand_to_hand_deal_declined_changes_nothing() -> None:
    """seed 000: a deal needs the opponent's agreement ("Amy accepts")."""
    game = build(R, seat(C.PANAMA), seat(C.MARKET_OPEN), seat())
    hands = [list(s.hand) for s in game.seats]
    apply_all(game, "deal @1", "give panama", "want market-open", "decline")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert [s.hand for s in game.seats] == hands


def test_deal_for_a_card_the_partner_lacks_is_declined_automatically() -> None:
    """The partner cannot hand over a card it does not hold; the only answer is decline."""
    game = build(R, seat(C.PANAMA), seat(), seat())
    hands = [list(s.hand) for s in game.seats]
    apply_all(game, "deal @1", "give panama", "want market-open")
    assert (game.phase, game.to_act) == (Phase.TURN, 0)
    assert [s.hand for s in game.seats] == hands
    last = game.events[-1]
    assert last["action"] == "decline" and last.get("auto") is True


def test_at_most_three_deal_proposals_per_turn() -> None:
    """Platform limit (rules.py `max_deals_per_turn`): three proposals per turn, accepted or
    not; seed 000 allows "as many times as you want", bots must stop."""
    game = build(R, seat(C.PANAMA), seat(), seat())
    for _ in range(3):
        apply_all(game, "deal @1", "give panama", "want market-open")
    assert not [a for a in game.legal_actions() if a.startswith("deal")]
    assert_illegal(game, "deal @2")
    game.apply("discard panama")
    assert_illegal(game, "deal @1")


def test_deals_are_allowed_before_and_after_playing() -> None:
    """seed 000: "You can do this as many times as you want, before and/or after you have
    played a card"."""
    game = build(R, seat(C.PANAMA, C.MARKET_OPEN), seat(C.BUST), seat())
    assert "deal @1" in game.legal_actions()
    game.apply("play market-open")
    apply_all(game, "deal @1", "give panama", "want bust", "accept")
    assert C.BUST in game.seats[0].hand and C.PANAMA in game.seats[1].hand


def test_modern_deals_are_hand_to_hand_only() -> None:
    """seed 000 deals exchange a hand card for a hand card: no stash-to-stash deals."""
    game = build(
        R,
        seat(C.PANAMA, market=True, unprotected=[C.HOME_GROWN]),
        seat(C.BUST, market=True, unprotected=[C.COLOMBIA]),
        seat(),
    )
    game.apply("deal @1")
    assert_illegal(game, "give nothing")
    apply_all(game, "give panama", "want bust")
    assert game.phase is Phase.DEAL_ANSWER
    assert not [a for a in game.legal_actions() if a.startswith(("offer", "ask"))]


def test_deal_proposer_can_only_give_cards_in_hand() -> None:
    """seed 000: the exchange is "a card from your hand"."""
    game = build(R, seat(), seat(C.PANAMA), seat())
    game.apply("deal @1")
    assert_illegal(game, "give panama")


# ---------------------------------------------------------------------------- End of the hand


def test_the_player_who_draws_the_last_card_finishes_the_turn_then_the_hand_ends() -> None:
    """seed 000: "If a player takes the last card from the GRASS STACK, he/she plays his/her
    turn normally, and the hand ends after that"."""
    game = build(
        R,
        seat(C.PANAMA, market=True),
        seat(market=True, unprotected=[C.COLOMBIA]),
        seat(),
        stack=[C.MEXICO],
        stack_len=1,
    )
    assert game.stack == [] and C.MEXICO in game.seats[0].hand
    assert (game.phase, game.to_act, game.hand_scores) == (Phase.TURN, 0, [])
    game.apply("play panama")
    assert game.hand_scores == []
    game.apply("end")
    assert len(game.hand_scores) == 1
    scores = game.hand_scores[0]
    assert [s.at_risk for s in scores] == [50_000, 25_000, 0]
    assert [s.best_held for s in scores] == [5_000, 0, 0]
    assert game.hand_no == 2


def test_turn_passes_left_while_the_stack_lasts() -> None:
    """seed 000: "the others follow in clockwise fashion until the end of the hand"."""
    game = build(R, seat(), seat(), seat(), stack_len=3)
    for expected in (1, 2):
        pass_turn(game)
        assert game.to_act == expected
        assert len(game.seats[expected].hand) == 7
    assert game.hand_scores == []


# ---------------------------------------------------------------------------- Illegal actions


@pytest.mark.parametrize(
    "action", ["", "play", "end", "play nonsense", "discard panama", "deal @0", "deal @5", 7]
)
def test_an_illegal_action_raises_and_changes_nothing(action: object) -> None:
    """An action not among the legal ones raises IllegalAction and leaves the game as it was."""
    game = build(R, seat(C.SOLD_OUT), seat(market=True), seat())
    before = snapshot(game)
    with pytest.raises(IllegalAction) as raised:
        game.apply(action)  # type: ignore[arg-type]
    assert snapshot(game) == before
    assert "legal actions are" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_an_illegal_action_inside_a_pass_round_changes_nothing() -> None:
    """A player cannot pass a card it does not hold."""
    game = build(R, seat(C.SOLD_OUT, C.BUST), seat(), seat())
    game.apply("play sold-out @1")
    assert_illegal(game, "pass panama")
    assert_illegal(game, "end")
