"""Path converters: how the site reads a row's id out of a URL.

Django's `int` converter takes any run of digits, and SQLite (the development database, `make
run`) cannot hold a number past 2**63 - 1: a query with one raised OverflowError, a 500 for
`/api/tournaments/338060565122353987584/...` (Schemathesis found it; PostgreSQL answers 404).
`<id:...>` takes only the ids a row can have, so any other number is a 404 before a view runs,
on every database. Registered here, once, for every URL module that imports this one.
"""

from __future__ import annotations

from django.urls import register_converter

MAX_ID = 2**63 - 1
"""The largest id a row can have: BigAutoField is a signed 64-bit integer (in PostgreSQL and
SQLite alike)."""


class IdConverter:
    """A row's id: 1 to 19 digits, at most MAX_ID (larger ones match no URL: a 404)."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            # A ValueError tells Django's resolver that this pattern does not match.
            raise ValueError(f"{value} is larger than any id")
        return number

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
