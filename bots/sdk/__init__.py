"""The Python SDK for Grass dealers: subclass `Bot`, implement `choose`, call `run`.

    from bots.sdk import Bot, Observation, run

    class Cautious(Bot):
        def choose(self, obs: Observation) -> str:
            return obs.legal[0]

    if __name__ == "__main__":
        run(Cautious())

`choose` gets every decision (its `obs.legal` holds the text encodings of the legal actions;
return one of them). Deals are optional: return a `Deal` from `propose_deal` and the SDK walks
the deal's sub-decisions for you; `answer_deal` says yes or no to other players' offers.
Standard library only, so it runs unchanged in the ladder's sandbox. Protocol: bots/PROTOCOL.md.
The SDK speaks version 2 when the runner offers it (each request carries what changed, and the
SDK rebuilds the whole observation), version 1 otherwise; `choose` sees the same `Observation`.

`debug(...)` writes a line to stderr for the bot's author: on the ladder, the lines a bot
writes while it decides are kept with that decision and shown beside its frame in the replay
(only to the bot's owner, unless they make them public).
"""

from __future__ import annotations

import json
import sys
import time

from bots.protocol import PROTOCOLS, apply_changes, apply_hand_end, encode, initial_view
from bots.sdk.cards import keep_value

# Bots start faster without importing typing or dataclasses (about 30 ms); mypy reads this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from bots.protocol import Message
    from engine.moves import Move

__all__ = ["Bot", "Deal", "Observation", "SeatView", "cards", "debug", "greedy", "run", "serve"]


