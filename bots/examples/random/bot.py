"""random: a uniformly random legal action at every decision (the ladder's floor)."""

from __future__ import annotations

import random

from bots.protocol import Message
from bots.sdk import Bot, Observation, run


class RandomBot(Bot):
    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random()

    def on_game_start(self, hello: Message) -> None:
        # The runner gives each seat its own seed so that matches replay exactly.
        self.rng = random.Random(hello.get("rng_seed"))

    def choose(self, obs: Observation) -> str:
        return self.rng.choice(obs.legal)


if __name__ == "__main__":
    run(RandomBot())
