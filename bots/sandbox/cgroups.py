"""A box's control group: made with its limits, joined by the box's first process, killed and
removed; and what of it the caller may read or write (`BoxCgroup.facts`).

Two backends behind one interface, chosen by what the host offers (`backend()`):

- **v2**, the unified hierarchy of current distributions (Debian 13): `memory.max`,
  `memory.swap.max`, `pids.max`, `cpu.max`, `cgroup.freeze`, `cgroup.kill`. Boxes live in
  `/sys/fs/cgroup/grass-box/<id>` (GRASS_CGROUP_PARENT, for a root caller, names another).
- **v1**, a hierarchy per controller (Debian 12 as it boots): memory, pids, cpu, cpuacct,
  freezer, each with `grass-box/<id>`.

The caller needs no write access to any of it but one file: the box's freezer, made its own
(`chown` to the caller's uid) so that it can freeze a restless bot between its turns and thaw it
for the next, a few hundred microseconds each, without a call to this program. The files it
reads (CPU time, the processes, memory events) are world-readable as the kernel makes them.
"""

from __future__ import annotations

import os
import time

ROOT = "/sys/fs/cgroup"
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
V2_CONTROLLERS = ("cpu", "memory", "pids")
PARENT = "grass-box"
CPU_PERIOD_US = 100_000
SIGKILL = 9
"""(The signal module imports enum: a tenth of this program's start-up.)"""
MIB = 1 << 20


class CgroupError(OSError):
    """The cgroups a box needs cannot be made or used here; the message says why."""


class CgroupLimits:
    """memory (MiB), processes, and CPU bandwidth: at most `cpus` CPUs' worth of time,
    however many processes run."""

    __slots__ = ("cpus", "memory_mb", "pids")

    def __init__(self, memory_mb: int, pids: int, cpus: float) -> None:
        self.memory_mb, self.pids, self.cpus = memory_mb, pids, cpus


def _write(path: str, value: object) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


def _read(path: str) -> str:
    with open(path) as file:
        return file.read()


