"""Reads of fair play: the flagged pairs and their evidence."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from django.db.models import QuerySet

from ladder.bots.models import Bot, BotVersion
from ladder.fairplay.models import PairMatch, PairWatch
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
