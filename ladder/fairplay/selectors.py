"""Reads of fair play: the flagged pairs of bots and of seating circles, and their evidence."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, QuerySet

from ladder.accounts.selectors import circle_members
from ladder.bots.models import Bot, BotVersion
from ladder.fairplay.models import CircleMatch, CircleWatch, PairMatch, PairWatch
from ladder.fairplay.sources import MAX_BYTES, SIMILAR, shingles, similarity, source_text

logger = logging.getLogger(__name__)


def pairs_flagged(*, include_voided: bool = False) -> QuerySet[PairWatch]:
    """Flagged pairs, the strongest evidence first."""
    pairs = PairWatch.objects.filter(flagged__isnull=False).select_related(
        "low__owner", "high__owner"
    )
    if not include_voided:
        pairs = pairs.filter(voided__isnull=True)
    return pairs.order_by("-evidence")


def pair_evidence(*, watch_id: int, limit: int = 50) -> QuerySet[PairMatch]:
    """A pair's shared matches, the most suspicious first."""
    return PairMatch.objects.filter(watch_id=watch_id).order_by("-score")[:limit]


def circles_flagged() -> QuerySet[CircleWatch]:
    """Flagged pairs of seating circles, the strongest evidence first."""
    return CircleWatch.objects.filter(flagged__isnull=False).order_by("-evidence")


def circle_evidence(*, watch_id: int, limit: int = 50) -> QuerySet[CircleMatch]:
    """A pair of circles' shared matches, the most suspicious first, with the bots that met."""
    return (
        CircleMatch.objects.filter(watch_id=watch_id)
        .select_related("low_bot__owner", "high_bot__owner")
        .order_by("-score")[:limit]
    )


def circle_bots(*, watch_id: int) -> list[tuple[str, str, int]]:
    """The pairs of bots whose matches fed a pair of circles' watch: (the low circle's bot,
    the high circle's, shared matches), most matches first."""
    rows = (
        CircleMatch.objects.filter(watch_id=watch_id)
        .values("low_bot", "high_bot")
        .annotate(shared=Count("id"))
        .order_by("-shared", "low_bot", "high_bot")
    )
    ids = {r["low_bot"] for r in rows} | {r["high_bot"] for r in rows}
    bots = Bot.objects.filter(pk__in=ids).select_related("owner")
    names = {bot.pk: bot.display_name for bot in bots}
    return [(names[r["low_bot"]], names[r["high_bot"]], r["shared"]) for r in rows]


def circle_name(circle: int) -> str:
    """Who a seating circle is, for staff: its accounts' usernames ("ann+cy"), or a house
    bot's name for a house bot's circle of its own (`seating_circle`: minus its id)."""
    if circle < 0:
        bot = Bot.objects.select_related("owner").filter(pk=-circle).first()
        return f"house bot {bot.display_name}" if bot else f"house bot {-circle}"
    members = circle_members(user_id=circle)
    users = get_user_model().objects.filter(pk__in=members).order_by("pk")
    return "+".join(users.values_list("username", flat=True)) or f"circle {circle}"


@dataclass(frozen=True)
class SimilarSources:
    bot_a: Bot
    bot_b: Bot
    similarity: float


def sources_similar(*, threshold: float = SIMILAR) -> list[SimilarSources]:
    """Pairs of enabled bots of different owners whose newest valid versions are at least
    `threshold` alike (`sources.similarity`), most alike first. Compares every pair: fine for
    thousands of bots, a MinHash index before a ladder of a hundred thousand."""
    newest: dict[int, BotVersion] = {}
    versions = BotVersion.objects.filter(
        status=BotVersion.Status.VALID, bot__disabled__isnull=True
    ).select_related("bot__owner")
    for version in versions.order_by("bot_id", "-number"):
        newest.setdefault(version.bot_id, version)
    prints: list[tuple[Bot, frozenset[int]]] = []
    for version in newest.values():
        try:
            with version.file.open("rb") as handle:
                prints.append((version.bot, shingles(source_text(handle.read(MAX_BYTES)))))
        except OSError:
            logger.warning("fair play: the source of %s could not be read", version)
    found = []
    for (bot_a, a), (bot_b, b) in itertools.combinations(prints, 2):
        if bot_a.owner_id == bot_b.owner_id:
            continue
        alike = similarity(a, b)
        if alike >= threshold:
            found.append(SimilarSources(bot_a, bot_b, alike))
    return sorted(found, key=lambda s: -s.similarity)
