"""Nothing a bot sends can void a rated match (the ladder path: match_run on PostgreSQL, the
real sandbox, ratings applied).

The attack: a bot plays its first hand honestly and, from the second on, whenever it is not
ahead, answers with bytes that once crashed the runner's reader (deep nesting, a 5,000-digit
number) or made recording its loss fail (a NUL on stderr, a lone surrogate), or it breaks the
stream. Before the fix some of these escaped `play_match`: the match was retried, then given
up as `failed`, with no result and no rating change, so the bot never lost a rated game.

A match may end `failed` only for an infrastructure fault (README, "When a match fails"):
every behaviour here must end `finished`, with the bot struck or forfeited and the ratings
applied. The same bots at validation get a verdict (invalid), never a version left pending.
"""

from __future__ import annotations

import gzip
import io
from typing import Any

import pytest

from engine.log import read_log, replay
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create, bot_version_upload, bot_version_validate
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run
from ladder.ratings.models import RatingChange

pytestmark = pytest.mark.django_db

SORE_LOSER = r"""
import json, os, sys

ATTACK = {attack!r}
out = sys.stdout.buffer


def send(data):
    out.write(data + b"\n")
    out.flush()


def hostile_reply(request_id):
    if ATTACK == "nesting":
        send(b"[" * 200_000)
    elif ATTACK == "huge-number":
        send(b'{{"type":"action","id":' + b"9" * 5_000 + b',"action":"end"}}')
    elif ATTACK == "huge-number-action":
        send(b'{{"type":"action","id":%d,"action":' % request_id + b"7" * 4_000 + b"}}")
    elif ATTACK == "surrogate":
        send(b'{{"type":"action","id":%d,"action":"\\ud800\\u0000"}}' % request_id)
    elif ATTACK == "nan-id":
        send(b'{{"type":"action","id":NaN,"action":"end"}}')
    elif ATTACK == "bad-utf8":
        send(b'{{"type":"action","id":%d,"action":"\xff\xfe"}}' % request_id)
    elif ATTACK == "overlong-line":
        out.write(b"x" * (2 << 20))
        out.flush()
    elif ATTACK == "nul-stderr-crash":
        sys.stderr.buffer.write(b"\x00\xff\xfe\xed\xa0\x80 goodbye\x00\n" * 50)
        sys.stderr.flush()
        os._exit(3)
    elif ATTACK == "close-stdout":
        out.close()
        os.close(1)
        sys.stdin.buffer.read()


for line in sys.stdin.buffer:
    message = json.loads(line)
    if message["type"] == "hello":
        send(b'{{"type":"ready","protocol":1}}')
    elif message["type"] == "act":
        obs = message["observation"]
        totals = obs["totals"]
        mine = totals.pop(obs["seat"])
        if obs["hand_number"] >= 2 and mine < max(totals):  # behind: void the game
            hostile_reply(message["id"])
        else:
            reply = {{"type": "action", "id": message["id"], "action": obs["legal"][0]}}
            send(json.dumps(reply).encode())
    elif message["type"] == "game_end":
        break
"""

ATTACKS = [
    "nesting",
    "huge-number",
    "huge-number-action",
    "surrogate",
    "nan-id",
    "bad-utf8",
    "overlong-line",
    "nul-stderr-crash",
    "close-stdout",
]


def hostile_version(owner: Any, attack: str, *, valid: bool = True) -> BotVersion:
    code = SORE_LOSER.format(attack=attack).encode()
    bot = bot_create(owner=owner, name=f"sore-{attack}")
    version = bot_version_upload(bot=bot, filename="bot.py", data=code)
    if valid:
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        version.refresh_from_db()
    return version


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_sore_loser_cannot_void_a_rated_match(
    owner: Any, owners: Any, valid_version: Any, sandbox_ready: None, attack: str
) -> None:
    hostile = hostile_version(owner, attack)
    g1, g2 = owners(2)
    match = match_create(
        versions=[
            hostile,
            valid_version("g1", "greedy", by=g1),
            valid_version("g2", "greedy", by=g2),
        ],
        limits={"max_hands": 2},
        seed=11,
        shuffle=False,
        time_control={"decision_ms": 1_000, "bank_ms": 1_000},
    )
    match_run(match_id=match.pk)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED, match.failure_reason
    assert match.failure_reason == ""
    seat = match.seats.get(bot_version=hostile)
    # The attack happened, and it cost the attacker: strikes (a default played), or a forfeit.
    assert seat.strikes > 0 or seat.forfeited, (seat.faults, seat.forfeit_reason)
    assert set(seat.faults) & {"protocol", "crashed", "illegal", "timeout", "forfeit"}
    if seat.forfeited:
        assert seat.place == 3 and seat.forfeit_reason
    assert RatingChange.objects.filter(match=match).count() == 3
    with match.log.open("rb") as handle:
        events = read_log(io.BytesIO(gzip.decompress(handle.read())))
    assert replay(events).result == match.result


@pytest.mark.parametrize("attack", ["nesting", "huge-number", "nul-stderr-crash"])
def test_the_same_bots_get_a_verdict_at_validation(
    owner: Any, sandbox_ready: None, attack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation plays one hand; these bots attack from their first decision there."""
    behind = 'obs["hand_number"] >= 2 and mine < max(totals)'
    code = SORE_LOSER.format(attack=attack).replace(behind, "True")
    assert "if True:" in code
    bot = bot_create(owner=owner, name=f"v-{attack}")
    version = bot_version_upload(bot=bot, filename="bot.py", data=code.encode())
    checked = bot_version_validate(version=version)
    assert checked.status == BotVersion.Status.INVALID
    assert checked.validation_error
    assert "\x00" not in checked.validation_error


@pytest.mark.parametrize(
    "pipe_error",
    [BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset"), OSError(32, "EPIPE")],
    ids=["broken-pipe", "connection-reset", "epipe"],
)
def test_a_closed_pipe_escaping_the_referee_is_no_host_fault(
    valid_version: Any, owners: Any, monkeypatch: pytest.MonkeyPatch, pipe_error: OSError
) -> None:
    """The attack: a losing bot closes its pipes so that the error reaches the worker. Were it
    taken for a host fault (every OSError once was, issue 36's breaker), the match would be
    given back to the queue unrated, up to GRASS_MATCH_MAX_HOST_FAULTS times, and the worker
    stopped: a rated loss undone at will. It is an ordinary failure: an attempt used, no host
    fault counted, the worker's breaker untouched."""
    from ladder import breaker
    from ladder.matches import services

    a, b = owners(2)
    match = match_create(versions=[valid_version("a", by=a), valid_version("b", by=b)])

    def closed(*args: Any, **kwargs: Any) -> Any:
        raise pipe_error

    monkeypatch.setattr(services, "play_match", closed)
    match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED and match.attempts == 1
    assert match.host_faults == 0
    assert not breaker.breaker_open()
