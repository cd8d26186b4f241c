"""Where the sandbox keeps its files on a worker host, and how it cleans up after a dead runner.

Everything lives in one tmpfs of its own, `GRASS_SANDBOX_HOME` (default `/run/grass-sandbox`),
mounted by the first runner that needs it:

    uids/<uid>          lock files: a box holds an flock on its uid's file while it lives
    boxes/<uid>/        the staged code of the box using that uid (root:uid, mode 0750)
    runtime-<hash>/     the engine, the SDK and the launcher, shared by every box, named by a
                        hash of their content (one copy per code version, never per runner)

A tmpfs of its own, rather than folders under /tmp, keeps the host's layout out of the boxes:
`/proc/self/mountinfo` in a box shows a bind mount's source relative to its filesystem's root,
so `/boxes/64123` and `/runtime-…/lib`, never a host path.

A runner that dies (SIGKILL, a lost worker) leaves its box behind: cgroups, processes, the
staged folder. Its uid lock dies with it, so the leftovers are found by the free uids: claiming
a uid first removes whatever that uid left (`claim_uid`), and `sweep()`, run when a worker
starts, does it for every free uid.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

from bots.runner import cgroups

HOME = Path(os.environ.get("GRASS_SANDBOX_HOME", "/run/grass-sandbox"))
HOME_SIZE = os.environ.get("GRASS_SANDBOX_HOME_SIZE", "2g")
"""The tmpfs's size cap: staged code is at most 20 MiB a box (`botfiles.MAX_UNPACKED_BYTES`)."""
UID_RANGE = range(64100, 65000)
HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
RUNTIME_KEEP_SECONDS = 24 * 3600
"""A runtime copy of another code version is removed by the sweep after a day unused."""


class HomeUnavailable(OSError):
    """The sandbox's home cannot be set up (not root, no tmpfs)."""


