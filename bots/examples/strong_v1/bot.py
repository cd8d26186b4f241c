"""strong_v1: the `strong` example as it was on 2026-11-26 (issue 28), kept unchanged as the
yardstick a new `strong` is measured against.

strong: swaps first, then plans the card it plays by determinized Monte Carlo.

On its turn the bot first makes the forced swap that gains the most peddle value (greedy swaps
last, after it may already have closed the market). Then, for the card to play, it samples
complete games consistent with what it can see (`engine.sampling.sample_game` deals the unseen
cards at random), tries greedy's move and a shortlist of alternatives (each kind of play once
or twice, the two least useful discards) on the same samples, lets every seat play on for a
round of turns (opponents as the greedy heuristic, a fair model of most of them and fast on the
engine's own state; itself as itself), and scores each result: its running total plus its hand
score if the hand ended now, minus the best opponent's. It plays an alternative only when its
paired gain over greedy's move clears 2.5 standard errors; otherwise greedy's move. All other
decisions use the greedy heuristic.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from bots.protocol import Message
from bots.sdk import Bot, Observation, greedy, run
from bots.sdk.cards import PEDDLE, keep_value
from engine import Game
from engine.cards import FAMILY, VALUE, Family
from engine.sampling import sample_game

BUDGET_MS = 60
"""Thinking time per planned decision; well inside the ladder's 1 s per decision."""
HORIZON_TURNS = 4
"""How many turn changes each simulation plays on after the candidate move."""
MAX_SAMPLES = 200
MIN_SAMPLES = 6
MARGIN_SE = 2.5
"""A move replaces greedy's only when its mean gain exceeds this many standard errors."""


class EngineView:
    """An engine `Game` seen the way `bots.sdk.greedy` reads an observation (no copying)."""

    __slots__ = ("legal", "phase", "seat", "seats", "totals")

    def __init__(self, game: Game) -> None:
        self.legal = list(game.moves)
        self.phase = game.phase.value
        self.seat = game.to_act
        self.seats = game.seats
        self.totals = game.totals


def projected(game: Game, seat: int) -> int:
    """The seat's hand score if the hand ended now (Banker and bonus left out)."""
    me = game.seats[seat]
    held = me.hand
    fines = sum(game.ruleset.fine(c) for c in held)
    best = max((VALUE[c] for c in held if FAMILY[c] is Family.PEDDLE), default=0)
    return me.at_risk + me.protected_value - fines - best


def evaluate(game: Game, seat: int, hand: int) -> float:
    """Total plus this hand's (projected) score, relative to the best opponent."""
    if game.hand_no != hand or game.over:
        standing = list(game.totals)  # the hand ended inside the simulation: totals include it
    else:
        standing = [game.totals[s] + projected(game, s) for s in range(game.n)]
    return standing[seat] - max(v for s, v in enumerate(standing) if s != seat)


def best_swap(legal: Sequence[str]) -> str | None:
    """The forced swap that gains the most peddle value, if any gains."""
    swaps = [a for a in legal if a.startswith("swap ")]
    best = max(swaps, key=lambda a: PEDDLE[a.split()[3]] - PEDDLE[a.split()[1]], default=None)
    if best is not None and PEDDLE[best.split()[3]] > PEDDLE[best.split()[1]]:
        return best
    return None


def shortlist(obs: Observation, candidates: list[str], baseline: str) -> list[str]:
    """The moves worth simulating: every kind of play once or twice, not every target."""
    me = obs.me
    by_kind: dict[str, list[str]] = {}
    for action in candidates:
        by_kind.setdefault(" ".join(action.split()[:2]), []).append(action)
    keep = {baseline}
    discards = sorted(
        (a for a in candidates if a.startswith("discard ")),
        key=lambda a: keep_value(a.split()[1], me.market_open, bool(me.heat)),
    )
    keep.update(discards[:2])
    for kind, actions in by_kind.items():
        if kind.startswith("discard "):
            continue
        # Targets and covers: the first two (heat and paranoia list targets clockwise; the
        # greedy baseline already holds its preferred one).
        keep.update(actions[:2])
    return sorted(keep, key=candidates.index)


class StrongV1Bot(Bot):
    name = "strong_v1"

    def __init__(self, budget_ms: int = BUDGET_MS) -> None:
        self.budget_ms = budget_ms
        self.rng = random.Random()

    def on_game_start(self, hello: Message) -> None:
        self.rng = random.Random(hello.get("rng_seed"))

    def choose(self, obs: Observation) -> str:
        if obs.phase == "turn":
            # Swap first, then choose the card: a Market Close played after grabbing the
            # table's best peddle is worth more than one played before (greedy swaps last).
            swap = best_swap(obs.legal)
            if swap is not None:
                return swap
        if obs.phase == "turn" and not obs.raw["turn"]["played"]:
            candidates = [a for a in obs.legal if a.startswith(("play ", "discard "))]
            if len(candidates) > 1:
                return self.plan(obs, candidates)
        return greedy.choose(obs)

    def answer_deal(self, obs: Observation) -> bool:
        return greedy.answer(obs, obs.deal)

    def plan(self, obs: Observation, candidates: list[str]) -> str:
        """Greedy's move, unless another candidate beats it clearly on the same samples."""
        baseline = greedy.choose(obs)
        candidates = shortlist(obs, candidates, baseline)
        if len(candidates) == 1:
            return baseline
        gains: dict[str, list[float]] = {a: [] for a in candidates if a != baseline}
        # CPU time, as the runner counts it: the same thinking on a busy worker as an idle one.
        budget = min(self.budget_ms, max(5, obs.bank_ms // 50)) / 1000
        if obs.cpu_ms:
            budget = min(budget, obs.cpu_left() / 2)
        deadline = time.process_time() + budget
        samples = 0
        while samples < MAX_SAMPLES and (samples < MIN_SAMPLES or time.process_time() < deadline):
            base = sample_game(obs.raw, self.rng)
            hand = base.hand_no
            values = {}
            for action in candidates:
                game = base.clone()
                game.apply(action)
                self.simulate(game, hand, obs.seat)
                values[action] = evaluate(game, obs.seat, hand)
            for action, gain in gains.items():
                gain.append(values[action] - values[baseline])
            samples += 1
        best, best_score = baseline, 0.0
        for action, gain in gains.items():
            mean = sum(gain) / len(gain)
            spread = (sum((g - mean) ** 2 for g in gain) / max(1, len(gain) - 1)) ** 0.5
            # Paired samples: switch only when the gain clears MARGIN_SE standard errors.
            score = mean - MARGIN_SE * spread / len(gain) ** 0.5
            if score > best_score:
                best, best_score = action, score
        return best

    def simulate(self, game: Game, hand: int, me: int) -> None:
        """Play on: opponents as greedy, this bot as itself (swap first, then greedy)."""
        turns = 0
        active = game.active
        while not game.over and game.hand_no == hand and turns <= HORIZON_TURNS:
            view = EngineView(game)
            move = best_swap(view.legal) if view.seat == me and view.phase == "turn" else None
            game.apply(move or greedy.choose(view))
            if game.active != active:
                active = game.active
                turns += 1


if __name__ == "__main__":
    run(StrongV1Bot())