def debug(*parts: object, sep: str = " ") -> None:
    """Write `parts` (as `print` would) as one line on stderr, at once: the runner keeps what
    a bot writes there while it decides as that decision's debug lines (the latest 64 KiB of a
    match, bots/PROTOCOL.md section 5). Never raises: a closed stderr loses the line, not the
    game. Costs a write per call, so keep it to a line or two per decision."""
    try:
        sys.stderr.write(sep.join(str(part) for part in parts) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class SeatView:
    """One seat as everyone sees it."""

    __slots__ = (
        "cards",
        "extra_turns",
        "heat",
        "market_open",
        "name",
        "protected",
        "skips",
        "unprotected",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        self.name: str = data["name"]
        self.cards: int = data["cards"]
        self.market_open: bool = data["market_open"]
        self.heat: tuple[str, ...] = tuple(data["heat"])
        self.unprotected: tuple[str, ...] = tuple(data["unprotected"])
        self.protected: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
            (p["card"], tuple(p["covers"])) for p in data["protected"]
        )
        self.skips: int = data["skips"]
        self.extra_turns: int = data["extra_turns"]

    @property
    def showing(self) -> bool:
        """Market Open on top of the hassle pile: this seat may peddle."""
        return self.market_open and not self.heat

    def __repr__(self) -> str:
        return f"SeatView({self.name!r}, unprotected={self.unprotected}, heat={self.heat})"


class Observation:
    """What this bot's seat knows at a decision; `raw` is the protocol's dict (field by field
    in bots/PROTOCOL.md). `history` holds this hand's events as the seat saw them,
    accumulated by the SDK across requests. Treat `raw` as read-only: in protocol version 2
    the parts that did not change are the previous request's, and the next one's."""

    def __init__(
        self,
        data: dict[str, Any],
        history: tuple[dict[str, Any], ...] = (),
        bank_ms: int = 0,
        cpu_ms: int = 0,
        wall_ms: int = 0,
        received: float | None = None,
    ) -> None:
        self.raw = data
        self.seat: int = data["seat"]
        self.phase: str = data["phase"]
        self.legal: tuple[str, ...] = tuple(data["legal"])
        self._moves: list[Move] | None = None
        self.hand: tuple[str, ...] = tuple(data["hand"])
        self.seats: tuple[SeatView, ...] = tuple(SeatView(s) for s in data["seats"])
        self.totals: tuple[int, ...] = tuple(data["totals"])
        self.stack: int = data["stack"]
        self.wasted: tuple[str, ...] = tuple(data["wasted"])
        self.active: int = data["active"]
        self.hand_number: int = data["hand_number"]
        self.deal: dict[str, Any] | None = data.get("deal")
        self.notes: tuple[tuple[str, ...], ...] = tuple(tuple(n) for n in data.get("notes", ()))
        self.history: tuple[dict[str, Any], ...] = history or tuple(data.get("history", ()))
        self.bank_ms = bank_ms
        """CPU time left in this bot's game time bank when the request was sent."""
        self.cpu_ms = cpu_ms
        """CPU time this decision may use: the decision time plus the bank (`act.cpu_ms`)."""
        self.wall_ms = wall_ms
        """The wall-clock backstop of this decision (`act.wall_ms`)."""
        self.received = time.process_time() if received is None else received
        """This process's CPU clock (`time.process_time()`) when the request arrived."""

    def cpu_left(self) -> float:
        """Seconds of CPU time this decision has left, by this process's clock (all its
        threads). The runner counts the whole box: CPU used by child processes counts too,
        and is not seen here. Budget by this and a bot thinks as long on a busy worker as on
        an idle one."""
        return self.cpu_ms / 1000 - (time.process_time() - self.received)

    @property
    def me(self) -> SeatView:
        return self.seats[self.seat]

    @property
    def moves(self) -> list[Move]:
        """The legal actions as records, in `legal`'s order (`engine.moves`: a move's kind,
        card, target... read without splitting its text), parsed on first use."""
        moves = self._moves
        if moves is None:
            from engine.moves import parse

            moves = self._moves = [parse(text) for text in self.legal]
        return moves

    @property
    def opponents(self) -> list[int]:
        n = len(self.seats)
        return [(self.seat + k) % n for k in range(1, n)]


class Deal:
    """A hand-to-hand deal the bot wants to propose: give one card, ask for one."""

    __slots__ = ("give", "partner", "want")

    def __init__(self, partner: int, give: str, want: str) -> None:
        self.partner = partner
        self.give = give
        self.want = want


class Bot:
    """Base class for a dealer. Only `choose` is required."""

    name = "bot"
    protocol = 2
    """The newest protocol version the SDK may speak for this bot: it answers `hello` with the
    newest the runner offers up to this. Set 1 to be sent whole observations (for example to
    compare); the bot's `Observation`s are the same either way."""

    def choose(self, obs: Observation) -> str:
        """Return one of `obs.legal`."""
        raise NotImplementedError

    def propose_deal(self, obs: Observation) -> Deal | None:
        """Called on the bot's turn while it may still deal; None (the default) deals no more."""
        return None

    def answer_deal(self, obs: Observation) -> bool:
        """Accept (True) or decline (False) the offer in `obs.deal`. Default: decline."""
        return False

    def on_game_start(self, hello: Message) -> None:
        """The `hello` message: seat, players, ruleset, variants, time limits."""

    def on_hand_end(self, message: Message) -> None:
        """A hand was scored: `message` has `scores` and `totals`."""

    def on_game_end(self, message: Message) -> None:
        """The game is over: `message["result"]` has totals and ranks."""


class _Driver:
    """Routes decisions: deal sub-steps from a `Deal` plan, answers, everything else to
    `choose`. Invalid answers fall back to the first legal action so a bug costs a move, not
    the game."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.plan: Deal | None = None
        self.history: list[dict[str, Any]] = []
        self.hand = 0
        self.hello: Message = {}
        self.view: dict[str, Any] = {}
        """Version 2: the observation at the last request, to apply the next changes to."""

    def start(self, hello: Message) -> int:
        """The version to answer `hello` with: the newest the runner offers (in
        `hello.protocols`; a runner without it speaks only version 1) up to `Bot.protocol`."""
        self.hello = hello
        offered = hello.get("protocols") or [1]
        usable = [v for v in offered if v in PROTOCOLS and v <= self.bot.protocol]
        return max(usable, default=1)

    def hand_end(self, message: Message) -> None:
        """A hand was scored: version 2 requests carry no totals or hand scores."""
        if self.view:
            self.view = apply_hand_end(self.view, message)

    def decide(self, obs: Observation) -> str:
        legal = obs.legal
        if obs.phase == "turn":
            self.plan = None
            if any(a.startswith("deal @") for a in legal):
                plan = self.bot.propose_deal(obs)
                if plan is not None and f"deal @{plan.partner}" in legal:
                    self.plan = plan
                    return f"deal @{plan.partner}"
        elif obs.phase == "deal-answer":
            accepts = [a for a in legal if a.startswith("accept")]
            if accepts and self.bot.answer_deal(obs):
                want = (obs.deal or {}).get("want")
                if f"accept {want}" in accepts:
                    return f"accept {want}"
                if accepts == ["accept"]:
                    return "accept"
                # Hidden deals, the wanted card not held: hand over the least useful card,
                # never whichever the list happens to name first.
                me = obs.me
                return min(
                    accepts,
                    key=lambda a: keep_value(a.split()[1], me.market_open, bool(me.heat)),
                )
            return "decline"
        elif self.plan is not None:
            steps = {
                "deal-give": [f"give {self.plan.give}", f"announce {self.plan.give}"],
                "deal-want": [f"want {self.plan.want}"],
                "deal-stash": ["done"],
                "deal-hand-over": [f"give {self.plan.give}"],
            }.get(obs.phase, [])
            for step in steps:
                if step in legal:
                    return step
        try:
            choice = self.bot.choose(obs)
        except Exception:
            # The author sees the traceback in the match's stderr; the game goes on.
            import traceback

            traceback.print_exc(file=sys.stderr)
            return legal[0]
        return choice if choice in legal else legal[0]

    def observation(self, message: Message, received: float | None = None) -> Observation:
        """The request's observation: sent whole (version 1) or rebuilt from what changed
        (version 2). The message says which, so the SDK follows whatever the runner speaks."""
        changes = message.get("changes")
        if changes is None:
            data = message["observation"]
        else:
            view = self.view or initial_view(self.hello)
            data = self.view = apply_changes(view, changes)
        if data["hand_number"] != self.hand:
            self.hand = data["hand_number"]
            self.history = []
        self.history.extend(data.get("history", ()))
        return Observation(
            data,
            tuple(self.history),
            message.get("bank_ms", 0),
            message.get("cpu_ms", 0),
            message.get("wall_ms", 0),
            received,
        )


def serve(bot: Bot, stdin: IO[str], stdout: IO[bytes]) -> None:
    """Speak the protocol on the given streams until `game_end` or end of input."""
    driver = _Driver(bot)
    for line in stdin:
        received = time.process_time()
        message = _json(line)
        kind = message.get("type")
        if kind == "hello":
            bot.on_game_start(message)
            version = driver.start(message)
            stdout.write(encode({"type": "ready", "protocol": version, "name": bot.name}))
        elif kind == "act":
            action = driver.decide(driver.observation(message, received))
            stdout.write(encode({"type": "action", "id": message["id"], "action": action}))
        elif kind == "hand_end":
            driver.hand_end(message)
            bot.on_hand_end(message)
        elif kind == "game_end":
            bot.on_game_end(message)
            return
        stdout.flush()


def _json(line: str) -> Message:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def run(bot: Bot) -> None:
    """Serve `bot` on stdin/stdout. Errors are printed to stderr (the author sees them in the
    match log) and end the process with status 1."""
    try:
        serve(bot, sys.stdin, sys.stdout.buffer)
    except Exception:
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.exit(1)
