"""The flow of a hand: the deal (or the Give me five draft), turns, skips and extra turns, and
the scoring at the end.

These functions move a `Game` (`engine/game.py`) through its table, `game.table`, and log
through `game._emit`; card effects (`engine/effects.py`) and deals (`engine/deals.py`) call
them to end or resume a turn. Rule ids (R-..., D-...) refer to engine/RULES.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.cards import ORDER, Card, distinct
from engine.events import (
    DealtEvent,
    DrawEvent,
    ExtraTurnEvent,
    HandEndEvent,
    HandEvent,
    ResultEvent,
    SkipEvent,
)
from engine.rules import learning_stage
from engine.scoring import HandTally, add_to_totals, finishing_ranks, score_hand
from engine.state import Phase

if TYPE_CHECKING:
    from engine.game import Game, Moves


def hand_deck(game: Game, hand_no: int) -> list[Card]:
    """This hand's deck, unshuffled: the whole deck but in learning hands 1-3."""
    stage = learning_stage(game.variants, hand_no)
    removed = stage.removed if stage else frozenset()
    deck: list[Card] = []
    for card, count in game.ruleset.deck:
        if card not in removed:
            deck.extend([card] * count)
    return deck


def start_hand(game: Game) -> None:
    t = game.table
    n = game.n
    t.hand_no += 1
    # R-SETUP-DEALER / D-DEALER: random first dealer, then the deal passes left.
    if t.hand_no == 1:
        t.dealer = t.rng.randrange(n)
    else:
        t.dealer = (t.dealer + 1) % n
    for seat in t.seats:
        seat.clear_table()
    t.wasted = []
    deck = hand_deck(game, t.hand_no)
    t.out_of_play = []
    if learning_stage(game.variants, t.hand_no):
        full: list[Card] = []
        for card, count in game.ruleset.deck:
            full.extend([card] * count)
        for card in deck:
            full.remove(card)
        t.out_of_play = full
    t.rng.shuffle(deck)
    t.stack = deck
    t.hand_ended = False
    t.hand_start_event = len(t.events)
    hand: HandEvent = {
        "e": "hand",
        "hand": t.hand_no,
        "dealer": t.dealer,
        "deck": len(deck),
        "deals": game.deals_allowed(),
    }
    game._emit(hand)
    order = [(t.dealer + k) % n for k in range(1, n + 1)]
    dealt: list[list[Card]] = [[] for _ in range(n)]
    for _ in range(game.ruleset.hand_size):
        for s in order:
            dealt[s].append(t.stack.pop())
    for s in order:
        event: DealtEvent = {"e": "dealt", "seat": s, "secret": {"cards": dealt[s][:]}, "see": [s]}
        game._emit(event)
    if game.variants.give_me_five:
        t.packets = dealt
        t.kept = [[] for _ in range(n)]
        draft_round(game)
    else:
        for s in range(n):
            t.seats[s].hand = dealt[s]
        start_turn(game, (t.dealer + 1) % n)


# ---------------------------------------------------------------------- Give me five


def draft_round(game: Game) -> None:
    """R-VAR-FIVE: every seat keeps one card of its packet, then the packets move on."""
    t = game.table
    if not any(t.packets):
        for s in range(game.n):
            t.seats[s].hand = t.kept[s]
        t.packets = []
        t.kept = []
        start_turn(game, (t.dealer + 1) % game.n)
        return
    t.queue = [(t.dealer + k) % game.n for k in range(1, game.n + 1)]
    t.passes = {}
    next_in_queue(game, Phase.DRAFT)


def draft_moves(game: Game) -> Moves:
    t = game.table
    return {KEEP[card]: (keep, (card,)) for card in distinct(t.packets[t.to_act])}


