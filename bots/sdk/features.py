"""The observation vector: one seat's view of the game as a fixed list of numbers.

`encode(view)` reads only the observation the protocol sends a bot (`act.observation`, which is
`engine.observe(game, seat)`), so a policy trained on these numbers sees no more than a bot may
know, and the same function runs unchanged in the ladder's runtime at play time. It reads no
`history`: what a policy needs of the past is on the table (piles, heat, totals, the Wasted
pile, the seat's notes), so the vector is a function of the current view alone and a caller
may observe with `since=` set to the end of the log (the cheap way).

Seats are relative, like the action space (`bots.sdk.actions`): block 0 is the acting seat,
block k the seat k places to its left; blocks past the table's size are zeros. `NAMES` gives
every position's meaning (`python -m bots.sdk.features` prints them). Standard library only:
the environment (`bots.rl`) turns the list into a NumPy array.
"""

from __future__ import annotations

from bots.sdk.actions import CARDS, MAX_OTHERS, PEDDLES
from bots.sdk.cards import PEDDLE, PROTECTED

TYPE_CHECKING = False
if TYPE_CHECKING:  # bots start faster without importing typing
    from typing import Any

PHASES = (
    "turn",
    "draft",
    "pass",
    "waste",
    "surrender",
    "deal-give",
    "deal-want",
    "deal-stash",
    "deal-answer",
    "deal-hand-over",
    "over",
)
HEAT_CARDS = ("bust", "detained", "felony", "search-and-seizure")
VARIANTS = ("give_me_five", "hidden_deals", "lucky_or_not", "learning_hands")
MONEY = 100_000.0
"""Money is written in units of $100,000."""

_CARD = {card: i for i, card in enumerate(CARDS)}
_PEDDLE = {card: i for i, card in enumerate(PEDDLES)}
_HEAT = {card: i for i, card in enumerate(HEAT_CARDS)}


def _names() -> tuple[str, ...]:
    names = [f"phase:{p}" for p in PHASES]
    names += ["classic", *[f"variant:{v}" for v in VARIANTS], "target"]
    names += [f"players:{n}" for n in range(2, MAX_OTHERS + 2)]
    names += ["hand_number/max_hands", "stack/104", "turn:played", "turn:swapped"]
    names += ["turn:deals_left", "i_am_active", "active_is:+k"]
    names += [f"hand:{c}" for c in CARDS]
    names += [f"wasted:{c}" for c in CARDS]
    names += [f"packet:{c}" for c in CARDS]
    names += [f"kept:{c}" for c in CARDS]
    names += [f"received:{c}" for c in CARDS]
    names += [f"passed:{c}" for c in CARDS]
    for k in range(MAX_OTHERS + 1):
        block = ["present", "cards/7", "market_open", "showing", "heat", "skips", "extra_turns"]
        block += [f"heat_top:{h}" for h in HEAT_CARDS]
        block += [f"unprotected:{p}" for p in PEDDLES]
        block += ["unprotected_value", "protected_value", "protection_room", "total"]
        block += ["total-mine", "last_hand_score"]
        names += [f"seat+{k}:{b}" for b in block]
    names += ["deal", "deal:mine", "deal:to_me"]
    names += [f"deal:partner+{k}" for k in range(1, MAX_OTHERS + 1)]
    names += ["deal:give_nothing", *[f"deal:give:{c}" for c in CARDS]]
    names += [f"deal:want:{c}" for c in CARDS]
    names += ["deal:want_in_my_hand", *[f"deal:offer:{p}" for p in PEDDLES]]
    names += [f"deal:ask:{p}" for p in PEDDLES]
    return tuple(names)


NAMES: tuple[str, ...] = _names()
SIZE = len(NAMES)
_SEAT_BLOCK = 7 + len(HEAT_CARDS) + len(PEDDLES) + 6
_SEATS_AT = NAMES.index("seat+0:present")
_DEAL_AT = NAMES.index("deal")
_HAND_AT = NAMES.index(f"hand:{CARDS[0]}")
_NC = len(CARDS)


