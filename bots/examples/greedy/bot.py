"""greedy: a readable heuristic dealer.

Opens its market, peddles its biggest card, protects what matters, cures its heat, dumps
paranoia on the leader, attacks the leader, and closes the market when it is ahead. It never
proposes deals and only accepts a Market Open when it needs one.
"""

from __future__ import annotations

from bots.sdk import Bot, Observation, run

PEDDLE = {
    "home-grown": 5_000,
    "mexico": 5_000,
    "colombia": 25_000,
    "jamaica": 25_000,
    "panama": 50_000,
    "dr-feelgood": 100_000,
}
FINE = {"sold-out": 25_000, "double-crossed": 50_000, "utterly-wiped-out": 100_000}
HEAT_ON = {"bust", "detained", "felony", "search-and-seizure"}
HEAT_OFF = {"immunity", "a-breeze-to-fly", "hearsay-evidence", "charges-dropped"}
PROTECTED = {"lust-conquers-all", "grab-a-snack", "catch-a-buzz"}


def tabled(obs: Observation, seat: int) -> int:
    view = obs.seats[seat]
    value = sum(PEDDLE[c] for c in view.unprotected)
    return value + sum(PEDDLE[c] for _, group in view.protected for c in group)


def standing(obs: Observation, seat: int) -> int:
    """Running total plus what lies on the table now: how far ahead a seat looks."""
    return obs.totals[seat] + tabled(obs, seat)


def leader(obs: Observation) -> int:
    return max(obs.opponents, key=lambda s: standing(obs, s))


def keep_value(obs: Observation, card: str) -> int:
    """How much this bot would like to keep a card in hand (higher = keep)."""
    me = obs.me
    if card in FINE:
        return -FINE[card]
    if card in PEDDLE:
        return PEDDLE[card]
    if card == "market-open":
        return 60_000 if not me.market_open else -1_000
    if card in HEAT_OFF or card == "pay-fine":
        return 20_000 if me.heat else 8_000
    if card in PROTECTED or card in ("stonehigh", "euphoria", "steal-your-neighbours-pot"):
        return 30_000
    if card == "the-banker":
        return 40_000
    if card == "market-close":
        return 15_000
    return 10_000


class GreedyBot(Bot):
    name = "greedy"

    def choose(self, obs: Observation) -> str:
        legal = obs.legal
        phase = obs.phase
        if phase in ("pass", "draft"):
            verb = "pass" if phase == "pass" else "keep"
            cards = [a.split()[1] for a in legal]
            pick = min if verb == "pass" else max
            return f"{verb} {pick(cards, key=lambda c: keep_value(obs, c))}"
        if phase in ("waste", "surrender"):
            return min(legal, key=lambda a: PEDDLE.get(a.split()[1], 0))
        if phase == "turn":
            return self.turn(obs)
        return legal[0]

    def turn(self, obs: Observation) -> str:
        legal = set(obs.legal)
        me = obs.me
        target = leader(obs)

        def first(*candidates: str) -> str | None:
            return next((c for c in candidates if c in legal), None)

        plays = [a for a in obs.legal if a.startswith("play ")]
        if plays:
            ahead = standing(obs, obs.seat) > standing(obs, target) + 25_000
            if ahead and "play market-close" in legal:
                return "play market-close"
            choice = first("play market-open", *[f"play {c}" for c in HEAT_OFF])
            if choice:
                return choice
            fines = [a for a in plays if a.startswith("play pay-fine")]
            if fines:
                return min(fines, key=lambda a: PEDDLE.get(a.split()[-1].removesuffix("(p)"), 0))
            protects = [a for a in plays if a.split()[1] in PROTECTED]
            if protects:
                best = max(protects, key=lambda a: sum(PEDDLE[c] for c in a.split()[2].split("+")))
                if sum(PEDDLE[c] for c in best.split()[2].split("+")) >= 25_000:
                    return best
            peddles = [a for a in plays if a.split()[1] in PEDDLE]
            if peddles:
                return max(peddles, key=lambda a: PEDDLE[a.split()[1]])
            paranoia = [a for a in plays if a.split()[1] in FINE]
            if paranoia:
                on_leader = [a for a in paranoia if a.endswith(f"@{target}")]
                return max(on_leader or paranoia, key=lambda a: FINE[a.split()[1]])
            steals = [a for a in plays if a.split()[1] == "steal-your-neighbours-pot"]
            if steals:
                return max(steals, key=lambda a: PEDDLE.get(a.split()[-1], 0) + 1)
            nirvana = first("play euphoria", "play stonehigh")
            if nirvana and sum(len(obs.seats[s].unprotected) for s in obs.opponents) >= 2:
                return nirvana
            heat = [a for a in plays if a.split()[1] in HEAT_ON]
            if heat:
                on_leader = [a for a in heat if a.endswith(f"@{target}")]
                return (on_leader or heat)[0]
            if "play market-close" in legal and ahead:
                return "play market-close"
        if "end" in legal:
            swaps = [a for a in obs.legal if a.startswith("swap ")]
            gain = max(
                swaps, key=lambda a: PEDDLE[a.split()[3]] - PEDDLE[a.split()[1]], default=None
            )
            if gain and PEDDLE[gain.split()[3]] > PEDDLE[gain.split()[1]]:
                return gain
            return "end"
        discards = [a for a in obs.legal if a.startswith("discard ")]
        if discards:
            return min(discards, key=lambda a: keep_value(obs, a.split()[1]))
        # Only plays we chose not to make above (e.g. an early Market Close): take the first.
        return obs.legal[0] if not me.heat else sorted(obs.legal)[0]

    def answer_deal(self, obs: Observation) -> bool:
        deal = obs.deal or {}
        return deal.get("give") == "market-open" and not obs.me.market_open


if __name__ == "__main__":
    run(GreedyBot())