def keep(game: Game, card: Card) -> None:
    t = game.table
    t.passes[t.to_act] = card
    if t.queue:
        t.to_act = t.queue.pop(0)
        return
    # R-VAR-FIVE: the draft goes left on odd hands and right on even hands.
    step = 1 if t.hand_no % 2 == 1 else -1
    n = game.n
    new_packets: list[list[Card]] = [[] for _ in range(n)]
    for s in range(n):
        t.packets[s].remove(t.passes[s])
        t.kept[s].append(t.passes[s])
        new_packets[(s + step) % n] = t.packets[s]
    t.packets = new_packets
    draft_round(game)


# ---------------------------------------------------------------------- turns


def next_in_queue(game: Game, phase: Phase) -> None:
    """The next seat of a round (draft, passes, surrenders) decides."""
    t = game.table
    t.phase = phase
    t.to_act = t.queue.pop(0)


def start_turn(game: Game, seat: int) -> None:
    game._flush()
    t = game.table
    seats = t.seats
    # R-SKIP / D-SKIP-NO-DRAW: a skipped turn is lost whole, without a draw.
    while seats[seat].skips > 0:
        seats[seat].skips -= 1
        skip: SkipEvent = {"e": "skip", "seat": seat}
        game._emit(skip)
        seat = (seat + 1) % game.n
    t.active = seat
    t.to_act = seat
    t.phase = Phase.TURN
    t.played = False
    t.swapped = False
    t.deals_made = 0
    card = t.stack.pop()
    seats[seat].hand.append(card)
    seats[seat].notes.append(("drew", card))
    # R-END-STACK: whoever draws the last card plays the turn out, then the hand ends.
    t.last_turn = not t.stack
    draw: DrawEvent = {"e": "draw", "seat": seat, "secret": {"card": card}, "see": [seat]}
    game._emit(draw)


def back_to_turn(game: Game) -> None:
    """The active player decides again (after a deal, a pass round, ...)."""
    t = game.table
    t.phase = Phase.TURN
    t.to_act = t.active


def end(game: Game) -> None:
    """The `end` action."""
    end_turn(game)


def end_turn(game: Game) -> None:
    t = game.table
    seat = t.seats[t.active]
    if t.hand_ended or t.last_turn:
        end_hand(game)
    elif seat.extra_turns > 0:
        seat.extra_turns -= 1
        extra: ExtraTurnEvent = {"e": "extra-turn", "seat": t.active}
        game._emit(extra)
        start_turn(game, t.active)
    else:
        start_turn(game, (t.active + 1) % game.n)


def end_hand(game: Game) -> None:
    game._flush()
    t = game.table
    rules = game.ruleset
    tallies = [HandTally(seat.protected_value, seat.at_risk, tuple(seat.hand)) for seat in t.seats]
    scores = score_hand(rules, tallies)
    t.hand_scores.append(scores)
    t.totals = list(add_to_totals(rules, t.totals, scores))
    event: HandEndEvent = {
        "e": "hand-end",
        "hand": t.hand_no,
        "held": [sorted(tally.held, key=ORDER.__getitem__) for tally in tallies],
        "scores": [
            {
                "protected": s.protected,
                "at_risk": s.at_risk,
                "banker": s.banker,
                "fines": s.fines,
                "best_held": s.best_held,
                "bonus": s.bonus,
                "score": s.score,
            }
            for s in scores
        ],
        "totals": list(t.totals),
    }
    game._emit(event)
    reached = max(t.totals) >= rules.target
    if reached or t.hand_no >= rules.max_hands:
        ranks = finishing_ranks(t.totals)
        result: ResultEvent = {
            "e": "result",
            "hands": t.hand_no,
            "totals": list(t.totals),
            "hand_scores": [[s.score for s in hand] for hand in t.hand_scores],
            "ranks": list(ranks),
            "winners": [s for s, rank in enumerate(ranks) if rank == 1],
            "reason": "target" if reached else "hand-limit",
        }
        t.result = dict(result)
        game._emit(result)
        t.phase = Phase.OVER
        t.to_act = -1
    else:
        start_hand(game)


# ---------------------------------------------------------------------- helpers


KEEP = {card: f"keep {card}" for card in Card}
