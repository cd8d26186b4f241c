"""Card effects: which cards the active player may play and what each one does, family by
family, with the rounds some of them start (paranoia's passes, Stonehigh's surrenders, Sold
Out's waste).

Each family has a function that lists its legal plays for one card kind (`PLAYS`) next to the
functions that carry them out. A move is `(effect, args)`; `Game.apply` calls
`effect(game, *args)`. Moves that recur are built once (`_plain`, `_at`) so that listing the
legal actions of a turn costs little more than choosing among them. Rule ids refer to
engine/RULES.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.cards import FAMILY, INFO, ORDER, VALUE, Card, Family, distinct
from engine.events import MoveEvent, PassEvent, TakeEvent, WasteEvent
from engine.hands import back_to_turn, end_turn, next_in_queue
from engine.protection import protection_choices
from engine.rules import MAX_PLAYERS, Pick
from engine.state import Phase, Seat

if TYPE_CHECKING:
    from engine.game import Effect, Game, Moves


def _plain(effect: Callable[..., None]) -> dict[Card, tuple[str, Effect]]:
    """`play CARD` for every kind, calling `effect(game, card)`."""
    return {card: (f"play {card}", (effect, (card,))) for card in Card}


def _at(effect: Callable[..., None]) -> dict[Card, tuple[tuple[str, Effect], ...]]:
    """`play CARD @SEAT` for every kind and seat, calling `effect(game, card, seat)`."""
    return {
        card: tuple((f"play {card} @{t}", (effect, (card, t))) for t in range(MAX_PLAYERS))
        for card in Card
    }


def card_moves(game: Game, moves: Moves) -> None:
    """Every legal play and discard of the active player (who has not played yet)."""
    t = game.table
    s = t.active
    seat = t.seats[s]
    undiscardable = game.ruleset.undiscardable
    for card in distinct(seat.hand):
        family = FAMILY[card]
        PLAYS[family](game, s, seat, card, moves)
        if family not in undiscardable:
            text, move = DISCARD[card]
            moves[text] = move


def from_hand(game: Game, card: Card) -> Seat:
    """The active player's card leaves the hand: the card of the turn is played."""
    t = game.table
    seat = t.seats[t.active]
    seat.hand.remove(card)
    t.played = True
    return seat


def discard(game: Game, card: Card) -> None:
    from_hand(game, card)
    game.table.wasted.append(card)


DISCARD = {card: (f"discard {card}", (discard, (card,))) for card in Card}


# ---------------------------------------------------------------------- Market Open


def market_open_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if not seat.market_open:
        text, move = _MARKET_OPEN[card]
        moves[text] = move


def play_market_open(game: Game, card: Card) -> None:
    seat = from_hand(game, card)
    seat.market_open = True
    seat.wiped_out = False


_MARKET_OPEN = _plain(play_market_open)


# ---------------------------------------------------------------------- Peddle


def peddle_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if seat.market_open and not seat.heat:
        text, move = _PEDDLE[card]
        moves[text] = move


def play_peddle(game: Game, card: Card) -> None:
    from_hand(game, card).unprotected.append(card)


_PEDDLE = _plain(play_peddle)


# ---------------------------------------------------------------------- Heat On, Heat Off, Pay Fine


def heat_on_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    rules = game.ruleset
    if rules.heat_on_blocked_by_own_heat and seat.heat:
        return
    seats = game.table.seats
    plays = _HEAT_ON[card]
    for t in game.others[s]:
        target = seats[t]
        if target.market_open and (rules.heat_stacks or not target.heat):
            text, move = plays[t]
            moves[text] = move


def play_heat_on(game: Game, card: Card, target: int) -> None:
    from_hand(game, card)
    game.table.seats[target].heat.append(card)


_HEAT_ON = _at(play_heat_on)


def heat_off_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if seat.heat and seat.heat[-1] is INFO[card].cancels:
        text, move = _HEAT_OFF[card]
        moves[text] = move


def play_heat_off(game: Game, card: Card) -> None:
    seat = from_hand(game, card)
    seat.hassle_under.extend((seat.heat.pop(), card))


_HEAT_OFF = _plain(play_heat_off)


def pay_fine_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if not (seat.heat and seat.tabled()):
        return
    if game.ruleset.pay_fine_pick is Pick.CHOOSE:
        for peddle in distinct(seat.unprotected):
            moves[f"play {card} {peddle}"] = (play_pay_fine, (peddle, False))
        protected = [c for _, group in seat.protected for c in group]
        for peddle in distinct(protected):
            moves[f"play {card} {peddle}(p)"] = (play_pay_fine, (peddle, True))
    else:
        moves[f"play {card}"] = (play_pay_fine, (None, False))


