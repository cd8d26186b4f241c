"""The OS sandbox for bot processes: the runtime image + bubblewrap + cgroups + rlimits +
seccomp.

Chain, outermost first: the runner (root) forks; the child joins the box's cgroup (v2 or v1,
`bots.runner.cgroups`) and sets its rlimits; `setpriv` drops to a uid of its own with no
privileges; `bwrap` builds empty namespaces (user, PID, network, IPC, UTS, mount), mounts the
runtime image (`bots.runner.runtime`) read-only as /, a /proc and /dev with nothing of the
host, the runtime library and the bot's code read-only, two small tmpfs (/tmp, /dev/shm), and
applies the seccomp filter; then the bot's language runs it (`bots.runner.languages`).
Teardown kills every process in the cgroup and removes it, so nothing the bot started
survives the match. `../shared/SANDBOX-NOTES.md` has the measurements behind this.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bots.runner import cgroups, home, runtime
from bots.runner.botfiles import check_tree
from bots.runner.languages import LANGUAGES, Language
from bots.runner.process import BotProcess

PYTHON = "/usr/bin/python3"
HERE = Path(__file__).resolve().parent
UID_RANGE = home.UID_RANGE


PROC_ALLOWED = frozenset({"self", "thread-self", "mounts", "net"})
"""The only top-level names of /proc a box sees besides its own processes' folders. Every
other one is host-wide, and many are counters that one box can move and another read (the
host's ptys, open files, inodes, memory, processes, load, interrupts, locks): channels
between boxes. They are covered: a file by an empty one, a folder by an empty tmpfs. Which
names exist is read from the host's /proc, so a newer kernel's new files are covered too."""
DEVICES = ("null", "zero", "full", "random", "urandom")
"""The only device nodes in a box. No /dev/ptmx or /dev/pts: a pty is counted host-wide
(/proc/sys/kernel/pty/nr), and a box has no use for one."""


def hide_host_proc(empty: Path) -> list[str]:
    """bwrap arguments that cover every top-level /proc name outside PROC_ALLOWED."""
    args: list[str] = []
    for name in sorted(os.listdir("/proc")):
        if name.isdigit() or name in PROC_ALLOWED:
            continue
        target = f"/proc/{name}"
        if os.path.isdir(target):
            args += ["--tmpfs", target, "--remount-ro", target]
        else:
            args += ["--ro-bind", str(empty), target]
    return args


def minimal_dev() -> list[str]:
    """A /dev of DEVICES, the standard stream links and /dev/shm's mount point."""
    args = ["--tmpfs", "/dev"]
    for name in DEVICES:
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for index, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{index}", f"/dev/{name}"]
    return [*args, "--symlink", "/proc/self/fd", "/dev/fd", "--dir", "/dev/shm"]


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
    cpus: float = 1.0
    """CPU bandwidth of the whole box (the cpu controller's quota): however many processes
    it forks, a box never has more than one CPU, so it cannot slow the matches beside it."""
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


def check() -> None:
    """Raise SandboxUnavailable, saying why, if sandboxed bots cannot run on this machine."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the sandbox needs root (cgroups and a uid per bot)")
    for tool in ("bwrap", "setpriv"):
        if shutil.which(tool) is None:
            raise SandboxUnavailable(f"{tool} is not installed (run deploy/setup.sh)")
    if not Path(PYTHON).exists():
        raise SandboxUnavailable(f"{PYTHON} (Debian's python3, for the seccomp filter) is missing")
    try:
        runtime.image_dir()
    except runtime.RuntimeMissing as exc:
        raise SandboxUnavailable(str(exc)) from None
    missing = cgroups.missing()
    if missing and cgroups.backend() == "v1":
        raise SandboxUnavailable(f"cgroup v1 controllers not mounted: {', '.join(missing)}")
    if missing:
        raise SandboxUnavailable(missing[0])
    try:
        home.ensure_home()
    except OSError as exc:
        raise SandboxUnavailable(str(exc)) from None
    seccomp_program()


def sweep() -> dict[str, int]:
    """Remove every box a dead runner left on this host (see `bots.runner.home.sweep`)."""
    check()
    return home.sweep()


class Box:
    """One bot's sandbox: its uid, cgroups and staged code. Create with `Box.open`; `destroy`
    releases all of it, and every failure on the way in destroys what was made."""

    def __init__(self, claim: home.Claim, limits: Limits) -> None:
        self.claim = claim
        self.uid = claim.uid
        self.limits = limits
        self.cgroup = cgroups.box_cgroup(str(claim.uid))
        self.code_dir: Path | None = None

    @classmethod
    def open(cls, limits: Limits) -> Box:
        check()
        try:
            claim = home.claim_uid()
        except OSError as exc:
            raise SandboxUnavailable(str(exc)) from None
        box = cls(claim, limits)
        try:
            box.cgroup.create(
                cgroups.CgroupLimits(memory_mb=limits.memory_mb, pids=limits.pids, cpus=limits.cpus)
            )
        except OSError as exc:
            box.destroy()
            raise SandboxUnavailable(str(exc)) from None
        return box

    @property
    def frozen(self) -> bool:
        return self.cgroup.frozen

    def stage(self, files: dict[str, bytes]) -> Path:
        """Copy the bot's files into the folder only this box mounts (root:uid, read-only to
        the bot; `bot`, an executable's name in every language, may be run). Raises BadBot
        for files that cannot be a tree (see `botfiles.check_tree`), OSError when the host
        cannot hold them; the caller destroys the box either way."""
        folder = self.prepare_folder()
        self.fill(files)
        return folder

    def prepare_folder(self) -> Path:
        """The box's empty code folder (root:uid, mode 0750), made anew."""
        folder = home.box_dir(self.uid)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(mode=0o750)
        os.chown(folder, 0, self.uid)
        self.code_dir = folder
        return folder

    def fill(self, files: dict[str, bytes]) -> None:
        """Write the bot's files into the code folder (made by `prepare_folder`, possibly
        already mounted in a running box: the folder itself is kept, only filled)."""
        check_tree("the bot", files)
        folder = self.code_dir
        assert folder is not None, "prepare_folder first"
        for rel, data in files.items():
            target = folder / rel
            target.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
            target.write_bytes(data)
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, 0, self.uid)
            path.chmod(0o750 if path.is_dir() or path == folder / "bot" else 0o640)

    def argv(self, args_fd: int, seccomp_fd: int, command: Sequence[str]) -> list[str]:
        """The command that starts the box: setpriv drops to the box's uid, then bwrap reads
        its own arguments from `args_fd` (`bwrap_args`), so the box's pid 1 shows only
        `command`, never a host path, in /proc/1/cmdline (bwrap takes no command from
        `--args`)."""
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
            "--args",
            str(args_fd),
            "--seccomp",
            str(seccomp_fd),
            "--",
            *command,
        ]

    def bwrap_args(
        self,
        *,
        env: Sequence[tuple[str, str]] = (),
        binds: Sequence[tuple[str, str]] = (),
        chdir: str = "/tmp",
    ) -> list[str]:
        """Namespaces, the image as a read-only root, a /proc and /dev with nothing of the
        host, the runtime and the staged code read-only, two small scratch tmpfs. `binds`
        (host folder, box path) are writable: a build's /build."""
        image = runtime.image_dir()
        lib = home.runtime_dir()
        assert self.code_dir is not None
        limits = self.limits
        scratch = str(limits.scratch_mb << 20)
        args = [
            "--unshare-all",
            # A second line behind the seccomp filter: the box's user namespace allows no
            # nested one (bwrap needs --unshare-user spelled out for this).
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin",
            "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8",
            # The whole root is the image: nothing of the host's /usr, /etc or anything else.
            "--ro-bind", str(image), "/",
            "--proc", "/proc",
            *hide_host_proc(lib / "empty"),
            *minimal_dev(),
            "--size", scratch,
            "--tmpfs", "/tmp",
            "--ro-bind", str(lib / "lib"), "/sandbox/lib",
            "--ro-bind", str(lib / "launch.py"), "/sandbox/launch.py",
            "--ro-bind", str(self.code_dir), "/bot",
            "--size", scratch,
            "--tmpfs", "/dev/shm",
            "--hostname", "grass",
            "--remount-ro", "/dev",
        ]  # fmt: skip
        for name, value in env:
            args += ["--setenv", name, value]
        for host, inside in binds:
            args += ["--bind", host, inside]
        return [*args, "--chdir", chdir]

    def _preexec(self) -> None:
        """In the forked child, before exec: join the cgroups and set the rlimits."""
        self.cgroup.join_self()
        limits = self.limits
        mib = 1 << 20
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_mb * mib,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mib,) * 2)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def start(self, language: Language | None = None) -> BotProcess:
        """Launch the staged bot in this box (a Python bot unless `language` says else)."""
        lang = language or LANGUAGES["python"]
        process: BotProcess = self._spawn(lang.command, self.bwrap_args(env=lang.env), BotProcess)
        return process

    def start_waiter(self, script: str) -> BotProcess:
        """Start `/bin/sh -c script` in this box as its bot process would start (the ready
        boxes of `bots.runner.pool`: the script becomes the bot's command once told which)."""
        process: BotProcess = self._spawn(["/bin/sh", "-c", script], self.bwrap_args(), BotProcess)
        return process

    def start_build(
        self, command: Sequence[str], build_dir: Path, env: Sequence[tuple[str, str]] = ()
    ) -> subprocess.Popen[bytes]:
        """Run a build in this box: `build_dir` (host) is /build, writable; output on one
        pipe (stdout and stderr together)."""

        def popen(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=options["env"],
                pass_fds=options["pass_fds"],
                preexec_fn=options["preexec_fn"],
                close_fds=True,
                start_new_session=True,
            )

        args = self.bwrap_args(env=env, binds=[(str(build_dir), "/build")], chdir="/build/src")
        proc: subprocess.Popen[bytes] = self._spawn(command, args, popen)
        return proc

    def _spawn(self, command: Sequence[str], bwrap_args: list[str], spawn: Any) -> Any:
        args = "".join(arg + "\0" for arg in bwrap_args).encode()
        fds: list[int] = []
        try:
            for data in (args, seccomp_program()):
                read_end, write_end = os.pipe()
                fds.append(read_end)
                try:
                    os.write(write_end, data)  # both fit in a pipe's buffer (64 KiB)
                finally:
                    os.close(write_end)
            options: dict[str, Any] = {
                "env": {"PATH": "/usr/bin:/bin"},
                "pass_fds": tuple(fds),
                "preexec_fn": self._preexec,
            }
            if spawn is BotProcess:
                options["on_exit"] = self.cgroup.kill_all
            return spawn(self.argv(fds[0], fds[1], command), **options)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None
        finally:
            for fd in fds:
                os.close(fd)

    # ------------------------------------------------------------------ while running

    def cpu_ns(self) -> int:
        """CPU time used by every process in the box so far."""
        return self.cgroup.cpu_ns()

    def memory_exceeded(self) -> bool:
        return self.cgroup.memory_exceeded()

    def freeze(self) -> None:
        self.cgroup.freeze()

    def thaw(self) -> None:
        self.cgroup.thaw()

    def pids(self) -> list[int]:
        return self.cgroup.pids()

    def kill_all(self) -> None:
        self.cgroup.kill_all()

    def destroy(self) -> None:
        """Kill everything, remove the cgroups and the staged code, release the uid. Safe to
        call twice; the uid is released last, so no other box can claim it half-cleaned."""
        try:
            self.cgroup.remove()
            shutil.rmtree(home.box_dir(self.uid), ignore_errors=True)
            self.code_dir = None
        finally:
            self.claim.release()
