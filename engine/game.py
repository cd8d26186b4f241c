"""The flow of a game of Grass: hands, turns, decisions and the effect of every card.

A `Game` is always waiting on exactly one `Decision` (a seat, a phase and the legal actions as
text) until it is over. `apply(text)` checks the text against the legal actions *before*
touching anything, so a bad action never half-applies. A decision with a single legal action is
taken by the engine itself (logged with `auto`), which keeps bots from being asked about
nothing.

Every rule is cited in `engine/RULES.md`; rule numbers (R-...) and decisions (D-...) in comments
refer to it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from engine.cards import FAMILY, INFO, ORDER, VALUE, Card, Family
from engine.protection import protection_choices
from engine.rules import (
    ENGINE_VERSION,
    LearningStage,
    Pick,
    Ruleset,
    Variants,
    learning_stage,
    resolve_ruleset,
    ruleset_limits,
)
from engine.scoring import HandScore, HandTally, add_to_totals, finishing_ranks, score_hand
from engine.state import Seat

__all__ = ["ENGINE_VERSION", "Decision", "Event", "Game", "IllegalAction", "Phase"]

Event = dict[str, Any]


class Phase(StrEnum):
    """What kind of choice a decision is."""

    DRAFT = "draft"
    """Give me five: keep one card of the packet, pass the rest on."""
    TURN = "turn"
    """The active player: play or discard one card, deal, swap, end the turn."""
    DEAL_GIVE = "deal-give"
    """The proposer names the hand card offered (announces it, in Hidden deals)."""
    DEAL_WANT = "deal-want"
    """The proposer names the card wanted in return."""
    DEAL_STASH = "deal-stash"
    """Classic: the proposer adds tabled peddles to either side of the deal."""
    DEAL_ANSWER = "deal-answer"
    """The partner accepts or declines."""
    DEAL_HAND_OVER = "deal-hand-over"
    """Hidden deals: the proposer picks the card that really travels, face down."""
    WASTE = "waste"
    """Sold Out (modern): the victim picks the unprotected peddle to lose."""
    SURRENDER = "surrender"
    """Stonehigh (modern): each opponent picks the unprotected peddle to give."""
    PASS = "pass"
    """After paranoia: the card passed, face down, to the left."""
    OVER = "over"
    """The game has ended; nothing more to decide."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A point where one seat must choose one of `actions` (their text encodings)."""

    seat: int
    phase: Phase
    actions: tuple[str, ...]


class IllegalAction(ValueError):
    """An action that is not among the legal ones. The game is unchanged."""

    def __init__(self, action: object, decision: Decision) -> None:
        shown = ", ".join(decision.actions[:40])
        more = len(decision.actions) - 40
        if more > 0:
            shown += f", ... ({more} more)"
        super().__init__(
            f"illegal action {action!r} for seat {decision.seat} at decision "
            f"'{decision.phase}'; legal actions are: {shown}"
        )
        self.action = action
        self.decision = decision


@dataclass(slots=True)
class DealDraft:
    """A deal being put together by the active player (R-DEAL-*)."""

    partner: int
    hand_part: bool = False
    give: Card | None = None
    """The proposer's hand card: the real one, or the announced one in Hidden deals."""
    want: Card | None = None
    offer: list[Card] = field(default_factory=list)
    ask: list[Card] = field(default_factory=list)
    answer: Card | None = None
    """Hidden deals: the card the partner really hands over."""

    def public(self) -> dict[str, Any]:
        return {
            "partner": self.partner,
            "give": self.give,
            "want": self.want,
            "offer": list(self.offer),
            "ask": list(self.ask),
        }


Move = tuple[Callable[..., None], tuple[Any, ...]]

_SECRET_PHASES = frozenset({Phase.DRAFT, Phase.PASS, Phase.DEAL_HAND_OVER})
_WANT = {card: f"want {card}" for card in Card}
"""Action texts built once: a deal's `want` step lists every kind in the deck."""


@lru_cache(maxsize=64)
def _deck_kinds(ruleset: Ruleset, stage: LearningStage | None) -> tuple[Card, ...]:
    removed = stage.removed if stage else frozenset()
    return tuple(card for card, _ in ruleset.deck if card not in removed)


def _distinct(cards: Sequence[Card]) -> list[Card]:
    return sorted(set(cards), key=ORDER.__getitem__)


