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
) -> Message:
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "seat": seat,
        "players": players,
        "ruleset": ruleset,
        "variants": variants,
        "limits": limits,
        "time": {"decision_ms": decision_ms, "bank_ms": bank_ms},
    }


def act(request_id: int, observation: Message, bank_ms: int) -> Message:
    return {"type": "act", "id": request_id, "bank_ms": bank_ms, "observation": observation}


def parse_reply(line: bytes, expect: str, request_id: int | None = None) -> Message:
    """Decode one reply line; raises ProtocolError saying what is wrong with it."""
    try:
        message = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {line[:80]!r} ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"not a JSON object: {line[:80]!r}")
    if message.get("type") != expect:
        raise ProtocolError(f"expected a {expect!r} message, got type {message.get('type')!r}")
    if request_id is not None and message.get("id") != request_id:
        raise ProtocolError(f"reply for request {message.get('id')!r}, expected {request_id}")
    if expect == "action" and not isinstance(message.get("action"), str):
        raise ProtocolError("an 'action' message needs an 'action' string")
    return message
