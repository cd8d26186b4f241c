"""What the sandbox needs from Linux control groups, for one box: create it with its limits,
put the bot in it, read its CPU time, freeze and thaw it, kill everything in it, remove it.

This module is the cgroup v1 backend (separate hierarchies per controller, as Debian 12
mounts them). Everything else in the runner talks to a `BoxCgroup` and never to cgroup files,
so a v2 backend can take its place.

A box's cgroups are named after its sandbox uid (`grass/<uid>` in each hierarchy): a uid is
held by one live box at a time (an flock, `bots.runner.home`), so the name is unique while the
box lives, and what a dead runner left behind is found from the uid alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
PARENT = "grass"
CPU_PERIOD_US = 100_000
MIB = 1 << 20


class CgroupError(OSError):
    """The cgroups a box needs cannot be made or used here."""


@dataclass(frozen=True)
class CgroupLimits:
    memory_mb: int
    pids: int
    cpus: float
    """CPU bandwidth: at most this many CPUs' worth of time, however many processes run."""


def missing_controllers() -> list[str]:
    """The v1 controllers this backend needs that the host does not mount."""
    return [c for c in CONTROLLERS if not (ROOT / c / "cgroup.procs").exists()]


def _hierarchies(name: str) -> dict[str, Path]:
    """Each controller's directory for box `name`. Controllers mounted together (`cpu,cpuacct`
    behind two symlinks) share one directory."""
    return {c: (ROOT / c).resolve() / PARENT / name for c in CONTROLLERS}


def _write(path: Path, value: object) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


class BoxCgroup:
    """One box's cgroups (v1). `create` makes them; `remove` undoes everything, always."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.paths = _hierarchies(name)
        self.frozen = False
        self._cpu_fd: int | None = None
        self._procs = sorted({str(p / "cgroup.procs") for p in self.paths.values()})

    # ------------------------------------------------------------------ life cycle

    def create(self, limits: CgroupLimits) -> None:
        """Make the cgroups and set the limits; on any failure, removes what it made."""
        try:
            for path in sorted(set(self.paths.values())):
                path.mkdir(parents=True, exist_ok=False)
            memory = self.paths["memory"]
            _write(memory / "memory.limit_in_bytes", limits.memory_mb * MIB)
            swap = memory / "memory.memsw.limit_in_bytes"
            if swap.exists():
                _write(swap, limits.memory_mb * MIB)
            _write(self.paths["pids"] / "pids.max", limits.pids)
            cpu = self.paths["cpu"]
            _write(cpu / "cpu.cfs_period_us", CPU_PERIOD_US)
            _write(cpu / "cpu.cfs_quota_us", max(1000, int(CPU_PERIOD_US * limits.cpus)))
            self._cpu_fd = os.open(self.paths["cpuacct"] / "cpuacct.usage", os.O_RDONLY)
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot set up the cgroups of box {self.name}: {exc}") from None

    def join_self(self) -> None:
        """Move the calling process into the box. Runs in a forked child before exec, so it
        does nothing but open and write."""
        pid = str(os.getpid()).encode()
        for procs in self._procs:
            fd = os.open(procs, os.O_WRONLY)
            os.write(fd, pid)
            os.close(fd)

    def remove(self) -> None:
        """Kill everything inside, then remove the cgroups. Safe to call twice, and on a box
        that a dead runner left behind."""
        self.kill_all()
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        for path in sorted(set(self.paths.values())):
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy for a moment after the last process died
                    time.sleep(0.01)

    def exists(self) -> bool:
        return any(p.exists() for p in self.paths.values())

    # ------------------------------------------------------------------ while running

    def cpu_ns(self) -> int:
        """CPU time used by every process that was ever in the box."""
        assert self._cpu_fd is not None
        return int(os.pread(self._cpu_fd, 32, 0))

    def memory_exceeded(self) -> bool:
        """Whether the box ever hit its memory limit (to explain an OOM kill)."""
        memory = self.paths["memory"]
        try:
            control = (memory / "memory.oom_control").read_text().split()
            kills = dict(zip(control[::2], control[1::2], strict=False)).get("oom_kill", "0")
            return int(kills) > 0 or int((memory / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def freeze(self) -> None:
        if not self.frozen:
            _write(self.paths["freezer"] / "freezer.state", "FROZEN")
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            _write(self.paths["freezer"] / "freezer.state", "THAWED")
            self.frozen = False

    def pids(self) -> list[int]:
        try:
            text = (self.paths["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill_all(self) -> None:
        """Freeze, SIGKILL every process in the box, thaw so the kills land, wait until empty:
        nothing can fork its way out between the listing and the kill."""
        freezer = self.paths["freezer"]
        if not freezer.exists():
            return
        with contextlib.suppress(OSError):
            _write(freezer / "freezer.state", "FROZEN")
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            _write(freezer / "freezer.state", "THAWED")
        self.frozen = False
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.002)


def box_names() -> set[str]:
    """The names of every box cgroup on this host, live or left behind."""
    names: set[str] = set()
    for controller in CONTROLLERS:
        parent = ROOT / controller / PARENT
        with contextlib.suppress(OSError):
            names.update(p.name for p in parent.iterdir() if p.is_dir())
    return names
