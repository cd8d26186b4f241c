"""Shared fixtures for bot tests: whether the real sandbox can run here.

On CI (`CI=true`) a sandbox that cannot start is a failure, never a skip."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bots.runner import home, pool, sandbox
from tests.bots import boxes


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        sandbox.check()
    except sandbox.SandboxUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the bot sandbox must work on CI: {exc}")
        pytest.skip(f"sandbox unavailable here: {exc}")


@pytest.fixture(scope="module", params=["at-start", "ahead"])
def box_made(request: pytest.FixtureRequest, sandbox_ready: None) -> Iterator[str]:
    """Every sandboxed bot of the test in a box made as it starts, then (a second run) in a
    box made ahead of time, as a ladder worker starts its bots (`bots.runner.pool`): the box
    a bot launched into from a waiting shell must hold it exactly as the other does."""
    if request.param == "at-start":
        yield request.param
        return

    def take(limits: sandbox.Limits) -> pool.ReadyBox:
        ready = pool.prepare(limits)
        assert ready.wait_up(), "a box made ahead did not come up"
        return ready

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool.POOL, "take", take)
        yield request.param


@pytest.fixture(autouse=True)
def _record_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record the boxes this test claims, in this process and those it forks
    (`tests.bots.boxes.own_leftovers`)."""
    boxes.forget_claims()
    claim = home.claim_box

    def recorded() -> home.Claim:
        made = claim()
        boxes.record_claim(made.box)
        return made

    monkeypatch.setattr(home, "claim_box", recorded)
