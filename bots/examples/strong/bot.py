"""strong: plans its whole turn (the swap and the card together) by determinized Monte Carlo.

At the first decision of its turn the bot lists plans: the card to play (every kind of play,
up to four targets each, the two least useful discards), each alone (its forced swap then
made after the card, if one gains) or after one of the three swaps that gain the most (and
the best swap against each opponent). It samples complete games consistent with what it can
see (`bots.sdk.belief`: the unseen cards dealt consistently with what opponents did), plays
every plan on the same samples, lets every seat play on for a round of turns (opponents as
the greedy heuristic, a fair model of most of them, played on the engine's own state by
`bots.sdk.rollout` without reading action texts; itself as itself), and scores each result as
the engine would score the hand if it ended there, relative to the best opponent, with a
premium for leading and a bigger one for a won game. Plans that fall clearly behind the best
are dropped as samples come in (racing), so the budget goes to the close ones; the bot leaves
its old plan (the gaining swap first, then greedy's card) only for one whose paired gain over
it clears 2.5 standard errors. The rest of the plan is kept for the turn's next decisions.
Its answers to a paranoia card are searched the same way: the peddle it wastes and the card it
passes, each legal choice against greedy's (in a pass round the seats before it choose again
in each sample, as greedy would). Every other decision (ending the turn, deals) uses the
greedy heuristic, and a closed market without a Market Open asks the open ones for a spare
(`greedy.market_open_request`).

Pieces that can be switched (issue 28; docs/benchmarks.md has what each measured): `BELIEF`
(consistent samples), `WIN_EVAL` (the engine's scoring at the cut-off and the premiums),
`WHOLE_TURN` (plans of swap and card; off, the bot swaps first by the heuristic and searches
only the card, as before), `PARANOIA` (search the waste and the pass; off, greedy's).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from bots.protocol import Message
from bots.sdk import Bot, Deal, Observation, belief, greedy, rollout, run
from bots.sdk.cards import keep_value
from engine import Game
from engine.cards import FAMILY, VALUE, Card, Family
from engine.moves import parse
from engine.scoring import HandTally, add_to_totals, score_hand
from engine.state import Phase

BUDGET_MS = 250
"""CPU time per planned decision: a quarter of the ladder's 1 s per decision (the bank is left
alone), budgeted on the process's CPU clock, so a busy worker does not change the play. A
fast core reaches MAX_SAMPLES in about 150 ms; a core 2.5x slower drew 281 samples."""
ANSWER_BUDGET_MS = 100
"""The same for its answers to a paranoia card (the waste, the pass): fewer plans, and less
at stake than the turn's plan."""
HORIZON_TURNS = 4
"""How many turn changes each simulation plays on after the candidate move."""
MAX_SAMPLES = 400
MIN_SAMPLES = 6
RACE_EVERY = 8
"""Every this many samples, plans clearly behind the best one so far are dropped."""
RACE_SE = 2.0
"""A plan is dropped when its paired gain over the best stays this many errors below zero."""
MARGIN_SE = 2.5
"""A move replaces greedy's only when its mean gain exceeds this many standard errors."""
BELIEF = True
"""Deal the unseen cards consistently with the opponents' turns (`bots.sdk.belief`)."""
WIN_EVAL = True
"""Score a cut-off hand as the engine would (Banker, bonus, floor), plus FIRST_PREMIUM."""
WHOLE_TURN = True
"""Plan the turn: the swap and the card together."""
PARANOIA = True
"""Search the answers to a paranoia card: the peddle to waste, the card to pass."""
MAX_SWAPS = 3
"""Swaps tried per plan: the most gaining ones, plus the best one against each opponent."""
TARGETS_PER_KIND = 4
"""Targets (or covers) tried per kind of play."""
FIRST_PREMIUM = 10_000
"""Worth of leading the table at the cut-off (WIN_PREMIUM when the game is over)."""
WIN_PREMIUM = 100_000


