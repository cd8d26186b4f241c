"""A Gymnasium environment for one learner against chosen opponents.

    from bots.rl import GrassSingleEnv

    env = GrassSingleEnv(opponents=["greedy", "greedy", "greedy"])
    obs, info = env.reset(seed=1)
    while True:
        action = policy(obs["observation"], obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated:
            break

The learner takes a seat at random each game (seeded by `reset`), or `seat` if given; the
opponents fill the others in order. Between two of the learner's decisions the opponents play
theirs (`bots.rl.opponents`: `random`, `greedy`, `strong` in this process, or a bot's path run
in the sandbox), each told of the game as a bot would be. Observations, actions and rewards are
the PettingZoo environment's (`bots.rl.env`) for the learner's seat; `info["legal"]` holds the
legal actions' texts. An action outside the mask raises ValueError, or with
`illegal="default"` plays the safe default as the ladder does for a bot's illegal answer
(`info["illegal"]` says so).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from bots import protocol
from bots.rl.env import (
    REWARDS,
    Observation,
    final_rewards,
    hand_rewards,
    observation,
    observation_space,
)
from bots.rl.opponents import Opponent, opponent
from bots.runner.fouls import safe_default
from bots.sdk import actions
from engine import Game, Variants, new_game, observe, redact
from engine.rules import ruleset_limits


class GrassSingleEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One learner, the rest of the table played by `opponents` (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012  (gymnasium declares it so)

    def __init__(
        self,
        opponents: Sequence[str | Opponent] = ("greedy", "greedy", "greedy"),
        ruleset: str = "modern",
        variants: Variants | None = None,
        limits: Mapping[str, int] | None = None,
        reward: str = "rank",
        seat: int | None = None,
        sandboxed: bool = True,
        illegal: str = "raise",
    ) -> None:
        if not 1 <= len(opponents) <= actions.MAX_OTHERS:
            raise ValueError(f"1 to 5 opponents, not {len(opponents)}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if illegal not in ("raise", "default"):
            raise ValueError(f"illegal must be 'raise' or 'default', not {illegal!r}")
        self.illegal = illegal
        self.players = len(opponents) + 1
        if seat is not None and not 0 <= seat < self.players:
            raise ValueError(f"no seat {seat} at a table of {self.players}")
        self.opponents: list[Opponent] = [
            o if not isinstance(o, str) else opponent(o, sandboxed=sandboxed) for o in opponents
        ]
        self.ruleset = ruleset
        self.variants = variants or Variants()
        self.limits = dict(limits) if limits else None
        self.reward = reward
        self.fixed_seat = seat
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(actions.SIZE)
        self.game: Game | None = None
        self.seat = 0
        self.seats: list[Opponent | None] = []
        self._read: list[int] = []
        self._reported = 0
        self._hand_start = 0
        self._scored = 0
        self._rng = random.Random()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._rng = random.Random(seed)
        game_seed = self._rng.getrandbits(63)
        self.seat = (
            self._rng.randrange(self.players) if self.fixed_seat is None else self.fixed_seat
        )
        others = iter(self.opponents)
        self.seats = [None if s == self.seat else next(others) for s in range(self.players)]
        game = self.game = new_game(
            self.ruleset, self.players, game_seed, self.variants, self.limits
        )
        self._read = [0] * self.players
        self._reported = self._hand_start = self._scored = 0
        names = list(game.names)
        for s, player in enumerate(self.seats):
            if player is not None:
                hello = protocol.hello(
                    seat=s,
                    players=names,
                    ruleset=game.ruleset.name,
                    variants=game.variants.as_dict(),
                    limits=ruleset_limits(game.ruleset),
                    decision_ms=1000,
                    bank_ms=30_000,
                )
                # From the env's own generator: the same reset(seed) replays the same game.
                player.start({**hello, "rng_seed": self._rng.getrandbits(48)})
        reward = self._play_others()
        return self._observe(), {"legal": self._legal(), "reward_before": reward}

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        game = self.game
        assert game is not None, "reset() first"
        if game.over:
            raise RuntimeError("the game is over: reset() first")
        try:
            text = actions.to_text(int(action), self.seat, self.players)
        except (IndexError, ValueError):
            text = ""
        struck = text not in game.moves
        if struck and self.illegal == "raise":
            raise ValueError(f"action {action} is not legal; legal: {self._legal()}")
        game.apply(safe_default(list(game.moves)) if struck else text)
        reward = self._play_others()
        return (
            self._observe(),
            reward,
            game.over,
            False,
            {"legal": self._legal(), "illegal": struck},
        )

    def _play_others(self) -> float:
        """Let the opponents decide until the learner must, or the game ends; the learner's
        reward over that stretch."""
        game = self.game
        assert game is not None
        reward = 0.0
        while True:
            reward += self._report()
            if game.over or game.to_act == self.seat:
                break
            s = game.to_act
            player = self.seats[s]
            assert player is not None
            view = observe(game, s, since=max(self._read[s], game.table.hand_start_event))
            self._read[s] = view["history_end"]
            choice = player.act(view)
            game.apply(choice if choice in game.moves else next(iter(game.moves)))
        if game.over:
            assert game.result is not None
            reward += final_rewards(game, self.reward)[self.seat]
            message = {"type": "game_end", "result": game.result, "ranks": game.result["ranks"]}
            for player in self.seats:
                if player is not None:
                    player.end(message)
        return reward

    def _report(self) -> float:
        """Tell the opponents of each hand scored since the last call (as `hand_end`, with the
        rest of the hand as each saw it); the learner's `score` reward for those hands."""
        game = self.game
        assert game is not None
        events = game.table.events
        while self._reported < len(events):
            event = events[self._reported]
            if event["e"] == "hand":
                self._hand_start = self._reported
            elif event["e"] == "hand-end":
                for s, player in enumerate(self.seats):
                    if player is None:
                        continue
                    since = max(self._read[s], self._hand_start)
                    history = [redact(e, s) for e in events[since : self._reported + 1]]
                    self._read[s] = self._reported + 1
                    player.hand_end(
                        {
                            "type": "hand_end",
                            "hand": event["hand"],
                            "scores": event["scores"],
                            "totals": event["totals"],
                            "held": event["held"],
                            "history": history,
                        }
                    )
            self._reported += 1
        if self.reward != "score" or len(game.table.hand_scores) == self._scored:
            return 0.0
        gained = hand_rewards(game, self._scored)[self.seat]
        self._scored = len(game.table.hand_scores)
        return gained

    def _observe(self) -> Observation:
        game = self.game
        assert game is not None
        return observation(game, self.seat)

    def _legal(self) -> list[str]:
        game = self.game
        assert game is not None
        return list(game.moves) if not game.over and game.to_act == self.seat else []

    def close(self) -> None:
        for player in self.opponents:
            player.close()
        self.game = None


def masked_random(mask: np.ndarray[Any, Any], rng: np.random.Generator) -> int:
    """A uniformly random legal action index, from an action mask."""
    return int(rng.choice(np.flatnonzero(mask)))
