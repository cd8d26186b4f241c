"""Where a host's boxes live, and what a box id stands for.

Everything is in one tmpfs of its own, HOME (`/run/grass-box`), mounted by the first call:

    claims/<id>      root's empty files (0444). A caller holds box <id> while it holds an flock
                     on that file (opened read-only: no write access is needed to lock). The
                     program never takes a claim; it only tests whether one is held (`sweep`).
    boxes/<id>/      box <id>'s code folder, bound read-only at /bot in the box: a tmpfs of its
                     own (CODE_SIZE), owned by the caller that made the box, group the box's
                     gid, mode 2750, so the caller writes the bot's files and the box can only
                     read them. Its own file system: the box's statvfs of /bot tells nothing of
                     other boxes' code, and removing the box walks nothing the caller made.
    builds/<id>/     a build box's /build: a tmpfs of its own, owned by the box's uid.
    runtimes/<hash>/ the engine, the SDK and the launcher, as a caller handed them over.
    packs/           a tmpfs of its own, root's: each runtime image's pack, copied into memory
                     and checked (`image.py`).
    images/<id>/     the host's own mount of an image's pack (`check` reads it; no box binds it).
    roots/<box>/     box <box>'s own mount of the image's pack, the root it binds: on a loop
                     device of its own, so no two boxes share the image's page cache.
    seccomp-<key>    the compiled seccomp filter.

A tmpfs of its own keeps host paths out of the boxes: `/proc/self/mountinfo` shows a bind
mount's source relative to the root of its filesystem (`/boxes/7`), never where that
filesystem is mounted.

Box ids are 0..COUNT-1; box <id> runs as uid and gid UID_BASE + id, which nothing else on a
host uses (Debian leaves 60000-64999 to local administrators; the runner before this program
used 64100-64999 and may still run beside it during an upgrade).

Every module of the program uses strings for paths and imports little: `run` starts every
box, and Python spends more time importing pathlib, dataclasses or argparse than starting.
"""

from __future__ import annotations

import fcntl
import os
import time

HOME = os.environ.get("GRASS_BOX_HOME", "/run/grass-box")
"""Settable only by a root caller: sudo clears the environment of an unprivileged one."""
HOME_SIZE = "64m"
"""The home's size cap: its own files are the claims, the runtimes and the seccomp filter."""
CODE_SIZE = "96m"
"""A box's code folder: at most 20 MiB of sources (bots/runner/botfiles.py) and a build's
artifact of at most 64 MiB (bots/runner/build.py)."""
CODE_INODES = 4096
COUNT = 1000
UID_BASE = 61000


class LayoutError(OSError):
    """The box program's home cannot be set up here (not root, no tmpfs)."""


def uid(box: int) -> int:
    return UID_BASE + box


def path(*parts: str | int) -> str:
    """A path under HOME."""
    return os.path.join(HOME, *map(str, parts))


def code_dir(box: int) -> str:
    return path("boxes", box)


def build_dir(box: int) -> str:
    return path("builds", box)


def root_dir(box: int) -> str:
    """Where box `box`'s own view of the runtime image is mounted (`image.box_root`)."""
    return path("roots", box)


def claim_file(box: int) -> str:
    return path("claims", box)


def write_whole(path: str, data: bytes, mode: int) -> None:
    """Create `path` (a new file, no link followed) holding all of `data`, or raise: a short
    write raises at the next one (EFBIG, ENOSPC), never leaves a file cut short."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def run_tool(argv: list[str]) -> int:
    """Run a host tool (mount, umount) with a plain PATH, its output on this program's stderr
    (stdout holds the answer); its exit status. posix_spawn: the subprocess module alone would
    cost a box's start-up more than the tool does."""
    pid = os.posix_spawn(
        argv[0],
        argv,
        {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        file_actions=[(os.POSIX_SPAWN_DUP2, 2, 1)],
    )
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def mount_tmpfs(target: str, options: str, name: str) -> None:
    """A tmpfs of its own at `target` (LayoutError when it cannot be)."""
    if run_tool(["/usr/bin/mount", "-t", "tmpfs", "-o", options, name, target]) != 0:
        raise LayoutError(f"cannot mount a tmpfs at {target}")


def unmount(target: str) -> None:
    """Detach what is mounted at `target` (lazily: a box still holding it keeps its view until
    it is gone), and remove the empty mount point. Nothing under it is walked."""
    if os.path.ismount(target):
        run_tool(["/usr/bin/umount", "-l", target])
    try:
        os.rmdir(target)
    except FileNotFoundError:
        pass
    except OSError:
        empty_as_owner(target)
        try:
            os.rmdir(target)
        except OSError as exc:
            raise LayoutError(f"cannot remove {target}: {exc}") from None


def empty_as_owner(target: str, seconds: float = 30) -> None:
    """Empty a folder that is not a mount of its own (one left by the layout before code
    folders were: a host upgraded with boxes in it) in a child process that runs as the
    folder's owner, so no link in it leads root anywhere and what it can do, its owner could;
    stopped after `seconds` (a FIFO, a swapped-in link, can hang a walk)."""
    owner = os.lstat(target)
    pid = os.fork()
    if pid == 0:  # the child: drop to the owner, empty the folder, and leave at once
        code = 1
        try:
            if owner.st_uid != 0:
                os.setgroups([])
                os.setgid(owner.st_gid)
                os.setuid(owner.st_uid)
            import shutil

            for name in os.listdir(target):
                path = os.path.join(target, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + seconds
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            break
        time.sleep(0.02)


def ensure_home() -> str:
    """HOME, mounted with its folders and claim files; idempotent, and safe when several
    callers start at once (they take turns on a lock file beside it)."""
    if os.path.ismount(HOME) and os.path.isfile(claim_file(COUNT - 1)):
        return HOME
    try:
        os.makedirs(HOME, mode=0o755, exist_ok=True)
        parent, name = os.path.split(HOME.rstrip("/"))
        lock = os.open(os.path.join(parent, f".{name}.lock"), os.O_CREAT | os.O_RDWR, 0o600)
    except OSError as exc:
        raise LayoutError(f"cannot create {HOME}: {exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.ismount(HOME):
            mount_tmpfs(HOME, f"size={HOME_SIZE},mode=0755,nosuid,nodev", "grass-box")
        for sub, mode in (("claims", 0o755), ("boxes", 0o711), ("builds", 0o711)):
            os.makedirs(path(sub), mode=mode, exist_ok=True)
        for sub in ("runtimes", "images"):
            os.makedirs(path(sub), mode=0o755, exist_ok=True)
        for box in range(COUNT):
            if not os.path.exists(claim_file(box)):
                flags = os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW
                os.close(os.open(claim_file(box), flags, 0o444))
    except OSError as exc:
        raise LayoutError(f"cannot set up {HOME}: {exc}") from None
    finally:
        os.close(lock)
    return HOME


def claim_fd(box: int) -> int:
    """A descriptor of box `box`'s claim file, to test or hold its lock."""
    return os.open(claim_file(box), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)


def hold(box: int) -> int | None:
    """Hold box `box`'s claim (the sweep, so that no caller claims it meanwhile): the
    descriptor to close when done, or None when a live caller has it."""
    fd = claim_fd(box)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def claimed(box: int) -> bool:
    """Whether a live caller holds box `box` (its claim file's flock, tried and let go)."""
    fd = hold(box)
    if fd is None:
        return True
    os.close(fd)
    return False
