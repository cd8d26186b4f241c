"""Shared fixtures for bot tests: whether the real sandbox can run here.

On CI (`CI=true`) a sandbox that cannot start is a failure, never a skip."""

from __future__ import annotations

import os

import pytest

from bots.runner import sandbox


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        sandbox.check()
    except sandbox.SandboxUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the bot sandbox must work on CI: {exc}")
        pytest.skip(f"sandbox unavailable here: {exc}")
