"""`manage.py accounts_link alice bob [...]`: link accounts staff know to be one person's, so
their bots never share a rated table (`--unlink alice`: take one out of its circle again;
`--show alice`: the accounts in its circle)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ladder.accounts.selectors import circle_members
from ladder.accounts.services import account_unlink, accounts_link


class Command(BaseCommand):
    help = "Link accounts into one seating circle (their bots never share a rated table)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("usernames", nargs="+")
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--unlink", action="store_true", help="take each out of its circle")
        what.add_argument("--show", action="store_true", help="list each one's circle")
        parser.add_argument("--reason", default="staff, by manage.py accounts_link")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model().objects.filter(username__in=options["usernames"])
        found = {u.get_username(): u.pk for u in users}
        missing = sorted(set(options["usernames"]) - set(found))
        if missing:
            raise CommandError(f"no such account: {', '.join(missing)}")
        if options["show"]:
            for name, pk in found.items():
                ids = circle_members(user_id=pk)
                names = dict(
                    get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")
                )
                self.stdout.write(f"{name}: {', '.join(names[m] for m in ids)}")
        elif options["unlink"]:
            for pk in found.values():
                account_unlink(user_id=pk, reason=options["reason"])
            self.stdout.write(f"unlinked: {', '.join(found)}")
        else:
            try:
                circle = accounts_link(user_ids=found.values(), reason=options["reason"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"linked into circle {circle}: {', '.join(found)}")
