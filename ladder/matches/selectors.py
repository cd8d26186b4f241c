"""Reading matches: lists with filters, one match with its seats, a bot's fault counts."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import F, Prefetch, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from engine.rules import RULESETS, Variants, resolve_ruleset, ruleset_limits
from ladder.bots.selectors import bot_debug_visible
from ladder.matches.debug import SeatLines, debug_unpack
from ladder.matches.lanes import Lane, lane_queue
from ladder.matches.models import BotOpponentRecord, BotSeatRecord, Match, MatchSeat, PendingLog
from ladder.ratings.models import RatingChange

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def match_seats(*, match_id: int) -> QuerySet[MatchSeat]:
    """The match's seats in seat order, with their versions and bots, or their people."""
    return (
        MatchSeat.objects.filter(match_id=match_id)
        .select_related("bot_version__bot__owner", "player")
        .order_by("seat")
    )


class MatchFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    """The query parameters of the match list.

    `bot` (a bot id: matches it held a seat in), `ruleset`, `status`, and `after` / `before`
    (ISO 8601 times; the match was created at or after, before).
    """

    bot = django_filters.NumberFilter(method="filter_bot")
    ruleset = django_filters.ChoiceFilter(choices=[(name, name) for name in sorted(RULESETS)])
    status = django_filters.ChoiceFilter(choices=Match.Status.choices)
    after = django_filters.IsoDateTimeFilter(field_name="created", lookup_expr="gte")
    before = django_filters.IsoDateTimeFilter(field_name="created", lookup_expr="lt")

    class Meta:
        model = Match
        fields = ["bot", "ruleset", "status", "after", "before"]

    def filter_bot(self, queryset: QuerySet[Match], name: str, value: int) -> QuerySet[Match]:
        # For a FilterSet used on its own; `match_keys` reads a bot's list from its seats
        # instead (no join to plan), taking only the validated value from here.
        return queryset.filter(seats__bot_id=value)


def _with_seats(matches: QuerySet[Match]) -> QuerySet[Match]:
    # Each level by its own primary keys (seats, then their versions, bots and owners), not
    # one join: on a table of 40 million seats PostgreSQL misjudged how many rows 50 matches
    # have and merged the join through every version of every bot (60 ms at 100,000 bots).
    seats = MatchSeat.objects.order_by("seat")
    return matches.prefetch_related(
        Prefetch("seats", queryset=seats), "seats__bot_version__bot__owner", "seats__player"
    )


CREATED_SLACK = timedelta(hours=1)
"""How far a match's `created` may stray from its id's order (ids follow creation; `created`
is the creating host's clock, read just before the insert). `?before=` / `?after=` start
their index range at the id of a match created this much past the bound (`_id_bounds`)."""


def _id_bounds(*, field: str, before: datetime | None, after: datetime | None) -> dict[str, int]:
    """Bounds on the match id implied by a creation-time filter, found in the `created` index,
    so that a list filtered by time is a range of ids from its end, not a scan of the ids
    from the newest (`?before=` read the 5.2M newer matches at 10M, 2.7 s). Every match
    outside them was created more than CREATED_SLACK on the far side of the bound; the exact
    `created` filter still applies to the rows inside. Returns lookups on `field` (the match
    id's column) for `filter(**...)`."""
    bounds: dict[str, int] = {}
    if before is not None:
        later = (
            Match.objects.filter(created__gte=before + CREATED_SLACK)
            .order_by("created")
            .values_list("id", flat=True)
            .first()
        )
        if later is not None:
            bounds[f"{field}__lt"] = later
    if after is not None:
        earlier = (
            Match.objects.filter(created__lt=after - CREATED_SLACK)
            .order_by("-created")
            .values_list("id", flat=True)
            .first()
        )
        if earlier is not None:
            bounds[f"{field}__gt"] = earlier
    return bounds


