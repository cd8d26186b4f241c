"""The seeds' worked examples, through the public API.

Modern (seed 000, "Example of two turns" and the scoring that follows it) and classic (seed 002,
"Cards held by each player at close of sample hand" and its scoring table). RULES.md explains the
two places where the printed figures disagree with their own arithmetic.
"""

from __future__ import annotations

from engine import CLASSIC, MODERN, Card, HandTally, add_to_totals, score_hand
from engine.position import Position, SeatSetup, game_from_position

C = Card


def test_modern_scoring_example_john_janis_bob_amy() -> None:
    tallies = [
        # John: protected $75,000, at risk $5,000, nothing to pay for in hand.
        HandTally(75_000, 5_000, (C.A_BREEZE_TO_FLY, C.CHARGES_DROPPED, C.PAY_FINE)),
        # Janis: protected $30,000, holds the Banker and three $5,000 peddles.
        HandTally(30_000, 0, (C.BANKER, C.HOME_GROWN, C.HOME_GROWN, C.MEXICO)),
        # Bob: $5,000 at risk, holds a $25,000 peddle and Utterly Wiped Out.
        HandTally(0, 5_000, (C.COLOMBIA, C.UTTERLY_WIPED_OUT)),
        # Amy: $175,000 at risk, holds a $5,000 peddle and Double Crossed.
        HandTally(0, 175_000, (C.MEXICO, C.DOUBLE_CROSSED)),
    ]
    scores = score_hand(MODERN, tallies)
    assert [s.banker for s in scores] == [-5_000, 15_000, -5_000, -5_000]
    assert [s.fines for s in scores] == [0, 0, 100_000, 50_000]
    assert [s.best_held for s in scores] == [0, 5_000, 25_000, 5_000]
    assert [s.net for s in scores] == [75_000, 40_000, -125_000, 115_000]
    assert [s.bonus for s in scores] == [0, 0, 0, 25_000]
    assert [s.score for s in scores] == [75_000, 40_000, -125_000, 140_000]
    # First hand: Bob's negative result is not recorded; he stays at $0.
    assert add_to_totals(MODERN, [0, 0, 0, 0], scores) == (75_000, 40_000, 0, 140_000)
    # In a later hand the loss comes off his earlier profit, but never below zero.
    assert add_to_totals(MODERN, [0, 0, 200_000, 0], scores)[2] == 75_000
    assert add_to_totals(MODERN, [0, 0, 100_000, 0], scores)[2] == 0


def test_classic_sample_hand_scoring_table() -> None:
    tallies = [
        # Player 1 ended the hand; holds the Banker and a $5,000 peddle.
        HandTally(
            0,
            160_000,
            (C.MARKET_OPEN, C.STONEHIGH, C.HOME_GROWN, C.BANKER, C.IMMUNITY, C.PAY_FINE),
        ),
        # Player 2: $65,000 tabled, $50,000 of it protected (rebuilt: skim $3,000).
        HandTally(
            50_000,
            15_000,
            (
                C.MARKET_CLOSE,
                C.LUST_CONQUERS_ALL,
                C.SOLD_OUT,
                C.STEAL,
                C.A_BREEZE_TO_FLY,
                C.HEARSAY_EVIDENCE,
            ),
        ),
        # Player 3: $165,000 tabled, none protected.
        HandTally(
            0,
            165_000,
            (C.CHARGES_DROPPED, C.DOUBLE_CROSSED, C.PANAMA, C.HOME_GROWN, C.COLOMBIA, C.PAY_FINE),
        ),
        # Player 4: $75,000 tabled, $50,000 protected.
        HandTally(
            50_000,
            25_000,
            (
                C.UTTERLY_WIPED_OUT,
                C.GRAB_A_SNACK,
                C.A_BREEZE_TO_FLY,
                C.STONEHIGH,
                C.MARKET_OPEN,
                C.JAMAICA,
            ),
        ),
    ]
    scores = score_hand(CLASSIC, tallies)
    assert [s.banker for s in scores] == [41_000, -3_000, -33_000, -5_000]
    assert [s.fines for s in scores] == [0, 25_000, 50_000, 100_000]
    assert [s.best_held for s in scores] == [5_000, 0, 50_000, 25_000]
    assert [s.net for s in scores] == [196_000, 37_000, 32_000, -55_000]
    assert [s.score for s in scores] == [221_000, 37_000, 32_000, -55_000]
    # Classic totals may go negative ("you can end up very much in the hole").
    assert add_to_totals(CLASSIC, [0, 0, 0, 0], scores) == (221_000, 37_000, 32_000, -55_000)


