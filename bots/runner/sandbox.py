"""The OS sandbox for bot processes: bubblewrap + cgroup v1 + rlimits + seccomp.

Chain, outermost first: the runner (root) forks; the child joins the box's cgroups (memory,
pids, cpuacct, freezer) and sets its rlimits; `setpriv` drops to a uid of its own with no
privileges; `bwrap` builds empty namespaces (user, PID, network, IPC, UTS, mount), a read-only
runtime (/usr with no site-packages, the engine and the SDK), the bot's code read-only at /bot,
a small tmpfs at /tmp, and applies the seccomp filter; then Debian's python3 runs the bot.
Teardown freezes the cgroup, kills every process in it and removes it, so nothing the bot
started survives the match. `../shared/SANDBOX-NOTES.md` has the measurements behind this.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bots.runner.process import BotProcess

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
UID_RANGE = range(64100, 65000)
PYTHON = "/usr/bin/python3"
HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start here; a bot must then not run at all (infrastructure fault)."""


@dataclass(frozen=True)
class Limits:
    """Per-bot resource limits. Defaults suit a Python bot with room to think."""

    memory_mb: int = 256
    """Memory cgroup limit (resident memory, page cache included)."""
    address_space_mb: int = 1024
    """RLIMIT_AS: a runaway allocation fails with MemoryError before the OOM killer."""
    pids: int = 16
    """Processes and threads in the box (the pids cgroup; RLIMIT_NPROC is not used: on these
    kernels its per-uid count leaked across quickly reused sandbox uids)."""
    cpu_seconds: int = 600
    """RLIMIT_CPU for the whole match: the kernel kills a bot past this."""
    file_size_mb: int = 8
    """RLIMIT_FSIZE: largest file the bot may write (in its /tmp)."""
    open_files: int = 64
    scratch_mb: int = 16
    """Size of the bot's private /tmp (and, separately, of its /dev/shm)."""


