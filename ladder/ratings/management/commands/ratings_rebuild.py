"""`manage.py ratings_rebuild [--ruleset modern] [--apply] [--show 20]`: rate every rated
match again from scratch (`ladder.ratings.rebuild`).

Without `--apply` it is a check that writes nothing: it says how many bots' stored ratings differ
from what their matches give (none, on a ladder whose constants have not changed) and lists the
largest differences. With `--apply` the ruleset's rating history and table are replaced in one
transaction: after a change of the Elo constants, or after clearing a match's "rated" box by hand
(the admin's "Void" action on matches rebuilds by itself). Progress goes to stderr.
"""

from __future__ import annotations

import io
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import Progress, TaskID
from rich.table import Table

from engine import RULESETS
from ladder.bots.models import Bot
from ladder.matches.models import Match
from ladder.ratings.rebuild import Rebuild, rating_rebuild


class Command(BaseCommand):
    help = "Rebuild ratings from the rated matches (a dry run unless --apply)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ruleset", action="append", help="default: every ruleset")
        parser.add_argument("--apply", action="store_true", help="write the rebuilt ratings")
        parser.add_argument("--show", type=int, default=20, help="differences listed per ruleset")

    def handle(self, *args: Any, **options: Any) -> None:
        rulesets = options["ruleset"] or list(RULESETS)
        for ruleset in rulesets:
            if ruleset not in RULESETS:
                raise CommandError(
                    f"unknown ruleset {ruleset!r}; rulesets are: {', '.join(RULESETS)}"
                )
        for ruleset in rulesets:
            total = Match.objects.filter(
                ruleset=ruleset, status=Match.Status.FINISHED, rated=True
            ).count()
            with Progress(console=Console(stderr=True), transient=True) as progress:
                task = progress.add_task(f"{ruleset}: rating matches", total=total)

                def advance(task: TaskID = task) -> None:
                    progress.advance(task)

                report = rating_rebuild(ruleset=ruleset, apply=options["apply"], on_match=advance)
            self._report(report, options["show"])

    def _report(self, report: Rebuild, show: int) -> None:
        verdict = "applied" if report.applied else "dry run, nothing written (--apply writes)"
        self.stdout.write(
            f"{report.ruleset}: {report.matches} rated matches, {report.bots} bots rated; "
            f"{len(report.differences)} bots differ from the stored table; {verdict}"
        )
        if not report.differences or show <= 0:
            return
        largest = sorted(
            report.differences,
            key=lambda d: -abs(d.rebuilt.mu - (d.stored.mu if d.stored else 0.0)),
        )[:show]
        names = dict(
            Bot.objects.filter(pk__in=[d.bot_id for d in largest]).values_list("id", "name")
        )
        table = Table("bot", "stored Elo", "games", "rebuilt Elo", "games", "change")
        for d in largest:
            stored_mu = f"{d.stored.mu:.1f}" if d.stored else "-"
            stored_games = str(d.stored.games) if d.stored else "-"
            change = f"{d.rebuilt.mu - d.stored.mu:+.1f}" if d.stored else "new"
            table.add_row(
                names.get(d.bot_id, str(d.bot_id)),
                stored_mu,
                stored_games,
                f"{d.rebuilt.mu:.1f}",
                str(d.rebuilt.games),
                change,
            )
        buffer = io.StringIO()
        Console(file=buffer, width=100, color_system=None).print(table)
        self.stdout.write(buffer.getvalue().rstrip("\n"))