def match_keys(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Any]:
    """The match list's order as rows {"key": match id}, newest first (see MatchFilter for
    `filters`; raises ValidationError on a bad value): a page of keys is one index range from
    its cursor on, and `matches_in_order` then reads those matches by id.

    With `bot`, the keys are the bot's seats' match ids, read from the seats' (bot, -match)
    index, the other filters applied through each seat's match: the order comes from the seats
    alone, so no plan merges them with the matches. (It did: for a bot whose 200,000 games lay
    in the first million of 10M matches, PostgreSQL read the matches' primary key backwards
    from the newest until it met the bot's, 1.4M entries and 400 ms a page, where the seats'
    index gives the page's 51 ids at once: docs/scale.md.) With `bot` and `ruleset`, the
    seats' own copy of the ruleset and their (bot, ruleset, -match) index: a rare ruleset is
    no longer every one of the bot's seats read. `ruleset` alone is the matches' (ruleset,
    -id) index; `before` / `after` bound the ids (`_id_bounds`)."""
    filters = filters or {}
    matches = MatchFilter(filters, Match.objects.all())
    if not matches.is_valid():
        raise ValidationError(matches.errors.as_data())
    cleaned = matches.form.cleaned_data
    times = {"before": cleaned.get("before"), "after": cleaned.get("after")}
    bot = cleaned.get("bot")
    if bot is None:
        listed: QuerySet[Match] = matches.qs.filter(**_id_bounds(field="id", **times))
        return listed.annotate(key=F("id")).values("key").order_by("-key")
    seats = MatchSeat.objects.filter(bot_id=int(bot), **_id_bounds(field="match_id", **times))
    through = {
        "ruleset": "ruleset",
        "status": "match__status",
        "after": "match__created__gte",
        "before": "match__created__lt",
    }
    for name, lookup in through.items():
        value = cleaned.get(name)
        if value not in (None, ""):
            seats = seats.filter(**{lookup: value})
    return seats.annotate(key=F("match_id")).values("key").order_by("-key")


def matches_in_order(keys: list[int]) -> list[Match]:
    """The matches of `keys` (match ids), with their seats, in that order: a page of
    `match_keys`."""
    found = {match.pk: match for match in _with_seats(Match.objects.filter(pk__in=keys))}
    return [found[key] for key in keys if key in found]


def release(matches: Iterable[Match]) -> None:
    """Untie a page's matches from their seats once the page is built.

    A prefetch ties each match to its seats both ways (the match caches its seats, each seat
    its match), so nothing of a page (about 4,000 objects for 50 matches) is freed when its
    request ends: the cyclic garbage collector frees ten pages' worth at a time, 75-95 ms
    added to one list request in ten on a slow core (their p99 in `manage.py bench_scale`,
    docs/benchmarks.md). Without the match's side of the tie, reference counting frees each
    page as its request ends."""
    for match in matches:
        match.__dict__.pop("_prefetched_objects_cache", None)


def match_finished(*, match_id: int) -> Match | None:
    """The match if it has finished (and so has its log), else None."""
    return Match.objects.filter(pk=match_id, status=Match.Status.FINISHED).first()


@dataclass(frozen=True)
class SeatDetail:
    seat: MatchSeat
    rating_change: RatingChange | None
    """The change this match made to the seat's bot's rating; None until it is rated."""


@dataclass(frozen=True)
class MatchDetail:
    match: Match
    seats: list[SeatDetail]
    log_pending: bool = False
    """Finished, but its log waits in the database for room in storage (PendingLog)."""

    @property
    def limits(self) -> dict[str, int]:
        """The engine limits the game is played under: the ruleset's own, with the match's
        overrides (what its log's header says), not only the overrides stored on the match."""
        return match_effective_limits(match=self.match)


def match_effective_limits(*, match: Match) -> dict[str, int]:
    """`max_hands` and `max_deals_per_turn` as the engine applies them to `match`: the ones
    its log header records."""
    rules = resolve_ruleset(match.ruleset, Variants.from_dict(match.variants), match.limits)
    return ruleset_limits(rules)


def seat_stderr(*, match_id: int, seat: int) -> MatchSeat | None:
    """The bot's seat of a finished match with its bot and owner (for the stderr page), or
    None (a person's seat has no stderr)."""
    return (
        MatchSeat.objects.filter(
            match_id=match_id,
            seat=seat,
            match__status=Match.Status.FINISHED,
            bot_version__isnull=False,
        )
        .select_related("bot_version__bot__owner")
        .first()
    )


