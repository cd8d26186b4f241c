"""grass-box: make, run, kill and remove a host's bot boxes (the contract: README.md here).

    grass-box version                  which program this is (a digest of its own source)
    grass-box check [--image ID]       can this host run boxes (on that image)? key:value facts
    grass-box init --box N [limits]    make box N (removing whatever a dead box N left)
    grass-box run --box N [...] -- CMD run CMD in box N: this process becomes the box's first
    grass-box kill --box N [...]       kill every process in the boxes, keep the boxes
    grass-box cleanup --box N [...]    kill and remove the boxes
    grass-box runtime < STREAM         install the runtime library (engine, SDK, launcher)
    grass-box leftovers                boxes a dead caller left (box:N lines)
    grass-box sweep                    remove them, and runtimes and images unused for a day

Run by Debian's python3 as root: directly by a root caller, or through the sudo rule of
deploy/install-box.sh for the unprivileged worker. Errors go to stderr as one line starting
with `grass-box:`; the exit status is 1 (125 for `run`, whose other statuses are the box's), 2
for a command line it does not take. It parses its own command line (argparse alone would
double the start-up of every box).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

if __name__ == "__main__":  # run as a script (`python3 -I .../bots/sandbox/grassbox.py`)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bots.sandbox import cgroups, image, jail, layout

MAX_MEMORY_MB = 16384
MAX_PIDS = 4096
MAX_BUILD_MB = 4096
MAX_RUNTIME_BYTES = 64 << 20
MAX_RUNTIME_FILES = 4000
HEX = frozenset("0123456789abcdef")
PATH_CHARACTERS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.+-/")
ENV_CHARACTERS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_")
RUNTIME_KEEP_SECONDS = 24 * 3600


class Refused(Exception):
    """A request this program will not carry out; the message says why."""


class Usage(Exception):
    """A command line this program does not take."""


def caller_uid() -> int:
    """The uid of the unprivileged caller (sudo says who it is; it cannot be forged through
    sudo, which sets it), or 0 for a root caller."""
    sudo = os.environ.get("SUDO_UID", "")
    return int(sudo) if sudo.isdigit() else 0


def version() -> str:
    """A digest of this program's own files: a caller compares it with its checkout's, so a
    worker never runs against an installed program of another version without knowing."""
    import hashlib

    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in sorted(n for n in os.listdir(here) if n.endswith(".py")):
        with open(os.path.join(here, name), "rb") as source:
            digest.update(name.encode() + b"\0" + hashlib.sha256(source.read()).digest())
    return digest.hexdigest()[:16]


def say(facts: dict[str, object]) -> None:
    sys.stdout.write("".join(f"{key}:{value}\n" for key, value in facts.items()))
    sys.stdout.flush()


# ---------------------------------------------------------------------- verbs


def check(identity: str | None = None) -> dict[str, object]:
    jail.check_tools()
    problems = cgroups.missing()
    if problems:
        raise Refused(problems[0])
    layout.ensure_home()
    jail.seccomp_program()
    found: dict[str, object] = {}
    if identity is not None:  # the image of a box, mounted (and its pack checked) if need be
        found["image"] = image.image_dir(identity)
        recorded = f"{image.IMAGES}/{identity}.ext4.sha256"
        if os.path.isfile(recorded):
            with open(recorded) as file:
                found["image-sha256"] = file.read().split()[0]
    return {
        **found,
        "version": version(),
        "home": layout.HOME,
        "boxes": layout.COUNT,
        "uid-base": layout.UID_BASE,
        "cgroup": cgroups.backend(),
        "caller": caller_uid(),
    }


def init(box: int, *, memory_mb: int, pids: int, cpus: float, build_mb: int) -> dict[str, object]:
    layout.ensure_home()
    remove(box)
    uid = layout.uid(box)
    cgroup = cgroups.box_cgroup(str(box))
    cgroup.create(cgroups.CgroupLimits(memory_mb, pids, cpus), caller_uid())
    try:
        folder = layout.code_dir(box)
        os.mkdir(folder, 0o700)
        # Files the caller writes here get the box's group (the folder is set-group-id).
        options = (
            f"size={layout.CODE_SIZE},nr_inodes={layout.CODE_INODES},mode=2750,"
            f"uid={caller_uid()},gid={uid},nosuid,nodev"
        )
        layout.mount_tmpfs(folder, options, "grass-code")
        if build_mb:
            _mount_build(box, build_mb)
    except BaseException:
        remove(box)
        raise
    return {"box": box, "uid": uid, "dir": folder, **cgroup.facts()}


def _mount_build(box: int, size_mb: int) -> None:
    """A tmpfs of its own for a build's /build: a build cannot fill the host, nor leave a link
    to anything outside it (no hard link crosses filesystems)."""
    folder = layout.build_dir(box)
    os.mkdir(folder, 0o700)
    uid = layout.uid(box)
    options = f"size={size_mb}m,mode=0700,uid={uid},gid={uid},nosuid,nodev"
    layout.mount_tmpfs(folder, options, "grass-build")


def remove(box: int) -> None:
    """Kill box `box`'s processes and remove all of it; safe on a box that never existed.

    The code folder goes first: a `run` of this box still starting joins the cgroup, then
    checks the folder (`jail.exec_in_box`), so it is either in the cgroup before the kill, or
    finds the folder gone and stops. Both folders are file systems of their own, detached
    whole: root never walks what the caller or the box wrote (a tree walk as root once
    followed a link the caller swapped in, and hung on a FIFO it led to)."""
    layout.unmount(layout.code_dir(box))
    cgroups.box_cgroup(str(box)).remove()
    layout.unmount(layout.build_dir(box))
    image.unmount_box_root(box)


def run(
    box: int,
    *,
    identity: str,
    runtime: str,
    limits: jail.RunLimits,
    env: Sequence[tuple[str, str]],
    build: bool,
    chdir: str,
    command: Sequence[str],
) -> None:
    if len(runtime) != 16 or not set(runtime) <= HEX:
        raise Refused(f"not a runtime name: {runtime!r}")
    lib = layout.path("runtimes", runtime)
    if not os.path.isfile(f"{lib}/launch.py"):
        raise Refused(f"runtime {runtime} is not installed (grass-box runtime first)")
    os.utime(lib)  # in use: the sweep keeps it
    if not os.path.isdir(layout.code_dir(box)) or not cgroups.box_cgroup(str(box)).exists():
        raise Refused(f"box {box} is not made (grass-box init first)")
    if build and not os.path.ismount(layout.build_dir(box)):
        raise Refused(f"box {box} has no build folder (grass-box init --build-mb first)")
    if not chdir.startswith("/"):
        raise Refused(f"not a folder in the box: {chdir!r}")
    if not command:
        raise Refused("no command to run")
    root, fresh = image.box_root(box, identity)
    args = jail.bwrap_args(
        box,
        image=root,
        runtime=lib,
        limits=limits,
        env=env,
        build=build,
        chdir=chdir,
    )
    jail.exec_in_box(box, args, limits, command, warm=root if fresh else None)


def install_runtime(stream: bytes) -> dict[str, object]:
    """Install the runtime library handed over as `<size> <path>\\n<bytes>` records, under a
    name that is a digest of its content (one copy per code version, whoever hands it over).
    Written by root into a folder only root writes, then renamed into place."""
    import hashlib
    import shutil

    files = _parse_runtime(stream)
    digest = hashlib.sha256()
    for rel, data in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    name = digest.hexdigest()[:16]
    layout.ensure_home()
    target = layout.path("runtimes", name)
    if os.path.isfile(f"{target}/launch.py"):
        os.utime(target)
        return {"runtime": name}
    partial = layout.path("runtimes", f".part-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    os.mkdir(partial, 0o755)
    try:
        for rel, data in files.items():
            where = os.path.join(partial, rel)
            os.makedirs(os.path.dirname(where), mode=0o755, exist_ok=True)
            layout.write_whole(where, data, 0o644)
        try:
            os.rename(partial, target)
        except OSError:  # another caller got there first: theirs is identical
            if not os.path.isfile(f"{target}/launch.py"):
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return {"runtime": name}


def _parse_runtime(stream: bytes) -> dict[str, bytes]:
    if len(stream) > MAX_RUNTIME_BYTES:
        raise Refused(f"the runtime is over {MAX_RUNTIME_BYTES >> 20} MiB")
    files: dict[str, bytes] = {}
    at = 0
    while at < len(stream):
        end = stream.find(b"\n", at, at + 1100)
        head = stream[at:end].decode("ascii", "replace").split(" ", 1) if end > 0 else []
        if len(head) != 2 or not head[0].isdigit():
            raise Refused(f"the runtime stream is damaged at byte {at}")
        size, rel = int(head[0]), head[1]
        parts = rel.split("/")
        if (
            not 0 < len(rel) <= 1000
            or not set(rel) <= PATH_CHARACTERS
            or len(parts) > 10
            or any(part in ("", ".", "..") for part in parts)
        ):
            raise Refused(f"not a runtime path: {rel!r}")
        data = stream[end + 1 : end + 1 + size]
        if len(data) != size:
            raise Refused(f"the runtime stream ends inside {rel}")
        files[rel] = data
        at = end + 1 + size
        if len(files) > MAX_RUNTIME_FILES:
            raise Refused(f"the runtime has over {MAX_RUNTIME_FILES} files")
    for rel in files:
        parts = rel.split("/")
        if any("/".join(parts[:depth]) in files for depth in range(1, len(parts))):
            raise Refused(f"{rel!r} is inside a file")
    if "launch.py" not in files or "empty" not in files:
        raise Refused("the runtime has no launch.py or no empty")
    return files


def leftovers() -> list[int]:
    """Boxes of which something is left while no caller holds them: what dead callers left."""
    layout.ensure_home()
    names = cgroups.box_names()
    os.makedirs(layout.path("roots"), mode=0o755, exist_ok=True)
    for sub in ("boxes", "builds", "roots"):
        names |= set(os.listdir(layout.path(sub)))
    found = []
    for name in sorted(names, key=lambda n: (len(n), n)):
        if name.isdigit() and int(name) < layout.COUNT and not layout.claimed(int(name)):
            found.append(int(name))
    return found


def sweep() -> dict[str, object]:
    """Remove what dead callers left (their claims are free), and runtimes unused for a day.
    Safe beside live boxes: each is removed while its claim is held here."""
    import shutil

    removed = {"boxes": 0, "runtimes": 0, "images": 0}
    for box in leftovers():
        held = layout.hold(box)
        if held is not None:
            try:
                remove(box)
                removed["boxes"] += 1
            finally:
                os.close(held)
    for entry in os.scandir(layout.path("runtimes")):
        try:
            if time.time() - entry.stat().st_mtime > RUNTIME_KEEP_SECONDS:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed["runtimes"] += 1
        except OSError:
            pass
    removed["images"] = image.sweep_packs(RUNTIME_KEEP_SECONDS)
    return dict(removed)


# ---------------------------------------------------------------------- the command line

VERBS = ("version", "check", "init", "run", "kill", "cleanup", "runtime", "leftovers", "sweep")
NUMBERS = {
    "memory-mb": (16, MAX_MEMORY_MB),
    "pids": (4, MAX_PIDS),
    "build-mb": (0, MAX_BUILD_MB),
    "cpu-seconds": (1, 86400),
    "address-space-mb": (1, 65536),
    "file-size-mb": (0, 4096),
    "open-files": (16, 65536),
    "scratch-mb": (1, 4096),
}
OPTIONS = {
    "check": {"image"},
    "init": {"box", "memory-mb", "pids", "cpus", "build-mb"},
    "run": {"box", "image", "runtime", "env", "chdir", "build", *NUMBERS} - {"memory-mb", "pids"},
    "kill": {"box"},
    "cleanup": {"box"},
}


class Request:
    """A command line, parsed and checked: every value is within its bounds."""

    def __init__(self, verb: str) -> None:
        self.verb = verb
        self.boxes: list[int] = []
        self.numbers = {
            "memory-mb": 256,
            "pids": 16,
            "build-mb": 0,
            "cpu-seconds": 600,
            "address-space-mb": 1024,
            "file-size-mb": 8,
            "open-files": 64,
            "scratch-mb": 16,
        }
        self.cpus = 1.0
        self.image: str | None = None
        self.runtime: str | None = None
        self.env: list[tuple[str, str]] = []
        self.chdir = "/tmp"
        self.build = False
        self.command: list[str] = []


def parse(argv: Sequence[str]) -> Request:
    """The request a command line makes; Usage saying what is wrong with it."""
    if not argv or argv[0] not in VERBS:
        raise Usage(f"expected one of: {', '.join(VERBS)}")
    request = Request(argv[0])
    rest = list(argv[1:])
    if "--" in rest:
        at = rest.index("--")
        rest, request.command = rest[:at], rest[at + 1 :]
    allowed = OPTIONS.get(request.verb, set())
    while rest:
        word = rest.pop(0)
        name = word[2:] if word.startswith("--") else ""
        if name not in allowed:
            raise Usage(f"{request.verb}: unknown option {word!r}")
        if name == "build":
            request.build = True
            continue
        if not rest:
            raise Usage(f"{request.verb}: {word} needs a value")
        value = rest.pop(0)
        if name == "box":
            if not (value.isascii() and value.isdigit()) or int(value) >= layout.COUNT:
                raise Usage(f"a box is a number from 0 to {layout.COUNT - 1}, not {value!r}")
            request.boxes.append(int(value))
        elif name in NUMBERS:
            low, high = NUMBERS[name]
            if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
                raise Usage(f"{request.verb}: {word} takes a whole number from {low} to {high}")
            request.numbers[name] = int(value)
        elif name == "cpus":
            try:
                request.cpus = float(value) if value.isascii() else float("nan")
            except ValueError:
                raise Usage("--cpus takes a number of CPUs") from None
            if not 0.01 <= request.cpus <= 64:
                raise Usage("--cpus takes 0.01 to 64")
        elif name in ("image", "runtime"):
            if not image.valid_name(value):
                raise Usage(f"{word} takes a name of letters, digits, '.', '_' and '-'")
            setattr(request, name, value)
        elif name == "env":
            key, equals, text = value.partition("=")
            if not equals or not key or not set(key) <= ENV_CHARACTERS or key[0].isdigit():
                raise Usage(f"--env takes NAME=VALUE, not {value!r}")
            request.env.append((key, text))
        else:  # chdir
            request.chdir = value
    if "box" in allowed and not request.boxes:
        raise Usage(f"{request.verb}: --box is required")
    if request.verb in ("init", "run") and len(request.boxes) > 1:
        raise Usage(f"{request.verb}: one --box")
    if request.verb == "run" and (request.image is None or request.runtime is None):
        raise Usage("run: --image and --runtime are required")
    return request


def carry_out(request: Request) -> None:
    """Do what `request` asks, saying the answer on stdout."""
    numbers = request.numbers
    if request.verb == "run":
        assert request.image is not None and request.runtime is not None
        limits = jail.RunLimits(
            cpu_seconds=numbers["cpu-seconds"],
            address_space_mb=numbers["address-space-mb"],
            file_size_mb=numbers["file-size-mb"],
            open_files=numbers["open-files"],
            scratch_mb=numbers["scratch-mb"],
        )
        run(
            request.boxes[0],
            identity=request.image,
            runtime=request.runtime,
            limits=limits,
            env=request.env,
            build=request.build,
            chdir=request.chdir,
            command=request.command,
        )
    elif request.verb == "check":
        say(check(request.image))
    elif request.verb == "init":
        facts = init(
            request.boxes[0],
            memory_mb=numbers["memory-mb"],
            pids=numbers["pids"],
            cpus=request.cpus,
            build_mb=numbers["build-mb"],
        )
        say(facts)
    elif request.verb == "kill":
        for box in request.boxes:
            cgroups.box_cgroup(str(box)).kill_all()
    elif request.verb == "cleanup":
        for box in request.boxes:
            remove(box)
    elif request.verb == "runtime":
        say(install_runtime(sys.stdin.buffer.read(MAX_RUNTIME_BYTES + 1)))
    elif request.verb == "leftovers":
        sys.stdout.write("".join(f"box:{box}\n" for box in leftovers()))
    elif request.verb == "sweep":
        say(sweep())


KEPT_ENVIRONMENT = ("SUDO_UID", "GRASS_BOX_HOME", "GRASS_RUNTIME_ROOT", "GRASS_CGROUP_PARENT")


def own_process() -> None:
    """Make what the caller's process handed down through sudo this program's own: the file
    mode mask (a caller's umask of 077 once made a runtime, and could make the whole home,
    unreadable to every box), the resource limits (a small file-size limit truncated the
    cached seccomp filter), the niceness and CPU affinity, and the environment (sudo keeps a
    few variables, which would reach mount)."""
    import resource

    os.umask(0o022)
    for key in list(os.environ):
        if key not in KEPT_ENVIRONMENT:
            del os.environ[key]
    os.environ["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
    infinity = resource.RLIM_INFINITY
    for limit, value in (
        (resource.RLIMIT_FSIZE, infinity),
        (resource.RLIMIT_NOFILE, 4096),
        (resource.RLIMIT_CPU, infinity),
        (resource.RLIMIT_AS, infinity),
        (resource.RLIMIT_DATA, infinity),
    ):
        jail.set_limit(limit, value, value)
    os.setpriority(os.PRIO_PROCESS, 0, 0)
    os.sched_setaffinity(0, range(os.cpu_count() or 1))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        request = parse(sys.argv[1:] if argv is None else argv)
    except Usage as exc:
        sys.stderr.write(f"grass-box: {exc}\n")
        return 2
    if request.verb == "version":
        say({"version": version()})
        return 0
    if os.geteuid() != 0:
        sys.stderr.write("grass-box: must run as root (through its sudo rule)\n")
        return 1
    try:
        own_process()
        carry_out(request)
    except (Refused, OSError) as exc:
        sys.stderr.write(f"grass-box: {exc}\n")
        return 125 if request.verb == "run" else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