def two_turns_position() -> Position:
    """The table just before John's turn in seed 000's "Example of two turns"."""
    john = SeatSetup(
        name="John",
        hand=(
            C.FELONY,
            C.LUST_CONQUERS_ALL,
            C.IMMUNITY,
            C.A_BREEZE_TO_FLY,
            C.CHARGES_DROPPED,
            C.PAY_FINE,
        ),
        market_open=True,
        unprotected=(C.DR_FEELGOOD, C.PANAMA),
        protected=((C.GRAB_A_SNACK, (C.COLOMBIA,)),),
    )
    janis = SeatSetup(
        name="Janis",
        hand=(C.SOLD_OUT, C.UTTERLY_WIPED_OUT, C.BANKER, C.HOME_GROWN, C.HOME_GROWN, C.MEXICO),
        market_open=True,
        protected=((C.LUST_CONQUERS_ALL, (C.COLOMBIA, C.MEXICO)),),
    )
    bob = SeatSetup(
        name="Bob",
        hand=(C.PANAMA, C.JAMAICA, C.COLOMBIA, C.IMMUNITY, C.STEAL, C.STONEHIGH),
    )
    amy = SeatSetup(
        name="Amy",
        hand=(
            C.MARKET_OPEN,
            C.MARKET_CLOSE,
            C.DOUBLE_CROSSED,
            C.MEXICO,
            C.A_BREEZE_TO_FLY,
            C.CHARGES_DROPPED,
        ),
        market_open=True,
        unprotected=(C.HOME_GROWN, C.HOME_GROWN),
    )
    stack = (
        C.CHARGES_DROPPED,  # John, turn 1
        C.A_BREEZE_TO_FLY,  # Janis, turn 1
        C.IMMUNITY,  # Bob, turn 1: no Market Open, tough luck
        C.PAY_FINE,  # Amy, turn 1
        C.HEARSAY_EVIDENCE,  # John, turn 2
        C.HEARSAY_EVIDENCE,  # Janis, turn 2: "she just got a Heat Off Felony card"
        C.STONEHIGH,  # Bob, turn 2
        C.STEAL,  # Amy, turn 2
        C.IMMUNITY,
        C.PAY_FINE,
    )
    return Position(seats=(john, janis, bob, amy), stack=stack, active=0)


TWO_TURNS = [
    # John slows Janis down with Heat On - Felony; no interesting swap.
    (0, "play felony @1"),
    (0, "end"),
    # Janis is blocked and all her peddles are protected; she plays Sold Out (on Bob, who has
    # nothing tabled, so no peddle is lost) and everyone passes a card left: she gets rid of
    # Utterly Wiped Out by giving it to Bob.
    (1, "play sold-out @2"),
    (1, "pass utterly-wiped-out"),
    (2, "pass stonehigh"),
    (3, "pass a-breeze-to-fly"),
    (0, "pass immunity"),
    (1, "end"),
    # Bob trades a Panama for Amy's Market Open and plays it at once.
    (2, "deal @3"),
    (2, "give panama"),
    (2, "want market-open"),
    (3, "accept"),
    (2, "play market-open"),
    (2, "end"),
    # Amy plays the Panama she just got and swaps her Home Grown for John's Dr. Feelgood.
    (3, "play panama"),
    (3, "swap home-grown @0 dr-feelgood"),
    (3, "end"),
    # John protects his Panama with Lust Conquers All.
    (0, "play lust-conquers-all panama"),
    (0, "end"),
    # Janis cancels the Felony with Hearsay Evidence.
    (1, "play hearsay-evidence"),
    (1, "end"),
    # Bob peddles a Jamaica.
    (2, "play jamaica"),
    (2, "end"),
    # Amy swaps her Home Grown for Bob's Jamaica and closes the market.
    (3, "swap home-grown @2 jamaica"),
    (3, "play market-close"),
]


def test_example_of_two_turns_plays_out_move_by_move() -> None:
    game = game_from_position(two_turns_position(), "modern", seed=1)
    for seat, action in TWO_TURNS:
        assert game.to_act == seat, (action, game.decision)
        assert action in game.legal_actions(), (action, game.legal_actions())
        game.apply(action)
    assert game.hand_no == 2 or game.over  # the hand is over and scored
    scores = game.hand_scores[0]
    assert [s.protected for s in scores] == [75_000, 30_000, 0, 0]
    assert [s.at_risk for s in scores] == [5_000, 0, 5_000, 175_000]
    assert [s.score for s in scores] == [75_000, 40_000, -125_000, 140_000]
    assert game.totals == [75_000, 40_000, 0, 140_000]


def test_two_turns_janis_cannot_swap_while_all_her_peddles_are_protected() -> None:
    game = game_from_position(two_turns_position(), "modern", seed=1)
    game.apply("play felony @1")
    game.apply("end")
    assert game.to_act == 1
    legal = game.legal_actions()
    assert not [a for a in legal if a.startswith("swap")]
    # Heat blocks her peddles: no "play home-grown" while the Felony is on her pile.
    assert "play home-grown" not in legal
    assert "play sold-out @2" in legal
