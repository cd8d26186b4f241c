"""The sandbox boxes a test made itself, to check that each is gone afterwards.

Other processes make and leave boxes too while a test runs (the suite's other processes; a
Celery worker killed on purpose leaves its boxes to the next sweep), so a test that checks
the host-wide `home.leftovers()` could blame itself for theirs. Every box claims its uid
through `home.claim_uid`; `tests/bots/conftest.py` records the claims made in this process
during each test.
"""

from __future__ import annotations

from bots.runner import home

CLAIMED: list[int] = []
"""The uids claimed in this process since the current test began."""


def own_leftovers() -> list[int]:
    """The uids of this test's boxes of which something is left (cgroups, staged code) while
    no live box holds them: what `home.leftovers()` would list, for this test's boxes only."""
    left = set(home.leftovers())
    return sorted(uid for uid in set(CLAIMED) if uid in left)
