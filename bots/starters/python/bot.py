"""A Grass bot in Python: a random legal action at every decision (bots/PROTOCOL.md)."""

import random
from typing import Any

from bots.sdk import Bot, Observation, debug, run


class RandomBot(Bot):
    name = "python-starter"

    def on_game_start(self, hello: dict[str, Any]) -> None:
        self.rng = random.Random(hello["rng_seed"])  # the same seed, the same choices

    def choose(self, obs: Observation) -> str:
        choice = self.rng.choice(obs.legal)
        # One line on stderr: the ladder shows it beside this decision in the replay (to you).
        debug(f"{obs.phase}: {len(obs.legal)} legal, chose {choice}")
        return choice


run(RandomBot())
