"""Writing challenges: asking for one (checked, within the account's quota), a rematch, calling
one off, and giving waiting ones a place among the workers (`challenge_dispatch`).

The share rule: challenges' matches, queued or running, never hold more than
GRASS_CHALLENGE_SHARE percent of the match capacity (at least one match while a worker is up).
The matchmaker counts them with every other active match and fills the rest with rated games,
so rated play keeps the rest of the room however many challenges wait, and challenges are
played soon: they have a Celery queue of their own (`challenges`), which a worker takes from
in turn with the ladder's. Waiting challenges are given places account by account
(`selectors.challenges_next`). A challenge's match is never rated (`rated=False`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from engine.rules import RULESETS, ruleset_limits
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import bot_version_playing
from ladder.challenges.models import Challenge, ChallengeSeat
from ladder.challenges.selectors import (
    challenge_matches_active,
    challenge_times,
    challenge_waiting_count,
    challenges_next,
)
from ladder.challenges.specs import Opponent
from ladder.hourly import in_minutes
from ladder.matches.lanes import Lane, lane_slots
from ladder.matches.services import match_create
from ladder.matchmaking.capacity import now_capacity
from ladder.task_sending import send_on_commit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

DAY = timedelta(hours=24)
"""GRASS_CHALLENGES_PER_DAY counts the challenges of the last 24 hours (a sliding window)."""
WAITING_RETRY_SECONDS = 30
"""Retry-After for an account at GRASS_CHALLENGES_WAITING_PER_ACCOUNT: about the time for one
of its challenges to be sent, once a place frees."""
MAX_OPPONENTS = 5
DISPATCH_LOCK = 0x6368616C6C
"""The PostgreSQL advisory lock key that makes dispatcher runs take turns ("chall")."""


class ChallengeLimited(Exception):
    """A challenge refused by a per-account limit (GRASS_CHALLENGES_PER_DAY,
    GRASS_CHALLENGES_WAITING_PER_ACCOUNT); the message names the limit, `wait` is the seconds
    after which asking again makes sense (the API's Retry-After). Nothing was stored."""

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait


class ChallengeUnplayable(ValidationError):
    """A challenge naming what its author may not play: a bot or version that is not there
    (`missing`: the API's 404) or one that cannot play now (its 409). The page shows the message
    beside the field either way."""

    def __init__(self, field: str, message: str, *, missing: bool = False) -> None:
        super().__init__({field: [message]})
        self.missing = missing


def _refused(field: str, message: str, *, missing: bool = False) -> ChallengeUnplayable:
    return ChallengeUnplayable(field, message, missing=missing)


def _own_version(*, requester: User, bot_id: int, number: int | None, field: str) -> BotVersion:
    bot = Bot.objects.select_related("owner").filter(pk=bot_id, owner=requester).first()
    if bot is None:
        raise _refused(field, f"You have no bot with id {bot_id}.", missing=True)
    if number is None:
        version = bot_version_playing(bot=bot)
        if version is None:
            raise _refused(field, f"{bot.display_name} has no valid version yet.")
    else:
        version = BotVersion.objects.filter(bot=bot, number=number).first()
        if version is None:
            raise _refused(field, f"{bot.display_name} has no version {number}.", missing=True)
        if version.status != BotVersion.Status.VALID:
            raise _refused(
                field,
                f"{bot.display_name} v{number} is {version.status}: only valid versions play.",
            )
    version.bot = bot
    return version


def _opponent_version(*, requester: User, opponent: Opponent) -> BotVersion:
    """The version an opponent stands for: one of the author's own (any valid version, even of
    a bot off the ladder), or another owner's bot on the ladder as it plays there (its newest
    valid version: other owners' older versions are not the author's to pick)."""
    bot = Bot.objects.select_related("owner").filter(pk=opponent.bot_id).first()
    if bot is None:
        raise _refused("opponents", f"There is no bot with id {opponent.bot_id}.", missing=True)
    if bot.owner_id == requester.pk:
        return _own_version(
            requester=requester, bot_id=bot.pk, number=opponent.version, field="opponents"
        )
    if opponent.version is not None:
        raise _refused(
            "opponents",
            f"{bot.display_name}: a version may be chosen for your own bots only; others play "
            "the version that plays on the ladder.",
        )
    if bot.disabled is not None:
        raise _refused("opponents", f"{bot.display_name} is off the ladder: {bot.disabled_reason}")
    version = bot_version_playing(bot=bot)
    if version is None:
        raise _refused("opponents", f"{bot.display_name} has no valid version yet.")
    version.bot = bot
    return version


def _check_game(*, ruleset: str, seating: str, max_hands: int | None) -> None:
    if ruleset not in RULESETS:
        raise _refused("ruleset", f"Unknown ruleset {ruleset!r}: {', '.join(sorted(RULESETS))}.")
    if seating not in Challenge.Seating.values:
        raise _refused("seating", f"Seating is one of {', '.join(Challenge.Seating.values)}.")
    most = ruleset_limits(RULESETS[ruleset])["max_hands"]
    if max_hands is not None and not 1 <= max_hands <= most:
        raise _refused("max_hands", f"A {ruleset} game has 1 to {most} hands.")


def challenge_quota_check(*, requester_id: int, now: datetime | None = None) -> None:
    """Raise ChallengeLimited if the account may not ask for a challenge now: it asked for
    GRASS_CHALLENGES_PER_DAY in the last 24 hours, or GRASS_CHALLENGES_WAITING_PER_ACCOUNT of
    its challenges wait for a place. Both count stored rows (every web process sees them),
    reading at most the limit's number. 0 turns a limit off."""
    now = now or timezone.now()
    per_day = settings.GRASS_CHALLENGES_PER_DAY
    if per_day > 0:
        recent = challenge_times(requester_id=requester_id, since=now - DAY, most=per_day)
        if len(recent) >= per_day:
            # When the oldest of those leaves the 24 hours, the account is under the quota.
            wait = max(1, math.ceil((recent[-1] + DAY - now).total_seconds()))
            hours = wait // 3600
            when = f"{hours} hour{'s' if hours != 1 else ''}" if hours else in_minutes(wait)
            raise ChallengeLimited(
                f"Too many challenges: an account may ask for at most {per_day} in 24 hours, "
                f"and yours has asked for {per_day}. Try again in {when}.",
                wait=wait,
            )
    waiting_limit = settings.GRASS_CHALLENGES_WAITING_PER_ACCOUNT
    if waiting_limit > 0:
        waiting = challenge_waiting_count(requester_id=requester_id, most=waiting_limit)
        if waiting >= waiting_limit:
            raise ChallengeLimited(
                f"Too many challenges waiting: an account may have at most {waiting_limit} "
                f"waiting for a place at once, and yours has {waiting}. Try again when one of "
                "them is being played.",
                wait=WAITING_RETRY_SECONDS,
            )


def challenge_create(
    *,
    requester: User,
    bot_id: int,
    version: int | None = None,
    opponents: Sequence[Opponent],
    ruleset: str = "modern",
    seating: str = Challenge.Seating.RANDOM,
    max_hands: int | None = None,
) -> Challenge:
    """Ask for a match now between the author's bot `bot_id` (its version number `version`,
    else its newest valid one) and 1 to 5 `opponents`; it waits for a place, then is played
    unrated. Raises ValidationError (by field) for a request that cannot be played, and
    ChallengeLimited past the account's quota."""
    _check_game(ruleset=ruleset, seating=seating, max_hands=max_hands)
    if not 1 <= len(opponents) <= MAX_OPPONENTS:
        raise _refused("opponents", f"Choose 1 to {MAX_OPPONENTS} opponents.")
    mine = _own_version(requester=requester, bot_id=bot_id, number=version, field="bot")
    versions = [mine] + [_opponent_version(requester=requester, opponent=o) for o in opponents]
    if len({v.pk for v in versions}) != len(versions):
        raise _refused("opponents", "A version may hold one seat only: each seat is another.")
    return _challenge_store(
        requester=requester,
        versions=versions,
        ruleset=ruleset,
        seating=seating,
        max_hands=max_hands,
        rematch_of=None,
    )


def challenge_rematch(*, requester: User, challenge: Challenge) -> Challenge:
    """The same challenge again (the same ruleset, seating and length), counted in the quota
    like any other. Only its author asks for it (the caller checks). The author's own seats
    keep their versions (a version they chose; still valid); other owners' bots play as they
    play on the ladder now: their newest valid version, and a bot taken off the ladder is
    refused, as `challenge_create` would (an author must not keep replaying an opponent's
    version its owner replaced, or a bot staff disabled)."""
    versions: list[BotVersion] = []
    for seat in challenge.seats.order_by("position").select_related("version__bot"):
        bot = seat.version.bot
        field = "bot" if not versions else "opponents"
        if bot.owner_id == requester.pk:
            versions.append(
                _own_version(
                    requester=requester, bot_id=bot.pk, number=seat.version.number, field=field
                )
            )
        else:
            versions.append(
                _opponent_version(requester=requester, opponent=Opponent(bot_id=bot.pk))
            )
    return _challenge_store(
        requester=requester,
        versions=versions,
        ruleset=challenge.ruleset,
        seating=challenge.seating,
        max_hands=challenge.max_hands,
        rematch_of=challenge,
    )


def _challenge_store(
    *,
    requester: User,
    versions: Sequence[BotVersion],
    ruleset: str,
    seating: str,
    max_hands: int | None,
    rematch_of: Challenge | None,
) -> Challenge:
    with transaction.atomic():
        # One request of an account at a time: two at once must not both pass the quota.
        get_user_model().objects.select_for_update().filter(pk=requester.pk).first()
        challenge_quota_check(requester_id=requester.pk)
        challenge = Challenge.objects.create(
            requester=requester,
            ruleset=ruleset,
            seating=seating,
            max_hands=max_hands,
            rematch_of=rematch_of,
        )
        ChallengeSeat.objects.bulk_create(
            ChallengeSeat(challenge=challenge, position=position, version=version)
            for position, version in enumerate(versions)
        )
        _dispatch_on_commit()
    return challenge


def _dispatch_on_commit() -> None:
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.challenges.tasks import dispatch_challenges

    # With the broker down, the challenge waits stored (not a 500) for beat's dispatch.
    send_on_commit(dispatch_challenges, recovery="beat's dispatch runs every 10 s")


def challenge_cancel(*, challenge: Challenge) -> bool:
    """Call off a challenge that still waits; False if it was sent meanwhile (its match is
    played) or was already called off."""
    cancelled = Challenge.objects.filter(pk=challenge.pk, status=Challenge.Status.WAITING).update(
        status=Challenge.Status.CANCELLED
    )
    if cancelled:
        challenge.status = Challenge.Status.CANCELLED
    return bool(cancelled)


def challenge_slots(*, capacity: int) -> int:
    """How many matches challenges may hold, queued or running, of a `now` pool of `capacity`
    processes: the GRASS_CHALLENGE_SHARE percent, rounded down, at least one while there is
    any room (`ladder.matches.lanes`)."""
    return lane_slots(Lane.CHALLENGE, capacity=capacity)


def challenge_dispatch(*, capacity: int | None = None) -> list[Challenge]:
    """Give waiting challenges the places free in their share (`challenge_slots` of
    `capacity`, by default `now_capacity()`): each gets its unrated match, sent to the `now`
    queue after commit (the challenge lane, `ladder.matches.lanes`). Returns the challenges sent.

    Runs under an advisory lock (PostgreSQL), so two runs cannot count the same free place;
    the challenges sent are locked too, so one called off meanwhile is either sent or called
    off, never both.
    """
    if capacity is None:
        capacity = now_capacity(waiting=True)  # before the lock: asking may take a moment
    slots = challenge_slots(capacity=capacity)
    sent: list[Challenge] = []
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [DISPATCH_LOCK])
        free = slots - challenge_matches_active()
        ids = challenges_next(limit=free)
        if not ids:
            return []
        waiting = {
            c.pk: c
            for c in Challenge.objects.select_for_update()
            .filter(pk__in=ids, status=Challenge.Status.WAITING)
            .order_by()
        }
        now = timezone.now()
        for challenge_id in ids:
            challenge = waiting.get(challenge_id)
            if challenge is None:
                continue  # called off meanwhile
            seats = ChallengeSeat.objects.filter(challenge=challenge).order_by("position")
            match = match_create(
                versions=[seat.version for seat in seats.select_related("version")],
                ruleset=challenge.ruleset,
                limits={"max_hands": challenge.max_hands} if challenge.max_hands else None,
                shuffle=challenge.seating == Challenge.Seating.RANDOM,
                rated=False,
                enqueue=True,
                lane=Lane.CHALLENGE,
            )
            challenge.status = Challenge.Status.SENT
            challenge.sent = now
            challenge.match = match
            challenge.save(update_fields=["status", "sent", "match"])
            sent.append(challenge)
    if sent:
        logger.info("challenges sent to the workers: %s", [c.pk for c in sent])
    return sent