def play_pay_fine(game: Game, peddle: Card | None, protected: bool) -> None:
    seat = from_hand(game, Card.PAY_FINE)
    seat.hassle_under.extend((seat.heat.pop(), Card.PAY_FINE))
    if peddle is None:
        # Classic: the smallest tabled peddle, protected or not; at equal value an
        # unprotected one goes first, keeping the protection (D-PAYFINE).
        covered = [c for _, group in seat.protected for c in group]
        options = [(VALUE[c], 0, ORDER[c], c) for c in seat.unprotected]
        options += [(VALUE[c], 1, ORDER[c], c) for c in covered]
        _, rank, _, peddle = min(options)
        protected = rank == 1
    if protected:
        for _, group in seat.protected:
            if peddle in group:
                group.remove(peddle)
                break
    else:
        seat.unprotected.remove(peddle)
    t = game.table
    t.wasted.append(peddle)
    event: WasteEvent = {"e": "waste", "seat": t.active, "cards": [peddle]}
    game._emit(event)


# ---------------------------------------------------------------------- Protected


def protected_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if seat.market_open and not seat.heat and seat.unprotected:
        for group in protection_choices(seat.unprotected, VALUE[card]):
            moves[f"play {card} {'+'.join(group)}"] = (play_protected, (card, group))


def play_protected(game: Game, card: Card, group: tuple[Card, ...]) -> None:
    seat = from_hand(game, card)
    for peddle in group:
        seat.unprotected.remove(peddle)
    seat.protected.append((card, list(group)))


# ---------------------------------------------------------------------- Steal Your Neighbour's Pot


def steal_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if not seat.showing:
        return
    rules = game.ruleset
    seats = game.table.seats
    for t in game.others[s]:
        target = seats[t]
        if not (target.market_open and target.unprotected):
            continue
        if rules.steal_victim_must_be_clear and target.heat:
            continue
        if rules.steal_pick is Pick.CHOOSE:
            for peddle in distinct(target.unprotected):
                moves[f"play {card} @{t} {peddle}"] = (play_steal, (t, peddle))
        else:
            moves[f"play {card} @{t}"] = (play_steal, (t, None))


def play_steal(game: Game, target: int, peddle: Card | None) -> None:
    seat = from_hand(game, Card.STEAL)
    t = game.table
    victim = t.seats[target]
    if game.ruleset.steal_card_stays:
        # D-CLASSIC-STEAL: under the victim's top card, which goes back on top.
        victim.hassle_under.append(Card.STEAL)
    else:
        t.wasted.append(Card.STEAL)
    if peddle is None:
        peddle = pick(victim.unprotected, game.ruleset.steal_pick)
    victim.unprotected.remove(peddle)
    seat.unprotected.append(peddle)
    event: MoveEvent = {"e": "move", "from": target, "to": t.active, "card": peddle}
    game._emit(event)


# ---------------------------------------------------------------------- Nirvana


def nirvana_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    text, move = _NIRVANA[card]
    moves[text] = move


def play_nirvana(game: Game, card: Card) -> None:
    seat = from_hand(game, card)
    t = game.table
    t.wasted.append(card)
    rules = game.ruleset
    if rules.nirvana_clears_heat and seat.heat:
        seat.hassle_under.extend(seat.heat)
        seat.heat.clear()
    if rules.nirvana_extra_turn:
        seat.extra_turns += 1
    how = rules.euphoria_pick if card is Card.EUPHORIA else rules.stonehigh_pick
    givers = [s for s in game.others[t.active] if t.seats[s].unprotected]
    if how is Pick.CHOOSE:
        t.queue = givers
        t.initiator = t.active
        next_surrender(game)
        return
    for giver in givers:
        give_peddle(game, giver, t.active, pick(t.seats[giver].unprotected, how))


_NIRVANA = _plain(play_nirvana)


def give_peddle(game: Game, giver: int, taker: int, peddle: Card) -> None:
    seats = game.table.seats
    seats[giver].unprotected.remove(peddle)
    seats[taker].unprotected.append(peddle)
    event: MoveEvent = {"e": "move", "from": giver, "to": taker, "card": peddle}
    game._emit(event)


def next_surrender(game: Game) -> None:
    if game.table.queue:
        next_in_queue(game, Phase.SURRENDER)
    else:
        back_to_turn(game)


def surrender_moves(game: Game) -> Moves:
    t = game.table
    return {
        SURRENDER[card]: (surrender, (card,)) for card in distinct(t.seats[t.to_act].unprotected)
    }


def surrender(game: Game, card: Card) -> None:
    t = game.table
    give_peddle(game, t.to_act, t.initiator, card)
    next_surrender(game)


SURRENDER = {card: f"surrender {card}" for card in Card}


# ---------------------------------------------------------------------- Paranoia


def paranoia_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if game.ruleset.paranoia_on_opponent:
        plays = _PARANOIA[card]
        for t in game.others[s]:
            text, move = plays[t]
            moves[text] = move
    else:
        moves[f"play {card}"] = (play_paranoia, (card, s))


