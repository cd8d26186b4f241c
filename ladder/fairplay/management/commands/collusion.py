"""`manage.py collusion`: the flagged pairs of bots, strongest evidence first."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ladder.fairplay.selectors import pair_evidence, pairs_flagged, sources_similar


class Command(BaseCommand):
    help = "List the pairs of bots flagged for collusion, with their evidence."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="voided pairs too")
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
        pairs = list(pairs_flagged(include_voided=options["all"]))
        if not pairs:
            self.stdout.write("No pair of bots is flagged.")
            return
        for watch in pairs:
            state = f"voided {watch.voided:%Y-%m-%d}" if watch.voided else "flagged"
            self.stdout.write(
                f"{watch.low.display_name} & {watch.high.display_name} ({state}, pair "
                f"{watch.pk}): evidence {watch.evidence:,.0f} after {watch.matches} shared "
                f"matches (flagged at {watch.flagged_at}); {watch.hits} matches over the flow "
                f"threshold; won {watch.firsts} where the ratings expected "
                f"{watch.expected_firsts:.1f}"
            )
            for direction, counts in sorted(watch.flows.items()):
                shown = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v)
                self.stdout.write(f"  {direction}: {shown}")
            for row in pair_evidence(watch_id=watch.pk, limit=options["matches"]):
                self.stdout.write(
                    f"  match {row.match_id}: score {row.score:.2f}, help {row.help_low:,.0f} / "
                    f"{row.help_high:,.0f}, first {row.first} (expected {row.expected_first:.2f})"
                )
