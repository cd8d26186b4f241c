"""A decision's clocks: the box's CPU time is the budget, wall time only a backstop.

A bot's thinking time is the CPU time of its whole box (every process and thread it runs),
read from the cgroup, so a busy worker does not shorten it: a bot that thinks until its clock
says stop gets the same CPU on an idle host and a loaded one. Wall time still bounds each
decision (`wall_factor` times the CPU budget, from a bank of its own), so a bot that sleeps
cannot stall a match; isolate's `--time` and `--wall-time` work the same way.

The runner cannot be woken when a cgroup's CPU time crosses a line, so it looks again after
the shortest wall time in which the box could have used what it had left (CPU left divided by
the most CPUs the box can run on at once): a few wake-ups per decision, and no more CPU past
the budget than a few milliseconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

MIN_WAIT_S = 0.005
"""Shortest pause between two looks at the CPU clock (bounds the overshoot and the polling)."""


class DecisionClock:
    """The clocks of one request. `cpu_ns` reads the box's CPU time; None (a bot run without
    the sandbox) makes the CPU budget a wall-clock one."""

    def __init__(
        self,
        cpu_ns: Callable[[], int] | None,
        *,
        cpu_ms: float,
        wall_ms: float,
        max_cpus: float | None = None,
    ) -> None:
        self._cpu_ns = cpu_ns
        self.started = time.perf_counter()
        self._cpu_start = cpu_ns() if cpu_ns is not None else 0
        self.cpu_limit_s = cpu_ms / 1000
        self.wall_deadline = self.started + wall_ms / 1000
        self._rate = max_cpus or float(os.cpu_count() or 1)

    def cpu_used_s(self) -> float:
        if self._cpu_ns is None:
            return time.perf_counter() - self.started
        return (self._cpu_ns() - self._cpu_start) / 1e9

    def wall_used_s(self) -> float:
        return time.perf_counter() - self.started

    def wait(self) -> float:
        """How long the runner may wait for the reply before looking at the clocks again;
        0 when either clock has run out."""
        wall_left = self.wall_deadline - time.perf_counter()
        cpu_left = self.cpu_limit_s - self.cpu_used_s()
        if wall_left <= 0 or cpu_left <= 0:
            return 0.0
        return min(wall_left, max(cpu_left / self._rate, MIN_WAIT_S))

    def which_ran_out(self) -> str:
        """'cpu' or 'wall': which clock ended the decision."""
        return "cpu" if self.cpu_used_s() >= self.cpu_limit_s else "wall"
