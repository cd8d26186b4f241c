"""Deal answers (issue 28, part 5): no deal an opponent proposes takes a better card from the
example bots for a worse one.

`greedy.answer` (which `greedy` and `strong` use) once accepted any deal offering a Market
Open while its market was closed, whatever it asked in return: an opponent took Dr Feelgood,
Euphoria or the Banker for it. The first tests ask it every deal a proposer could make, with
"better" stated here, apart from the code it tests; the last plays real sandboxed games against
a hostile proposer and reads the exchanges in the log.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from bots.sdk import Bot, Observation, _Driver, greedy
from engine import Variants
from engine.cards import Card

CARDS = [c.value for c in Card]
PEDDLE = {"home-grown": 5, "mexico": 5, "colombia": 25, "jamaica": 25, "panama": 50}
PEDDLE["dr-feelgood"] = 100
FINE = {"sold-out": 25, "double-crossed": 50, "utterly-wiped-out": 100}
PRIZES = {
    "dr-feelgood", "panama", "the-banker", "euphoria", "stonehigh", "lust-conquers-all",
    "grab-a-snack", "catch-a-buzz", "steal-your-neighbours-pot",
}  # fmt: skip
"""Cards worth money or a big swing themselves: each is better than a Market Open, a heat
card, a Pay Fine, a Market Close or a peddle under $50k."""


def worse(got: str, gave: str) -> bool:
    """Whether getting `got` for `gave` is a plain loss, by facts of the rules alone."""
    if got in FINE:
        return gave not in FINE or FINE[got] > FINE[gave]
    if gave in FINE:
        return False
    if got in PEDDLE and gave in PEDDLE:
        return PEDDLE[got] < PEDDLE[gave]
    return gave in PRIZES and got not in PRIZES and PEDDLE.get(got, 0) < 50


def view(hand: list[str], *, market_open: bool, heat: bool, legal: list[str]) -> Any:
    me = SimpleNamespace(
        market_open=market_open, heat=["bust"] if heat else [], unprotected=[], protected=[]
    )
    other = SimpleNamespace(market_open=True, heat=[], unprotected=[], protected=[])
    return SimpleNamespace(
        seat=0, seats=[me, other], hand=hand, legal=legal, phase="deal-answer", totals=[0, 0]
    )


def deal(give: str | None, want: str | None, **stash: list[str]) -> dict[str, Any]:
    return {"partner": 0, "give": give, "want": want, "offer": [], "ask": [], **stash}


OPEN_ANSWERS = ["accept", "decline"]


@pytest.mark.parametrize(("market_open", "heat"), list(itertools.product([False, True], repeat=2)))
def test_no_open_deal_takes_a_better_card_for_a_worse_one(market_open: bool, heat: bool) -> None:
    """Every card offered for every card held, with and without a spare Market Open in hand."""
    accepted = 0
    for give, want in itertools.product(CARDS, CARDS):
        for filler in (["home-grown"], ["market-open"]):
            hand = [want, *filler, "mexico", "bust", "sold-out", "immunity"]
            seat = view(hand, market_open=market_open, heat=heat, legal=OPEN_ANSWERS)
            if greedy.answer(seat, deal(give, want)):
                accepted += 1
                assert not worse(give, want), (give, want, hand, market_open, heat)
    assert accepted > 0  # it still deals when it gains


@pytest.mark.parametrize("prize", ["dr-feelgood", "euphoria", "the-banker", "panama"])
def test_a_market_open_never_buys_a_prize_from_a_closed_market(prize: str) -> None:
    seat = view([prize, "mexico", "bust"], market_open=False, heat=False, legal=OPEN_ANSWERS)
    assert not greedy.answer(seat, deal("market-open", prize))


def test_a_closed_market_still_trades_a_small_card_for_the_market_open_it_needs() -> None:
    hand = ["colombia", "mexico", "bust", "sold-out", "immunity", "felony"]
    closed = view(hand, market_open=False, heat=False, legal=OPEN_ANSWERS)
    assert greedy.answer(closed, deal("market-open", "colombia"))
    assert greedy.answer(closed, deal("market-open", "sold-out"))
    # Open already, or a spare in hand: another Market Open is worth nothing to it.
    opened = view(hand, market_open=True, heat=False, legal=OPEN_ANSWERS)
    assert not greedy.answer(opened, deal("market-open", "mexico"))
    spare = view([*hand, "market-open"], market_open=False, heat=False, legal=OPEN_ANSWERS)
    assert not greedy.answer(spare, deal("market-open", "mexico"))


def test_stash_parts_count_at_face_value() -> None:
    seat = view(["mexico", "bust"], market_open=True, heat=False, legal=OPEN_ANSWERS)
    assert not greedy.answer(seat, deal(None, None, offer=["home-grown"], ask=["panama"]))
    assert greedy.answer(seat, deal(None, None, offer=["panama"], ask=["home-grown"]))
    # A fair-looking hand part does not hide a stash part that robs it.
    assert not greedy.answer(seat, deal("jamaica", "mexico", offer=[], ask=["panama"]))


def test_a_card_not_held_or_a_hidden_deal_is_declined() -> None:
    seat = view(["mexico", "bust"], market_open=False, heat=False, legal=OPEN_ANSWERS)
    assert not greedy.answer(seat, deal("dr-feelgood", "panama"))  # asks for what it lacks
    hidden = view(
        ["sold-out", "mexico"],
        market_open=False,
        heat=False,
        legal=["accept sold-out", "accept mexico", "decline"],
    )
    # Announced, not shown: the card handed over may be Utterly Wiped Out.
    assert not greedy.answer(hidden, deal("dr-feelgood", "sold-out"))


HOSTILE = '''"""Proposes a deal to every opponent it may: its least useful card (a Market Open
first, the trap), for the best card there is."""

from bots.sdk import Bot, Deal, greedy, run
from bots.sdk.cards import keep_value

WANTS = ["dr-feelgood", "the-banker", "euphoria", "panama", "stonehigh", "lust-conquers-all"]


class Hostile(Bot):
    name = "hostile"

    def __init__(self) -> None:
        self.asked = 0

    def choose(self, obs):
        return greedy.choose(obs)

    def propose_deal(self, obs):
        partners = [a.split("@")[1] for a in obs.legal if a.startswith("deal @")]
        if not partners:
            return None
        me = obs.me
        hand = list(obs.hand)
        give = "market-open" if "market-open" in hand else min(
            hand, key=lambda c: keep_value(c, me.market_open, bool(me.heat))
        )
        self.asked += 1
        want = WANTS[self.asked % len(WANTS)]
        return Deal(int(partners[self.asked % len(partners)]), give, want)


if __name__ == "__main__":
    run(Hostile())
'''


@pytest.mark.slow
@pytest.mark.timeout(900)  # 61 s on an idle slow 2-core machine; over 300 s at load 18
def test_a_hostile_proposer_robs_no_example_bot(sandbox_ready: None, tmp_path: Path) -> None:
    """Real sandboxed games: every exchange the victims agreed to is checked in the log."""
    hostile_file = tmp_path / "hostile.py"
    hostile_file.write_text(HOSTILE)
    offers = exchanges = 0
    for seed in range(4):
        # The last game with hidden deals: the card handed over is only announced there.
        hidden = seed == 3
        bots = [load_bot(str(hostile_file)), load_bot("strong"), load_bot("greedy")]
        variants = Variants(hidden_deals=hidden)
        match = play_match(bots, seed=seed, variants=variants, limits={"max_hands": 3})
        assert match.seats[0].strikes == 0 and not match.seats[0].forfeited, match.seats[0]
        for event in match.events:
            if event.get("e") == "offer" and event["seat"] == 0:
                offers += 1
            if event.get("e") == "exchange" and event["seat"] == 0:
                exchanges += 1
                assert not hidden, event  # no hidden deal is ever safe to accept
                # The victim got the proposer's `gave` and handed over `got`.
                assert not worse(event["gave"], event["got"]), event
    assert offers >= 20  # the proposer did try, game after game
    assert exchanges < offers


def _seat(name: str) -> dict[str, Any]:
    return {
        "name": name, "cards": 6, "market_open": True, "heat": [], "unprotected": [],
        "protected": [], "skips": 0, "extra_turns": 0,
    }  # fmt: skip


def test_the_sdk_hands_over_its_least_useful_card_when_the_wanted_one_is_not_held() -> None:
    """Hidden deals: a bot that accepts names the card it hands over. When it lacks the card
    asked for, the SDK used to hand over the first in the list, whatever it was."""

    class Accepts(Bot):
        def answer_deal(self, obs: Observation) -> bool:
            return True

    hand = ["dr-feelgood", "the-banker", "sold-out", "mexico"]
    raw = {
        "seat": 0, "phase": "deal-answer", "hand": hand, "seats": [_seat("a"), _seat("b")],
        "totals": [0, 0], "stack": 30, "wasted": [], "active": 1, "hand_number": 1,
        "legal": [*(f"accept {c}" for c in hand), "decline"],
        "deal": {"partner": 0, "give": "market-open", "want": "panama", "offer": [], "ask": []},
    }  # fmt: skip
    driver = _Driver(Accepts())
    assert driver.decide(Observation(raw)) == "accept sold-out"
    raw["deal"]["want"] = "the-banker"  # held: the one asked for, as before
    assert driver.decide(Observation(raw)) == "accept the-banker"


def test_a_closed_market_asks_only_open_ones_for_a_spare_market_open() -> None:
    hand = ["mexico", "sold-out", "panama", "immunity", "bust", "felony"]
    seat = view(hand, market_open=False, heat=False, legal=[])
    seat.seats = [seat.seats[0], *(SimpleNamespace(**vars(seat.seats[1])) for _ in range(3))]
    seat.seats[2].market_open = False  # seats 1 and 3 are open: asked in turn, then no more
    asks = [greedy.market_open_request(hand, seat, made) for made in range(3)]
    assert asks == [(1, "mexico"), (3, "mexico"), None]  # never the Paranoia card
    # What it gives is what such a partner accepts: a fair card for a spare.
    partner = view(["market-open"], market_open=True, heat=False, legal=OPEN_ANSWERS)
    assert greedy.answer(partner, deal("mexico", "market-open"))
    holding = view([*hand[1:], "market-open"], market_open=False, heat=False, legal=[])
    assert greedy.market_open_request(holding.hand, holding, 0) is None