def projected(game: Game, seat: int) -> int:
    """The seat's hand score if the hand ended now (Banker and bonus left out)."""
    me = game.seats[seat]
    held = me.hand
    fines = sum(game.ruleset.fine(c) for c in held)
    best = max((VALUE[c] for c in held if FAMILY[c] is Family.PEDDLE), default=0)
    return me.at_risk + me.protected_value - fines - best


def settled(game: Game) -> list[int]:
    """Every seat's total if the hand ended now, scored as the engine scores it: the Banker,
    the fines and best held peddle, the $25k bonus to the best hand, the zero floor."""
    tallies = [HandTally(s.protected_value, s.at_risk, tuple(s.hand)) for s in game.seats]
    scores = score_hand(game.ruleset, tallies)
    return list(add_to_totals(game.ruleset, game.totals, scores))


def evaluate_win(game: Game, seat: int, hand: int) -> float:
    """The lead over the best opponent once the hand is scored, plus a premium for being
    first: WIN_PREMIUM if the game is over (won), else FIRST_PREMIUM. A branch cut mid-hand
    is scored like one whose hand ended (both with the bonus and the Banker), so the two
    compare fairly; only a game really over earns the win's premium, so a Market Close that
    crosses the target while ahead beats going on."""
    ended = game.over or game.hand_no != hand
    standing = list(game.totals) if ended else settled(game)
    mine = standing[seat]
    best = max(v for s, v in enumerate(standing) if s != seat)
    value = float(mine - best)
    if mine > best:
        value += WIN_PREMIUM if game.over else FIRST_PREMIUM
    return value


def evaluate(game: Game, seat: int, hand: int) -> float:
    """Total plus this hand's (projected) score, relative to the best opponent."""
    if WIN_EVAL:
        return evaluate_win(game, seat, hand)
    if game.hand_no != hand or game.over:
        standing = list(game.totals)  # the hand ended inside the simulation: totals include it
    else:
        standing = [game.totals[s] + projected(game, s) for s in range(game.n)]
    return standing[seat] - max(v for s, v in enumerate(standing) if s != seat)


def best_swap(legal: Sequence[str]) -> str | None:
    """The forced swap that gains the most peddle value, if any gains."""
    swaps = [a for a in legal if parse(a).kind == "swap"]
    best = max(swaps, key=swap_gain, default=None)
    if best is not None and swap_gain(best) > 0:
        return best
    return None


def swap_gain(action: str) -> int:
    """Peddle value a swap (`swap MINE @SEAT THEIRS`) brings to its maker."""
    move = parse(action)
    return VALUE[move.peddle or Card.MARKET_OPEN] - VALUE[move.card or Card.MARKET_OPEN]


def swap_options(legal: Sequence[str]) -> list[str]:
    """The swaps worth planning with: the MAX_SWAPS that gain the most, and the one that gains
    the most from each opponent (robbing the leader may beat a bigger gain elsewhere)."""
    gaining = sorted(
        (a for a in legal if parse(a).kind == "swap" and swap_gain(a) > 0),
        key=swap_gain,
        reverse=True,
    )
    keep = gaining[:MAX_SWAPS]
    seen = set()
    for action in gaining:
        victim = parse(action).target
        if victim not in seen:
            seen.add(victim)
            if action not in keep:
                keep.append(action)
    return keep


def shortlist(obs: Observation, candidates: list[str], baseline: str) -> list[str]:
    """The cards worth simulating: every kind of play with a few targets, two discards."""
    me = obs.me
    by_kind: dict[tuple[str, Card | None], list[str]] = {}
    discards = []
    for action in candidates:
        move = parse(action)
        if move.kind == "discard":
            discards.append((keep_value(move.card or "", me.market_open, bool(me.heat)), action))
        else:
            by_kind.setdefault((move.kind, move.card), []).append(action)
    discards.sort(key=lambda pair: pair[0])  # stable: the first of equals stays first
    keep = {baseline, *(action for _, action in discards[:2])}
    per_kind = TARGETS_PER_KIND if WHOLE_TURN else 2
    for actions in by_kind.values():
        # Targets and covers: the first few (heat and paranoia list targets clockwise; the
        # greedy baseline already holds its preferred one).
        keep.update(actions[:per_kind])
    return sorted(keep, key=candidates.index)


