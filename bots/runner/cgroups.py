"""What the sandbox needs from Linux control groups, for one box: create it with its limits,
put the bot in it, read its CPU time, freeze and thaw it, kill everything in it, remove it.

Two backends behind one interface (`BoxCgroup`), chosen by what the host offers (`backend()`):

- **v2**, the unified hierarchy of current distributions (Debian 13, systemd 256 and later):
  `memory.max`, `memory.swap.max`, `pids.max`, `cpu.max`, `cpu.stat`, `cgroup.freeze`,
  `cgroup.kill`, `memory.events`. Boxes live under a parent the runner may write: the root of
  the hierarchy when it runs as root there (`/sys/fs/cgroup/grass`), or the subtree systemd
  delegates to the worker's unit (`Delegate=yes`, deploy/systemd/grass-worker.service).
- **v1**, separate hierarchies per controller (Debian 12 as it boots): memory, pids, cpu,
  cpuacct, freezer, each with `grass/<name>`.

The rest of the runner never touches a cgroup file. A box's cgroup is named after its sandbox
uid: a uid is held by one live box at a time (an flock, `bots.runner.home`), so the name is
unique while the box lives, and what a dead runner left behind is found from the uid alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
V2_CONTROLLERS = ("cpu", "memory", "pids")
PARENT = "grass"
CPU_PERIOD_US = 100_000
MIB = 1 << 20


class CgroupError(OSError):
    """The cgroups a box needs cannot be made or used here; the message says how to fix it."""


@dataclass(frozen=True)
class CgroupLimits:
    memory_mb: int
    pids: int
    cpus: float
    """CPU bandwidth: at most this many CPUs' worth of time, however many processes run."""


def _write(path: Path, value: object) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


class BoxCgroup(ABC):
    """One box's cgroup. `create` makes it; `remove` undoes everything, always."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frozen = False
        self._cpu_fd: int | None = None

    @abstractmethod
    def create(self, limits: CgroupLimits) -> None:
        """Make the cgroup and set the limits; on any failure, removes what it made."""

    @abstractmethod
    def join_self(self) -> None:
        """Move the calling process into the box. Runs in a forked child before exec, so it
        does nothing but open and write."""

    @abstractmethod
    def cpu_ns(self) -> int:
        """CPU time used by every process that was ever in the box."""

    @abstractmethod
    def memory_exceeded(self) -> bool:
        """Whether the box ever hit its memory limit (to explain an OOM kill)."""

    @abstractmethod
    def freeze(self) -> None: ...

    @abstractmethod
    def thaw(self) -> None: ...

    @abstractmethod
    def pids(self) -> list[int]: ...

    @abstractmethod
    def kill_all(self) -> None:
        """SIGKILL every process in the box, whatever it does meanwhile (no fork gets one
        out), and wait until it is empty."""

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def _dirs(self) -> list[Path]: ...

    def remove(self) -> None:
        """Kill everything inside, then remove the cgroup. Safe to call twice, and on a box
        that a dead runner left behind."""
        self.kill_all()
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        for path in self._dirs():
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy for a moment after the last process died
                    time.sleep(0.01)

    def _wait_empty(self) -> None:
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.002)


# ---------------------------------------------------------------------- cgroup v1


class V1Cgroup(BoxCgroup):
    """A box in the v1 hierarchies: `grass/<name>` under each controller."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        # Controllers mounted together (`cpu,cpuacct` behind two symlinks) share a directory.
        self.paths = {c: (ROOT / c).resolve() / PARENT / name for c in V1_CONTROLLERS}
        self._procs = sorted({str(p / "cgroup.procs") for p in self.paths.values()})

    def _dirs(self) -> list[Path]:
        return sorted(set(self.paths.values()))

    def create(self, limits: CgroupLimits) -> None:
        try:
            for path in self._dirs():
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
        pid = str(os.getpid()).encode()
        for procs in self._procs:
            fd = os.open(procs, os.O_WRONLY)
            os.write(fd, pid)
            os.close(fd)

    def exists(self) -> bool:
        return any(p.exists() for p in self.paths.values())

    def cpu_ns(self) -> int:
        assert self._cpu_fd is not None
        return int(os.pread(self._cpu_fd, 32, 0))

    def memory_exceeded(self) -> bool:
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
        """Freeze, SIGKILL every process listed, thaw so the kills land: nothing can fork
        its way out between the listing and the kill."""
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
        self._wait_empty()


