"""Reading matches: lists with filters, one match with its seats, a bot's fault counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Count, Prefetch, Q, QuerySet

from engine.rules import RULESETS, Variants, resolve_ruleset, ruleset_limits
from ladder.matches.models import Match, MatchSeat, PendingLog
from ladder.ratings.models import RatingChange


def match_seats(*, match_id: int) -> QuerySet[MatchSeat]:
    """The match's seats in seat order, with their versions and bots."""
    return (
        MatchSeat.objects.filter(match_id=match_id)
        .select_related("bot_version__bot__owner")
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
        # A subquery rather than a join: a bot holds at most one seat, but a join plus
        # distinct() would fight the prefetches and the ordering.
        seats = MatchSeat.objects.filter(bot_version__bot_id=value).values("match_id")
        return queryset.filter(pk__in=seats)


def _with_seats(matches: QuerySet[Match]) -> QuerySet[Match]:
    seats = MatchSeat.objects.select_related("bot_version__bot__owner").order_by("seat")
    return matches.prefetch_related(Prefetch("seats", queryset=seats))


def match_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Match]:
    """Matches matching `filters` (see MatchFilter; raises ValidationError on a bad value),
    newest first, with their seats."""
    matches = MatchFilter(filters or {}, Match.objects.order_by("-created", "-id"))
    if not matches.is_valid():
        raise ValidationError(matches.errors.as_data())
    return _with_seats(matches.qs)


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
    """The seat of a finished match with its bot and owner (for the stderr page), or None."""
    return (
        MatchSeat.objects.filter(match_id=match_id, seat=seat, match__status=Match.Status.FINISHED)
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
            SeatDetail(seat=seat, rating_change=changes.get(seat.bot_version.bot_id))
            for seat in match.seats.all()
        ],
        log_pending=match_log_pending(match=match),
    )


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
    seats = MatchSeat.objects.filter(
        bot_version__bot_id=bot_id, match__status=Match.Status.FINISHED
    )
    counts = seats.aggregate(
        games=Count("id"),
        timed_out=Count("id", filter=Q(faults__has_key="timeout")),
        crashed=Count("id", filter=Q(faults__has_key="crashed")),
    )
    return GameCounts(**counts)


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
        MatchSeat.objects.filter(bot_version__bot_id=bot_id, match__status=Match.Status.FINISHED)
        .filter(Q(forfeited=True) | ~Q(faults={}))
        .select_related("bot_version")
        .order_by("-match__created", "-match_id")[:limit]
    )
    return [
        SeatFaults(
            match_id=seat.match_id,
            version=seat.bot_version.number,
            forfeited=seat.forfeited,
            lines=_fault_lines(seat),
        )
        for seat in seats
    ]


def matches_active_count() -> int:
    """Matches waiting for or being played by a worker."""
    return Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).count()


def seats_active_count() -> int:
    """Seats of the matches waiting for or being played by a worker."""
    return MatchSeat.objects.filter(
        match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()