def match_detail(*, match_id: int) -> MatchDetail:
    """One match with its seats and their rating changes; raises Match.DoesNotExist."""
    match = _with_seats(Match.objects.filter(pk=match_id)).get()
    changes = {c.bot_id: c for c in RatingChange.objects.filter(match_id=match_id)}
    return MatchDetail(
        match=match,
        seats=[
            SeatDetail(
                seat=seat,
                rating_change=None
                if seat.bot_version is None
                else changes.get(seat.bot_version.bot_id),
            )
            for seat in match.seats.all()
        ],
        log_pending=match_log_pending(match=match),
    )


def match_worker_visible(*, user: Any) -> bool:
    """Whether `user` may see which host and process played a match (the site's own machines:
    staff only)."""
    return bool(user is not None and user.is_authenticated and user.is_staff)


@dataclass(frozen=True)
class SeatDebug:
    """One seat's debug lines, for a reader allowed to see them."""

    seat: MatchSeat
    lines: SeatLines


def match_debug_readable(
    *, match: Match, seats: list[MatchSeat], user: User | AnonymousUser
) -> bool:
    """Whether `match` kept debug lines and `user` may read those of at least one seat
    (whether that seat wrote any is in the file)."""
    return bool(match.debug) and any(
        bot_debug_visible(user=user, bot=seat.bot_version.bot)
        for seat in seats
        if seat.bot_version is not None  # a person's seat writes no debug lines
    )


def match_debug_lines(*, match_id: int, user: User | AnonymousUser) -> list[SeatDebug] | None:
    """The debug lines of the finished match's seats that `user` may read (their bot's owner,
    staff, or everyone for a bot whose owner made them public), in seat order; seats that
    wrote nothing are left out. None: no finished match with that id. The file is read only
    when some seat is readable: a visitor who may see none costs no read."""
    match = match_finished(match_id=match_id)
    if match is None:
        return None
    seats = list(match_seats(match_id=match_id))
    readable = [
        s
        for s in seats
        if s.bot_version is not None and bot_debug_visible(user=user, bot=s.bot_version.bot)
    ]
    if not match.debug or not readable:
        return []
    with match.debug.open("rb") as handle:
        stored = debug_unpack(handle.read())
    return [
        SeatDebug(seat=seat, lines=stored[seat.seat]) for seat in readable if seat.seat in stored
    ]


def match_log_pending(*, match: Match) -> bool:
    """Whether the finished `match` has a log that is not in storage yet: it waits in the
    database (a full disk when it was recorded) until the sweep writes it."""
    if match.status != Match.Status.FINISHED or match.log:
        return False
    return PendingLog.objects.filter(match_id=match.pk).exists()


@dataclass(frozen=True)
class GameCounts:
    games: int
    """Finished matches the bot played (any version, any ruleset)."""
    timed_out: int
    """...in which it timed out at least once."""
    crashed: int
    """...in which its process crashed."""


def bot_game_counts(*, bot_id: int) -> GameCounts:
    """From the bot's kept records (at most six rows), not from its games."""
    counts = BotSeatRecord.objects.filter(bot_id=bot_id).aggregate(
        games=Coalesce(Sum("games"), 0),
        timed_out=Coalesce(Sum("timed_out"), 0),
        crashed=Coalesce(Sum("crashed"), 0),
    )
    return GameCounts(**counts)


def bot_seat_records(*, bot_id: int) -> list[BotSeatRecord]:
    """The bot's finished games by the seat index it held (0 first): kept records."""
    return list(BotSeatRecord.objects.filter(bot_id=bot_id, games__gt=0).order_by("seat"))


def bot_opponent_records(*, bot_id: int, limit: int) -> list[BotOpponentRecord]:
    """The `limit` bots it met most often (most often first, then by id): the first rows of
    the (bot, -games, opponent) index, with the opponents' names."""
    return list(
        BotOpponentRecord.objects.filter(bot_id=bot_id)
        .select_related("opponent__owner")
        .order_by("-games", "opponent_id")[:limit]
    )


FAULT_NAMES = {"timeout": "timed out", "crashed": "crashed", "illegal": "illegal move"}


