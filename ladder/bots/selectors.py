"""Reading bots: lists and details, which version plays, a version's files."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import django_filters
from django.db.models import OuterRef, QuerySet, Subquery

from bots.runner.botfiles import BotSource, source_from_upload
from ladder.accounts.selectors import seating_circle
from ladder.bots.models import Bot, BotVersion

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def bot_version_playing(*, bot: Bot) -> BotVersion | None:
    """The version that plays for `bot`: its newest valid one, or None."""
    return (
        BotVersion.objects.filter(bot=bot, status=BotVersion.Status.VALID)
        .order_by("-number")
        .first()
    )


def bot_errors_visible(*, user: User | AnonymousUser, bot: Bot) -> bool:
    """Whether `user` may read the validation errors of `bot`'s versions.

    An error quotes the bot's stderr, whose traceback lines are lines of its private source, so
    only the bot's owner (who needs them to fix it) and staff see them; everyone else sees the
    verdict (`status`) only.
    """
    return bool(user.is_authenticated and (user.pk == bot.owner_id or user.is_staff))


def bot_debug_visible(*, user: User | AnonymousUser, bot: Bot) -> bool:
    """Whether `user` may read `bot`'s debug lines (what it writes on stderr while it decides,
    beside each decision of its replays): its owner and staff, as for its errors, and everyone
    once the owner made them public (`Bot.debug_public`)."""
    return bot.debug_public or bot_errors_visible(user=user, bot=bot)


def bot_version_source(*, version: BotVersion) -> BotSource:
    """The version's files, read back from storage and checked against the stored sha256,
    named `owner/bot`: the name its seat has in the game, its log and its replay, where two
    owners' bots of one name must differ."""
    with version.file.open("rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != version.sha256:
        raise RuntimeError(f"stored file of {version} does not match its sha256")
    return source_from_upload(version.bot.display_name, version.file.name, data)


class BotFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    """The query parameters of the bot list: `owner` (a username), `name` (a part of it)."""

    owner = django_filters.CharFilter(field_name="owner__username")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Bot
        fields = ["owner", "name"]


def bot_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Bot]:
    """Bots matching `filters` (see BotFilter), oldest first, with their owners."""
    bots = Bot.objects.select_related("owner").order_by("id")
    filtered: QuerySet[Bot] = BotFilter(filters or {}, bots).qs  # django-filter is untyped
    return filtered


def bot_versions(*, bot: Bot) -> QuerySet[BotVersion]:
    """The bot's versions, newest first."""
    return BotVersion.objects.filter(bot=bot).order_by("-number")


@dataclass(frozen=True)
class VersionSummary:
    count: int
    latest: BotVersion | None
    playing: BotVersion | None


def bot_version_summary(*, bot: Bot) -> VersionSummary:
    """How many versions the bot has, its newest, and the one that plays."""
    versions = bot_versions(bot=bot)
    return VersionSummary(
        count=versions.count(), latest=versions.first(), playing=bot_version_playing(bot=bot)
    )


def owner_upload_times(*, owner_id: int, since: datetime, most: int) -> list[datetime]:
    """When the owner's newest versions (of all their bots) created after `since` were
    uploaded, newest first, at most `most` of them: what the hourly upload limit needs to say
    whether the owner is at it and when the oldest of those leaves the hour. Reads at most
    `most` rows, by the index on (bot, created)."""
    return list(
        BotVersion.objects.filter(bot__owner_id=owner_id, created__gt=since)
        .order_by("-created")
        .values_list("created", flat=True)[:most]
    )


def owner_pending_count(*, owner_id: int, most: int) -> int:
    """How many of the owner's versions (of all their bots) wait for their validation game,
    counted up to `most` (by the partial index on pending versions)."""
    pending = BotVersion.objects.filter(bot__owner_id=owner_id, status=BotVersion.Status.PENDING)
    return len(pending.values_list("pk", flat=True)[:most])


def owner_bots(*, owner_id: int, before: int | None, most: int) -> list[Bot]:
    """A page of the owner's bots, newest first (ids below `before`, when given), each with
    `latest_number` and `latest_status`: its newest version's, or None before any upload."""
    newest = BotVersion.objects.filter(bot=OuterRef("pk")).order_by("-number")
    bots = Bot.objects.filter(owner_id=owner_id)
    if before is not None:
        bots = bots.filter(pk__lt=before)
    return list(
        bots.annotate(
            latest_number=Subquery(newest.values("number")[:1]),
            latest_status=Subquery(newest.values("status")[:1]),
        ).order_by("-pk")[:most]
    )


def bot_circles(*, bot_ids: Iterable[int]) -> dict[int, int]:
    """The seating circle of each of `bot_ids` (`ladder.accounts.selectors.seating_circle`):
    its owner's, or its own for a house bot. One query, whatever the number of bots."""
    rows = Bot.objects.filter(pk__in=list(bot_ids)).values_list(
        "pk", "owner_id", "owner__seating__circle", "owner__seating__house"
    )
    return {
        pk: seating_circle(bot_id=pk, owner_id=owner, circle=circle, house=house)
        for pk, owner, circle, house in rows
    }


def circles_shared(circles: Iterable[int]) -> bool:
    """Whether two of `circles` are one (two bots of one owner, or of linked accounts)."""
    seen = list(circles)
    return len(set(seen)) != len(seen)


def bots_circle_shared(*, bot_ids: Iterable[int]) -> set[int]:
    """Those of `bot_ids` whose seating circle holds another owner's bot among them: accounts
    linked since a rated match of theirs was queued (one query). Asked again when a rated
    match is recorded, which then makes it an unrated one. One owner's own bots at one table
    are left alone: the matchmaker and tournaments never seat them together, so only a direct
    `match_create` (the shell, a test) makes such a table, and it is its maker's to rate."""
    rows = Bot.objects.filter(pk__in=list(bot_ids)).values_list(
        "pk", "owner_id", "owner__seating__circle", "owner__seating__house"
    )
    circles: dict[int, int] = {}
    owners: dict[int, set[int]] = {}
    for pk, owner, circle, house in rows:
        circles[pk] = seating_circle(bot_id=pk, owner_id=owner, circle=circle, house=house)
        owners.setdefault(circles[pk], set()).add(owner)
    return {bot for bot, circle in circles.items() if len(owners[circle]) > 1}
