"""What a caller of the box program keeps on its side: its claims on box ids, and the runtime
library (engine, SDK, launcher) it hands over.

A box id is held by one live caller at a time: an flock on the id's claim file, which the box
program makes (root's, read-only: a lock needs no write access) in its home. A caller that
dies (SIGKILL, a lost worker) lets go of its claims with its life; what its boxes left
(processes, cgroups, code) is removed by the next `init` of that id, or by the program's
`sweep`, run when a worker starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
import weakref
from pathlib import Path

from bots.runner import boxctl, runtime

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent


class HomeUnavailable(OSError):
    """The box program's home cannot be used (not set up, no free box)."""


_LAYOUT: dict[str, str] = {}


def layout() -> dict[str, str]:
    """The program's `check` facts (home, number of boxes, uid base, cgroup backend, this
    code's runtime image as boxes see it), asked once per process: it also makes the home and
    its claim files, and mounts the image (checking its bytes) if no box has yet."""
    if not _LAYOUT:
        facts = boxctl.facts("check", "--image", runtime.identity())
        if facts.get("version") != boxctl.source_version():
            raise HomeUnavailable(
                f"the box program ({' '.join(boxctl.prefix())}) is version "
                f"{facts.get('version')}, this checkout's is {boxctl.source_version()}: "
                "install this checkout's (sudo bash deploy/install-box.sh)"
            )
        _LAYOUT.update(facts)
    return _LAYOUT


# ---------------------------------------------------------------------- claims

_next = 0


class Claim:
    """A box id held by this process (an flock on its claim file) until `release`."""

    def __init__(self, box: int, fd: int) -> None:
        self.box = box
        self.uid = int(layout()["uid-base"]) + box
        self.fd = fd
        held = os.fstat(fd)
        self.file = (held.st_dev, held.st_ino)
        """The claim file's identity, so a forked child closes only what is still this file."""
        _HELD.add(self)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_HELD: weakref.WeakSet[Claim] = weakref.WeakSet()
"""This process's claims, so that a forked child can let go of its copies."""


def _drop_copies_in_child() -> None:
    """In a child forked from a process that holds boxes (a Celery worker's pool, `grass match`
    jobs, any library that forks without exec): close the child's copies of the claim files.
    An flock lasts as long as any copy of its file is open, so a copy would keep the box held,
    and its leftovers unswept, after the parent released it, for as long as the child lives.
    The child never owns its parent's boxes (`pool.Pool` forgets them too)."""
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


def claim_box() -> Claim:
    """A box id no other live caller holds. Walks the ids, so an id is not reused the moment
    its box is gone."""
    global _next
    facts = layout()
    claims = Path(facts["home"]) / "claims"
    count = int(facts["boxes"])
    start = (os.getpid() * 7 + _next) % count
    _next += 1
    for offset in range(count):
        box = (start + offset) % count
        fd = os.open(claims / str(box), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Claim(box, fd)
    raise HomeUnavailable("no free box: too many bots running on this host")


def leftovers() -> list[int]:
    """The ids of boxes that dead callers left (something of them exists, nobody holds them)."""
    return [int(value) for key, value in boxctl.call("leftovers") if key == "box"]


# ---------------------------------------------------------------------- runtime


def runtime_files() -> dict[str, bytes]:
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


def runtime_stream(files: dict[str, bytes]) -> bytes:
    """`files` as the box program's `runtime` verb reads them: `<size> <path>\\n<bytes>`."""
    return b"".join(f"{len(data)} {rel}\n".encode() + data for rel, data in sorted(files.items()))


_RUNTIME: dict[int, str] = {}


def runtime_name() -> str:
    """The name of this code's runtime in the box program's home, handed over once per
    process (the program keeps one copy per content, whoever hands it over)."""
    if os.getpid() not in _RUNTIME:
        answer = boxctl.facts("runtime", stdin=runtime_stream(runtime_files()))
        _RUNTIME.clear()
        _RUNTIME[os.getpid()] = answer["runtime"]
    return _RUNTIME[os.getpid()]


def runtime_dir(parent: Path) -> Path:
    """The runtime as a world-readable folder under `parent`, named by its content's hash (for
    bots run without the sandbox). Written to a temporary folder, then renamed into place, so
    a reader never sees half of it."""
    files = runtime_files()
    digest = hashlib.sha256()
    for rel, data in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    target = parent / f"runtime-{digest.hexdigest()[:16]}"
    if (target / "launch.py").is_file():
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