def encode(view: dict[str, Any]) -> list[float]:
    """The vector of `view` (an observation as the protocol sends it), `SIZE` numbers."""
    x = [0.0] * SIZE
    seat: int = view["seat"]
    seats: list[dict[str, Any]] = view["seats"]
    n = len(seats)
    x[PHASES.index(view["phase"])] = 1.0
    i = len(PHASES)
    x[i] = 1.0 if view["ruleset"] == "classic" else 0.0
    variants = view["variants"]
    for j, name in enumerate(VARIANTS):
        x[i + 1 + j] = 1.0 if variants.get(name) else 0.0
    target = float(view["target"])
    x[i + 5] = target / 1_000_000
    x[i + 6 + n - 2] = 1.0
    i += 6 + MAX_OTHERS
    limits = view["limits"]
    x[i] = view["hand_number"] / limits["max_hands"]
    x[i + 1] = view["stack"] / 104
    turn = view["turn"]
    x[i + 2] = 1.0 if turn["played"] else 0.0
    x[i + 3] = 1.0 if turn["swapped"] else 0.0
    x[i + 4] = (limits["max_deals_per_turn"] - turn["deals_made"]) / limits["max_deals_per_turn"]
    active: int = view["active"]
    x[i + 5] = 1.0 if active == seat else 0.0
    x[i + 6] = ((active - seat) % n) / MAX_OTHERS if active >= 0 else 0.0
    at = _HAND_AT
    for card in view["hand"]:
        x[at + _CARD[card]] += 1.0
    at += _NC
    for card in view["wasted"]:
        x[at + _CARD[card]] += 1.0
    at += _NC
    for card in view.get("packet", ()):
        x[at + _CARD[card]] += 1.0
    at += _NC
    for card in view.get("kept", ()):
        x[at + _CARD[card]] += 1.0
    at += _NC
    for note in view["notes"]:
        kind = note[0]
        if kind in ("received", "took", "deal-got"):
            x[at + _CARD[note[1]]] += 1.0
        elif kind in ("passed", "lost", "deal-gave"):
            x[at + _NC + _CARD[note[1]]] += 1.0
    totals: list[int] = view["totals"]
    last = view["hand_scores"][-1] if view["hand_scores"] else None
    mine = totals[seat]
    for k in range(n):
        s = seats[(seat + k) % n]
        b = _SEATS_AT + k * _SEAT_BLOCK
        x[b] = 1.0
        x[b + 1] = s["cards"] / 7
        heat = s["heat"]
        x[b + 2] = 1.0 if s["market_open"] else 0.0
        x[b + 3] = 1.0 if s["market_open"] and not heat else 0.0
        x[b + 4] = float(len(heat))
        x[b + 5] = float(s["skips"])
        x[b + 6] = float(s["extra_turns"])
        if heat:
            x[b + 7 + _HEAT[heat[-1]]] = 1.0
        b += 7 + len(HEAT_CARDS)
        value = 0
        for card in s["unprotected"]:
            x[b + _PEDDLE[card]] += 1.0
            value += PEDDLE[card]
        b += len(PEDDLES)
        covered = room = 0
        for group in s["protected"]:
            worth = sum(PEDDLE[c] for c in group["covers"])
            covered += worth
            room += PROTECTED[group["card"]] - worth
        total = totals[(seat + k) % n]
        x[b] = value / MONEY
        x[b + 1] = covered / MONEY
        x[b + 2] = room / MONEY
        x[b + 3] = total / target
        x[b + 4] = (total - mine) / target
        x[b + 5] = last[(seat + k) % n] / MONEY if last is not None else 0.0
    deal = view["deal"]
    if deal is not None:
        d = _DEAL_AT
        partner: int = deal["partner"]
        x[d] = 1.0
        x[d + 1] = 1.0 if active == seat else 0.0
        x[d + 2] = 1.0 if partner == seat else 0.0
        x[d + 2 + (partner - seat) % n] = 1.0 if partner != seat else 0.0
        d += 3 + MAX_OTHERS
        give = deal.get("give")
        if give is None:
            # Chosen as "give nothing" (a classic stash-only deal) once past its first step.
            x[d] = 0.0 if view["phase"] == "deal-give" else 1.0
        else:
            x[d + 1 + _CARD[give]] = 1.0
        d += 1 + _NC
        want = deal.get("want")
        if want is not None:
            x[d + _CARD[want]] = 1.0
            x[d + _NC] = 1.0 if want in view["hand"] else 0.0
        d += _NC + 1
        for card in deal.get("offer") or ():
            x[d + _PEDDLE[card]] += 1.0
        d += len(PEDDLES)
        for card in deal.get("ask") or ():
            x[d + _PEDDLE[card]] += 1.0
    return x


if __name__ == "__main__":
    for number, name in enumerate(NAMES):
        print(number, name)