@lru_cache(maxsize=1)
def seccomp_program() -> bytes:
    """The compiled seccomp filter (built once per process by Debian's python3-seccomp)."""
    try:
        out = subprocess.run(
            [PYTHON, "-I", str(HERE / "seccomp_filter.py")],
            capture_output=True,
            check=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(
            f"cannot build the seccomp filter with {PYTHON} (is python3-seccomp installed?): {exc}"
        ) from None
    if not out.stdout:
        raise SandboxUnavailable("the seccomp filter came out empty")
    return out.stdout


@lru_cache(maxsize=1)
def runtime_dir() -> Path:
    """A neutral, world-readable copy of what bots may import: `engine` and the SDK."""
    root = Path(tempfile.mkdtemp(prefix="grass-runtime-"))
    lib = root / "lib"
    skip = shutil.ignore_patterns("*.pyc", "__pycache__")
    shutil.copytree(PROJECT / "engine", lib / "engine", ignore=skip)
    shutil.copytree(PROJECT / "bots" / "sdk", lib / "bots" / "sdk", ignore=skip)
    shutil.copy(PROJECT / "bots" / "protocol.py", lib / "bots" / "protocol.py")
    (lib / "bots" / "__init__.py").write_text("")
    shutil.copy(HERE / "launch.py", root / "launch.py")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def check() -> None:
    """Raise SandboxUnavailable, saying why, if sandboxed bots cannot run on this machine."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the sandbox needs root (cgroups and a uid per bot)")
    for tool in ("bwrap", "setpriv"):
        if shutil.which(tool) is None:
            raise SandboxUnavailable(f"{tool} is not installed (run deploy/setup.sh)")
    if not Path(PYTHON).exists():
        raise SandboxUnavailable(f"{PYTHON} (Debian's python3) is missing")
    for controller in CONTROLLERS:
        if not (CGROUP_ROOT / controller / "cgroup.procs").exists():
            raise SandboxUnavailable(f"cgroup v1 controller {controller!r} is not mounted")
    seccomp_program()


class Box:
    """One bot's sandbox: its uid, cgroups and staged code. Create with `Box.open`."""

    def __init__(self, uid: int, lock_fd: int, name: str, limits: Limits) -> None:
        self.uid = uid
        self.lock_fd = lock_fd
        self.name = name
        self.limits = limits
        self.cgroups = {c: CGROUP_ROOT / c / "grass" / name for c in CONTROLLERS}
        self.frozen = False
        self.code_dir: Path | None = None
        self._cpu_fd: int | None = None

    @classmethod
    def open(cls, limits: Limits) -> Box:
        check()
        uid, lock_fd = _claim_uid()
        box = cls(uid, lock_fd, f"box-{uid}-{os.getpid()}-{time.monotonic_ns() % 10**9}", limits)
        try:
            for path in box.cgroups.values():
                path.mkdir(parents=True, exist_ok=False)
            mib = 1 << 20
            _write(box.cgroups["memory"] / "memory.limit_in_bytes", limits.memory_mb * mib)
            swap = box.cgroups["memory"] / "memory.memsw.limit_in_bytes"
            if swap.exists():
                _write(swap, limits.memory_mb * mib)
            _write(box.cgroups["pids"] / "pids.max", limits.pids)
            box._cpu_fd = os.open(box.cgroups["cpuacct"] / "cpuacct.usage", os.O_RDONLY)
        except OSError as exc:
            box.destroy()
            raise SandboxUnavailable(f"cannot set up cgroups for a bot: {exc}") from None
        return box

    def stage(self, files: dict[str, bytes]) -> Path:
        """Copy the bot's files into a directory only this box mounts."""
        self.code_dir = Path(tempfile.mkdtemp(prefix="grass-bot-"))
        for rel, data in files.items():
            target = self.code_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        for path in [self.code_dir, *self.code_dir.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        return self.code_dir

    def argv(self, seccomp_fd: int) -> list[str]:
        runtime = runtime_dir()
        assert self.code_dir is not None
        limits = self.limits
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv", "PATH", "/usr/bin",
            "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8",
            "--ro-bind", "/usr", "/usr",
            "--tmpfs", "/usr/local",
            "--tmpfs", "/usr/lib/python3/dist-packages",
            "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(limits.scratch_mb << 20),
            "--tmpfs", "/tmp",
            "--ro-bind", str(runtime / "lib"), "/sandbox/lib",
            "--ro-bind", str(runtime / "launch.py"), "/sandbox/launch.py",
            "--ro-bind", str(self.code_dir), "/bot",
            "--size", str(limits.scratch_mb << 20),
            "--tmpfs", "/dev/shm",
            "--hostname", "grass",
            # Everything but /tmp and /dev/shm read-only: no storage beyond the two quotas.
            "--remount-ro", "/dev",
            "--remount-ro", "/",
            "--chdir", "/tmp",
            "--seccomp", str(seccomp_fd),
            "--",
            PYTHON, "-I", "-S", "-B", "/sandbox/launch.py", "/bot", "/sandbox/lib",
        ]  # fmt: skip

    def _preexec(self) -> None:
        """In the forked child, before exec: join the cgroups and set the rlimits."""
        pid = str(os.getpid()).encode()
        for path in self.cgroups.values():
            fd = os.open(path / "cgroup.procs", os.O_WRONLY)
            os.write(fd, pid)
            os.close(fd)
        limits = self.limits
        mib = 1 << 20
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_mb * mib,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mib,) * 2)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def start(self) -> BotProcess:
        """Launch the staged bot in this box."""
        read_end, write_end = os.pipe()
        try:
            os.write(write_end, seccomp_program())
        finally:
            os.close(write_end)
        try:
            return BotProcess(
                self.argv(read_end),
                env={"PATH": "/usr/bin:/bin"},
                pass_fds=(read_end,),
                preexec_fn=self._preexec,
                on_exit=self.kill_all,
            )
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None
        finally:
            os.close(read_end)

    # ------------------------------------------------------------------ while running

    def cpu_ns(self) -> int:
        """CPU time used by every process in the box so far."""
        assert self._cpu_fd is not None
        return int(os.pread(self._cpu_fd, 32, 0))

    def memory_exceeded(self) -> bool:
        """Whether the box ever hit its memory limit (to explain an OOM kill)."""
        memory = self.cgroups["memory"]
        try:
            control = (memory / "memory.oom_control").read_text().split()
            kills = dict(zip(control[::2], control[1::2], strict=False)).get("oom_kill", "0")
            return int(kills) > 0 or int((memory / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def freeze(self) -> None:
        if not self.frozen:
            _write(self.cgroups["freezer"] / "freezer.state", "FROZEN")
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            _write(self.cgroups["freezer"] / "freezer.state", "THAWED")
            self.frozen = False

    def pids(self) -> list[int]:
        try:
            text = (self.cgroups["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def kill_all(self) -> None:
        """Freeze, SIGKILL every process in the box, thaw so the kills land, wait until empty."""
        freezer = self.cgroups["freezer"]
        if not freezer.exists():
            return
        try:
            _write(freezer / "freezer.state", "FROZEN")
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            _write(freezer / "freezer.state", "THAWED")
        except OSError:
            pass
        self.frozen = False
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.002)

    def destroy(self) -> None:
        """Kill everything, remove the cgroups and the staged code, release the uid."""
        self.kill_all()
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        for path in self.cgroups.values():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        if self.code_dir is not None:
            shutil.rmtree(self.code_dir, ignore_errors=True)
            self.code_dir = None
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


def _write(path: Path, value: object) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


_next_uid = 0


def _claim_uid() -> tuple[int, int]:
    """A uid no other live box on this machine uses, held by an flock until released."""
    locks = Path(tempfile.gettempdir()) / "grass-uids"
    locks.mkdir(mode=0o700, exist_ok=True)
    global _next_uid
    start = (os.getpid() * 7 + _next_uid) % len(UID_RANGE)
    _next_uid += 1  # walk the range: a uid is not reused the moment its box is gone
    for offset in range(len(UID_RANGE)):
        uid = UID_RANGE[(start + offset) % len(UID_RANGE)]
        fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, fd
        except BlockingIOError:
            os.close(fd)
    raise SandboxUnavailable("no free sandbox uid: too many bots running on this machine")