@dataclass(frozen=True)
class SeatFaults:
    """One seat's troubles, ready for the bot page: each line says what happened and why."""

    match_id: int
    version: int
    forfeited: bool
    lines: tuple[str, ...]


def _fault_lines(seat: MatchSeat) -> tuple[str, ...]:
    lines = []
    for kind, count in sorted(seat.faults.items()):
        if kind == "forfeit":
            continue
        name = FAULT_NAMES.get(kind, kind.replace("_", " "))
        times = f" \u00d7{count}" if count > 1 else ""
        detail = seat.fault_details.get(kind, "")
        lines.append(f"{name}{times}: {detail}" if detail else f"{name}{times}")
    if seat.forfeited:
        lines.append(f"forfeited: {seat.forfeit_reason}")
    return tuple(lines)


def bot_faults(*, bot_id: int, limit: int = 10) -> list[SeatFaults]:
    """The bot's latest seats with a timeout, crash, strike or forfeit, newest first, each
    with its reasons (a timeout that did not cost the game is shown too: authors want to see
    it before it becomes a forfeit)."""
    seats = (
        # The partial (bot, -match) index of seats with troubles: only they are read. Seats have
        # faults and forfeits only once their match is recorded.
        MatchSeat.objects.filter(bot_id=bot_id)
        .filter(Q(forfeited=True) | ~Q(faults={}))
        .select_related("bot_version")
        .order_by("-match_id")[:limit]
    )
    return [
        SeatFaults(
            match_id=seat.match_id,
            version=seat.version.number,
            forfeited=seat.forfeited,
            lines=_fault_lines(seat),
        )
        for seat in seats
    ]


def matches_active_count(*, lane: Lane | None = None) -> int:
    """Matches of `lane` (None: the ladder's background games, on the `matches` queue) waiting
    for or being played by a worker."""
    return Match.objects.filter(
        status__in=[Match.Status.QUEUED, Match.Status.RUNNING], lane=lane
    ).count()


def seats_active_count() -> int:
    """Seats of the background games (`matches_active_count`) waiting or being played."""
    return MatchSeat.objects.filter(
        match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING], match__lane=None
    ).count()


RECENT_GAMES = 20
"""How many of a lane's latest finished games say how long its games take."""


def match_queue_ahead(*, match: Match) -> int:
    """Queued matches a worker takes before the queued `match`: those of its lane queued
    before it (by `queued`, then id), and on a queue that several lanes share (`now`), every
    queued match of a lane taken first (a lower lane: its messages' priority). Reads only
    the queued matches, which the capacity keeps few."""
    queued = Match.objects.filter(status=Match.Status.QUEUED).exclude(pk=match.pk)
    earlier = Q(queued__lt=match.queued) | Q(queued=match.queued, pk__lt=match.pk)
    if match.lane is None:
        return queued.filter(earlier, lane__isnull=True).count()
    own = lane_queue(Lane(match.lane))
    first = [lane for lane in Lane if lane < match.lane and lane_queue(lane) == own]
    return queued.filter(Q(lane__in=first) | (Q(lane=match.lane) & earlier)).count()


def lane_running_count(*, lane: Lane | None) -> int:
    """Matches of `lane` (None: the background games) being played now."""
    return Match.objects.filter(status=Match.Status.RUNNING, lane=lane).count()


def lane_latest_games(*, lane: Lane | None, recent: int = RECENT_GAMES) -> QuerySet[Any]:
    """(started, finished) of the `recent` latest finished games of `lane`, newest first: the
    first rows of an index (the lanes' (lane, -finished), the background games' own)."""
    return (
        Match.objects.filter(status=Match.Status.FINISHED, lane=lane, started__isnull=False)
        .order_by("-finished")
        .values_list("started", "finished")[:recent]
    )


def lane_typical_seconds(*, lane: Lane | None, recent: int = RECENT_GAMES) -> float | None:
    """How long a game of `lane` takes to play: the median, from start to end, of its
    `recent` latest finished games; None before any has finished."""
    played = lane_latest_games(lane=lane, recent=recent)
    durations = [(end - start).total_seconds() for start, end in played if end is not None]
    return statistics.median(durations) if durations else None
