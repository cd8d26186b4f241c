"""learned: a policy network trained to play like `strong`, without its search.

Every decision goes through one small network (NumPy only): the observation as the SDK's
feature vector (`bots.sdk.features`, 405 numbers), two hidden layers of 128 ReLU units, and one
score per action of the fixed action space (`bots.sdk.actions`, 609 actions); the bot plays the
legal action with the highest score. The weights (`weights.npz`, float16) were trained by
`python -m bench.train_learned` (seed 1, its default) in 21 minutes on two cores: imitation of
`strong`'s choices on 104,598 positions reached by `strong` and then by the network itself,
against `greedy` and `random` tables. The file's `meta` entry holds the command, the seed and
the training figures.

It needs NumPy (the ladder's Python runtime has 1.24) and no engine import, so it starts fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bots.sdk import Bot, Observation, actions, features, run

WEIGHTS = Path(__file__).resolve().parent / "weights.npz"
LAYERS = ("w1", "b1", "w2", "b2", "w3", "b3")


class Policy:
    """The network: scores for every action of the fixed space, from a feature vector."""

    def __init__(self, params: dict[str, np.ndarray[Any, Any]]) -> None:
        self.params = [np.asarray(params[name], dtype=np.float32) for name in LAYERS]

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> Policy:
        with np.load(path, allow_pickle=False) as data:
            return cls({name: data[name] for name in LAYERS})

    def scores(self, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        w1, b1, w2, b2, w3, b3 = self.params
        h = np.maximum(x @ w1 + b1, 0.0)
        h = np.maximum(h @ w2 + b2, 0.0)
        scores: np.ndarray[Any, Any] = h @ w3 + b3
        return scores

    def choose(self, view: dict[str, Any], legal: list[str] | tuple[str, ...]) -> str:
        """The legal action the network scores highest (ties: the first in `legal`)."""
        seat = view["seat"]
        n = len(view["seats"])
        x = np.asarray(features.encode(view), dtype=np.float32)
        scores = self.scores(x)
        index = actions.indices(legal, seat, n)
        return legal[int(np.argmax(scores[index]))]


def meta(path: Path = WEIGHTS) -> dict[str, Any]:
    """How the weights were made: command, seed, data and figures."""
    with np.load(path, allow_pickle=False) as data:
        return dict(json.loads(str(data["meta"])))


class LearnedBot(Bot):
    name = "learned"

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy.load()

    def choose(self, obs: Observation) -> str:
        return self.policy.choose(obs.raw, obs.legal)

    def answer_deal(self, obs: Observation) -> bool:
        return self.policy.choose(obs.raw, obs.legal).startswith("accept")


if __name__ == "__main__":
    run(LearnedBot())