Plan = tuple[str, ...]
"""Actions this bot takes in a row at one turn: a swap, then a card (or the card alone)."""


class StrongBot(Bot):
    name = "strong"

    def __init__(self, budget_ms: int = BUDGET_MS) -> None:
        self.budget_ms = budget_ms
        self.rng = random.Random()
        self.samples = 0
        """Samples the last planned decision used (for the benchmark)."""
        self.plans = 0
        """Plans the last planned decision compared (for the benchmark)."""
        self.rest: Plan = ()
        """The rest of the plan chosen at this turn's first decision."""

    def on_game_start(self, hello: Message) -> None:
        self.rng = random.Random(hello.get("rng_seed"))
        self.rest = ()

    def choose(self, obs: Observation) -> str:
        rest, self.rest = self.rest, ()
        if not WHOLE_TURN:
            return self.choose_card_only(obs)
        if obs.phase == "turn" and not obs.raw["turn"]["played"]:
            if rest and rest[0] in obs.legal:
                self.rest = rest[1:]
                return rest[0]
            cards = [m.text for m in obs.moves if m.kind in ("play", "discard")]
            swaps = swap_options(obs.legal) if not obs.raw["turn"]["swapped"] else []
            if len(cards) > 1 or swaps:
                return self.choose_plan(obs, cards, swaps)
        if obs.phase == "turn":
            swap = best_swap(obs.legal)  # after the card: the swap the plan counted on
            if swap is not None:
                return swap
        if PARANOIA and obs.phase in ("waste", "pass") and len(obs.legal) > 1:
            return self.choose_answer(obs)
        return greedy.choose(obs)

    def choose_answer(self, obs: Observation) -> str:
        """The peddle to waste or the card to pass: every choice against greedy's."""
        baseline = greedy.choose(obs)
        plans: list[Plan] = [(baseline,)]
        plans += [(a,) for a in obs.legal if a != baseline]
        return self.search(obs, plans, min(ANSWER_BUDGET_MS, self.budget_ms))[0]

    def choose_card_only(self, obs: Observation) -> str:
        """The search before whole-turn planning: the gaining swap first, then the card."""
        if obs.phase == "turn":
            swap = best_swap(obs.legal)
            if swap is not None:
                return swap
        if obs.phase == "turn" and not obs.raw["turn"]["played"]:
            candidates = [m.text for m in obs.moves if m.kind in ("play", "discard")]
            if len(candidates) > 1:
                baseline = greedy.choose(obs)
                cards = shortlist(obs, candidates, baseline)
                plans = [(baseline,)] + [(a,) for a in cards if a != baseline]
                return self.search(obs, plans)[0]
        return greedy.choose(obs)

    def choose_plan(self, obs: Observation, cards: list[str], swaps: list[str]) -> str:
        """The turn's first decision: plan the swap and the card together."""
        card = greedy.choose(obs)
        if card not in cards:  # greedy would deal or swap first: it plays next
            card = cards[0] if len(cards) == 1 else card
        shortlisted = shortlist(obs, cards, card) if card in cards else cards
        first = best_swap(obs.legal) if not obs.raw["turn"]["swapped"] else None
        baseline: Plan = (first, card) if first is not None else (card,)
        plans = [baseline]
        for option in [None, *swaps]:
            for action in shortlisted:
                plan: Plan = (option, action) if option is not None else (action,)
                if plan not in plans:
                    plans.append(plan)
        chosen = baseline if len(plans) == 1 else self.search(obs, plans)
        self.rest = chosen[1:]
        return chosen[0]

    def answer_deal(self, obs: Observation) -> bool:
        return greedy.answer(obs, obs.deal)

    def propose_deal(self, obs: Observation) -> Deal | None:
        """A closed market without a Market Open asks the open ones for their spare."""
        request = greedy.market_open_request(obs.hand, obs, obs.raw["turn"]["deals_made"])
        if request is None:
            return None
        partner, give = request
        return Deal(partner, give, "market-open")

    def search(self, obs: Observation, plans: Sequence[Plan], budget_ms: int = 0) -> Plan:
        """The first plan (the baseline), unless another beats it clearly on the same samples.

        Every plan is played on each sample (paired comparisons); every RACE_EVERY samples the
        plans whose paired gain over the best so far is clearly negative are dropped, so the
        budget goes to the plans still in the race."""
        baseline = plans[0]
        # CPU time, as the runner counts it: the same thinking on a busy worker as an idle one.
        budget = min(budget_ms or self.budget_ms, max(5, obs.bank_ms // 50)) / 1000
        if obs.cpu_ms:
            budget = min(budget, obs.cpu_left() / 2)
        deadline = time.process_time() + budget
        # The whole hand's history (in protocol version 2 `raw` holds only the new events).
        view = dict(obs.raw, history=list(obs.history))
        limits = belief.limits(view, obs.history) if BELIEF else ()
        alive = list(plans)
        values: dict[Plan, list[float]] = {plan: [] for plan in plans}
        samples = 0
        while samples < MAX_SAMPLES and (samples < MIN_SAMPLES or time.process_time() < deadline):
            base = belief.sample(view, limits, self.rng, rollout.choose)
            hand = base.hand_no
            last = len(alive) - 1
            for index, plan in enumerate(list(alive)):
                game = base if index == last else base.clone()  # the last plays on the sample
                if not self.follow(game, plan, obs.seat):
                    if plan is not baseline:  # not legal as planned: never a choice
                        alive.remove(plan)
                        del values[plan]
                        continue
                self.simulate(game, hand, obs.seat)
                values[plan].append(evaluate(game, obs.seat, hand))
            samples += 1
            if len(alive) > 2 and samples % RACE_EVERY == 0:
                alive = race(alive, values, baseline)
        self.samples = samples
        self.plans = len(plans)
        best, best_score = baseline, 0.0
        for plan in alive:
            if plan is baseline:
                continue
            score = lower_bound(values[plan], values[baseline], MARGIN_SE)
            if score > best_score:
                best, best_score = plan, score
        return best

    @staticmethod
    def follow(game: Game, plan: Plan, me: int) -> bool:
        """Play the plan's actions on the sample; False if one is not legal there."""
        for action in plan:
            if game.to_act != me or action not in game.moves:
                return False
            game.apply(action)
        return True

    def simulate(self, game: Game, hand: int, me: int) -> None:
        """Play on: opponents as greedy, this bot as itself (swap first, then greedy)."""
        turns = 0
        active = game.active
        table = game.table
        while not game.over and game.hand_no == hand and turns <= HORIZON_TURNS:
            move = None
            if table.to_act == me and table.phase is Phase.TURN and not table.swapped:
                move = rollout.best_swap(game)
            game.apply(move or rollout.choose(game))
            if game.active != active:
                active = game.active
                turns += 1


def lower_bound(values: Sequence[float], baseline: Sequence[float], errors: float) -> float:
    """Mean paired gain of `values` over `baseline`, minus `errors` standard errors."""
    gains = [v - b for v, b in zip(values, baseline, strict=False)]
    n = len(gains)
    if n == 0:
        return float("-inf")
    mean = sum(gains) / n
    spread = math.sqrt(sum((g - mean) ** 2 for g in gains) / max(1, n - 1))
    return mean - errors * spread / math.sqrt(n)


def race(alive: list[Plan], values: dict[Plan, list[float]], baseline: Plan) -> list[Plan]:
    """The plans still in the race: the baseline, the best by mean, and every plan whose
    paired gain over the best is not clearly negative (RACE_SE errors)."""
    means = {plan: sum(values[plan]) / len(values[plan]) for plan in alive}
    leader = max(alive, key=means.__getitem__)
    kept = []
    for plan in alive:
        if plan is baseline or plan is leader:
            kept.append(plan)
        elif lower_bound(values[leader], values[plan], RACE_SE) <= 0:
            kept.append(plan)  # not clearly behind the leader
    return kept


if __name__ == "__main__":
    run(StrongBot())