def v1_missing() -> list[str]:
    return [c for c in V1_CONTROLLERS if not (ROOT / c / "cgroup.procs").exists()]


def v1_box_names() -> set[str]:
    names: set[str] = set()
    for controller in V1_CONTROLLERS:
        parent = ROOT / controller / PARENT
        with contextlib.suppress(OSError):
            names.update(p.name for p in parent.iterdir() if p.is_dir())
    return names


# ---------------------------------------------------------------------- cgroup v2


class V2Cgroup(BoxCgroup):
    """A box in the unified hierarchy: `<parent>/<name>`, the parent from `v2_parent()`."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.path = v2_parent() / name

    def _dirs(self) -> list[Path]:
        return [self.path]

    def create(self, limits: CgroupLimits) -> None:
        try:
            self.path.mkdir(exist_ok=False)
            _write(self.path / "memory.max", limits.memory_mb * MIB)
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap
                _write(self.path / "memory.swap.max", 0)
            _write(self.path / "pids.max", limits.pids)
            quota = max(1000, int(CPU_PERIOD_US * limits.cpus))
            _write(self.path / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            self._cpu_fd = os.open(self.path / "cpu.stat", os.O_RDONLY)
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot set up the cgroup of box {self.name}: {exc}") from None

    def join_self(self) -> None:
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)

    def exists(self) -> bool:
        return self.path.exists()

    def cpu_ns(self) -> int:
        assert self._cpu_fd is not None
        for line in os.pread(self._cpu_fd, 4096, 0).split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
        raise CgroupError(f"no usage_usec in {self.path / 'cpu.stat'}")

    def memory_exceeded(self) -> bool:
        try:
            fields = (self.path / "memory.events").read_text().split()
        except OSError:
            return False
        events = dict(zip(fields[::2], fields[1::2], strict=False))
        return int(events.get("oom_kill", "0")) > 0 or int(events.get("max", "0")) > 0

    def freeze(self) -> None:
        if not self.frozen:
            _write(self.path / "cgroup.freeze", 1)
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            _write(self.path / "cgroup.freeze", 0)
            self.frozen = False

    def pids(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill_all(self) -> None:
        """`cgroup.kill`: the kernel kills every process in the box at once, frozen ones too,
        and no fork escapes it."""
        if not self.path.exists():
            return
        with contextlib.suppress(OSError):
            _write(self.path / "cgroup.kill", 1)
            _write(self.path / "cgroup.freeze", 0)
        self.frozen = False
        self._wait_empty()


@lru_cache(maxsize=1)
def v2_parent() -> Path:
    """The cgroup the boxes are made in, its controllers enabled; raises CgroupError saying
    what the worker needs when it cannot have one.

    GRASS_CGROUP_PARENT names it. Otherwise: a runner in the root cgroup (root, no systemd
    unit: a container, a test VM) uses `/sys/fs/cgroup/grass`; a runner in a delegated
    subtree (`Delegate=yes`) moves every process of its own cgroup into a leaf `runner` (v2
    allows controllers only on cgroups with no processes of their own) and makes the boxes
    beside it.
    """
    configured = os.environ.get("GRASS_CGROUP_PARENT")
    try:
        if configured:
            parent = ROOT / configured.removeprefix(str(ROOT)).lstrip("/")
            parent.mkdir(exist_ok=True)
        elif _own_cgroup() == ROOT:
            parent = ROOT / PARENT
            parent.mkdir(exist_ok=True)
        else:
            parent = _own_cgroup()
            _vacate(parent)
        if parent.parent == ROOT:
            _enable(ROOT)  # the root cgroup may hold processes and still give controllers
        _enable(parent)
    except CgroupError:
        raise
    except OSError as exc:
        raise CgroupError(_not_delegated(ROOT / PARENT, exc)) from None
    return parent


def _own_cgroup() -> Path:
    text = Path("/proc/self/cgroup").read_text()
    for line in text.splitlines():
        if line.startswith("0::"):
            return ROOT / line[3:].lstrip("/")
    raise CgroupError("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")


def _vacate(parent: Path) -> None:
    """Move every process of `parent` into its leaf `runner` (held under a lock, so runner
    processes starting at once do it once)."""
    leaf = parent / "runner"
    try:
        leaf.mkdir(exist_ok=True)
        lock = os.open(leaf / "cgroup.procs", os.O_RDONLY)
    except OSError as exc:
        raise CgroupError(_not_delegated(parent, exc)) from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(100):
            pids = (parent / "cgroup.procs").read_text().split()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, OSError):
                    _write(leaf / "cgroup.procs", pid)
        raise CgroupError(f"processes keep appearing in {parent}; cannot make it a parent")
    except OSError as exc:
        raise CgroupError(_not_delegated(parent, exc)) from None
    finally:
        os.close(lock)


def _enable(cgroup: Path) -> None:
    """Enable the box controllers for `cgroup`'s children."""
    available = (cgroup / "cgroup.controllers").read_text().split()
    missing = [c for c in V2_CONTROLLERS if c not in available]
    if missing:
        raise CgroupError(
            f"cgroup {cgroup} lacks the {', '.join(missing)} controller(s): "
            + _not_delegated(cgroup, None)
        )
    enabled = (cgroup / "cgroup.subtree_control").read_text().split()
    wanted = [c for c in V2_CONTROLLERS if c not in enabled]
    if wanted:
        try:
            _write(cgroup / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        except OSError as exc:
            raise CgroupError(_not_delegated(cgroup, exc)) from None


def _not_delegated(cgroup: Path, exc: OSError | None) -> str:
    reason = f" ({exc})" if exc else ""
    return (
        f"the bot sandbox cannot manage cgroups under {cgroup}{reason}. Run the worker with "
        "Delegate=yes in its systemd unit (deploy/systemd/grass-worker.service), or as root "
        "in the root cgroup, or set GRASS_CGROUP_PARENT to a cgroup it may write"
    )


def v2_missing() -> list[str]:
    try:
        v2_parent()
    except (CgroupError, OSError) as exc:
        return [str(exc)]
    return []


def v2_box_names() -> set[str]:
    try:
        parent = v2_parent()
    except (CgroupError, OSError):
        return set()
    with contextlib.suppress(OSError):
        return {p.name for p in parent.iterdir() if p.is_dir() and p.name != "runner"}
    return set()


# ---------------------------------------------------------------------- the backend


@lru_cache(maxsize=1)
def backend() -> str:
    """'v2' when /sys/fs/cgroup is the unified hierarchy, else 'v1' (separate hierarchies;
    Debian 12's hybrid mounts a controller-less v2 at /sys/fs/cgroup/unified as well)."""
    if (ROOT / "cgroup.controllers").exists():
        return "v2"
    return "v1"


def box_cgroup(name: str) -> BoxCgroup:
    """The cgroup of box `name`, in this host's backend."""
    return V2Cgroup(name) if backend() == "v2" else V1Cgroup(name)


def missing() -> list[str]:
    """What this host lacks for the sandbox's cgroups (empty when nothing is missing)."""
    return v2_missing() if backend() == "v2" else v1_missing()


def box_names() -> set[str]:
    """The names of every box cgroup on this host, live or left behind."""
    return v2_box_names() if backend() == "v2" else v1_box_names()
