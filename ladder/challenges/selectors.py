"""Reading challenges: an author's list, one challenge, the counts behind the quota and the
dispatcher's share, and the opponents an author may pick."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import F, Prefetch, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from ladder.bots.models import Bot, BotVersion
from ladder.challenges.models import Challenge, ChallengeSeat
from ladder.challenges.specs import Opponent, spec_readings
from ladder.matches.lanes import Lane
from ladder.matches.models import Match
from ladder.matches.selectors import lane_typical_seconds
from ladder.matchmaking.waiting import (
    Place,
    estimate_seconds,
    lane_name,
    lane_places,
    match_place,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

EXAMPLES_USER = "examples"
"""The owner of the example bots (`manage.py ladder_examples`): offered first as opponents."""
ACTIVE = (Match.Status.QUEUED, Match.Status.RUNNING)


def _with_seats(challenges: QuerySet[Challenge]) -> QuerySet[Challenge]:
    seats = ChallengeSeat.objects.select_related("version__bot__owner").order_by("position")
    return challenges.select_related("requester", "match").prefetch_related(
        Prefetch("seats", queryset=seats)
    )


def challenge_list(*, requester_id: int) -> QuerySet[Challenge]:
    """The account's challenges, newest first, with their seats and matches (by the index on
    (requester, created))."""
    return _with_seats(
        Challenge.objects.filter(requester_id=requester_id).order_by("-created", "-id")
    )


def challenge_get(*, challenge_id: int) -> Challenge | None:
    """One challenge with its seats and match, or None."""
    return _with_seats(Challenge.objects.filter(pk=challenge_id)).first()


def challenge_state(challenge: Challenge) -> str:
    """`waiting`, `cancelled`, or its match's status once it has one (queued, running,
    finished, failed)."""
    if challenge.match is not None:
        return str(challenge.match.status)
    return str(challenge.status)


def challenge_visible(*, user: User | AnonymousUser, challenge: Challenge) -> bool:
    """Whether `user` may see `challenge` (its author and staff: which versions an author
    tries against which is theirs; the match it became is public like any other)."""
    return bool(user.is_authenticated and (user.pk == challenge.requester_id or user.is_staff))


def challenge_times(*, requester_id: int, since: datetime, most: int) -> list[datetime]:
    """When the account's newest challenges created after `since` were asked for, newest
    first, at most `most`: what the daily quota needs (reads at most `most` rows)."""
    return list(
        Challenge.objects.filter(requester_id=requester_id, created__gt=since)
        .order_by("-created")
        .values_list("created", flat=True)[:most]
    )


def challenge_waiting_count(*, requester_id: int, most: int) -> int:
    """The account's challenges waiting for a place, counted up to `most`."""
    waiting = Challenge.objects.filter(requester_id=requester_id, status=Challenge.Status.WAITING)
    return len(waiting.values_list("pk", flat=True)[:most])


def challenge_matches_active() -> int:
    """Challenges' matches queued or running: what the challenges' share holds now (read from
    the active matches, which the capacity keeps few)."""
    return Match.objects.filter(status__in=ACTIVE, challenge__isnull=False).count()


def challenges_next(*, limit: int) -> list[int]:
    """The ids of the next `limit` waiting challenges, taking accounts in turn: every
    account's oldest first (by age), then every account's second, and so on, so one account's
    burst does not hold everyone else back."""
    if limit <= 0:
        return []
    return list(_in_turns().values_list("id", flat=True)[:limit])


def _in_turns(*, up_to: int | None = None) -> QuerySet[Challenge]:
    """The waiting challenges in the order `challenges_next` sends them: by `turn` (1 for
    each account's oldest waiting challenge, 2 for its next...), then age; those of turns up
    to `up_to` only, if given."""
    own_order = [F("created").asc(), F("id").asc()]
    turns = Challenge.objects.filter(status=Challenge.Status.WAITING).annotate(
        turn=Window(RowNumber(), partition_by=[F("requester_id")], order_by=own_order)
    )
    if up_to is not None:
        turns = turns.filter(turn__lte=up_to)
    return turns.order_by("turn", "created", "id")


