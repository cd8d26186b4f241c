"""How a person writes an opponent (the challenge page, `grass challenge`): `owner/bot` for a
bot as it plays on the ladder, `owner/bot@v3` (or `bot@v3`, `bot`, for one's own) for a chosen
version of one's own bot. A name may hold `@`: an exact name wins over a version suffix."""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(r"^(?P<name>.+)@v(?P<number>[0-9]{1,9})$")


@dataclass(frozen=True)
class Opponent:
    """An opponent as asked for: a bot, and for one of the author's own bots, optionally a
    version number (else the bot's newest valid version)."""

    bot_id: int
    version: int | None = None


@dataclass(frozen=True)
class Spec:
    owner: str
    name: str
    version: int | None = None


def spec_readings(text: str, *, me: str) -> list[Spec]:
    """The ways `text` may be read, the likelier first: as a whole name, then as a name with a
    version suffix. `me` is the owner of a name written without one."""
    text = text.strip()
    owner, slash, name = text.partition("/")
    if not slash:
        owner, name = me, text
    readings = [Spec(owner=owner, name=name)]
    found = _VERSION.match(name)
    if found:
        readings.append(Spec(owner=owner, name=found["name"], version=int(found["number"])))
    return readings
