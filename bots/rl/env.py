"""A PettingZoo `AECEnv` over the engine: every seat an agent, one decision per step.

    from bots.rl import GrassEnv

    env = GrassEnv(ruleset="modern", players=4)
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        env.step(action)

Agents are `seat_0` ... `seat_{n-1}`; the agent to act is the seat the game waits on, so one
seat may act several times in a row (its turn's deals, swap and card), and others act out of
turn (a deal's answer, a paranoia pass, a surrender). Actions are indices of the fixed action
space (`bots.sdk.actions`: relative seats, `python -m bots.sdk.actions` lists them); each
observation holds `observation`, the seat's vector (`bots.sdk.features`, built from
`engine.observe` for that seat alone, so it holds nothing the seat may not know), and
`action_mask`, 1 for each legal action (all 0 for a seat that is not to act).

Rewards come when the game ends, by `reward`: `rank` (default: 1 for first place down to -1 for
last, linearly; tied seats share a place), `win` (1 shared among the winners, else 0), or
`score` (each hand's score in $100,000 when the hand is scored, a dense signal for training).
A game always ends (the engine's hand limit), so episodes terminate and are never truncated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from bots.sdk import actions, features
from engine import Game, Variants, new_game, observe

REWARDS = ("rank", "win", "score")
"""The reward schemes `GrassEnv(reward=...)` offers."""
RENDER_MODES = ("ansi",)

Observation = dict[str, np.ndarray[Any, Any]]


def observation(game: Game, seat: int) -> Observation:
    """What `seat` observes now: its vector and the legal-action mask.

    Built from `engine.observe(game, seat)` only, with `since` at the end of the log (the
    vector reads no history), which keeps it cheap.
    """
    view = observe(game, seat, since=len(game.table.events))
    mask = np.zeros(actions.SIZE, dtype=np.int8)
    legal = view["legal"]
    if legal:
        mask[actions.indices(legal, seat, game.n)] = 1
    return {
        "observation": np.asarray(features.encode(view), dtype=np.float32),
        "action_mask": mask,
    }


def observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "observation": spaces.Box(-np.inf, np.inf, (features.SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (actions.SIZE,), dtype=np.int8),
        }
    )


def final_rewards(game: Game, reward: str) -> list[float]:
    """Each seat's reward at the end of the game, by the scheme `reward`."""
    result = game.result
    assert result is not None
    n = game.n
    if reward == "rank":
        return [1.0 - 2.0 * (rank - 1) / (n - 1) for rank in result["ranks"]]
    if reward == "win":
        winners = result["winners"]
        return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(n)]
    return [0.0] * n


def hand_rewards(game: Game, scored: int) -> list[float]:
    """The `score` scheme: the hands scored since `scored` hands, in $100,000, per seat."""
    rewards = [0.0] * game.n
    for hand in game.table.hand_scores[scored:]:
        for seat, score in enumerate(hand):
            rewards[seat] += score.score / features.MONEY
    return rewards


class GrassEnv(AECEnv):  # type: ignore[misc]  # PettingZoo ships no type information
    """Grass as a PettingZoo AEC environment (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "grass_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
    }

    def __init__(
        self,
        ruleset: str = "modern",
        players: int = 4,
        variants: Variants | None = None,
        limits: Mapping[str, int] | None = None,
        reward: str = "rank",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if not 2 <= players <= actions.MAX_OTHERS + 1:
            raise ValueError(f"Grass is for 2 to 6 players, not {players}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.ruleset = ruleset
        self.players = players
        self.variants = variants or Variants()
        self.limits = dict(limits) if limits else None
        self.reward = reward
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{i}" for i in range(players)]
        self.agents: list[str] = []
        space = observation_space()
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: spaces.Discrete(actions.SIZE) for a in self.possible_agents}
        self.game: Game | None = None
        self._scored = 0

    def observation_space(self, agent: str) -> spaces.Dict:
        space: spaces.Dict = self.observation_spaces[agent]
        return space

    def action_space(self, agent: str) -> spaces.Discrete:
        space: spaces.Discrete = self.action_spaces[agent]
        return space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game, dealt from `seed` (a fresh random one if None)."""
        if seed is None:
            seed = int(np.random.default_rng().integers(2**63))
        self.game = new_game(self.ruleset, self.players, seed, self.variants, self.limits)
        self._scored = 0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_act]

    def observe(self, agent: str) -> Observation:
        assert self.game is not None, "reset() first"
        return observation(self.game, self.possible_agents.index(agent))

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None and action is not None
        seat = game.to_act
        try:
            text = actions.to_text(int(action), seat, game.n)
        except (IndexError, ValueError):
            text = ""
        if text not in game.moves:
            raise ValueError(f"action {action} is not legal for {agent}; legal: {list(game.moves)}")
        self._cumulative_rewards[agent] = 0.0
        game.apply(text)
        rewards = [0.0] * game.n
        if self.reward == "score" and len(game.table.hand_scores) > self._scored:
            rewards = hand_rewards(game, self._scored)
            self._scored = len(game.table.hand_scores)
        if game.over:
            rewards = [
                a + b for a, b in zip(rewards, final_rewards(game, self.reward), strict=True)
            ]
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[game.to_act]
        self.rewards = dict(zip(self.possible_agents, rewards, strict=True))
        self._accumulate_rewards()

    def render(self) -> str | None:
        """`ansi`: the hand, the totals and the decision waited on, as one line of text."""
        if self.render_mode is None or self.game is None:
            return None
        game = self.game
        if game.over:
            assert game.result is not None
            return f"game over after {game.hand_no} hands: totals {game.result['totals']}"
        decision = game.decision
        return (
            f"hand {game.hand_no}, totals {list(game.totals)}: seat {decision.seat} "
            f"({decision.phase.value}) chooses among {len(decision.actions)} actions"
        )

    def close(self) -> None:
        self.game = None
