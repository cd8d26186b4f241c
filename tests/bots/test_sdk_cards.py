"""The SDK's card facts (`bots.sdk.cards`, `bots.sdk.actions`) are the engine's, restated.

They are plain dictionaries over the cards' texts so that a bot's start does not import the
engine (issue 34 found such copies drifting with no test to tie them): these tests tie each
one to `engine.cards` and the rulesets' decks, so a new or changed card fails here first.
"""

from __future__ import annotations

from bots.sdk import actions, cards
from engine.cards import FAMILY, INFO, Card, Family
from engine.rules import RULESETS


def _of(family: Family) -> set[str]:
    return {card.value for card in Card if FAMILY[card] is family}


def test_the_card_list_is_the_engines_in_its_order() -> None:
    assert tuple(card.value for card in Card) == actions.CARDS
    assert tuple(card.value for card in Card if FAMILY[card] is Family.PEDDLE) == actions.PEDDLES


def test_each_family_and_value_is_the_engines() -> None:
    assert {c.value: INFO[c].value for c in Card if FAMILY[c] is Family.PEDDLE} == cards.PEDDLE
    assert {
        c.value: INFO[c].value for c in Card if FAMILY[c] is Family.PROTECTED
    } == cards.PROTECTED
    assert set(cards.FINE) == _of(Family.PARANOIA)
    assert set(cards.HEAT_ON) == _of(Family.HEAT_ON)
    assert {
        c.value: (INFO[c].cancels or "") for c in Card if FAMILY[c] is Family.HEAT_OFF
    } == cards.HEAT_OFF
    assert set(cards.NIRVANA) == _of(Family.NIRVANA)
    assert {cards.STEAL} == _of(Family.STEAL)


def test_the_deck_bounds_cover_both_editions() -> None:
    """`actions.DECK_MAX` bounds the Protected groups of the action space: the most copies of
    each peddle in either edition's deck."""
    most: dict[str, int] = {}
    for ruleset in RULESETS.values():
        for card, count in ruleset.deck:
            if FAMILY[card] is Family.PEDDLE:
                most[card.value] = max(most.get(card.value, 0), count)
    assert most == actions.DECK_MAX
