"""Reads of fair play: the flagged pairs of bots and of seating circles, and their evidence."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, QuerySet

from ladder.accounts.selectors import circle_members
from ladder.bots.models import Bot, BotVersion
from ladder.fairplay.detect import hit_cause
from ladder.fairplay.models import CircleMatch, CircleWatch, PairMatch, PairWatch, Watch
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


def circles_flagged(*, include_voided: bool = False) -> QuerySet[CircleWatch]:
    """Flagged pairs of seating circles, the strongest evidence first."""
    circles = CircleWatch.objects.filter(flagged__isnull=False)
    if not include_voided:
        circles = circles.filter(voided__isnull=True)
    return circles.order_by("-evidence")


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
class Direction:
    """One way of a watched pair (giver -> taker), over its shared matches: what the giver's
    own play toward the taker was, and which hits it made. A flag says two bots' play looks
    collusive; this says whose play it was."""

    giver: str
    taker: str
    help: float
    """Dollars it chose to move to the taker beyond the most it moved to another seat, summed
    over the shared matches (what the test reads)."""
    given: int
    """Value it chose to move to the taker, all told: deals it granted, forced swaps it made,
    the excess of its Stonehigh gifts."""
    attacks: int
    chances: int
    """Its turns on which an attack on the taker was legal; `attacks` it played."""
    spared_beyond: float
    """The share of its chances on the taker it left unused less that share for the other
    seats, averaged over the shared matches (what the test reads)."""
    proposed: int
    """Deals it proposed to the taker."""
    accepted: int
    """Of those, the ones the taker accepted."""
    proposed_beyond: int
    """Deals it proposed to the taker beyond the most to another seat, summed over the matches
    that kept it (what the test reads)."""
    hits_flows: int
    """Shared matches its help and sparing made hits (its flow score over the threshold)."""
    hits_asks: int
    """Shared matches its proposals made hits (over `detect.ASK_THRESHOLD`)."""
    hits_asks_alone: int
    """Hits that were its proposals and nothing else (`detect.Cause.asks_alone`)."""

    def line(self) -> str:
        spared = f"{1 - self.attacks / self.chances:.0%} spared" if self.chances else "none"
        return (
            f"{self.giver} -> {self.taker}: help given {_money(self.help)} beyond the most it "
            f"gave another seat ({_money(self.given)} it chose to move in all); attacks "
            f"{self.attacks:,} of {self.chances:,} chances ({spared}; "
            f"{self.spared_beyond:+.2f} a match beyond its sparing of the others); deal proposals "
            f"{self.proposed:,} ({self.accepted:,} accepted; {self.proposed_beyond:,} beyond "
            f"the most to another seat); hits made: {self.hits_flows} by its help and sparing, "
            f"{self.hits_asks} by its proposals"
        )


@dataclass(frozen=True)
class Directions:
    """Both ways of a watched pair, low -> high first, and what staff must read first."""

    ways: tuple[Direction, Direction]
    hits: int
    asks_unknown: int
    """Shared matches recorded before their proposals were kept."""

    def notes(self) -> list[str]:
        """Warnings: hits that were one bot's proposals and nothing else."""
        notes = [
            f"{way.hits_asks_alone} of the {self.hits} hits were {way.giver}'s deal proposals "
            f"to {way.taker} alone (neither bot's help and sparing over the threshold, "
            f"{way.taker}'s own proposals under theirs): one bot makes that by itself, "
            f"flooding another with offers. Read which way it went before voiding: the Void "
            f"disables both bots."
            for way in self.ways
            if way.hits_asks_alone
        ]
        if self.asks_unknown:
            notes.append(
                f"{self.asks_unknown} shared matches were recorded before the proposals were "
                "kept: their hits by proposals are not counted above."
            )
        return notes

    def lines(self) -> list[str]:
        return [way.line() for way in self.ways] + [f"note: {n}" for n in self.notes()]


