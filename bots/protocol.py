"""The dealer protocol, versions 1 and 2: JSON Lines between the runner and a bot process.

Each message is one JSON object on one line (UTF-8, at most `MAX_LINE` bytes). The runner
writes to the bot's stdin; the bot answers on stdout. Only two runner messages want a reply:
`hello` (answer `ready`) and `act` (answer `action` with the same `id`). Everything the bot
prints on stderr is kept, truncated, for its author. `bots/PROTOCOL.md` is the full reference.

The bot picks the version in `ready` (`chosen_version`). Version 1's `act` carries the whole
observation; version 2's carries what changed since the bot's previous request (written by
`bots.runner.feed`), and `apply_changes` and `apply_hand_end` rebuild the observation from it.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # bots start faster without importing typing
    from typing import Any

    Message = dict[str, Any]
else:
    Message = dict

PROTOCOL_VERSION = 2
"""The newest version of the protocol (bots/PROTOCOL.md)."""
PROTOCOLS = (1, 2)
"""The versions the runner speaks, offered in `hello.protocols`; the bot picks one in `ready`."""
HELLO_PROTOCOL = 1
"""What `hello.protocol` says: version 1 bots were told to exit when it is not a version they
know, so it stays 1; `hello.protocols` offers the others."""
MAX_LINE = 1 << 20
"""Longest line the runner sends (1 MiB)."""
MAX_REPLY = 64 << 10
"""Longest line a bot may send (64 KiB; a reply is a few dozen bytes). A longer one forfeits."""
REPLY_LINES = 4
"""Lines a bot may send for one request: its answer, and late answers to earlier requests."""
REPLY_BYTES = 128 << 10
"""Bytes a bot may send for one request. Past either cap, a strike ("flood"): every line the
runner reads is parsed, so without a cap a bot's cheap writes of late answers cost the referee
many times the bot's own CPU (eight 1 MB late answers a decision: 78 times)."""


class ProtocolError(ValueError):
    """A bot's reply that is not a valid protocol message."""


def encode(message: Message) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def hello(
    *,
    seat: int,
    players: list[str],
    ruleset: str,
    variants: dict[str, Any],
    limits: dict[str, int],
    decision_ms: int,
    bank_ms: int,
    wall_factor: float = 3.0,
    cpu_clock: bool = True,
    protocols: tuple[int, ...] = (1,),
) -> Message:
    """`time.clock` is "cpu" when decision and bank time are CPU time of the bot's box (the
    sandbox, so always on the ladder), "wall" when the bot runs without one. `protocols` are
    the versions the sender can speak after `ready`: the runner offers `PROTOCOLS`; a caller
    that speaks only version 1 sends the `hello` of before, without `protocols`."""
    message: Message = {
        "type": "hello",
        "protocol": HELLO_PROTOCOL,
        "seat": seat,
        "players": players,
        "ruleset": ruleset,
        "variants": variants,
        "limits": limits,
        "time": {
            "decision_ms": decision_ms,
            "bank_ms": bank_ms,
            "clock": "cpu" if cpu_clock else "wall",
            "wall_factor": wall_factor,
        },
    }
    if protocols != (1,):
        message["protocols"] = list(protocols)
    return message


def act(
    request_id: int, observation: Message, *, bank_ms: int, cpu_ms: int, wall_ms: int
) -> Message:
    """A request. `cpu_ms` is the CPU time the bot may use on it (its decision time plus what
    is left in its bank), `wall_ms` the wall-clock backstop; past either, a timeout."""
    return {
        "type": "act",
        "id": request_id,
        "bank_ms": bank_ms,
        "cpu_ms": cpu_ms,
        "wall_ms": wall_ms,
        "observation": observation,
    }


def chosen_version(ready: Message) -> int:
    """The version a bot speaks, from its `ready`: 2 only for exactly the integer 2 (JSON
    `2`, not `2.0`, `"2"` or `true`); anything else, or nothing, is version 1."""
    version = ready.get("protocol")
    return version if type(version) is int and version in PROTOCOLS else 1