def play_paranoia(game: Game, card: Card, victim: int) -> None:
    from_hand(game, card)
    t = game.table
    t.wasted.append(card)
    effect = game.ruleset.paranoia_effect(card)
    target = t.seats[victim]
    target.skips += effect.turns_lost
    t.initiator = t.active
    if effect.wastes_hassle_pile:
        lost = target.hassle_cards()
        target.market_open = False
        target.wiped_out = True
        target.heat.clear()
        target.hassle_under.clear()
        t.wasted.extend(lost)
    if effect.peddles is Pick.CHOOSE:
        if target.unprotected:
            t.queue = [victim]
            next_in_queue(game, Phase.WASTE)
            return
    elif target.unprotected:
        if effect.peddles is Pick.ALL:
            lost_peddles = list(target.unprotected)
        else:
            lost_peddles = [pick(target.unprotected, effect.peddles)]
        for peddle in lost_peddles:
            target.unprotected.remove(peddle)
        t.wasted.extend(lost_peddles)
        event: WasteEvent = {"e": "waste", "seat": victim, "cards": lost_peddles}
        game._emit(event)
    start_passing(game)


_PARANOIA = _at(play_paranoia)


def waste_moves(game: Game) -> Moves:
    t = game.table
    return {WASTE[card]: (waste, (card,)) for card in distinct(t.seats[t.to_act].unprotected)}


def waste(game: Game, card: Card) -> None:
    t = game.table
    t.seats[t.to_act].unprotected.remove(card)
    t.wasted.append(card)
    event: WasteEvent = {"e": "waste", "seat": t.to_act, "cards": [card]}
    game._emit(event)
    start_passing(game)


WASTE = {card: f"waste {card}" for card in Card}


def start_passing(game: Game) -> None:
    """R-PARANOIA-PASS: everyone, from the player of the card clockwise, passes one card
    left; Lucky or not: takes one at random from the right instead."""
    t = game.table
    n = game.n
    order = [(t.initiator + k) % n for k in range(n)]
    if game.variants.lucky_or_not:
        for taker in order:
            giver = (taker - 1) % n
            hand = t.seats[giver].hand
            card = hand.pop(t.play_rng.randrange(len(hand)))
            t.seats[taker].hand.append(card)
            t.seats[taker].notes.append(("took", card, str(giver)))
            t.seats[giver].notes.append(("lost", card, str(taker)))
            event: TakeEvent = {
                "e": "take",
                "seat": taker,
                "from": giver,
                "secret": {"card": card},
                "see": [taker, giver],
            }
            game._emit(event)
        back_to_turn(game)
        return
    t.queue = order
    t.passes = {}
    next_in_queue(game, Phase.PASS)


def pass_moves(game: Game) -> Moves:
    t = game.table
    return {PASS[card]: (pass_card, (card,)) for card in distinct(t.seats[t.to_act].hand)}


def pass_card(game: Game, card: Card) -> None:
    """D-PASS-ORDER: chosen one seat at a time, resolved together."""
    t = game.table
    t.passes[t.to_act] = card
    if t.queue:
        t.to_act = t.queue.pop(0)
        return
    seats = t.seats
    for giver, passed in t.passes.items():
        seats[giver].hand.remove(passed)
    for giver, passed in t.passes.items():
        taker = (giver + 1) % game.n
        seats[taker].hand.append(passed)
        seats[giver].notes.append(("passed", passed, str(taker)))
        seats[taker].notes.append(("received", passed, str(giver)))
        event: PassEvent = {
            "e": "pass",
            "seat": giver,
            "to": taker,
            "secret": {"card": passed},
            "see": [giver, taker],
        }
        game._emit(event)
    t.passes = {}
    back_to_turn(game)


PASS = {card: f"pass {card}" for card in Card}


# ---------------------------------------------------------------------- Market Close


def market_close_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    if seat.market_open and not seat.heat:
        text, move = _MARKET_CLOSE[card]
        moves[text] = move


def play_market_close(game: Game, card: Card) -> None:
    seat = from_hand(game, card)
    seat.hassle_under.append(card)
    game.table.hand_ended = True
    end_turn(game)


_MARKET_CLOSE = _plain(play_market_close)


def banker_plays(game: Game, s: int, seat: Seat, card: Card, moves: Moves) -> None:
    """The Banker is never played: it works from the hand at scoring (R-BANKER)."""


PLAYS: dict[Family, Callable[[Game, int, Seat, Card, Moves], None]] = {
    Family.MARKET_OPEN: market_open_plays,
    Family.PEDDLE: peddle_plays,
    Family.HEAT_ON: heat_on_plays,
    Family.HEAT_OFF: heat_off_plays,
    Family.PAY_FINE: pay_fine_plays,
    Family.PROTECTED: protected_plays,
    Family.STEAL: steal_plays,
    Family.NIRVANA: nirvana_plays,
    Family.PARANOIA: paranoia_plays,
    Family.BANKER: banker_plays,
    Family.MARKET_CLOSE: market_close_plays,
}
"""For each family, the function that lists one card kind's legal plays."""


def pick(cards: list[Card], how: Pick) -> Card:
    """SMALLEST or LARGEST by value; equal values resolve in canonical card order."""
    if how is Pick.SMALLEST:
        return min(cards, key=_smallest)
    return max(cards, key=_largest)


def _smallest(card: Card) -> tuple[int, int]:
    return VALUE[card], ORDER[card]


def _largest(card: Card) -> tuple[int, int]:
    return VALUE[card], -ORDER[card]