def challenge_waiting_ahead(*, challenge: Challenge) -> int:
    """How many waiting challenges `challenges_next` sends before this one (0 for one not
    waiting): its account's older ones, and the others' up to the same turn. Reads the waiting
    challenges of turns up to its own (the quota keeps an account's waiting ones few)."""
    if challenge.status != Challenge.Status.WAITING:
        return 0
    turn = (
        Challenge.objects.filter(
            Q(created__lt=challenge.created) | Q(created=challenge.created, pk__lt=challenge.pk),
            requester_id=challenge.requester_id,
            status=Challenge.Status.WAITING,
        ).count()
        + 1
    )
    ids = list(_in_turns(up_to=turn).values_list("id", flat=True))
    return ids.index(challenge.pk) if challenge.pk in ids else len(ids)


def challenge_place(challenge: Challenge) -> Place | None:
    """Where the challenge stands while it waits: its place among the waiting challenges and
    about when its match is sent (when one of the challenges' places frees up); once sent,
    its match's place in the queue until a worker takes it (`matchmaking.waiting`). None
    after that."""
    if challenge.match is not None:
        return match_place(challenge.match)
    if challenge.status != Challenge.Status.WAITING:
        return None
    places = lane_places(Lane.CHALLENGE)
    ahead = challenge_waiting_ahead(challenge=challenge)
    estimate = estimate_seconds(
        ahead=ahead,
        free=places - challenge_matches_active(),
        places=places,
        typical=lane_typical_seconds(lane=Lane.CHALLENGE),
    )
    return Place(lane=lane_name(Lane.CHALLENGE), ahead=ahead, estimate_s=estimate)


def bot_by_name(*, owner: str, name: str) -> Bot | None:
    """The bot `name` of the user `owner` (names are unique per owner), or None."""
    return Bot.objects.select_related("owner").filter(owner__username=owner, name=name).first()


def opponent_find(*, me: str, text: str) -> Opponent | None:
    """The opponent `text` names (`owner/bot`, `owner/bot@v3`, or `bot`, `bot@v3` for one of
    `me`'s own: `ladder.challenges.specs`), or None if no bot is so named."""
    for spec in spec_readings(text, me=me):
        bot = bot_by_name(owner=spec.owner, name=spec.name)
        if bot is not None:
            return Opponent(bot_id=bot.pk, version=spec.version)
    return None


@dataclass(frozen=True)
class Choice:
    """A version the challenge form offers: how it is written (`owner/bot` for the version
    that plays, `owner/bot@v3` for one of the author's own) and what it is."""

    spec: str
    version: BotVersion


def challenge_choices(*, requester_id: int, per_bot: int = 5) -> tuple[list[Choice], list[Choice]]:
    """What the challenge form offers: the examples' playing versions, and the author's own
    valid versions (the newest `per_bot` of each bot). Other bots are typed by name, so the
    page does not grow with the ladder."""
    examples: list[Choice] = []
    listed = Bot.objects.filter(owner__username=EXAMPLES_USER, disabled__isnull=True)
    for bot in listed.select_related("owner").order_by("name"):
        playing = (
            BotVersion.objects.filter(bot=bot, status=BotVersion.Status.VALID)
            .order_by("-number")
            .first()
        )
        if playing is not None:
            playing.bot = bot
            examples.append(Choice(spec=bot.display_name, version=playing))
    own: list[Choice] = []
    for bot in Bot.objects.filter(owner_id=requester_id).select_related("owner").order_by("name"):
        versions = BotVersion.objects.filter(bot=bot, status=BotVersion.Status.VALID).order_by(
            "-number"
        )[:per_bot]
        for version in versions:
            version.bot = bot
            own.append(Choice(spec=f"{bot.display_name}@v{version.number}", version=version))
    return examples, own
