"""A decision's clocks: the box's CPU time is the budget, wall time only a backstop.

A bot's thinking time is the CPU time of its whole box (every process and thread it runs),
read from the cgroup, so a busy worker does not shorten it: a bot that thinks until its clock
says stop gets the same CPU on an idle host and a loaded one. Wall time still bounds each
decision (`wall_factor` times the CPU budget, from a bank of its own), so a bot that sleeps
cannot stall a match; isolate's `--time` and `--wall-time` work the same way.

The backstop does not count the time the box waited, runnable, for a CPU (its threads' run
delay, `Box.run_delay_ns`): on a crowded host a box can get less than a third of a core, and a
bot that only used its CPU budget was struck for the host's business (a strong bot at 600 ms a
decision forfeited every game on a host at load 13). The delay is read only when the wall
time is up, and it can stretch the backstop to MAX_STRETCH times its length; a host slower
than that is the host's fault (`HostTooBusy`), not the bot's.

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
MAX_STRETCH = 10.0
"""The backstop stretches, by the box's run delay, to at most this many times its length."""


class HostTooBusy(RuntimeError):
    """The box waited for a CPU longer than MAX_STRETCH backstops: the host is at fault."""


class DecisionClock:
    """The clocks of one request. `cpu_ns` reads the box's CPU time; None (a bot run without
    the sandbox) makes the CPU budget a wall-clock one. `run_delay_ns(refresh)` reads how long
    the box's threads have waited for a CPU (refresh: look for new threads too)."""

    def __init__(
        self,
        cpu_ns: Callable[[], int] | None,
        *,
        cpu_ms: float,
        wall_ms: float,
        max_cpus: float | None = None,
        run_delay_ns: Callable[[bool], int] | None = None,
    ) -> None:
        self._cpu_ns = cpu_ns
        self._delay_ns = run_delay_ns
        self.started = time.perf_counter()
        self._cpu_start = cpu_ns() if cpu_ns is not None else 0
        self._delay_start = run_delay_ns(False) if run_delay_ns is not None else 0
        self.cpu_limit_s = cpu_ms / 1000
        self.wall_s = wall_ms / 1000
        self.wall_deadline = self.started + self.wall_s
        """Moves later by the box's run delay (`wait`)."""
        self.hard_deadline = self.started + self.wall_s * (1 + MAX_STRETCH)
        """Past this, nothing moves the deadline: the host is too busy."""
        self.delay_s = 0.0
        """The run delay the deadline was moved by so far."""
        self._rate = max_cpus or float(os.cpu_count() or 1)

    def cpu_used_s(self) -> float:
        if self._cpu_ns is None:
            return time.perf_counter() - self.started
        return (self._cpu_ns() - self._cpu_start) / 1e9

    def wall_used_s(self) -> float:
        return time.perf_counter() - self.started

    def wait(self) -> float:
        """How long the runner may wait for the reply before looking at the clocks again;
        0 when either clock has run out. Raises HostTooBusy when the deadline would move
        past `hard_deadline`."""
        now = time.perf_counter()
        wall_left = self.wall_deadline - now
        if wall_left <= 0 and self._delay_ns is not None:
            wall_left = self._stretch(now)
        cpu_left = self.cpu_limit_s - self.cpu_used_s()
        if wall_left <= 0 or cpu_left <= 0:
            return 0.0
        return min(wall_left, max(cpu_left / self._rate, MIN_WAIT_S))

    def _stretch(self, now: float) -> float:
        """Move the deadline by the run delay not yet counted; the wall time left after."""
        assert self._delay_ns is not None
        delay = (self._delay_ns(True) - self._delay_start) / 1e9
        if delay > self.delay_s:
            self.wall_deadline += delay - self.delay_s
            self.delay_s = delay
        if self.wall_deadline > self.hard_deadline:
            raise HostTooBusy(
                f"the box waited {self.delay_s:.1f} s for a CPU in {now - self.started:.1f} s "
                "of one decision: the host is too busy to be fair"
            )
        return self.wall_deadline - now

    def which_ran_out(self) -> str:
        """'cpu' or 'wall': which clock ended the decision."""
        return "cpu" if self.cpu_used_s() >= self.cpu_limit_s else "wall"
