"""Reinforcement learning over the engine: a PettingZoo environment (`GrassEnv`) and a
Gymnasium one for a single learner against chosen opponents (`GrassSingleEnv`).

Needs the optional extra `rl` (`pip install -e '.[rl]'`: NumPy, Gymnasium, PettingZoo); the
`grass` command line never imports this package. The action space and the observation vector
live in the SDK (`bots.sdk.actions`, `bots.sdk.features`, standard library only), so a bot
trained here encodes its observations the same way at play time, in the ladder's runtime.
"""

from __future__ import annotations

from bots.rl.env import GrassEnv, observation
from bots.rl.single import GrassSingleEnv

__all__ = ["GrassEnv", "GrassSingleEnv", "observation"]
