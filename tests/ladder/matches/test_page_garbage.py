"""A page of matches is freed when its request ends, by reference counting, not left in
reference cycles for Python's cyclic garbage collector: that collector then freed ten pages'
worth at once, 75-95 ms added to one list request in ten (the p99 of the match lists in
`manage.py bench_scale`; `ladder.matches.selectors.release` says how)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from ladder.bots.views import bot_page
from ladder.matches.apis import MatchListApi

pytestmark = pytest.mark.django_db

KEPT = ("Match", "MatchSeat", "BotVersion", "Bot")


@pytest.fixture
def left_in_cycles() -> Iterator[Callable[[Callable[[], HttpResponse]], Counter[str]]]:
    """`left_in_cycles(request)`: the model objects one request leaves for the collector."""

    def run(request: Callable[[], HttpResponse]) -> Counter[str]:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            response = request()
            assert response.status_code == 200
            del response
            gc.collect()
            return Counter(type(o).__name__ for o in gc.garbage if type(o).__name__ in KEPT)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()

    yield run


def test_the_match_list_and_a_bot_page_leave_no_match_in_cycles(
    valid_version: Any, finished_match: Any, left_in_cycles: Any
) -> None:
    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    for _ in range(6):
        finished_match([a, b, c], [1, 2, 3])
    factory = RequestFactory()
    view = MatchListApi.as_view()

    def api_list() -> Any:
        response = view(factory.get("/api/matches/"))
        response.render()
        assert len(response.data["results"]) == 6  # the page was built from the matches
        return response

    def bot() -> HttpResponse:
        request = factory.get(f"/bots/{a.bot_id}/")
        request.user = type("Anonymous", (), {"is_authenticated": False, "pk": None})()
        return bot_page(request, a.bot_id)

    # Before `release` the list left its 6 matches, 18 seats and their versions in cycles.
    assert left_in_cycles(api_list) == Counter()
    # A template's context is itself a cycle (Django's ContextDict and Context refer to each
    # other), so what the page shows waits for the collector; but not the seats, most of it.
    assert left_in_cycles(bot)["MatchSeat"] == 0


def test_bench_tails_splits_each_pages_time(
    valid_version: Any, finished_match: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from django.core.management import call_command

    a, b = valid_version("a"), valid_version("b")
    finished_match([a, b], [1, 2])
    call_command("bench_tails", "/api/matches/", f"/bots/{a.bot_id}/", "--requests", "6")
    out = capsys.readouterr().out
    assert "/api/matches/: p50" in out and f"/bots/{a.bot_id}/: p50" in out
    assert out.count("over 6 requests") == 2
    assert out.count("  slow    wall") == 10  # the five slowest of each page
    assert " queries)" in out and " (0 queries)" not in out  # the SQL meter counted
