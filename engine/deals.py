"""Deals: negotiation between the active player and one opponent (R-DEAL-*), step by step
(D-DEAL-FLOW), and the modern forced swap of tabled peddles (R-DEAL-SWAP).

A deal is drafted in `game.table.deal` (`DealDraft`): the proposer names the card given
(`give`, or `announce` in Hidden deals), the card wanted (`want`), in classic any tabled peddles
(`offer`, `ask`, `done`), then the partner answers. Rule ids refer to engine/RULES.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.cards import Card, distinct
from engine.events import ExchangeEvent, OfferEvent
from engine.hands import back_to_turn
from engine.rules import MAX_PLAYERS
from engine.state import DealDraft, Phase

if TYPE_CHECKING:
    from engine.game import Effect, Game, Moves


# ---------------------------------------------------------------------- at the turn


def turn_moves(game: Game, moves: Moves) -> None:
    """`deal @SEAT` and `swap ...` for the active player, when it may deal now."""
    t = game.table
    rules = game.ruleset
    s = t.active
    seat = t.seats[s]
    if rules.deals_before_play_only and t.played:
        return  # D-CLASSIC-DEAL-TIMING: while holding seven cards only.
    if rules.wiped_out_stops_dealing and seat.wiped_out:
        return  # D-UWO-DEAL: not before another Market Open.
    if not game.deals_allowed():
        return
    others = game.others[s]
    if t.deals_made < rules.max_deals_per_turn:
        for partner in others:
            text, move = _DEAL[partner]
            moves[text] = move
    if rules.forced_swap and not t.swapped and seat.unprotected:
        mine = distinct(seat.unprotected)
        for other in others:
            for theirs in distinct(t.seats[other].unprotected):
                for card in mine:
                    if card is not theirs:
                        moves[f"swap {card} @{other} {theirs}"] = (swap, (card, other, theirs))


def start_deal(game: Game, partner: int) -> None:
    t = game.table
    t.deal = DealDraft(partner)
    t.deals_made += 1
    t.phase = Phase.DEAL_GIVE


_DEAL = tuple((f"deal @{t}", (start_deal, (t,))) for t in range(MAX_PLAYERS))


def swap(game: Game, mine: Card, target: int, theirs: Card) -> None:
    """R-DEAL-SWAP: once per turn, without asking."""
    t = game.table
    seat = t.seats[t.active]
    other = t.seats[target]
    seat.unprotected.remove(mine)
    other.unprotected.remove(theirs)
    seat.unprotected.append(theirs)
    other.unprotected.append(mine)
    t.swapped = True


# ---------------------------------------------------------------------- the deal's steps


def _draft(game: Game) -> DealDraft:
    deal = game.table.deal
    assert deal is not None
    return deal


def stash_possible(game: Game, deal: DealDraft, *, both: bool) -> bool:
    """Whether tabled peddles can enter this deal: on both sides for a stash-only deal, on
    either side for a combination with hand cards (a one-way payment, D-STASH-DEALS)."""
    if not game.ruleset.stash_deals:
        return False
    t = game.table
    mine = bool(t.seats[t.active].unprotected)
    theirs = bool(t.seats[deal.partner].unprotected)
    return (mine and theirs) if both else (mine or theirs)


def give_moves(game: Game) -> Moves:
    t = game.table
    deal = _draft(game)
    moves: Moves = {}
    cards: Sequence[Card]
    if game.variants.hidden_deals:
        texts = ANNOUNCE
        cards = game.deck_kinds()
    else:
        texts = GIVE
        cards = distinct(t.seats[t.active].hand)
    for card in cards:
        moves[texts[card]] = (give, (card,))
    if stash_possible(game, deal, both=True):
        moves[texts[None]] = (give, (None,))
    moves["withdraw"] = WITHDRAW
    return moves


def give(game: Game, card: Card | None) -> None:
    t = game.table
    deal = _draft(game)
    deal.give = card
    deal.hand_part = card is not None
    t.phase = Phase.DEAL_WANT if deal.hand_part else Phase.DEAL_STASH


def want_moves(game: Game) -> Moves:
    """`want CARD` for every kind in this hand's deck (R-DEAL-ANY). The same moves serve every
    deal with the same deck, so they are built once (the game never changes a moves dict)."""
    kinds = game.deck_kinds()
    moves = _WANT_MOVES.get(kinds)
    if moves is None:
        moves = {WANT[card]: (want, (card,)) for card in kinds}
        moves["withdraw"] = WITHDRAW
        _WANT_MOVES[kinds] = moves
    return moves


_WANT_MOVES: dict[tuple[Card, ...], Moves] = {}


def want(game: Game, card: Card) -> None:
    deal = _draft(game)
    deal.want = card
    if stash_possible(game, deal, both=False):
        game.table.phase = Phase.DEAL_STASH
    else:
        propose(game)


def stash_moves(game: Game) -> Moves:
    t = game.table
    deal = _draft(game)
    moves: Moves = {}
    for card in distinct(_remaining(t.seats[t.active].unprotected, deal.offer)):
        moves[f"offer {card}"] = (offer, (card,))
    for card in distinct(_remaining(t.seats[deal.partner].unprotected, deal.ask)):
        moves[f"ask {card}"] = (ask, (card,))
    if deal.hand_part or (deal.offer and deal.ask):
        moves["done"] = (propose, ())
    moves["withdraw"] = WITHDRAW
    return moves


def _remaining(cards: list[Card], used: list[Card]) -> list[Card]:
    left = list(cards)
    for card in used:
        left.remove(card)
    return left


def offer(game: Game, card: Card) -> None:
    _draft(game).offer.append(card)


def ask(game: Game, card: Card) -> None:
    _draft(game).ask.append(card)


def propose(game: Game) -> None:
    t = game.table
    deal = _draft(game)
    event: OfferEvent = {
        "e": "offer",
        "seat": t.active,
        "partner": deal.partner,
        "give": deal.give,
        "want": deal.want,
        "offer": list(deal.offer),
        "ask": list(deal.ask),
    }
    game._emit(event)
    t.phase = Phase.DEAL_ANSWER
    t.to_act = deal.partner


def withdraw(game: Game) -> None:
    """The proposer backs out before proposing; the attempt still counts (D-DEAL-LIMIT)."""
    game.table.deal = None
    back_to_turn(game)


WITHDRAW: Effect = (withdraw, ())


def answer_moves(game: Game) -> Moves:
    t = game.table
    deal = _draft(game)
    partner = t.seats[deal.partner]
    moves: Moves = {}
    if deal.hand_part and game.variants.hidden_deals:
        for card in distinct(partner.hand):
            moves[ACCEPT[card]] = (accept, (card,))
    elif not deal.hand_part or deal.want in partner.hand:
        moves["accept"] = ACCEPT_MOVE
    moves["decline"] = DECLINE
    return moves


def accept(game: Game, card: Card | None) -> None:
    t = game.table
    deal = _draft(game)
    deal.answer = card
    if deal.hand_part and game.variants.hidden_deals:
        t.phase = Phase.DEAL_HAND_OVER
        t.to_act = t.active
        return
    complete(game, deal.give, deal.want)


ACCEPT_MOVE: Effect = (accept, (None,))


def decline(game: Game) -> None:
    game.table.deal = None
    back_to_turn(game)


DECLINE: Effect = (decline, ())


def hand_over_moves(game: Game) -> Moves:
    t = game.table
    return {GIVE[card]: (hand_over, (card,)) for card in distinct(t.seats[t.active].hand)}


def hand_over(game: Game, card: Card) -> None:
    """Hidden deals: the card the proposer really hands over."""
    complete(game, card, _draft(game).answer)


def complete(game: Game, mine: Card | None, theirs: Card | None) -> None:
    t = game.table
    deal = _draft(game)
    active = t.active
    me = t.seats[active]
    partner = t.seats[deal.partner]
    # Keys in log order: the hand cards (below) come before the tabled peddles.
    event: ExchangeEvent = {"e": "exchange", "seat": active, "partner": deal.partner}  # type: ignore[typeddict-item]
    if deal.hand_part:
        assert mine is not None and theirs is not None
        me.hand.remove(mine)
        partner.hand.remove(theirs)
        me.hand.append(theirs)
        partner.hand.append(mine)
        if game.variants.hidden_deals:
            me.notes.append(("deal-gave", mine, str(deal.partner)))
            me.notes.append(("deal-got", theirs, str(deal.partner)))
            partner.notes.append(("deal-gave", theirs, str(active)))
            partner.notes.append(("deal-got", mine, str(active)))
            event["secret"] = {"gave": mine, "got": theirs}
            event["see"] = [active, deal.partner]
        else:
            event["gave"] = mine
            event["got"] = theirs
    for card in deal.offer:
        me.unprotected.remove(card)
        partner.unprotected.append(card)
    for card in deal.ask:
        partner.unprotected.remove(card)
        me.unprotected.append(card)
    event["offer"] = list(deal.offer)
    event["ask"] = list(deal.ask)
    game._emit(event)
    t.deal = None
    back_to_turn(game)


GIVE: dict[Card | None, str] = {card: f"give {card}" for card in Card} | {None: "give nothing"}
ANNOUNCE: dict[Card | None, str] = {card: f"announce {card}" for card in Card} | {
    None: "announce nothing"
}
WANT = {card: f"want {card}" for card in Card}
ACCEPT = {card: f"accept {card}" for card in Card}
