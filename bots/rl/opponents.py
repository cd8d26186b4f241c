"""Opponents for a learner: the example bots in this process, or any bot in the sandbox.

An opponent gets what a bot gets over the protocol, in the same order: `start(hello)`, then
`act(view)` for each of its decisions (the view is `engine.observe` for its seat, with the
events since its previous view), `hand_end(message)` and `end(message)`. `opponent(spec)`
makes one from a name (`random`, `greedy`, `strong`) or a bot's path.

The examples run in this process (fast: no sandbox, no pipes). A path runs the bot in the
ladder's sandbox, as `grass match` does (`sandboxed=False`: a plain subprocess), speaking the
protocol; a bot that answers badly or too late gets the safe default, as in a match.
"""

from __future__ import annotations

import importlib.util
import random
import time
from pathlib import Path
from typing import Any, Protocol

from bots import protocol
from bots.sdk import Bot, _Driver

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DECISION_S = 10.0
"""Wall time a sandboxed opponent may take per decision before the safe default is played."""


class Opponent(Protocol):
    name: str

    def start(self, hello: dict[str, Any]) -> None: ...
    def act(self, view: dict[str, Any]) -> str: ...
    def hand_end(self, message: dict[str, Any]) -> None: ...
    def end(self, message: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


class RandomOpponent:
    """A uniformly random legal action, seeded by the game's `hello.rng_seed`."""

    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start(self, hello: dict[str, Any]) -> None:
        self.rng = random.Random(hello.get("rng_seed", 0))

    def act(self, view: dict[str, Any]) -> str:
        legal: list[str] = view["legal"]
        return self.rng.choice(legal)

    def hand_end(self, message: dict[str, Any]) -> None:
        pass

    def end(self, message: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


class SdkOpponent:
    """An SDK `Bot` run in this process through the SDK's own driver (deal plans, answers)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.driver = _Driver(bot)

    def start(self, hello: dict[str, Any]) -> None:
        self.driver = _Driver(self.bot)
        self.bot.on_game_start(hello)

    def act(self, view: dict[str, Any]) -> str:
        # The ladder's default clocks, so a bot that budgets its thinking thinks as it would.
        message = {"observation": view, "bank_ms": 30_000, "cpu_ms": 31_000, "wall_ms": 93_000}
        return self.driver.decide(self.driver.observation(message))

    def hand_end(self, message: dict[str, Any]) -> None:
        self.bot.on_hand_end(message)

    def end(self, message: dict[str, Any]) -> None:
        self.bot.on_game_end(message)

    def close(self) -> None:
        pass


def example_bot(name: str) -> Bot:
    """The example bot `name` (its `bot.py` loaded as a module), as an SDK `Bot`."""
    path = EXAMPLES / name / "bot.py"
    spec = importlib.util.spec_from_file_location(f"grass_example_{name}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ValueError(f"no example bot {name!r}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bots = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
    ]
    if len(bots) != 1:
        raise ValueError(f"example {name!r} defines {len(bots)} Bot classes, not one")
    bot: Bot = bots[0]()
    return bot


class ProcessOpponent:
    """A bot's files run as a process (in the sandbox unless `sandboxed=False`), spoken to in
    the protocol. A bot that fails to answer in time, or answers outside `legal`, gets the safe
    default for that decision; one that is gone plays the safe default to the end."""

    def __init__(self, path: str | Path, *, sandboxed: bool = True) -> None:
        from bots.runner.botfiles import load_bot
        from bots.runner.build import build

        source = load_bot(path)
        made = build(source, sandboxed=sandboxed)
        if not made.ok:
            raise ValueError(f"{path}: the build failed:\n{made.log}")
        self.source = made.source(source)
        self.name = source.name
        self.sandboxed = sandboxed
        self.proc: Any = None
        self.box: Any = None
        self.folder: Path | None = None
        self.request = 0

    def start(self, hello: dict[str, Any]) -> None:
        from bots.runner.boxes import start_bot

        self.close()
        self.proc, self.box, self.folder = start_bot(self.source, self.sandboxed)
        self.request = 0
        self._send(hello)
        try:
            line = self.proc.readline(time.perf_counter() + 10.0)
            protocol.parse_reply(line, "ready")
        except Exception as exc:
            self.close()
            raise RuntimeError(f"{self.name} did not start: {exc}") from None

    def act(self, view: dict[str, Any]) -> str:
        from bots.runner.fouls import safe_default

        legal: list[str] = view["legal"]
        if self.proc is None:
            return safe_default(legal)
        self.request += 1
        message = protocol.act(self.request, view, bank_ms=30_000, cpu_ms=31_000, wall_ms=93_000)
        deadline = time.perf_counter() + DECISION_S
        try:
            self._send(message)
            while True:
                reply = protocol.parse_reply(self.proc.readline(deadline), "action")
                if reply.get("id") == self.request:
                    break
        except Exception:
            return safe_default(legal)
        action = reply.get("action")
        return action if isinstance(action, str) and action in legal else safe_default(legal)

    def hand_end(self, message: dict[str, Any]) -> None:
        self._tell(message)

    def end(self, message: dict[str, Any]) -> None:
        self._tell(message)
        if self.proc is not None:
            self.proc.wait_exit(0.5)
        self.close()

    def _tell(self, message: dict[str, Any]) -> None:
        try:
            self._send(message)
        except Exception:
            self.close()

    def _send(self, message: dict[str, Any]) -> None:
        self.proc.send(protocol.encode(message), time.perf_counter() + 1.0)

    def close(self) -> None:
        from bots.runner.boxes import stop_bot

        if self.proc is not None or self.box is not None or self.folder is not None:
            stop_bot(self.proc, self.box, self.folder)
        self.proc = self.box = self.folder = None


def opponent(spec: str, *, sandboxed: bool = True) -> Opponent:
    """`random`, `greedy` or `strong` (in this process), or a bot's path (a `.py`, a `.zip`, a
    folder, any language `grass match` runs) played through the sandbox."""
    if spec == "random":
        return RandomOpponent()
    if (EXAMPLES / spec / "bot.py").is_file() and "/" not in spec:
        return SdkOpponent(example_bot(spec))
    return ProcessOpponent(spec, sandboxed=sandboxed)
