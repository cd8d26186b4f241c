"""A heartbeat that cannot see its match's row at all does not stop the run: nobody took the
match back (it was deleted, or its run started inside a transaction not yet committed, as in
every test that runs a match on the test's own connection). Before, the run was stopped at
its first beat after 10 s: under load, any such test's match longer than that failed."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from ladder.matches.claims import match_claim
from ladder.matches.heartbeat import match_heartbeat
from ladder.matches.services import match_create

pytestmark = pytest.mark.django_db  # not transactional: the heartbeat's own connection sees nothing


def test_a_run_whose_row_the_heartbeat_cannot_see_plays_on(
    valid_version: Any, owners: Any, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.GRASS_MATCH_HEARTBEAT_SECONDS = 1
    a, b = owners(2)
    match = match_create(versions=[valid_version("a", by=a), valid_version("b", by=b)])
    claim = match_claim(match_id=match.pk)
    assert claim is not None
    caplog.set_level(logging.WARNING, logger="ladder.matches.heartbeat")
    with match_heartbeat(claim=claim) as lease:
        deadline = time.monotonic() + 120  # a bound for a hang: the first beat comes after 1 s
        while "not visible to the heartbeat" not in caplog.text:
            assert time.monotonic() < deadline, "the heartbeat never beat"
            assert lease.lost is None, lease.lost
            time.sleep(0.05)
        # The beat that found the row unseen went on instead of losing the lease.
        assert lease.lost is None
