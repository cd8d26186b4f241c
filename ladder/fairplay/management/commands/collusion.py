"""`manage.py collusion`: the flagged pairs of bots and of seating circles, strongest evidence
first, each with which way it went (per direction: help, sparing, proposals, and whose play
made the hits)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ladder.fairplay.models import CircleMatch, PairMatch, Watch
from ladder.fairplay.selectors import (
    Directions,
    circle_bots,
    circle_directions,
    circle_evidence,
    circle_name,
    circles_flagged,
    hit_made_by,
    pair_directions,
    pair_evidence,
    pairs_flagged,
    sources_similar,
)


class Command(BaseCommand):
    help = "List the pairs of bots and of seating circles flagged for collusion, with evidence."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="voided pairs and circles too")
        parser.add_argument("--matches", type=int, default=0, help="the N most telling matches")
        parser.add_argument(
            "--sources",
            action="store_true",
            help="also bots of different owners whose newest sources are nearly the same",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["sources"]:
            alike = sources_similar()
            for found in alike:
                self.stdout.write(
                    f"{found.bot_a.display_name} and {found.bot_b.display_name}: sources "
                    f"{found.similarity:.0%} alike"
                )
            if not alike:
                self.stdout.write("No two owners' bots have nearly the same source.")
        self._pairs(options["all"], options["matches"])
        self._circles(options["all"], options["matches"])

    @staticmethod
    def _made_by(row: PairMatch | CircleMatch, low: str, high: str) -> str:
        made_by = hit_made_by(row, low, high)
        return f"; a hit, made by {made_by}" if made_by else ""

    def _summary(self, watch: Watch) -> str:
        return (
            f"evidence {watch.evidence:,.0f} after {watch.matches} shared matches (flagged at "
            f"{watch.flagged_at}); {watch.hits} hits (help and sparing, or proposals, over "
            f"their thresholds); won "
            f"{watch.firsts} where the ratings expected {watch.expected_firsts:.1f}"
        )

    def _flows(self, watch: Watch, directions: Directions) -> None:
        for line in directions.lines():
            self.stdout.write(f"  {line}")
        for direction, counts in sorted(watch.flows.items()):
            shown = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
            self.stdout.write(f"  {direction}: {shown}")

    def _pairs(self, include_voided: bool, matches: int) -> None:
        pairs = list(pairs_flagged(include_voided=include_voided))
        if not pairs:
            self.stdout.write("No pair of bots is flagged.")
        for watch in pairs:
            state = f"voided {watch.voided:%Y-%m-%d}" if watch.voided else "flagged"
            self.stdout.write(
                f"{watch.low.display_name} & {watch.high.display_name} ({state}, pair "
                f"{watch.pk}): {self._summary(watch)}"
            )
            self._flows(watch, pair_directions(watch=watch))
            low, high = watch.low.display_name, watch.high.display_name
            for row in pair_evidence(watch_id=watch.pk, limit=matches):
                self.stdout.write(
                    f"  match {row.match_id}: score {row.score:.2f}, help {row.help_low:,.0f} / "
                    f"{row.help_high:,.0f}, first {row.first} (expected {row.expected_first:.2f})"
                    f"{self._made_by(row, low, high)}"
                )

    def _circles(self, include_voided: bool, matches: int) -> None:
        circles = list(circles_flagged(include_voided=include_voided))
        if not circles:
            self.stdout.write("No pair of seating circles is flagged.")
        for watch in circles:
            state = f"voided {watch.voided:%Y-%m-%d}" if watch.voided else "flagged"
            self.stdout.write(
                f"circles {circle_name(watch.low)} & {circle_name(watch.high)} ({state}, circle "
                f"pair {watch.pk}): {self._summary(watch)}"
            )
            met = circle_bots(watch_id=watch.pk)
            self.stdout.write(
                f"  pairs of their bots that met ({len(met)}): "
                + ", ".join(f"{low} & {high} ({shared})" for low, high, shared in met[:10])
                + (", ..." if len(met) > 10 else "")
            )
            self._flows(watch, circle_directions(watch=watch))
            for row in circle_evidence(watch_id=watch.pk, limit=matches):
                self.stdout.write(
                    f"  match {row.match_id} ({row.low_bot.display_name} & "
                    f"{row.high_bot.display_name}): score {row.score:.2f}, help "
                    f"{row.help_low:,.0f} / {row.help_high:,.0f}, first {row.first} (expected "
                    f"{row.expected_first:.2f})"
                    f"{self._made_by(row, row.low_bot.display_name, row.high_bot.display_name)}"
                )
