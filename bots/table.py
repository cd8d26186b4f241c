"""`grass table`: play a game against the ladder's bots in a terminal.

The game is started through the REST API (`POST /api/games/`, or the game you are playing
found with `GET /api/games/`), then played over the match's WebSocket with the same API token
in the handshake's `Authorization` header; the messages are in docs/play.md ("The socket").
Each frame the server sends is the whole table as your seat sees it: at each request this
prints it as text with the legal actions numbered, and reads your choice from standard input.

Plain and robust: a lost connection is opened again (the server then sends the table as it
stands, with the request still waiting); Ctrl-C asks whether to resign, and a second Ctrl-C
leaves without resigning (the game goes on, the safe default playing for you); the end of
standard input leaves too. Nothing here imports the ladder: only the public API and socket.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO
from urllib.parse import urlsplit, urlunsplit

from bots.client import LadderError, signed_in
from engine.replay_frames import cards_info

RETRY_S = (1.0, 2.0, 5.0, 10.0, 10.0, 10.0)
"""Waits before opening a lost socket again (then it gives up)."""
RECV_TICK_S = 1.0
SILENCE_S = 60.0
"""A socket that has said nothing this long is opened again: the server sends a waiting
request again every 10 s and the bots move in seconds, so a silence this long is a message
lost on its way (the game's end, most likely), which the new socket's hello and frames tell."""
"""A receive waits at most this long at a time, so that Ctrl-C is heard at once."""
CLOSED = {
    4404: "there is no such match",
    4413: "the site refused a message as too big",
    4429: "the site closed the socket for sending too many messages",
}
"""Close codes of the live table's socket (ladder.live.consumers) that opening it again would
not help."""

CARDS: dict[str, dict[str, Any]] = cards_info()


# ---------------------------------------------------------------------- rendering


def money(amount: int) -> str:
    return f"-${-amount:,}" if amount < 0 else f"${amount:,}"


def card(code: str) -> str:
    """A card in words: its title, with a peddle's value."""
    info = CARDS.get(code)
    if info is None:
        return code
    if info["family"] == "peddle" and info["value"]:
        return f"{info['title']} {money(info['value'])}"
    return str(info["title"])


def cards(codes: Sequence[str]) -> str:
    return ", ".join(card(code) for code in codes) if codes else "-"


def render_table(frame: dict[str, Any]) -> list[str]:
    """The table of a frame as lines of text: the hand's facts, then every seat (its total,
    cards in hand, hassle pile, marketplace, and its hand face up when the frame holds it:
    your own, or every seat's once the game is over)."""
    view = frame["view"]
    players: list[str] = view["players"]
    me = view.get("seat")
    facts = [f"Hand {view['hand_number']}" if view.get("hand_number") else "Before the first hand"]
    facts.append(f"stack {view['stack']} cards")
    facts.append(f"wasted {len(view.get('wasted') or [])}")
    if view.get("phase") != "over" and view.get("active", -1) >= 0:
        facts.append(f"turn: {players[view['active']]}")
    to_act = view.get("to_act", -1)
    if to_act >= 0 and to_act != view.get("active"):
        facts.append(f"deciding: {players[to_act]} ({view.get('phase')})")
    lines = [" · ".join(facts)]
    hands = frame.get("hands")
    for index, seat in enumerate(view["seats"]):
        marks = []
        if view.get("dealer") == index:
            marks.append("dealer")
        if me == index:
            marks.append("you")
        name = players[index] + (f" ({', '.join(marks)})" if marks else "")
        total = money(view["totals"][index])
        lines.append(f"  seat {index}  {name}: {total}, {seat['cards']} cards in hand")
        pile = (["market-open"] if seat.get("market_open") else []) + list(seat.get("heat") or [])
        lines.append(f"      hassle pile: {cards(pile)}")
        market = [cards(seat.get("unprotected") or [])] if seat.get("unprotected") else []
        for group in seat.get("protected") or []:
            market.append(f"[{card(group['card'])} protects {cards(group['covers'])}]")
        lines.append(f"      marketplace: {', '.join(market) if market else '-'}")
        hand = None
        if isinstance(hands, list) and index < len(hands):
            hand = hands[index]
        elif me == index and isinstance(view.get("hand"), list):
            hand = view["hand"]
        if hand is not None:
            lines.append(f"      hand: {cards(hand)}")
    return lines


def render_actions(request: dict[str, Any]) -> list[str]:
    """The request's legal actions, numbered from 1, each in words and as its action."""
    labels = request.get("labels") or []
    lines = []
    for number, action in enumerate(request["legal"], start=1):
        label = labels[number - 1] if number - 1 < len(labels) else action
        lines.append(f"  {number:>2}. {label}" + (f"   [{action}]" if label != action else ""))
    return lines


def render_result(frame: dict[str, Any]) -> list[str]:
    """Places and totals from the last frame's `result`."""
    result = frame.get("result") or {}
    players: list[str] = frame["view"]["players"]
    me = frame["view"].get("seat")
    totals = result.get("totals") or frame["view"]["totals"]
    ranks = result.get("ranks") or [None] * len(players)
    order = sorted(range(len(players)), key=lambda i: (ranks[i] or 99, i))
    lines = []
    for index in order:
        you = " (you)" if index == me else ""
        place = f"{ranks[index]}." if ranks[index] else "-"
        lines.append(f"  {place:>3} {players[index]}{you}: {money(totals[index])}")
    if result.get("reason"):
        lines.append(f"  (after {result.get('hands', '?')} hand(s): {result['reason']})")
    return lines


def new_lines(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """The lines of `new` not already in `old`: a frame carries the last lines of the game, so
    the window slides; the longest end of `old` that starts `new` was shown already."""
    for overlap in range(min(len(old), len(new)), 0, -1):
        if list(old[len(old) - overlap :]) == list(new[:overlap]):
            return list(new[overlap:])
    return list(new)


@dataclass(frozen=True)
class Choice:
    """What a line typed at the prompt asks for: `act` (with the action), `resign`, `table`
    (print it again), `help` (the actions again), or `bad` (with why)."""

    kind: str
    value: str = ""


def parse_choice(text: str, legal: Sequence[str]) -> Choice:
    """A number from 1, an action's exact text, or a command: `t`, `r`/`resign`, `?`."""
    text = text.strip()
    if text in ("", "?", "h", "help"):
        return Choice("help")
    if text in ("t", "table"):
        return Choice("table")
    if text in ("r", "resign"):
        return Choice("resign")
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(legal):
            return Choice("act", legal[number - 1])
        return Choice("bad", f"choose 1 to {len(legal)}")
    if text in legal:
        return Choice("act", text)
    return Choice("bad", "type an action's number (t: the table, r: resign, ?: the actions)")


# ---------------------------------------------------------------------- the socket


class SocketClosed(Exception):
    """The socket closed: `code` is its close code (None when the connection was lost)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(code)
        self.code = code


class Socket(Protocol):
    def recv(self, timeout: float) -> str | None:
        """A message, or None when none came in `timeout` seconds; SocketClosed when closed."""

    def send(self, text: str) -> None:
        """Send a message; SocketClosed when closed."""

    def close(self) -> None: ...


def socket_url(site: str, given: str) -> str:
    """The game's socket on the site the token belongs to: the path the API answered
    (`socket_url`), on `site`'s host, `ws://` for http and `wss://` for https. The token is
    never sent to a host the answer names."""
    parts = urlsplit(site)
    scheme = "wss" if parts.scheme == "https" else "ws"
    prefix = parts.path.rstrip("/")
    return urlunsplit((scheme, parts.netloc, prefix + urlsplit(given).path, "", ""))


class WebSocket:
    """A live table's socket over the `websockets` library, with the API token."""

    def __init__(self, url: str, token: str) -> None:
        from websockets.exceptions import InvalidHandshake, InvalidStatus
        from websockets.sync.client import connect

        try:
            self.connection = connect(
                url,
                additional_headers={"Authorization": f"Token {token}"},
                open_timeout=15,
                max_size=2**22,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status == 403:
                raise LadderError(
                    f"the site refused the socket ({status}): the token is wrong or the "
                    "account is disabled; log in again with `grass login`"
                ) from None
            raise LadderError(f"the site refused the socket ({status})") from None
        except (InvalidHandshake, OSError, TimeoutError) as exc:
            raise SocketClosed(None) from exc

    def recv(self, timeout: float) -> str | None:
        from websockets.exceptions import ConnectionClosed

        try:
            message = self.connection.recv(timeout=timeout)
        except TimeoutError:
            return None
        except ConnectionClosed as exc:
            raise SocketClosed(exc.rcvd.code if exc.rcvd else None) from None
        return message if isinstance(message, str) else message.decode()

    def send(self, text: str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self.connection.send(text)
        except ConnectionClosed as exc:
            raise SocketClosed(exc.rcvd.code if exc.rcvd else None) from None

    def close(self) -> None:
        self.connection.close()


# ---------------------------------------------------------------------- the game


class Leave(Exception):
    """The person leaves the table (standard input ended, or a second Ctrl-C)."""


class Line:
    """The game's socket, kept open: opened again after a loss (after a wait, then longer
    ones) or a silence of SILENCE_S, unless its close code says that cannot help (CLOSED)."""

    def __init__(
        self,
        connect: Callable[[], Socket],
        say: Callable[..., None],
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.connect = connect
        self.say = say
        self.clock = clock
        self.sleep = sleep
        self.socket: Socket | None = None
        self.heard_at = clock()
        """When the socket last said something (this client's clock)."""

    def open(self, again: bool = False) -> None:
        """Open the socket: at once, or after a loss (`again`) after a wait, then again after
        longer ones."""
        waits = RETRY_S if again else (0.0, *RETRY_S)
        for wait in waits:
            if wait:
                self.say(f"Connection lost; connecting again in {wait:g} s...")
                self.sleep(wait)
            try:
                self.socket = self.connect()
                return
            except SocketClosed:
                continue
        raise LadderError("cannot reach the game's socket: try `grass table --resume` later")

    def recv(self) -> str | None:
        """A message, or None after RECV_TICK_S of nothing (or a loss, mended)."""
        assert self.socket is not None
        try:
            text = self.socket.recv(RECV_TICK_S)
        except SocketClosed as closed:
            self._lost(closed.code)
            return None
        if text is not None:
            self.heard_at = self.clock()
        elif self.clock() - self.heard_at >= SILENCE_S:
            self.say(f"Nothing heard for {SILENCE_S:g} s; connecting again...")
            self.socket.close()
            self.open()
            self.heard_at = self.clock()
        return text

    def send(self, message: dict[str, Any]) -> bool:
        """Send `message`; False if the socket was lost (it is open again)."""
        assert self.socket is not None
        try:
            self.socket.send(json.dumps(message))
        except SocketClosed as closed:
            self._lost(closed.code)
            return False
        return True

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()

    def _lost(self, code: int | None) -> None:
        """The socket closed before the end: open it again, unless it cannot help."""
        if code in CLOSED:
            raise LadderError(CLOSED[code])
        self.close()
        self.open(again=True)


class TableSession:
    """One game at the table, from the socket's `hello` to its `end`.

    `connect` opens the socket (again, after a loss); `ask` reads a line from the person
    (`input`); `out` is where the table is printed. `run` returns the exit status: 0 for a
    game played to its end, 1 for one that failed or was cancelled, 130 when the person left.
    """

    def __init__(
        self,
        connect: Callable[[], Socket],
        *,
        out: TextIO,
        ask: Callable[[str], str],
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.out = out
        self.ask = ask
        self.clock = clock
        self.line = Line(connect, self.say, clock, sleep)
        self.seat: int | None = None
        self.status: str | None = None
        self.seq = 0
        self.skew = 0.0
        """The server's clock minus this one, in seconds (from the last frame)."""
        self.frame: dict[str, Any] | None = None
        self.lines: list[str] = []
        self.pending: dict[str, Any] | None = None
        """The request waiting for the person's answer, not answered yet."""
        self.answered: set[int] = set()
        self.resigned = False
        self.told_out = False
        self.hellos = 0

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

    def run(self) -> int:
        self.line.open()
        try:
            while True:
                try:
                    if self.pending is not None:
                        self._decide(self.pending)
                        continue
                    text = self.line.recv()
                    if text is None:
                        continue
                    ended = self._heard(text)
                    if ended is not None:
                        return ended
                except KeyboardInterrupt:
                    if self._interrupted():
                        return 130
        except Leave as why:
            self.say(
                f"{why} Left the table: the game goes on without you (the safe default plays "
                "your seat); `grass table --resume` joins it again."
            )
            return 130
        finally:
            self.line.close()

    # ------------------------------------------------------------------ what the server says

    def _heard(self, text: str) -> int | None:
        try:
            message = json.loads(text)
        except ValueError:
            return None
        if not isinstance(message, dict):
            return None
        kind = message.get("type")
        if kind == "hello":
            self._hello(message)
        elif kind == "frame" and isinstance(message.get("frame"), dict):
            self._frame(message["frame"], message.get("now"))
        elif kind == "end":
            return self._end(message.get("status"))
        return None

    def _hello(self, message: dict[str, Any]) -> None:
        self.hellos += 1
        self.seat = message.get("seat")
        self.status = message.get("status")
        if self.hellos > 1:
            self.say("Connected again.")
            self.pending = None  # the table as it stands comes next, with any request
        if self.seat is None:
            self.say("You hold no seat in this match: watching it.")
        elif self.status == "queued":
            self.say("Waiting for a worker to start the game...")
        elif self.status == "running" and self.hellos == 1:
            self.say("The game is being played.")

    def _frame(self, frame: dict[str, Any], now: Any) -> None:
        seq = frame.get("seq", 0)
        if not isinstance(frame.get("view"), dict) or seq < self.seq:
            return  # an older frame (or not one)
        self.seq = seq
        if isinstance(now, int | float):
            self.skew = now / 1000 - self.clock()
        first = self.frame is None
        self.frame = frame
        fresh = new_lines(self.lines, frame.get("lines") or [])
        self.lines = list(frame.get("lines") or [])
        request = frame.get("request")
        if first and not request:
            self.say("", *render_table(frame), "")  # a request prints it anyway
        self.say(*(f"  · {line}" for line in fresh))
        if frame.get("out") and not self.told_out:
            self.told_out = True
            self.say(f"You are out of this game: {frame['out']}. The safe default plays for you.")
        if frame.get("over"):
            self.pending = None
            self.say("", "The game is over. Every hand, face up:", *render_table(frame))
        elif isinstance(request, dict) and request.get("id") not in self.answered:
            self.pending = request
        else:
            self.pending = None

    def _end(self, status: Any) -> int:
        self.pending = None
        if status == "finished":
            self.say("", "Result:", *(render_result(self.frame) if self.frame else []))
            return 0
        if self.resigned and self.frame is None:
            self.say("You resigned before the game started: it is cancelled.")
        else:
            self.say("The match failed on the server (it was not played to its end).")
        return 1

    # ------------------------------------------------------------------ the person

    def _seconds_left(self, request: dict[str, Any]) -> int:
        deadline = request.get("deadline")
        if not isinstance(deadline, int | float):
            return 0
        return max(0, round(deadline / 1000 - (self.clock() + self.skew)))

    def _read(self, prompt: str) -> str:
        try:
            return self.ask(prompt)
        except EOFError:
            raise Leave("Standard input ended.") from None

    def _decide(self, request: dict[str, Any]) -> None:
        assert self.frame is not None
        self.say("", *render_table(self.frame), "", "Your move:", *render_actions(request))
        legal: list[str] = request["legal"]
        while True:
            left = self._seconds_left(request)
            choice = parse_choice(
                self._read(f"Your move, 1-{len(legal)} (t: table, r: resign) [{left} s left]: "),
                legal,
            )
            if choice.kind == "act":
                self._act(request, choice.value)
                return
            if choice.kind == "resign":
                if self._resign():
                    return
            elif choice.kind == "table":
                self.say(*render_table(self.frame))
            elif choice.kind == "help":
                self.say(*render_actions(request))
            else:
                self.say(f"Not an action: {choice.value}.")

    def _act(self, request: dict[str, Any], action: str) -> None:
        late = self._seconds_left(request) <= 0
        if not self.line.send({"type": "act", "request": request["id"], "action": action}):
            return  # lost: the table comes again with the request, if it still waits
        self.answered.add(request["id"])
        self.pending = None
        if late:
            self.say("Too late: the time ran out, and the safe default was played for you.")
        else:
            self.say(f"Sent: {action}")

    def _resign(self) -> bool:
        """Ask, then resign; whether it was done."""
        answer = self._read(
            "Resign this game? You forfeit it and are placed last (a game not started yet is "
            "cancelled). [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            return False
        if self.line.send({"type": "resign"}):
            self.resigned = True
            self.pending = None
            self.say("Resigned: the bots finish the game without you...")
            return True
        return False

    def _interrupted(self) -> bool:
        """Ctrl-C: resign (asked first), or leave at a second Ctrl-C; whether to stop now."""
        if self.resigned:
            raise Leave("Interrupted.")
        self.say("")
        try:
            done = self._resign()
        except KeyboardInterrupt:
            raise Leave("Interrupted.") from None
        if not done:
            self.say("Not resigned: the game goes on (Ctrl-C twice leaves it).")
        return False


# ---------------------------------------------------------------------- grass table


def describe(game: dict[str, Any]) -> str:
    players = game["players"]
    others = [p for i, p in enumerate(players) if i != game["seat"]]
    hands = f"{game['hands']} hand(s)" if game.get("hands") else "a whole game"
    return (
        f"Game {game['id']}: you in seat {game['seat']} against {', '.join(others)} "
        f"({game['ruleset']}, {hands}, {game.get('decision_seconds') or '?'} s a decision, "
        "unrated)"
    )


def table(
    opponents: Sequence[str],
    *,
    ruleset: str,
    seat: int | None,
    hands: int,
    resume: bool,
    out: TextIO,
    ask: Callable[[str], str] = input,
) -> int:
    """`grass table`: start a game against `opponents` (as `grass challenge` names them), or
    with `resume` join the one you are playing, then play it here."""
    from bots.remote import opponent_spec

    ladder, me = signed_in()
    with ladder:
        if resume:
            playing = [g for g in ladder.games() if g["status"] in ("queued", "running")]
            if not playing:
                raise LadderError("you have no game queued or running: `grass table BOT...`")
            game = playing[0]
        else:
            ids = []
            for spec in opponents:
                found = opponent_spec(ladder, me.username, spec)
                if "version" in found:
                    raise LadderError(
                        f"{spec}: a person's game plays each bot's ladder version (leave out @vN)"
                    )
                ids.append(found["bot"])
            body: dict[str, Any] = {"opponents": ids, "ruleset": ruleset, "hands": hands}
            if seat is not None:
                body["seat"] = seat
            game = ladder.game_create(body)
    print(describe(game), file=out)
    print(f"Its page: {me.site}{game['match_url']}", file=out)
    url = socket_url(me.site, game["socket_url"])
    session = TableSession(lambda: WebSocket(url, me.token), out=out, ask=ask)
    code = session.run()
    print(f"The match's page (its replay once recorded): {me.site}{game['match_url']}", file=out)
    return code