def ensure_home() -> Path:
    """HOME, mounted as a tmpfs of its own with its folders; idempotent and safe when several
    runners start at once (they take turns on a lock file beside it)."""
    if os.path.ismount(HOME) and (HOME / "boxes").is_dir():
        return HOME
    try:
        HOME.mkdir(mode=0o711, parents=True, exist_ok=True)
        lock = os.open(HOME.parent / f".{HOME.name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    except OSError as exc:
        raise HomeUnavailable(f"cannot create {HOME}: {exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.ismount(HOME):
            options = f"size={HOME_SIZE},mode=0711,nosuid,nodev"
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", options, "grass-sandbox", str(HOME)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise HomeUnavailable(f"cannot mount a tmpfs at {HOME}: {done.stderr.strip()}")
        for sub, mode in (("uids", 0o700), ("boxes", 0o711)):
            (HOME / sub).mkdir(mode=mode, exist_ok=True)
    finally:
        os.close(lock)
    return HOME


# ---------------------------------------------------------------------- uids

_next_uid = 0


class Claim:
    """A sandbox uid held by this process (an flock on its lock file) until `release`."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self.fd = fd
        held = os.fstat(fd)
        self.file = (held.st_dev, held.st_ino)
        """The lock file's identity, so a forked child closes only what is still this file."""
        _HELD.add(self)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_HELD: weakref.WeakSet[Claim] = weakref.WeakSet()
"""This process's claims, so that a forked child can let go of its copies."""


def _drop_copies_in_child() -> None:
    """In a child forked from a process that holds uids (a Celery worker's pool, `grass match`
    jobs, any library that forks without exec): close the child's copies of the lock files. An
    flock lasts as long as any copy of its file is open, so a copy would keep the uid held,
    and the box's leftovers unswept, after the parent released it, for as long as the child
    lives. The child never owns its parent's boxes (`pool.Pool` forgets them too)."""
    for claim in list(_HELD):
        if claim.fd < 0:
            continue
        with contextlib.suppress(OSError):
            # A release racing the fork (another thread between its close and `fd = -1`)
            # can leave a number that is now another file's: that one is not ours to close.
            found = os.fstat(claim.fd)
            if (found.st_dev, found.st_ino) == claim.file:
                os.close(claim.fd)
        claim.fd = -1


os.register_at_fork(after_in_child=_drop_copies_in_child)


def claim_uid() -> Claim:
    """A uid no other live box on this host uses, with what a dead box of that uid left
    removed. Walks the range, so a uid is not reused the moment its box is gone (the kernel's
    per-uid process count lags behind on some kernels)."""
    global _next_uid
    locks = ensure_home() / "uids"
    start = (os.getpid() * 7 + _next_uid) % len(UID_RANGE)
    _next_uid += 1
    for offset in range(len(UID_RANGE)):
        uid = UID_RANGE[(start + offset) % len(UID_RANGE)]
        fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        claim = Claim(uid, fd)
        try:
            remove_leftovers(uid)
        except BaseException:
            claim.release()
            raise
        return claim
    raise HomeUnavailable("no free sandbox uid: too many bots running on this host")


def remove_leftovers(uid: int) -> None:
    """Kill and remove the cgroups and the staged folder of `uid`'s box. The caller holds the
    uid's lock, so no live box owns them."""
    cgroups.box_cgroup(str(uid)).remove()
    shutil.rmtree(HOME / "boxes" / str(uid), ignore_errors=True)
    builds = HOME / "builds" / str(uid)
    if os.path.ismount(builds):
        subprocess.run(["umount", "-l", str(builds)], capture_output=True, check=False)
    shutil.rmtree(builds, ignore_errors=True)


def box_dir(uid: int) -> Path:
    return HOME / "boxes" / str(uid)


# ---------------------------------------------------------------------- runtime


def _runtime_files() -> dict[str, bytes]:
    """What a bot may import beside the standard library, by path in the runtime."""
    files: dict[str, bytes] = {}
    for package, target in (("engine", "lib/engine"), ("bots/sdk", "lib/bots/sdk")):
        for path in sorted((PROJECT / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                rel = path.relative_to(PROJECT / package).as_posix()
                files[f"{target}/{rel}"] = path.read_bytes()
    files["lib/bots/protocol.py"] = (PROJECT / "bots" / "protocol.py").read_bytes()
    files["lib/js/grass.js"] = (PROJECT / "bots" / "sdk" / "js" / "grass.js").read_bytes()
    for script in sorted((HERE / "buildscripts").glob("*.sh")):
        files[f"lib/build/{script.name}"] = script.read_bytes()
    files["lib/bots/__init__.py"] = b""
    files["launch.py"] = (HERE / "launch.py").read_bytes()
    files["empty"] = b""
    return files


def runtime_dir(parent: Path | None = None) -> Path:
    """The runtime (engine, SDK, launcher) as a world-readable folder named by its content's
    hash, under `parent` (default: HOME). Made once per code version: written to a temporary
    folder, then renamed into place, so a reader never sees half of it."""
    files = _runtime_files()
    digest = hashlib.sha256()
    for rel, data in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    parent = parent if parent is not None else ensure_home()
    target = parent / f"runtime-{digest.hexdigest()[:16]}"
    if (target / "launch.py").is_file():
        os.utime(target)  # in use: the sweep keeps it
        return target
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".runtime-", dir=parent))
    try:
        for rel, data in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for path in [staging, *staging.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        try:
            staging.rename(target)
        except OSError:  # another runner got there first: theirs is identical
            if not (target / "launch.py").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def plain_runtime_dir() -> Path:
    """The runtime for bots run without the sandbox (`grass match --no-sandbox`, any user):
    in the user's own cache folder, shared by every run of the same code."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grass"
    return runtime_dir(cache)


# ---------------------------------------------------------------------- sweep


def leftovers() -> list[int]:
    """The uids whose box (cgroups or staged folder) exists while no live box holds the uid:
    what dead runners left. Safe beside live boxes: a live box holds its uid's lock from
    before its cgroups are made until after they are removed."""
    home = ensure_home()
    names = cgroups.box_names() | {p.name for p in (home / "boxes").iterdir()}
    if (home / "builds").is_dir():
        names |= {p.name for p in (home / "builds").iterdir()}
    found = []
    for name in sorted(n for n in names if n.isdigit()):
        fd = os.open(home / "uids" / name, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live box
        finally:
            os.close(fd)
        if (
            cgroups.box_cgroup(name).exists()
            or box_dir(int(name)).exists()
            or (home / "builds" / name).exists()
        ):
            found.append(int(name))
    return found


def sweep() -> dict[str, int]:
    """Remove what dead runners left on this host: the boxes (processes, cgroups, staged code)
    of every uid no live box holds, cgroups of the naming before uids, runtime copies of other
    code versions unused for a day, and the /tmp folders of the runner before this layout.
    Returns counts of what was removed. Run when a worker starts; safe beside live boxes."""
    removed = {"boxes": 0, "runtimes": 0, "legacy": 0}
    home = ensure_home()
    for uid in leftovers():
        fd = os.open(home / "uids" / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # claimed since: its new owner cleans it
        try:
            remove_leftovers(uid)
            removed["boxes"] += 1
        finally:
            os.close(fd)
    for name in cgroups.box_names():
        # Before boxes were named by uid: box-<uid>-<pid>-<n>; its runner is gone if <pid> is.
        parts = name.split("-")
        if name.startswith("box-") and len(parts) == 4 and not _alive(int(parts[2])):
            cgroups.box_cgroup(name).remove()
            removed["legacy"] += 1
    current = runtime_dir(home)
    for old in home.glob("runtime-*"):
        if old != current and time.time() - old.stat().st_mtime > RUNTIME_KEEP_SECONDS:
            shutil.rmtree(old, ignore_errors=True)
            removed["runtimes"] += 1
    tmp = Path(tempfile.gettempdir())
    for pattern in ("grass-runtime-*", "grass-bot-*"):
        for old in tmp.glob(pattern):
            if time.time() - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
                removed["legacy"] += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
