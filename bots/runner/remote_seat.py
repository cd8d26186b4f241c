"""A remote seat as the referee plays it: greeted with the game's setup, then asked each of
its decisions with the seat's observation, on a wall clock of its own and under the same
fault policy as a bot (`bots.runner.fouls`).

`bots.runner.remote` is the other side, the contract a caller implements (the ladder's relay,
a test's script), and stays free of the runner's machinery; this is the referee's, kept out
of `bots.runner.match` so that its game loop asks a seat without caring what plays in it.
"""

from __future__ import annotations

import time

from bots import protocol
from bots.runner.feed import Feeds
from bots.runner.fouls import Fouls, safe_default
from bots.runner.remote import AgentGone, RemoteAgent, RemoteRequest
from bots.runner.seats import Seat, TimeControl
from engine.game import Game
from engine.observation import observe
from engine.rules import ruleset_limits


def start_agent(seat: Seat, game: Game, tc: TimeControl, fouls: Fouls, feeds: Feeds) -> None:
    """Tell a remote seat the game's setup; its clock is wall time, with no bank."""
    assert seat.agent is not None
    hello = protocol.hello(
        seat=seat.index,
        players=list(game.names),
        ruleset=game.ruleset.name,
        variants=game.variants.as_dict(),
        limits=ruleset_limits(game.ruleset),
        decision_ms=tc.remote_decision_ms,
        bank_ms=0,
        wall_factor=1.0,
        cpu_clock=False,
    )
    try:
        seat.agent.start(hello)
    except AgentGone as exc:
        fouls.forfeit(seat, f"did not start: {exc}")
        return
    # What it is told later reads as protocol version 1 has it (`Referee.tell`).
    seat.feed = feeds.for_seat(seat.index, 1)


def decide_remote(
    seat: Seat, agent: RemoteAgent, legal: list[str], game: Game, tc: TimeControl, fouls: Fouls
) -> str:
    """A remote seat's action: its agent's answer to the seat's observation, or the safe
    default (and a strike) when none came in time or it was not legal; the seat forfeits
    when its agent is gone."""
    seat.request += 1
    timeout_s = tc.remote_decision_ms / 1000
    request = RemoteRequest(
        seat=seat.index,
        request=seat.request,
        observation=observe(game, seat.index),
        legal=tuple(legal),
        timeout_s=timeout_s,
    )
    started = time.perf_counter()
    try:
        action = agent.decide(request)
    except AgentGone as exc:
        fouls.forfeit(seat, f"gone: {exc}")
        return safe_default(legal)
    finally:
        wall_ms = (time.perf_counter() - started) * 1000
        report = seat.report
        report.decisions += 1
        report.think_ms += wall_ms
        report.max_think_ms = max(report.max_think_ms, wall_ms)
    if action is None:
        seat.report.timeouts += 1
        return fouls.strike(seat, "timeout", f"no answer in {timeout_s:.0f} s")
    if not isinstance(action, str) or action not in game.moves:
        shown = protocol.shown(action, 200)
        return fouls.strike(seat, "illegal", f"illegal action {shown}")
    return action
