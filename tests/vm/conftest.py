"""Boot the cgroup v2 guest early: as soon as a run's tests are collected, if the VM test is
among them, so the emulated guest runs beside the rest of the suite (see EarlyBoot)."""

from __future__ import annotations

import pytest

from tests.vm import test_cgroup_v2


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    wanted = any(item.nodeid.startswith("tests/vm/") for item in session.items)
    if wanted and test_cgroup_v2.early is None and test_cgroup_v2.missing() is None:
        test_cgroup_v2.early = test_cgroup_v2.EarlyBoot()
