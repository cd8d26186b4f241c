"""Starting a box's process: the chain of namespaces, limits and filters around a command.

Outermost first: this program (root) joins the box's cgroup and sets the rlimits; `setpriv`
drops to the box's uid and gid with no capabilities and no new privileges; `bwrap` builds empty
namespaces (user, PID, network, IPC, UTS, mount, cgroup), mounts the runtime image read-only as
/, a /proc and /dev with nothing of the host, the runtime library and the box's code read-only,
two small tmpfs (/tmp, /dev/shm) and, for a build, /build; then applies the seccomp filter and
runs the command. bwrap reads its own arguments from a pipe (`--args`), so the box's pid 1
shows only the command, never a host path, in /proc/1/cmdline.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence

from bots.sandbox import cgroups, image, layout, seccomp_filter

PROC_ALLOWED = frozenset({"self", "thread-self", "mounts", "net"})
"""The only top-level names of /proc a box sees besides its own processes' folders. Every
other one is host-wide, and many are counters that one box can move and another read (the
host's ptys, open files, inodes, memory, processes, load, interrupts, locks): channels
between boxes. They are covered: a file by an empty one, a folder by an empty tmpfs. Which
names exist is read from the host's /proc, so a newer kernel's new files are covered too."""
DEVICES = ("null", "zero", "full", "random", "urandom")
"""The only device nodes in a box. No /dev/ptmx or /dev/pts: a pty is counted host-wide
(/proc/sys/kernel/pty/nr), and a box has no use for one."""
TOOLS = ("/usr/bin/setpriv", "/usr/bin/bwrap")
RLIMIT_LOCKS = 10
"""Linux's number for it: Python's resource module has no name for this limit."""


class JailError(OSError):
    """A box's process cannot be started (the host's fault, never the bot's)."""


class RunLimits:
    """The rlimits of a box's processes and the size of its scratch space: RLIMIT_CPU per
    process (the kernel kills one past it), RLIMIT_AS (a runaway allocation fails with
    MemoryError before the OOM killer), RLIMIT_FSIZE (the largest file a process may write),
    RLIMIT_NOFILE, and the size of the box's /tmp (and, separately, of its /dev/shm)."""

    __slots__ = ("address_space_mb", "cpu_seconds", "file_size_mb", "open_files", "scratch_mb")

    def __init__(
        self,
        cpu_seconds: int = 600,
        address_space_mb: int = 1024,
        file_size_mb: int = 8,
        open_files: int = 64,
        scratch_mb: int = 16,
    ) -> None:
        self.cpu_seconds = cpu_seconds
        self.address_space_mb = address_space_mb
        self.file_size_mb = file_size_mb
        self.open_files = open_files
        self.scratch_mb = scratch_mb


def hide_host_proc(empty: str) -> list[str]:
    """bwrap arguments that cover every top-level /proc name outside PROC_ALLOWED."""
    args: list[str] = []
    for name in sorted(os.listdir("/proc")):
        if name.isdigit() or name in PROC_ALLOWED:
            continue
        target = f"/proc/{name}"
        if os.path.isdir(target):
            args += ["--tmpfs", target, "--remount-ro", target]
        else:
            args += ["--ro-bind", empty, target]
    return args


def minimal_dev() -> list[str]:
    """A /dev of DEVICES, the standard stream links and /dev/shm's mount point."""
    args = ["--tmpfs", "/dev"]
    for name in DEVICES:
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for index, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{index}", f"/dev/{name}"]
    return [*args, "--symlink", "/proc/self/fd", "/dev/fd", "--dir", "/dev/shm"]


def bwrap_args(
    box: int,
    *,
    image: str,
    runtime: str,
    limits: RunLimits,
    env: Sequence[tuple[str, str]] = (),
    build: bool = False,
    chdir: str = "/tmp",
) -> list[str]:
    """Namespaces, the image as a read-only root, a /proc and /dev with nothing of the host,
    the runtime and the box's code read-only, two small scratch tmpfs, a build's /build."""
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
        "--ro-bind", image, "/",
        "--proc", "/proc",
        *hide_host_proc(f"{runtime}/empty"),
        *minimal_dev(),
        "--size", scratch,
        "--tmpfs", "/tmp",
        "--ro-bind", f"{runtime}/lib", "/sandbox/lib",
        "--ro-bind", f"{runtime}/launch.py", "/sandbox/launch.py",
        "--ro-bind", layout.code_dir(box), "/bot",
        "--size", scratch,
        "--tmpfs", "/dev/shm",
        "--hostname", "grass",
        "--remount-ro", "/dev",
    ]  # fmt: skip
    for name, value in env:
        args += ["--setenv", name, value]
    if build:
        args += ["--bind", layout.build_dir(box), "/build"]
    return [*args, "--chdir", chdir]


