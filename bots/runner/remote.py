"""Remote seats: a seat whose decisions come from outside the runner, through an object the
caller hands to `play_match` instead of a bot's files (a *remote agent*). The ladder site
plays a person in a browser this way (its agent relays each request over the site's channel
layer and waits for the person's click); the tests script one with a plain function.

The runner treats a remote seat as it treats a bot, with the same fault policy
(bots/runner/fouls.py): no answer in `timeout_s` (wall time: a person has no CPU clock) or an
action that is not legal is a strike and the safe default plays; `max_strikes` strikes, or the
agent raising `AgentGone` (the person resigned, the relay is lost), forfeit the seat. The agent
sees exactly what a bot in that seat would: `engine.observe()` of its seat, never another
seat's hidden cards, and the same `hand_end` and `game_end` messages (as protocol version 1
sends them). Nothing here knows of the site: `bots` never imports `ladder`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class RemoteRequest:
    """One decision asked of a remote seat."""

    seat: int
    request: int
    """Counts the seat's requests from 1, as the protocol's request ids do."""
    observation: dict[str, Any]
    """`engine.observe(game, seat)`: the seat's whole view, this hand's history included, so
    an agent that missed earlier requests (a browser that reconnected) has all it may know."""
    legal: tuple[str, ...]
    """The legal actions; anything else the agent returns is a strike."""
    timeout_s: float
    """Wall time the agent has to answer (`TimeControl.remote_decision_ms`)."""


class AgentGone(Exception):
    """Raised by an agent that will decide no more (a person resigned, its relay is lost):
    the seat forfeits with the exception's message as the reason."""


@runtime_checkable
class RemoteAgent(Protocol):
    """What the referee needs of a remote seat. Its methods run on the referee's thread, and
    each must return promptly (`decide` within the request's `timeout_s`): the match waits
    on them."""

    @property
    def name(self) -> str:
        """The seat's name in the game (its log, its replay)."""
        ...

    def start(self, hello: dict[str, Any]) -> None:
        """The game's setup (the protocol's `hello`), before any request."""

    def decide(self, request: RemoteRequest) -> str | None:
        """The action for `request`, or None when no answer came within its `timeout_s`."""

    def tell(self, message: dict[str, Any]) -> None:
        """A message that wants no reply: `hand_end`, `game_end` (as protocol version 1 sends
        them), or `forfeit` with the reason once the seat is out."""

    def close(self) -> None:
        """The match is over (or failed): release whatever the agent holds."""


@dataclass
class CallableAgent:
    """A remote agent whose decisions come from a plain function of the request: scripted
    seats in tests, a local human at a terminal. It keeps what it was told."""

    name: str
    choose: Callable[[RemoteRequest], str | None]
    told: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False

    def start(self, hello: dict[str, Any]) -> None:
        self.told.append(hello)

    def decide(self, request: RemoteRequest) -> str | None:
        return self.choose(request)

    def tell(self, message: dict[str, Any]) -> None:
        self.told.append(message)

    def close(self) -> None:
        self.closed = True
