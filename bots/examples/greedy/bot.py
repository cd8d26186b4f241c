"""greedy: a readable heuristic dealer.

Opens its market, peddles its biggest card, protects what matters, cures its heat, dumps
paranoia on the leader, attacks the leader, and closes the market when it is ahead. The
heuristic itself lives in `bots/sdk/greedy.py` so other bots can use it as a baseline or as a
fast rollout policy (the `strong` example does); this file is the whole bot around it.
"""

from __future__ import annotations

from bots.sdk import Bot, Observation, greedy, run


class GreedyBot(Bot):
    name = "greedy"

    def choose(self, obs: Observation) -> str:
        return greedy.choose(obs)

    def answer_deal(self, obs: Observation) -> bool:
        return greedy.answer(obs, obs.deal)


if __name__ == "__main__":
    run(GreedyBot())