class BoxCgroup:
    """One box's cgroup. `create` makes it; `remove` undoes everything, always."""

    def __init__(self, name: str) -> None:
        self.name = name

    def create(self, limits: CgroupLimits, owner: int) -> None:
        """Make the cgroup, set the limits, give `owner` the freezer; on any failure, remove
        what was made."""
        raise NotImplementedError

    def join_self(self) -> None:
        """Move the calling process into the box (the program, just before it execs the
        box's first process)."""
        raise NotImplementedError

    def facts(self) -> dict[str, str]:
        """What the caller reads and writes: `key:value` lines of `init`'s answer."""
        raise NotImplementedError

    def pids(self) -> list[int]:
        raise NotImplementedError

    def kill_all(self) -> None:
        """SIGKILL every process in the box, whatever it does meanwhile (no fork gets one
        out), and wait until it is empty."""
        raise NotImplementedError

    def exists(self) -> bool:
        raise NotImplementedError

    def _dirs(self) -> list[str]:
        raise NotImplementedError

    def remove(self) -> None:
        """Kill everything inside, then remove the cgroup. Safe to call twice, and on a box
        that a dead caller left behind."""
        self.kill_all()
        for path in self._dirs():
            for _ in range(100):
                try:
                    os.rmdir(path)
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
    """A box in the v1 hierarchies: `grass-box/<name>` under each controller."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        # Controllers mounted together (`cpu,cpuacct` behind two symlinks) share a directory.
        self.paths = {
            c: os.path.join(os.path.realpath(os.path.join(ROOT, c)), PARENT, name)
            for c in V1_CONTROLLERS
        }

    def _dirs(self) -> list[str]:
        return sorted(set(self.paths.values()))

    def create(self, limits: CgroupLimits, owner: int) -> None:
        try:
            for path in self._dirs():
                os.makedirs(path)
            memory = self.paths["memory"]
            _write(f"{memory}/memory.limit_in_bytes", limits.memory_mb * MIB)
            swap = f"{memory}/memory.memsw.limit_in_bytes"
            if os.path.exists(swap):
                _write(swap, limits.memory_mb * MIB)
            _write(f"{self.paths['pids']}/pids.max", limits.pids)
            cpu = self.paths["cpu"]
            _write(f"{cpu}/cpu.cfs_period_us", CPU_PERIOD_US)
            _write(f"{cpu}/cpu.cfs_quota_us", max(1000, int(CPU_PERIOD_US * limits.cpus)))
            os.chown(f"{self.paths['freezer']}/freezer.state", owner, -1)
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot set up the cgroups of box {self.name}: {exc}") from None

    def join_self(self) -> None:
        pid = str(os.getpid()).encode()
        for procs in sorted({f"{p}/cgroup.procs" for p in self.paths.values()}):
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def facts(self) -> dict[str, str]:
        return {
            "cgroup": "v1",
            "cpu": f"{self.paths['cpuacct']}/cpuacct.usage",
            "freeze": f"{self.paths['freezer']}/freezer.state",
            "procs": f"{self.paths['pids']}/cgroup.procs",
            "tasks": f"{self.paths['pids']}/tasks",
            "memory": f"{self.paths['memory']}/memory.oom_control",
        }

    def exists(self) -> bool:
        return any(os.path.exists(p) for p in self.paths.values())

    def pids(self) -> list[int]:
        try:
            text = _read(f"{self.paths['pids']}/cgroup.procs")
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill_all(self) -> None:
        """Freeze, SIGKILL every process listed, thaw so the kills land: nothing can fork
        its way out between the listing and the kill."""
        state = f"{self.paths['freezer']}/freezer.state"
        if not os.path.exists(state):
            return
        try:
            _write(state, "FROZEN")
            for pid in self.pids():
                try:
                    os.kill(pid, SIGKILL)
                except ProcessLookupError:
                    pass
            _write(state, "THAWED")
        except OSError:
            pass
        self._wait_empty()


def v1_missing() -> list[str]:
    return [c for c in V1_CONTROLLERS if not os.path.exists(f"{ROOT}/{c}/cgroup.procs")]


def _children(parent: str) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(parent) if entry.is_dir()}
    except OSError:
        return set()


def v1_box_names() -> set[str]:
    names: set[str] = set()
    for controller in V1_CONTROLLERS:
        names |= _children(f"{ROOT}/{controller}/{PARENT}")
    return names


# ---------------------------------------------------------------------- cgroup v2


class V2Cgroup(BoxCgroup):
    """A box in the unified hierarchy: `<parent>/<name>`, the parent from `v2_parent()`."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.path = f"{v2_parent()}/{name}"

    def _dirs(self) -> list[str]:
        return [self.path]

    def create(self, limits: CgroupLimits, owner: int) -> None:
        try:
            os.mkdir(self.path)
            _write(f"{self.path}/memory.max", limits.memory_mb * MIB)
            try:
                _write(f"{self.path}/memory.swap.max", 0)
            except FileNotFoundError:  # no swap accounting: no swap
                pass
            _write(f"{self.path}/pids.max", limits.pids)
            quota = max(1000, int(CPU_PERIOD_US * limits.cpus))
            _write(f"{self.path}/cpu.max", f"{quota} {CPU_PERIOD_US}")
            os.chown(f"{self.path}/cgroup.freeze", owner, -1)
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot set up the cgroup of box {self.name}: {exc}") from None

    def join_self(self) -> None:
        fd = os.open(f"{self.path}/cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def facts(self) -> dict[str, str]:
        return {
            "cgroup": "v2",
            "cpu": f"{self.path}/cpu.stat",
            "freeze": f"{self.path}/cgroup.freeze",
            "procs": f"{self.path}/cgroup.procs",
            "tasks": f"{self.path}/cgroup.threads",
            "memory": f"{self.path}/memory.events",
        }

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def pids(self) -> list[int]:
        try:
            text = _read(f"{self.path}/cgroup.procs")
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill_all(self) -> None:
        """`cgroup.kill`: the kernel kills every process in the box at once, frozen ones too,
        and no fork escapes it."""
        if not os.path.exists(self.path):
            return
        try:
            _write(f"{self.path}/cgroup.kill", 1)
            _write(f"{self.path}/cgroup.freeze", 0)
        except OSError:
            pass
        self._wait_empty()


_PARENT: list[str] = []


def v2_parent() -> str:
    """The cgroup boxes are made in, its controllers enabled (CgroupError saying why not).
    A fixed place at the top of the hierarchy, whatever cgroup the caller runs in: the
    program runs as root, and a worker's own cgroup (a systemd unit) needs no delegation."""
    if _PARENT:
        return _PARENT[0]
    configured = os.environ.get("GRASS_CGROUP_PARENT")
    name = configured.removeprefix(ROOT).strip("/") if configured else PARENT
    parent = f"{ROOT}/{name}"
    try:
        _enable(os.path.dirname(parent))
        os.makedirs(parent, exist_ok=True)
        _enable(parent)
    except CgroupError:
        raise
    except OSError as exc:
        raise CgroupError(f"cannot make the boxes' cgroup {parent}: {exc}") from None
    _PARENT.append(parent)
    return parent


def _enable(cgroup: str) -> None:
    """Enable the box controllers for `cgroup`'s children."""
    available = _read(f"{cgroup}/cgroup.controllers").split()
    missing = [c for c in V2_CONTROLLERS if c not in available]
    if missing:
        raise CgroupError(f"cgroup {cgroup} lacks the {', '.join(missing)} controller(s)")
    enabled = _read(f"{cgroup}/cgroup.subtree_control").split()
    wanted = [c for c in V2_CONTROLLERS if c not in enabled]
    if wanted:
        _write(f"{cgroup}/cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))


def v2_missing() -> list[str]:
    try:
        v2_parent()
    except (CgroupError, OSError) as exc:
        return [str(exc)]
    return []


def v2_box_names() -> set[str]:
    try:
        return _children(v2_parent())
    except (CgroupError, OSError):
        return set()


# ---------------------------------------------------------------------- the backend


def backend() -> str:
    """'v2' when /sys/fs/cgroup is the unified hierarchy, else 'v1' (separate hierarchies;
    Debian 12's hybrid mounts a controller-less v2 at /sys/fs/cgroup/unified as well)."""
    return "v2" if os.path.exists(f"{ROOT}/cgroup.controllers") else "v1"


def box_cgroup(name: str) -> BoxCgroup:
    """The cgroup of box `name`, in this host's backend."""
    return V2Cgroup(name) if backend() == "v2" else V1Cgroup(name)


def missing() -> list[str]:
    """What this host lacks for the boxes' cgroups (empty when nothing is missing)."""
    if backend() == "v2":
        return v2_missing()
    absent = v1_missing()
    return [f"cgroup v1 controllers not mounted: {', '.join(absent)}"] if absent else []


def box_names() -> set[str]:
    """The names of every box cgroup on this host, live or left behind."""
    return v2_box_names() if backend() == "v2" else v1_box_names()