def initial_view(hello: Message) -> Message:
    """A version 2 bot's observation before its first request: the fields `hello` gave
    (seat, players, ruleset, variants, target, limits) and the empty lists the first request's
    changes fill. Every other field arrives in that request."""
    players = hello["players"]
    return {
        "seat": hello["seat"],
        "players": players,
        "ruleset": hello["ruleset"],
        "variants": hello["variants"],
        "target": hello["variants"]["target"],
        "limits": hello["limits"],
        "seats": [None] * len(players),
        "wasted": [],
        "notes": [],
        "totals": [0] * len(players),
        "hand_scores": [],
    }


_ADDED = {"wasted_added": "wasted", "notes_added": "notes"}
"""Version 2 fields that add to a list of the observation instead of replacing it."""


def apply_changes(view: Message, changes: Message) -> Message:
    """The observation at a version 2 request: `view` (the observation at the previous
    request, or `initial_view`) with the request's `changes` applied. A field in `changes`
    replaces the observation's, except `wasted_added` and `notes_added` (appended to `wasted`
    and `notes`) and `seats` (null keeps a seat's entry); `packet` and `kept` are there only
    when the request carries them. Returns a new dict and new lists: `view` is unchanged, so
    a bot may keep its earlier observations."""
    new = dict(view)
    new.pop("packet", None)
    new.pop("kept", None)
    for key, value in changes.items():
        if key == "seats":
            new[key] = [
                old if seat is None else seat for old, seat in zip(view[key], value, strict=True)
            ]
        elif key in _ADDED:
            field = _ADDED[key]
            new[field] = view[field] + value
        else:
            new[key] = value
    return new


def apply_hand_end(view: Message, hand_end: Message) -> Message:
    """The observation after a `hand_end`, for version 2 (whose requests carry no totals or
    hand scores): its totals, and its hand's scores added to `hand_scores`."""
    new = dict(view)
    new["totals"] = hand_end["totals"]
    new["hand_scores"] = view["hand_scores"] + [[s["score"] for s in hand_end["scores"]]]
    return new


def parse_reply(line: bytes, expect: str, request_id: int | None = None) -> Message:
    """Decode one reply line; raises ProtocolError saying what is wrong with it, and nothing
    else, whatever the bytes: a reply is a bot's move or a strike, never a runner crash.

    `json.loads` raises more than JSONDecodeError on hostile input: RecursionError for deep
    nesting (`[` x 200,000), ValueError for an integer of more than 4,300 digits (Python's
    integer-string limit), UnicodeDecodeError, MemoryError. All of them are the bot's fault.
    """
    try:
        message = json.loads(line)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProtocolError(f"not JSON: {line[:80]!r} ({_why(exc)})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"not a JSON object: {line[:80]!r}")
    if message.get("type") != expect:
        raise ProtocolError(f"expected a {expect!r} message, got type {shown(message.get('type'))}")
    if request_id is not None and message.get("id") != request_id:
        raise ProtocolError(f"reply for request {shown(message.get('id'))}, expected {request_id}")
    if expect == "action" and not isinstance(message.get("action"), str):
        raise ProtocolError("an 'action' message needs an 'action' string")
    return message


def _why(exc: BaseException) -> str:
    """A short, printable reason (an exception's text may quote the hostile input)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large to decode"
    return shown(str(exc), 120)


def shown(value: object, limit: int = 80) -> str:
    """`repr` of a value a bot sent, cut to `limit` characters, ASCII only and never raising:
    safe in a log line, an error message or a database text field (no NUL, no lone
    surrogate). Integers too long to print (Python refuses past 4,300 digits) are described."""
    try:
        text = ascii(value)
    except ValueError:
        bits = value.bit_length() if isinstance(value, int) else 0
        text = f"<an integer of about {bits * 30103 // 100000} digits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