def _money(dollars: float) -> str:
    return f"-${-dollars:,.0f}" if dollars < 0 else f"${dollars:,.0f}"


def _total(flows: dict[str, int], *names: str) -> int:
    return sum(int(flows.get(name, 0)) for name in names)


def _directions(
    watch: Watch, rows: QuerySet[PairMatch] | QuerySet[CircleMatch], low: str, high: str
) -> Directions:
    """A watch's two ways: the flows kept on it, and each shared match's part (one pass over
    its rows, values only)."""
    fields = ("help_low", "help_high", "spared_low", "spared_high", "asks_low", "asks_high")
    helps = [0.0, 0.0]
    spared = [0.0, 0.0]
    count = 0
    beyond = [0, 0]
    by_flows = [0, 0]
    by_asks = [0, 0]
    alone = {"ab": 0, "ba": 0}
    unknown = 0
    for help_low, help_high, spared_low, spared_high, asks_low, asks_high in rows.values_list(
        *fields
    ):
        cause = hit_cause(help_low, help_high, spared_low, spared_high, asks_low, asks_high)
        count += 1
        helps[0] += help_low
        helps[1] += help_high
        spared[0] += spared_low
        spared[1] += spared_high
        beyond[0] += asks_low or 0
        beyond[1] += asks_high or 0
        unknown += asks_low is None
        by_flows[0] += cause.flows_ab
        by_flows[1] += cause.flows_ba
        by_asks[0] += cause.asks_ab
        by_asks[1] += cause.asks_ba
        if (way := cause.asks_alone) is not None:
            alone[way] += 1
    ways = []
    for k, (giver, taker, out, back, key) in enumerate(
        [(low, high, "low>high", "high>low", "ab"), (high, low, "high>low", "low>high", "ba")]
    ):
        given = watch.flows.get(out, {})
        answered = watch.flows.get(back, {})  # `asked` is counted at the answering end
        ways.append(
            Direction(
                giver=giver,
                taker=taker,
                help=helps[k],
                given=_total(given, "granted_value", "swap_value", "gift_excess"),
                attacks=_total(given, "attacks"),
                chances=_total(given, "attack_chances"),
                spared_beyond=spared[k] / count if count else 0.0,
                proposed=_total(answered, "asked"),
                accepted=_total(answered, "granted"),
                proposed_beyond=beyond[k],
                hits_flows=by_flows[k],
                hits_asks=by_asks[k],
                hits_asks_alone=alone[key],
            )
        )
    return Directions((ways[0], ways[1]), watch.hits, unknown)


def pair_directions(*, watch: PairWatch) -> Directions:
    """Which way a pair of bots' evidence went: per direction, what each bot gave, spared and
    proposed, and which bot's play made the hits."""
    return _directions(
        watch,
        PairMatch.objects.filter(watch=watch),
        watch.low.display_name,
        watch.high.display_name,
    )


def circle_directions(*, watch: CircleWatch) -> Directions:
    """Which way a pair of circles' evidence went, as `pair_directions`."""
    return _directions(
        watch,
        CircleMatch.objects.filter(watch=watch),
        circle_name(watch.low),
        circle_name(watch.high),
    )


def hit_made_by(row: PairMatch | CircleMatch, low: str = "low", high: str = "high") -> str:
    """Whose play made one shared match a hit: "" when it is none."""
    cause = hit_cause(
        row.help_low, row.help_high, row.spared_low, row.spared_high, row.asks_low, row.asks_high
    )
    if (way := cause.asks_alone) is not None:
        giver, taker = (low, high) if way == "ab" else (high, low)
        return f"{giver}'s deal proposals to {taker} alone"
    parts = [
        f"{who}'s {what}"
        for who, what, made in [
            (low, "help and sparing", cause.flows_ab),
            (low, "proposals", cause.asks_ab),
            (high, "help and sparing", cause.flows_ba),
            (high, "proposals", cause.asks_ba),
        ]
        if made
    ]
    return ", ".join(parts)


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
