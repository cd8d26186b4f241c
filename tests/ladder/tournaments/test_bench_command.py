"""`manage.py bench_tournament` refuses bad input before it touches anything."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": "1,two"}, "counts separated by commas"),
        ({"workers": "0"}, "at least 1"),
        ({"entrants": 3, "seats": 4}, "--entrants must be at least --seats"),
        ({}, "does not look like a benchmark database"),
    ],
)
def test_bad_options_and_a_non_bench_database_are_refused(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("bench_tournament", **options)
