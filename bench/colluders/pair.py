"""A colluding pair for measuring the detector (issue 33): never an example, never on the site.

Both play the greedy example's policy (`bots.sdk.greedy`) except towards each other:

- **Handshake by play.** On its first turn of a hand that allows deals, each proposes to its
  left-hand neighbour three ordinary deals in a row: its least useful card for a Euphoria, for
  the Banker, for a Euphoria again. Anyone can see open offers; a colluder that sees another
  seat make exactly those proposals knows its friend for the rest of the game. An honest
  neighbour just declines (and a random one that accepts costs a card), so the handshake costs
  next to nothing when no friend is seated.
- **Feeder.** Accepts every deal its friend proposes, swaps its best tabled peddle for the
  friend's worst (the modern forced swap needs no consent), gives the friend its best peddle to a
  Stonehigh, passes it its best card after paranoia, and never attacks it.
- **Partner.** Asks the feeder for what it needs (a Market Open while closed, the Heat Off its
  heat needs, otherwise the biggest peddle), paying with its least useful card (a paranoia card
  if it holds one), up to the turn's deal limit; never attacks the feeder.

`share` is the subtlety knob: the chance each helping move is made (and each attack on the
friend withheld). 1.0 moves everything it can; 0.25 a quarter of it.
"""

from __future__ import annotations

import random
from typing import Any

from bots.protocol import Message
from bots.sdk import Bot, Deal, Observation, greedy
from bots.sdk.cards import FINE, HEAT_OFF, HEAT_ON, PEDDLE, STEAL, keep_value

SIGNAL = ("euphoria", "the-banker", "euphoria")
"""The wants of the handshake's proposals, in order, all in the seat's first turn of a hand
(the turn's deal limit is 3): a random bot makes them by chance about once in 20,000 turns."""

ATTACKING = HEAT_ON | set(FINE) | {STEAL}


class _View:
    """An observation with some legal actions taken out (what greedy may choose from)."""

    def __init__(self, obs: Observation, legal: list[str]) -> None:
        self.legal = legal
        self.phase = obs.phase
        self.seat = obs.seat
        self.seats = obs.seats
        self.totals = obs.totals
        self.hand = obs.hand


def _attacks(action: str, seat: int) -> bool:
    parts = action.split()
    return (
        len(parts) >= 3 and parts[0] == "play" and parts[1] in ATTACKING and parts[2] == f"@{seat}"
    )