def _pick(cards: Sequence[Card], pick: Pick) -> Card:
    """SMALLEST or LARGEST by value; equal values resolve in canonical card order."""
    if pick is Pick.SMALLEST:
        return min(cards, key=lambda c: (VALUE[c], ORDER[c]))
    return max(cards, key=lambda c: (VALUE[c], -ORDER[c]))


class Game:
    """One game of Grass from the first deal to the final result."""

    def __init__(
        self,
        ruleset: Ruleset,
        variants: Variants,
        seed: int,
        names: Sequence[str],
        *,
        start: bool = True,
    ) -> None:
        if not 2 <= len(names) <= 6:
            raise ValueError(f"Grass is for 2 to 6 players, not {len(names)}")
        limits = ruleset_limits(ruleset)
        if resolve_ruleset(ruleset.name, variants, limits, ruleset.engine) != ruleset:
            # A log names its ruleset and limits; anything else could not be replayed.
            raise ValueError(
                f"ruleset {ruleset.name!r} differs from the named edition in more than "
                "its platform limits and target; use resolve_ruleset()"
            )
        self.ruleset = ruleset
        self.variants = variants
        self.seed = seed
        self.names = tuple(names)
        self.n = len(names)
        self.rng = random.Random(seed)
        """Deals only (first dealer, shuffles): the same seed deals the same cards in every
        hand whatever the players do, which duplicate tournaments rely on."""
        self.play_rng = random.Random(f"play:{seed}")
        """Chance during play (Lucky or not's takes), kept apart from the deals."""
        self.seats = [Seat(name) for name in names]
        self.stack: list[Card] = []
        """The Grass Stack; the top card is the last element."""
        self.wasted: list[Card] = []
        self.out_of_play: list[Card] = []
        """Learning hands: cards removed from this hand's deck."""
        self.hand_no = 0
        self.dealer = -1
        self.active = -1
        self.totals: list[int] = [0] * self.n
        self.hand_scores: list[tuple[HandScore, ...]] = []
        self.events: list[Event] = []
        self.hand_start_event = 0
        # Turn state.
        self.played = False
        self.swapped = False
        self.deals_made = 0
        self.last_turn = False
        self.hand_ended = False
        self.deal: DealDraft | None = None
        # Pending multi-seat steps.
        self.queue: list[int] = []
        """Seats still to decide in a PASS, SURRENDER or DRAFT round, in order."""
        self.passes: dict[int, Card] = {}
        self.initiator = -1
        """Who played the card that started the current PASS or SURRENDER round."""
        self.nirvana: Card | None = None
        self.packets: list[list[Card]] = []
        self.kept: list[list[Card]] = []
        self.phase = Phase.OVER
        self.to_act = -1
        self.moves: dict[str, Move] = {}
        self.result: dict[str, Any] | None = None
        if start:
            self._emit(
                {
                    "e": "header",
                    "format": "grass-log/1",
                    "engine": ruleset.engine,
                    "ruleset": ruleset.name,
                    "limits": ruleset_limits(ruleset),
                    "variants": variants.as_dict(),
                    "seed": seed,
                    "players": list(self.names),
                }
            )
            self._start_hand()
            self._settle()

    # ------------------------------------------------------------------ public API

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def decision(self) -> Decision:
        return Decision(self.to_act, self.phase, tuple(self.moves))

    def legal_actions(self) -> list[str]:
        return list(self.moves)

    def apply(self, action: str) -> None:
        """Take one legal action for the seat to act; raises IllegalAction and changes
        nothing if `action` is not one of `legal_actions()`."""
        move = self.moves.get(action) if isinstance(action, str) else None
        if move is None:
            raise IllegalAction(action, self.decision)
        self._take(action, move, auto=False)
        self._settle()

    def clone(self) -> Game:
        """An independent copy (for search in bots). Shares nothing mutable."""
        other = Game.__new__(Game)
        for name, value in self.__dict__.items():
            other.__dict__[name] = value
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.play_rng = random.Random()
        other.play_rng.setstate(self.play_rng.getstate())
        other.seats = [s.clone() for s in self.seats]
        other.stack = list(self.stack)
        other.wasted = list(self.wasted)
        other.out_of_play = list(self.out_of_play)
        other.totals = list(self.totals)
        other.hand_scores = list(self.hand_scores)
        other.events = list(self.events)
        other.queue = list(self.queue)
        other.passes = dict(self.passes)
        other.packets = [list(p) for p in self.packets]
        other.kept = [list(k) for k in self.kept]
        if self.deal is not None:
            d = self.deal
            other.deal = DealDraft(
                d.partner, d.hand_part, d.give, d.want, list(d.offer), list(d.ask), d.answer
            )
        other._refresh()
        return other

    def all_cards(self) -> list[Card]:
        """Every card of this hand's deck, wherever it lies (for accounting checks)."""
        cards = [*self.stack, *self.wasted]
        for seat in self.seats:
            cards.extend(seat.hand)
            cards.extend(seat.table_cards())
        for packet in self.packets:
            cards.extend(packet)
        for kept in self.kept:
            cards.extend(kept)
        return cards

    # ------------------------------------------------------------------ internals: plumbing

    def _emit(self, event: Event) -> None:
        self.events.append(event)

    def _take(self, action: str, move: Move, *, auto: bool) -> None:
        event: Event = {"e": "act", "seat": self.to_act, "phase": self.phase.value}
        event["action"] = action
        if auto:
            event["auto"] = True
        if self._secret_phase():
            event["see"] = [self.to_act]
        self._emit(event)
        fn, args = move
        fn(*args)

    def _secret_phase(self) -> bool:
        phase = self.phase
        if phase in _SECRET_PHASES:
            return True
        return phase is Phase.DEAL_ANSWER and self.variants.hidden_deals

    def _settle(self) -> None:
        """Build the next decision; take it at once while only one action is legal."""
        self._refresh()
        while self.phase is not Phase.OVER and len(self.moves) == 1:
            action, move = next(iter(self.moves.items()))
            self._take(action, move, auto=True)
            self._refresh()

    def _refresh(self) -> None:
        moves: dict[str, Move] = {}
        phase = self.phase
        if phase is Phase.TURN:
            self._turn_moves(moves)
        elif phase is Phase.PASS:
            seat = self.seats[self.to_act]
            for card in _distinct(seat.hand):
                moves[f"pass {card}"] = (self._do_pass, (card,))
        elif phase is Phase.DRAFT:
            for card in _distinct(self.packets[self.to_act]):
                moves[f"keep {card}"] = (self._do_keep, (card,))
        elif phase is Phase.WASTE:
            for card in _distinct(self.seats[self.to_act].unprotected):
                moves[f"waste {card}"] = (self._do_waste, (card,))
        elif phase is Phase.SURRENDER:
            for card in _distinct(self.seats[self.to_act].unprotected):
                moves[f"surrender {card}"] = (self._do_surrender, (card,))
        elif phase is not Phase.OVER:
            self._deal_moves(moves)
        self.moves = moves

    def _others(self, seat: int) -> list[int]:
        """Every other seat, clockwise from the left-hand neighbour."""
        return [(seat + k) % self.n for k in range(1, self.n)]

    def _deals_allowed(self) -> bool:
        stage = learning_stage(self.variants, self.hand_no)
        return stage is None or stage.deals

    def _may_deal(self, seat: Seat) -> bool:
        """Whether the active player may deal (propose deals, swap) now."""
        rules = self.ruleset
        if rules.deals_before_play_only and self.played:
            return False  # D-CLASSIC-DEAL-TIMING: while holding seven cards only.
        if rules.wiped_out_stops_dealing and seat.wiped_out:
            return False  # D-UWO-DEAL: not before another Market Open.
        return self._deals_allowed()

    def _hand_deck(self) -> list[Card]:
        stage = learning_stage(self.variants, self.hand_no)
        removed = stage.removed if stage else frozenset()
        deck: list[Card] = []
        for card, count in self.ruleset.deck:
            if card not in removed:
                deck.extend([card] * count)
        return deck

    def _deck_kinds(self) -> tuple[Card, ...]:
        """Kinds of card in this hand's deck (all of them but in learning hands 1-3)."""
        return _deck_kinds(self.ruleset, learning_stage(self.variants, self.hand_no))

    # ------------------------------------------------------------------ hands and turns

    def _start_hand(self) -> None:
        self.hand_no += 1
        # R-SETUP-DEALER / D-DEALER: random first dealer, then the deal passes left.
        if self.hand_no == 1:
            self.dealer = self.rng.randrange(self.n)
        else:
            self.dealer = (self.dealer + 1) % self.n
        for seat in self.seats:
            seat.clear_table()
        self.wasted = []
        deck = self._hand_deck()
        stage = learning_stage(self.variants, self.hand_no)
        self.out_of_play = []
        if stage:
            full: list[Card] = []
            for card, count in self.ruleset.deck:
                full.extend([card] * count)
            for card in deck:
                full.remove(card)
            self.out_of_play = full
        self.rng.shuffle(deck)
        self.stack = deck
        self.hand_ended = False
        self.hand_start_event = len(self.events)
        self._emit(
            {
                "e": "hand",
                "hand": self.hand_no,
                "dealer": self.dealer,
                "deck": len(deck),
                "deals": self._deals_allowed(),
            }
        )
        order = [(self.dealer + k) % self.n for k in range(1, self.n + 1)]
        dealt: list[list[Card]] = [[] for _ in range(self.n)]
        for _ in range(self.ruleset.hand_size):
            for s in order:
                dealt[s].append(self.stack.pop())
        for s in order:
            self._emit({"e": "dealt", "seat": s, "secret": {"cards": list(dealt[s])}, "see": [s]})
        if self.variants.give_me_five:
            self.packets = dealt
            self.kept = [[] for _ in range(self.n)]
            self._draft_round()
        else:
            for s in range(self.n):
                self.seats[s].hand = dealt[s]
            self._start_turn((self.dealer + 1) % self.n)

    def _draft_round(self) -> None:
        if not any(self.packets):
            for s in range(self.n):
                self.seats[s].hand = self.kept[s]
            self.packets = []
            self.kept = []
            self._start_turn((self.dealer + 1) % self.n)
            return
        self.queue = [(self.dealer + k) % self.n for k in range(1, self.n + 1)]
        self.passes = {}
        self._next_in_queue(Phase.DRAFT)

    def _next_in_queue(self, phase: Phase) -> None:
        self.phase = phase
        self.to_act = self.queue.pop(0)

    def _do_keep(self, card: Card) -> None:
        self.passes[self.to_act] = card
        if self.queue:
            self.to_act = self.queue.pop(0)
            return
        # R-VAR-FIVE: the draft goes left on odd hands and right on even hands.
        step = 1 if self.hand_no % 2 == 1 else -1
        new_packets: list[list[Card]] = [[] for _ in range(self.n)]
        for s in range(self.n):
            self.packets[s].remove(self.passes[s])
            self.kept[s].append(self.passes[s])
            new_packets[(s + step) % self.n] = self.packets[s]
        self.packets = new_packets
        self._draft_round()

    def _start_turn(self, seat: int) -> None:
        # R-SKIP / D-SKIP-NO-DRAW: a skipped turn is lost whole, without a draw.
        while self.seats[seat].skips > 0:
            self.seats[seat].skips -= 1
            self._emit({"e": "skip", "seat": seat})
            seat = (seat + 1) % self.n
        self.active = seat
        self.to_act = seat
        self.phase = Phase.TURN
        self.played = False
        self.swapped = False
        self.deals_made = 0
        card = self.stack.pop()
        self.seats[seat].hand.append(card)
        self.seats[seat].notes.append(("drew", card))
        # R-END-STACK: whoever draws the last card plays the turn out, then the hand ends.
        self.last_turn = not self.stack
        self._emit({"e": "draw", "seat": seat, "secret": {"card": card}, "see": [seat]})

    def _end_turn(self) -> None:
        seat = self.seats[self.active]
        if self.hand_ended or self.last_turn:
            self._end_hand()
        elif seat.extra_turns > 0:
            seat.extra_turns -= 1
            self._emit({"e": "extra-turn", "seat": self.active})
            self._start_turn(self.active)
        else:
            self._start_turn((self.active + 1) % self.n)

    def _end_hand(self) -> None:
        tallies = [
            HandTally(seat.protected_value, seat.at_risk, tuple(seat.hand)) for seat in self.seats
        ]
        scores = score_hand(self.ruleset, tallies)
        self.hand_scores.append(scores)
        self.totals = list(add_to_totals(self.ruleset, self.totals, scores))
        self._emit(
            {
                "e": "hand-end",
                "hand": self.hand_no,
                "held": [sorted(t.held, key=ORDER.__getitem__) for t in tallies],
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
                "totals": list(self.totals),
            }
        )
        reached = max(self.totals) >= self.ruleset.target
        if reached or self.hand_no >= self.ruleset.max_hands:
            ranks = finishing_ranks(self.totals)
            self.result = {
                "e": "result",
                "hands": self.hand_no,
                "totals": list(self.totals),
                "hand_scores": [[s.score for s in hand] for hand in self.hand_scores],
                "ranks": list(ranks),
                "winners": [s for s, rank in enumerate(ranks) if rank == 1],
                "reason": "target" if reached else "hand-limit",
            }
            self._emit(self.result)
            self.phase = Phase.OVER
            self.to_act = -1
        else:
            self._start_hand()

    # ------------------------------------------------------------------ the turn decision

    def _turn_moves(self, moves: dict[str, Move]) -> None:
        s = self.active
        seat = self.seats[s]
        rules = self.ruleset
        if not self.played:
            for card in _distinct(seat.hand):
                self._play_moves(s, seat, card, moves)
                if FAMILY[card] not in rules.undiscardable:
                    moves[f"discard {card}"] = (self._do_discard, (card,))
        if self._may_deal(seat):
            if self.deals_made < rules.max_deals_per_turn:
                for t in self._others(s):
                    moves[f"deal @{t}"] = (self._do_deal, (t,))
            if rules.forced_swap and not self.swapped and seat.unprotected:
                mine = _distinct(seat.unprotected)
                for t in self._others(s):
                    for theirs in _distinct(self.seats[t].unprotected):
                        for card in mine:
                            if card is not theirs:
                                moves[f"swap {card} @{t} {theirs}"] = (
                                    self._do_swap,
                                    (card, t, theirs),
                                )
        if self.played:
            moves["end"] = (self._do_end, ())

    def _play_moves(self, s: int, seat: Seat, card: Card, moves: dict[str, Move]) -> None:
        rules = self.ruleset
        family = FAMILY[card]
        if family is Family.PEDDLE:
            if seat.showing:
                moves[f"play {card}"] = (self._play_peddle, (card,))
        elif family is Family.MARKET_OPEN:
            if not seat.market_open:
                moves[f"play {card}"] = (self._play_market_open, (card,))
        elif family is Family.HEAT_ON:
            if rules.heat_on_blocked_by_own_heat and seat.heat:
                return
            for t in self._others(s):
                target = self.seats[t]
                if target.market_open and (rules.heat_stacks or not target.heat):
                    moves[f"play {card} @{t}"] = (self._play_heat_on, (card, t))
        elif family is Family.HEAT_OFF:
            if seat.heat and seat.heat[-1] is INFO[card].cancels:
                moves[f"play {card}"] = (self._play_heat_off, (card,))
        elif family is Family.PAY_FINE:
            if seat.heat and seat.tabled():
                if rules.pay_fine_pick is Pick.CHOOSE:
                    for peddle in _distinct(seat.unprotected):
                        moves[f"play {card} {peddle}"] = (self._play_pay_fine, (peddle, False))
                    protected = [c for _, group in seat.protected for c in group]
                    for peddle in _distinct(protected):
                        moves[f"play {card} {peddle}(p)"] = (self._play_pay_fine, (peddle, True))
                else:
                    moves[f"play {card}"] = (self._play_pay_fine, (None, False))
        elif family is Family.PROTECTED:
            if seat.showing and seat.unprotected:
                for group in protection_choices(seat.unprotected, VALUE[card]):
                    text = f"play {card} {'+'.join(group)}"
                    moves[text] = (self._play_protected, (card, group))
        elif family is Family.STEAL:
            if not seat.showing:
                return
            for t in self._others(s):
                target = self.seats[t]
                if not (target.market_open and target.unprotected):
                    continue
                if rules.steal_victim_must_be_clear and target.heat:
                    continue
                if rules.steal_pick is Pick.CHOOSE:
                    for peddle in _distinct(target.unprotected):
                        moves[f"play {card} @{t} {peddle}"] = (self._play_steal, (t, peddle))
                else:
                    moves[f"play {card} @{t}"] = (self._play_steal, (t, None))
        elif family is Family.NIRVANA:
            moves[f"play {card}"] = (self._play_nirvana, (card,))
        elif family is Family.PARANOIA:
            if rules.paranoia_on_opponent:
                for t in self._others(s):
                    moves[f"play {card} @{t}"] = (self._play_paranoia, (card, t))
            else:
                moves[f"play {card}"] = (self._play_paranoia, (card, s))
        elif family is Family.MARKET_CLOSE:
            if seat.showing:
                moves[f"play {card}"] = (self._play_market_close, (card,))
        # The Banker is never played: it works from the hand at scoring (R-BANKER).

    # ------------------------------------------------------------------ card effects

    def _from_hand(self, card: Card) -> Seat:
        seat = self.seats[self.active]
        seat.hand.remove(card)
        self.played = True
        return seat

    def _do_discard(self, card: Card) -> None:
        self._from_hand(card)
        self.wasted.append(card)

    def _play_market_open(self, card: Card) -> None:
        seat = self._from_hand(card)
        seat.market_open = True
        seat.wiped_out = False

    def _play_peddle(self, card: Card) -> None:
        self._from_hand(card).unprotected.append(card)

    def _play_heat_on(self, card: Card, target: int) -> None:
        self._from_hand(card)
        self.seats[target].heat.append(card)

    def _play_heat_off(self, card: Card) -> None:
        seat = self._from_hand(card)
        seat.hassle_under.extend((seat.heat.pop(), card))

    def _play_pay_fine(self, peddle: Card | None, protected: bool) -> None:
        seat = self._from_hand(Card.PAY_FINE)
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
        self.wasted.append(peddle)
        self._emit({"e": "waste", "seat": self.active, "cards": [peddle]})

    def _play_protected(self, card: Card, group: tuple[Card, ...]) -> None:
        seat = self._from_hand(card)
        for peddle in group:
            seat.unprotected.remove(peddle)
        seat.protected.append((card, list(group)))

    def _play_steal(self, target: int, peddle: Card | None) -> None:
        seat = self._from_hand(Card.STEAL)
        victim = self.seats[target]
        if self.ruleset.steal_card_stays:
            # D-CLASSIC-STEAL: under the victim's top card, which goes back on top.
            victim.hassle_under.append(Card.STEAL)
        else:
            self.wasted.append(Card.STEAL)
        if peddle is None:
            peddle = _pick(victim.unprotected, self.ruleset.steal_pick)
        victim.unprotected.remove(peddle)
        seat.unprotected.append(peddle)
        self._emit({"e": "move", "from": target, "to": self.active, "card": peddle})

    def _play_nirvana(self, card: Card) -> None:
        seat = self._from_hand(card)
        self.wasted.append(card)
        rules = self.ruleset
        if rules.nirvana_clears_heat and seat.heat:
            seat.hassle_under.extend(seat.heat)
            seat.heat.clear()
        if rules.nirvana_extra_turn:
            seat.extra_turns += 1
        pick = rules.euphoria_pick if card is Card.EUPHORIA else rules.stonehigh_pick
        givers = [t for t in self._others(self.active) if self.seats[t].unprotected]
        if pick is Pick.CHOOSE:
            self.queue = givers
            self.initiator = self.active
            self._next_surrender()
            return
        for t in givers:
            peddle = _pick(self.seats[t].unprotected, pick)
            self._give_peddle(t, self.active, peddle)

    def _give_peddle(self, giver: int, taker: int, peddle: Card) -> None:
        self.seats[giver].unprotected.remove(peddle)
        self.seats[taker].unprotected.append(peddle)
        self._emit({"e": "move", "from": giver, "to": taker, "card": peddle})

    def _next_surrender(self) -> None:
        if self.queue:
            self._next_in_queue(Phase.SURRENDER)
        else:
            self._back_to_turn()

    def _do_surrender(self, card: Card) -> None:
        self._give_peddle(self.to_act, self.initiator, card)
        self._next_surrender()

    def _play_paranoia(self, card: Card, victim: int) -> None:
        self._from_hand(card)
        self.wasted.append(card)
        effect = self.ruleset.paranoia_effect(card)
        target = self.seats[victim]
        target.skips += effect.turns_lost
        self.initiator = self.active
        if effect.wastes_hassle_pile:
            lost = target.hassle_cards()
            target.market_open = False
            target.wiped_out = True
            target.heat.clear()
            target.hassle_under.clear()
            self.wasted.extend(lost)
        if effect.peddles is Pick.CHOOSE:
            if target.unprotected:
                self.queue = [victim]
                self._next_in_queue(Phase.WASTE)
                return
        elif target.unprotected:
            if effect.peddles is Pick.ALL:
                lost_peddles = list(target.unprotected)
            else:
                lost_peddles = [_pick(target.unprotected, effect.peddles)]
            for peddle in lost_peddles:
                target.unprotected.remove(peddle)
            self.wasted.extend(lost_peddles)
            self._emit({"e": "waste", "seat": victim, "cards": lost_peddles})
        self._start_passing()

    def _do_waste(self, card: Card) -> None:
        seat = self.seats[self.to_act]
        seat.unprotected.remove(card)
        self.wasted.append(card)
        self._emit({"e": "waste", "seat": self.to_act, "cards": [card]})
        self._start_passing()

    def _start_passing(self) -> None:
        """R-PARANOIA-PASS: everyone, from the player of the card clockwise, passes one card
        left; Lucky or not: takes one at random from the right instead."""
        order = [(self.initiator + k) % self.n for k in range(self.n)]
        if self.variants.lucky_or_not:
            for taker in order:
                giver = (taker - 1) % self.n
                hand = self.seats[giver].hand
                card = hand.pop(self.play_rng.randrange(len(hand)))
                self.seats[taker].hand.append(card)
                self.seats[taker].notes.append(("took", card, str(giver)))
                self.seats[giver].notes.append(("lost", card, str(taker)))
                self._emit(
                    {
                        "e": "take",
                        "seat": taker,
                        "from": giver,
                        "secret": {"card": card},
                        "see": [taker, giver],
                    }
                )
            self._back_to_turn()
            return
        self.queue = order
        self.passes = {}
        self._next_in_queue(Phase.PASS)

    def _do_pass(self, card: Card) -> None:
        self.passes[self.to_act] = card
        if self.queue:
            self.to_act = self.queue.pop(0)
            return
        for giver, passed in self.passes.items():
            self.seats[giver].hand.remove(passed)
        for giver, passed in self.passes.items():
            taker = (giver + 1) % self.n
            self.seats[taker].hand.append(passed)
            self.seats[giver].notes.append(("passed", passed, str(taker)))
            self.seats[taker].notes.append(("received", passed, str(giver)))
            self._emit(
                {
                    "e": "pass",
                    "seat": giver,
                    "to": taker,
                    "secret": {"card": passed},
                    "see": [giver, taker],
                }
            )
        self.passes = {}
        self._back_to_turn()

    def _play_market_close(self, card: Card) -> None:
        seat = self._from_hand(card)
        seat.hassle_under.append(card)
        self.hand_ended = True
        self._end_turn()

    def _back_to_turn(self) -> None:
        self.phase = Phase.TURN
        self.to_act = self.active

    def _do_end(self) -> None:
        self._end_turn()

    def _do_swap(self, mine: Card, target: int, theirs: Card) -> None:
        seat = self.seats[self.active]
        other = self.seats[target]
        seat.unprotected.remove(mine)
        other.unprotected.remove(theirs)
        seat.unprotected.append(theirs)
        other.unprotected.append(mine)
        self.swapped = True

    # ------------------------------------------------------------------ deals

    def _do_deal(self, partner: int) -> None:
        self.deal = DealDraft(partner)
        self.deals_made += 1
        self.phase = Phase.DEAL_GIVE

    def _stash_possible(self, deal: DealDraft, *, both: bool) -> bool:
        """Whether tabled peddles can enter this deal: on both sides for a stash-only deal,
        on either side for a combination with hand cards (a one-way payment, D-STASH-DEALS)."""
        if not self.ruleset.stash_deals:
            return False
        mine = bool(self.seats[self.active].unprotected)
        theirs = bool(self.seats[deal.partner].unprotected)
        return (mine and theirs) if both else (mine or theirs)

    def _deal_moves(self, moves: dict[str, Move]) -> None:
        deal = self.deal
        assert deal is not None
        me = self.seats[self.active]
        partner = self.seats[deal.partner]
        hidden = self.variants.hidden_deals
        phase = self.phase
        if phase is Phase.DEAL_GIVE:
            word = "announce" if hidden else "give"
            cards = self._deck_kinds() if hidden else _distinct(me.hand)
            for card in cards:
                moves[f"{word} {card}"] = (self._deal_give, (card,))
            if self._stash_possible(deal, both=True):
                moves[f"{word} nothing"] = (self._deal_give, (None,))
            moves["withdraw"] = (self._deal_withdraw, ())
        elif phase is Phase.DEAL_WANT:
            want = self._deal_want
            for card in self._deck_kinds():
                moves[_WANT[card]] = (want, (card,))
            moves["withdraw"] = (self._deal_withdraw, ())
        elif phase is Phase.DEAL_STASH:
            for card in _distinct(self._remaining(me.unprotected, deal.offer)):
                moves[f"offer {card}"] = (self._deal_offer, (card,))
            for card in _distinct(self._remaining(partner.unprotected, deal.ask)):
                moves[f"ask {card}"] = (self._deal_ask, (card,))
            if deal.hand_part or (deal.offer and deal.ask):
                moves["done"] = (self._deal_propose, ())
            moves["withdraw"] = (self._deal_withdraw, ())
        elif phase is Phase.DEAL_ANSWER:
            if deal.hand_part and hidden:
                for card in _distinct(partner.hand):
                    moves[f"accept {card}"] = (self._deal_accept, (card,))
            elif not deal.hand_part or deal.want in partner.hand:
                moves["accept"] = (self._deal_accept, (None,))
            moves["decline"] = (self._deal_decline, ())
        elif phase is Phase.DEAL_HAND_OVER:
            for card in _distinct(me.hand):
                moves[f"give {card}"] = (self._deal_hand_over, (card,))

    @staticmethod
    def _remaining(cards: list[Card], used: list[Card]) -> list[Card]:
        left = list(cards)
        for card in used:
            left.remove(card)
        return left

    def _deal_give(self, card: Card | None) -> None:
        deal = self.deal
        assert deal is not None
        deal.give = card
        deal.hand_part = card is not None
        if deal.hand_part:
            self.phase = Phase.DEAL_WANT
        else:
            self.phase = Phase.DEAL_STASH

    def _deal_want(self, card: Card) -> None:
        assert self.deal is not None
        self.deal.want = card
        if self._stash_possible(self.deal, both=False):
            self.phase = Phase.DEAL_STASH
        else:
            self._deal_propose()

    def _deal_offer(self, card: Card) -> None:
        assert self.deal is not None
        self.deal.offer.append(card)

    def _deal_ask(self, card: Card) -> None:
        assert self.deal is not None
        self.deal.ask.append(card)

    def _deal_propose(self) -> None:
        assert self.deal is not None
        self._emit({"e": "offer", "seat": self.active, **self.deal.public()})
        self.phase = Phase.DEAL_ANSWER
        self.to_act = self.deal.partner

    def _deal_withdraw(self) -> None:
        """The proposer backs out before proposing; the attempt still counts (D-DEAL-LIMIT)."""
        self.deal = None
        self._back_to_turn()

    def _deal_decline(self) -> None:
        self.deal = None
        self._back_to_turn()

    def _deal_accept(self, card: Card | None) -> None:
        deal = self.deal
        assert deal is not None
        deal.answer = card
        if deal.hand_part and self.variants.hidden_deals:
            self.phase = Phase.DEAL_HAND_OVER
            self.to_act = self.active
            return
        self._deal_complete(deal.give, deal.want)

    def _deal_hand_over(self, card: Card) -> None:
        assert self.deal is not None
        self._deal_complete(card, self.deal.answer)

    def _deal_complete(self, mine: Card | None, theirs: Card | None) -> None:
        deal = self.deal
        assert deal is not None
        me = self.seats[self.active]
        partner = self.seats[deal.partner]
        event: Event = {"e": "exchange", "seat": self.active, "partner": deal.partner}
        if deal.hand_part:
            assert mine is not None and theirs is not None
            me.hand.remove(mine)
            partner.hand.remove(theirs)
            me.hand.append(theirs)
            partner.hand.append(mine)
            if self.variants.hidden_deals:
                me.notes.append(("deal-gave", mine, str(deal.partner)))
                me.notes.append(("deal-got", theirs, str(deal.partner)))
                partner.notes.append(("deal-gave", theirs, str(self.active)))
                partner.notes.append(("deal-got", mine, str(self.active)))
                event["secret"] = {"gave": mine, "got": theirs}
                event["see"] = [self.active, deal.partner]
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
        self._emit(event)
        self.deal = None
        self._back_to_turn()
