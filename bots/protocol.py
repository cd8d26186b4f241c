"""The dealer protocol, version 1: JSON Lines between the runner and a bot process.

Each message is one JSON object on one line (UTF-8, at most `MAX_LINE` bytes). The runner
writes to the bot's stdin; the bot answers on stdout. Only two runner messages want a reply:
`hello` (answer `ready`) and `act` (answer `action` with the same `id`). Everything the bot
prints on stderr is kept, truncated, for its author. `bots/PROTOCOL.md` is the full reference.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # bots start faster without importing typing
    from typing import Any

    Message = dict[str, Any]
else:
    Message = dict

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20
"""Longest line either side may send (1 MiB). A longer reply is a protocol error."""


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
) -> Message:
    """`time.clock` is "cpu" when decision and bank time are CPU time of the bot's box (the
    sandbox, so always on the ladder), "wall" when the bot runs without one."""
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
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