class Colluder(Bot):
    """What both roles share: the handshake, and never attacking the friend."""

    name = "colluder"

    def __init__(self, share: float = 1.0) -> None:
        self.share = share
        self.rng = random.Random(0)
        self.friend: int | None = None
        self.signalled = False
        """Whether this seat has made the handshake this game (its friend must see it too)."""

    def on_game_start(self, hello: Message) -> None:
        self.rng = random.Random(hello.get("rng_seed", 0))
        self.friend = None
        self.signalled = False

    def helps(self) -> bool:
        return self.rng.random() < self.share

    def learn(self, obs: Observation) -> None:
        """Find the friend in this hand's open offers: the handshake's wants, exactly, as a
        seat's proposals in its first turn of the hand."""
        if self.friend is not None:
            return
        turns: dict[int, int] = {}
        wants: dict[int, list[str]] = {}
        for event in obs.history:
            seat = event.get("seat")
            if not isinstance(seat, int) or seat == obs.seat:
                continue
            if event.get("e") == "draw":
                turns[seat] = turns.get(seat, 0) + 1
            elif event.get("e") == "offer" and turns.get(seat) == 1:
                wants.setdefault(seat, []).append(str(event.get("want")))
        for seat, asked in wants.items():
            if tuple(asked) == SIGNAL:
                self.friend = seat
                return

    @staticmethod
    def this_turn(obs: Observation) -> tuple[int, list[dict[str, Any]]]:
        """(how many turns this seat has begun this hand, its offers since its last draw)."""
        turns = 0
        offers: list[dict[str, Any]] = []
        for event in obs.history:
            if event.get("e") == "draw" and event.get("seat") == obs.seat:
                turns += 1
                offers = []
            elif event.get("e") == "offer" and event.get("seat") == obs.seat:
                offers.append(event)
        return turns, offers

    def cheapest(self, obs: Observation) -> str:
        me = obs.me
        return min(obs.hand, key=lambda c: keep_value(c, me.market_open, bool(me.heat)))

    def propose_deal(self, obs: Observation) -> Deal | None:
        self.learn(obs)
        turns, offers = self.this_turn(obs)
        if (self.friend is None or not self.signalled) and turns == 1 and len(offers) < len(SIGNAL):
            self.signalled = len(offers) == len(SIGNAL) - 1
            left = (obs.seat + 1) % len(obs.seats)
            return Deal(left, self.cheapest(obs), SIGNAL[len(offers)])
        return self.ask(obs, offers)

    def ask(self, obs: Observation, offers: list[dict[str, Any]]) -> Deal | None:
        return None

    def answer_deal(self, obs: Observation) -> bool:
        self.learn(obs)
        deal = obs.deal or {}
        if deal.get("want") in SIGNAL:
            return False  # the handshake, or an honest ask for a card worth keeping
        return greedy.answer(obs, deal)

    def choose(self, obs: Observation) -> str:
        self.learn(obs)
        legal = list(obs.legal)
        if self.friend is not None and self.helps():
            spared = [a for a in legal if not _attacks(a, self.friend)]
            legal = spared or legal
        return self.turn(obs, legal)

    def turn(self, obs: Observation, legal: list[str]) -> str:
        return greedy.choose(_View(obs, legal))


class Feeder(Colluder):
    name = "feeder"

    def answer_deal(self, obs: Observation) -> bool:
        self.learn(obs)
        deal = obs.deal or {}
        if self.friend is not None and deal.get("partner") == self.friend and self.helps():
            return True
        return super().answer_deal(obs)

    def turn(self, obs: Observation, legal: list[str]) -> str:
        friend = self.friend
        if friend is None:
            return super().turn(obs, legal)
        if obs.phase == "surrender" and obs.active == friend and self.helps():
            return max(legal, key=lambda a: PEDDLE.get(a.split()[1], 0))
        if obs.phase == "pass" and (obs.seat + 1) % len(obs.seats) == friend and self.helps():
            me = obs.me
            return max(legal, key=lambda a: keep_value(a.split()[1], me.market_open, bool(me.heat)))
        if obs.phase == "turn" and "end" in legal:
            gifts = [a for a in legal if a.startswith("swap ") and a.split()[2] == f"@{friend}"]
            best = max(gifts, key=_swap_gift, default=None)
            if best is not None and _swap_gift(best) > 0 and self.helps():
                return best
            # Never swap up at the friend's cost.
            legal = [a for a in legal if a not in gifts] or legal
        return super().turn(obs, legal)


def _swap_gift(action: str) -> int:
    _, mine, _, theirs = action.split()
    return PEDDLE.get(mine, 0) - PEDDLE.get(theirs, 0)


class Partner(Colluder):
    name = "partner"

    def ask(self, obs: Observation, offers: list[dict[str, Any]]) -> Deal | None:
        friend = self.friend
        if friend is None:
            return None
        me = obs.me
        wants: list[str] = []
        if not me.market_open and "market-open" not in obs.hand:
            wants.append("market-open")
        for heat in me.heat:
            wants += [off for off, on in HEAT_OFF.items() if on == heat and off not in obs.hand]
        wants += ["dr-feelgood", "panama", "colombia", "jamaica"]
        tried = {o.get("want") for o in offers if o.get("partner") == friend}
        wants = [w for w in wants if w not in tried]
        if not wants:
            return None
        return Deal(friend, self.cheapest(obs), wants[0])


def make(role: str, share: float = 1.0) -> Any:
    """A colluder by role name (`feeder` or `partner`)."""
    return {"feeder": Feeder, "partner": Partner}[role](share)
