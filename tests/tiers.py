"""The suite's tiers: which tests are of a slow kind, and how many examples a property test
draws.

`make test` and `.ci/run` run everything. `make check` runs the fast tier: every test that is
none of the kinds below, with Hypothesis' `quick` profile (docs/testing.md). The kinds are
given by where a test lives or what it uses, so a test added to tests/e2e/ or one that asks for
the `browser` fixture is in its tier without a mark of its own:

- `vm`: the cgroup v2 guest under QEMU (tests/vm/).
- `browser`: Chromium driving the site (tests/browser/, or any test using `browser`).
- `e2e`: real Celery workers and beat (tests/e2e/, or any test using `celery`).
- `schema`: the API fuzzed (Schemathesis) or driven by a generated client, against a live
  server (the files in BY_PATH).
- `sandbox`: bots run in the real OS sandbox (any test using `sandbox_ready`): the hostile
  suite, the starters, the clocks, the builds. They wait on bots' deadlines more than they
  compute, and a change to a card or a page does not reach them; `-m sandbox` runs them.
- `slow`: one test of another kind that takes seconds, not milliseconds (a benchmark's tiny
  run, the training command, whole games checked at every event): marked in its file.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

BY_PATH: dict[str, tuple[str, ...]] = {
    "vm": ("tests/vm/",),
    "browser": ("tests/browser/",),
    "e2e": ("tests/e2e/",),
    "schema": (
        "tests/ladder/site/test_schemathesis.py",
        "tests/ladder/site/test_generated_client.py",
    ),
}
BY_FIXTURE = {"browser": "browser", "celery": "e2e", "sandbox_ready": "sandbox"}
"""A test that uses the fixture (key) is of the kind (value), wherever it lives."""

SLOW_KINDS = ("vm", "browser", "e2e", "schema", "sandbox", "slow")
"""What `make check` leaves out (with `lint`, whose tools it runs itself)."""

FULL_EXAMPLES = 100
"""Hypothesis' own default of examples per test: the full run's (its `default` profile, or its
`ci` profile under CI=true, which also derandomizes and drops the deadline)."""

settings.register_profile(
    "quick",
    max_examples=10,
    # The fast tier runs on a developer's busy machine: a slow example is not a failure.
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def kinds(item: pytest.Item) -> set[str]:
    """The slow kinds `item` is of, from its path and its fixtures."""
    found = {kind for kind, paths in BY_PATH.items() if item.nodeid.startswith(paths)}
    fixtures = getattr(item, "fixturenames", ())
    found.update(kind for fixture, kind in BY_FIXTURE.items() if fixture in fixtures)
    return found


def examples(full: int) -> int:
    """`full` in the full run; under a profile that draws fewer than Hypothesis' default 100
    examples, scaled down alike (a tenth under `quick`), never below 5. For a property test
    with a count of its own, which a profile cannot change (a test's own settings win over the
    profile's): `@settings(max_examples=examples(400))`."""
    drawn = settings.default.max_examples
    if drawn >= FULL_EXAMPLES:
        return full
    return max(5, full * drawn // FULL_EXAMPLES)