def seccomp_program() -> bytes:
    """The compiled filter, kept in HOME between calls (compiling takes ~20 ms), under a name
    that changes with the filter's source file."""
    import hashlib

    source = os.stat(seccomp_filter.__file__)
    kept = layout.path(f"seccomp-{source.st_size}-{source.st_mtime_ns}")
    try:
        with open(kept, "rb") as compiled:
            text = compiled.read()
        data, digest = text[:-32], text[-32:]
        if data and hashlib.sha256(data).digest() == digest:
            return data
    except FileNotFoundError:
        pass
    data = seccomp_filter.program()
    if not data:
        raise JailError("the seccomp filter came out empty")
    partial = layout.path(f".seccomp.{os.getpid()}")
    try:
        os.unlink(partial)
    except FileNotFoundError:
        pass
    layout.write_whole(partial, data + hashlib.sha256(data).digest(), 0o600)
    os.rename(partial, kept)
    return data


def check_tools() -> None:
    for tool in TOOLS:
        if not os.access(tool, os.X_OK):
            name = os.path.basename(tool)
            package = "bubblewrap" if name == "bwrap" else "util-linux"
            raise JailError(f"{tool} is missing (install {package}: deploy/setup.sh)")


def set_limit(limit: int, soft: int, hard: int) -> None:
    """Set a resource limit, within the hard limit this process has when it may not raise it
    (root without CAP_SYS_RESOURCE, as in some containers): lower, never higher."""
    import resource

    try:
        resource.setrlimit(limit, (soft, hard))
    except (ValueError, OSError):
        ceiling = resource.getrlimit(limit)[1]
        infinity = resource.RLIM_INFINITY

        def capped(value: int) -> int:
            if ceiling == infinity:
                return value
            return ceiling if value == infinity else min(value, ceiling)

        resource.setrlimit(limit, (capped(soft), capped(hard)))


def exec_in_box(
    box: int,
    bwrap: list[str],
    limits: RunLimits,
    command: Sequence[str],
    warm: str | None = None,
) -> None:
    """Become the box's first process: join its cgroup, warm the box's fresh view of the
    image `warm` (its pages charged to the box), set the rlimits, drop to its uid and exec
    bwrap, which runs `command`. Returns only by raising (JailError, OSError)."""
    check_tools()
    program = seccomp_program()
    arguments = "".join(arg + "\0" for arg in bwrap).encode()
    fds = []
    for data in (arguments, program):
        if len(data) > 60_000:
            raise JailError("the box's arguments do not fit in a pipe")
        read_end, write_end = os.pipe()
        os.write(write_end, data)
        os.close(write_end)
        fds.append(read_end)
    cgroups.box_cgroup(str(box)).join_self()
    if not os.path.isdir(layout.code_dir(box)):  # removed while this started: grassbox.remove
        raise JailError(f"box {box} was removed")
    if warm is not None:
        image.warm(warm)
    mib, infinity = 1 << 20, resource.RLIM_INFINITY
    # Every limit set here, none left as the caller's (sudo hands them down).
    for limit, soft, hard in (
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
        (resource.RLIMIT_AS, limits.address_space_mb * mib, limits.address_space_mb * mib),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mib, limits.file_size_mb * mib),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_STACK, 8 * mib, 8 * mib),
        (resource.RLIMIT_DATA, infinity, infinity),
        (resource.RLIMIT_RSS, infinity, infinity),
        (resource.RLIMIT_NPROC, infinity, infinity),  # the pids cgroup counts the box
        (resource.RLIMIT_MEMLOCK, 64 << 10, 64 << 10),
        (RLIMIT_LOCKS, infinity, infinity),
        (resource.RLIMIT_SIGPENDING, 1024, 1024),
        (resource.RLIMIT_MSGQUEUE, 819200, 819200),
        (resource.RLIMIT_NICE, 0, 0),
        (resource.RLIMIT_RTPRIO, 0, 0),
        (resource.RLIMIT_RTTIME, infinity, infinity),
    ):
        set_limit(limit, soft, hard)
    # Nothing of this program's but the box's stdio and the two pipes reaches the box.
    keep = sorted(fds)
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        os.set_inheritable(fd, True)
        low = fd + 1
    os.closerange(low, 65536)
    uid = layout.uid(box)
    argv = [
        TOOLS[0],
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
        TOOLS[1],
        "--args",
        str(fds[0]),
        "--seccomp",
        str(fds[1]),
        "--",
        *command,
    ]
    os.execve(argv[0], argv, {"PATH": "/usr/bin:/bin"})
