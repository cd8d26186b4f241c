"""The bots' runtime image on this host: the read-only root of every box, a view of its own
for each box.

`deploy/runtime-image.sh` builds each image as a folder, IMAGES/<identity>/ (its identity in
`etc/grass-runtime`), and packs that folder into IMAGES/<identity>.ext4, with the sha256
of the packed bytes beside it (`.ext4.sha256`): the identity of what was built, not only of
its recipe.

Why a view per box. Boxes of one match used to bind one mount of the pack, so they shared its
page cache: one box reading pages of the image that nobody had read made them resident, and
another box told resident (1-5 us) from cold (0.3-28 ms) by timing a 1-byte read, a bit per
page, 29-30 of 32 bits in one pair of turns (tests/bots/test_hostile_pagecache.py). A file's
page cache belongs to its file system's superblock, so each box now mounts the pack on a loop
device of its own (HOME/roots/<box>): what one box reads fills only its own cache. Below the
loop devices, the pack itself must not keep a shared cache state either: read from disk, its
blocks were cached by the host (or, on this VM, the hypervisor: 0.7-4.5 ms for a block read
with direct I/O the first time, 60 us after), the same channel one layer down. So the pack is
copied once per boot into a tmpfs of its own (HOME/packs, root's, `noswap` where the kernel
takes it), where every page is always in memory: a loop device's read is a copy from RAM,
the same whatever any box read before. Its sha256 is computed while it is copied and checked
against the one recorded when it was built, so the bytes boxes read are the bytes checked.
What it costs: the pack's used blocks in RAM once per host (1.3 GB for the image of
record), the pages each box reads in its own cache (charged to the box's memory cgroup), and a
mount and a warm-up (`WARM`) per box (docs/benchmarks.md). `sweep` lets go of a pack no box
has mounted for a day.

HOME/images/<identity> is the host's own mount of the pack (on a loop device of its own as
well): `check` reads the marker there, and no box binds it.

A host with only the folder (an image built before the pack, a test's copy) binds the folder,
shared by every box (and its host path shows in their mountinfo). A caller names the identity
it expects (the project computes it from `bots/runtime`); the program looks only here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct

from bots.sandbox import layout

IMAGES = os.environ.get("GRASS_RUNTIME_ROOT", "/var/lib/grass/runtime")
"""Settable only by a root caller (sudo clears an unprivileged caller's environment)."""
NAME_CHARACTERS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-")
MOUNT_OPTIONS = "ro,noload,nodev,nosuid"
LOOP_CTL_GET_FREE = 0x4C82
LOOP_CONFIGURE = 0x4C0A
"""Linux 5.8+: a loop device's backing file and flags in one call (linux/loop.h)."""
LO_FLAGS_READ_ONLY = 1
LO_FLAGS_AUTOCLEAR = 4
"""The device lets go of its backing file when its last user (the mount) is gone."""
CHUNK = 1 << 20
WARM = (
    "usr/bin/sh", "usr/bin/dash", "usr/bin/python3", "etc/ld.so.cache",
    "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "usr/lib/x86_64-linux-gnu/libc.so.6",
    "usr/lib/x86_64-linux-gnu/libm.so.6", "usr/lib/x86_64-linux-gnu/libz.so.1",
    "usr/lib/x86_64-linux-gnu/libexpat.so.1", "usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache",
    "usr/share/locale/locale.alias", "usr/lib/locale/C.utf8/LC_CTYPE",
    "usr/lib/python3.11", "usr/lib/python3.11/encodings", "usr/lib/python3.11/json",
    "usr/lib/python3.11/re", "usr/lib/python3.11/lib-dynload",
    "usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so",
    *(f"usr/lib/python3.11/__pycache__/{name}.cpython-311.pyc" for name in (
        "__future__", "copyreg", "enum", "functools", "keyword", "operator", "reprlib", "types",
    )),
    "usr/lib/python3.11/collections/__pycache__/__init__.cpython-311.pyc",
    *(f"usr/lib/python3.11/encodings/__pycache__/{name}.cpython-311.pyc" for name in (
        "__init__", "aliases", "utf_8",
    )),
    *(f"usr/lib/python3.11/json/__pycache__/{name}.cpython-311.pyc" for name in (
        "__init__", "decoder", "encoder", "scanner",
    )),
    *(f"usr/lib/python3.11/re/__pycache__/{name}.cpython-311.pyc" for name in (
        "__init__", "_casefix", "_compiler", "_constants", "_parser",
    )),
)  # fmt: skip
"""What a box's waiter (`/bin/sh`) and a Python bot's start read of the image (strace of the
launcher and an SDK bot, Debian 12's Python 3.11): files read whole, folders listed. A box's
view starts cold, and its first reads each wait for its loop device's worker (a Python start
took 60 ms there, 20 ms warm, and 170-200 ms against 55-70 on a host at a load of 9); read
here in a few large requests, they are in the box's own cache before its bot starts. Public
bytes, the same in every box: warming them tells no box anything. A later image that moves
them warms less, and breaks nothing (a path it does not hold is skipped)."""


class ImageError(OSError):
    """The image the caller asked for is not here, or not what it says it is."""


def valid_name(name: str) -> bool:
    """A name of letters, digits, `.`, `_` and `-` that starts with a letter or digit."""
    return 0 < len(name) <= 64 and name[0].isalnum() and set(name) <= NAME_CHARACTERS


def image_dir(identity: str) -> str:
    """The host's view of the image of `identity`: its pack, copied into memory (and checked)
    and mounted at HOME/images/<identity>, or its folder when it has no pack (ImageError
    saying why not)."""
    pack = _pack(identity)
    if pack:
        in_memory(identity, pack)  # checked here, before any box runs on it
    root = _mounted(identity, pack) if pack else f"{IMAGES}/{identity}"
    _check_marker(root, identity)
    return root


def box_root(box: int, identity: str) -> tuple[str, bool]:
    """Box `box`'s own view of the image of `identity`, the root it binds, and whether it was
    made now (cold: `warm` it): the in-memory pack mounted at HOME/roots/<box> on a loop
    device of its own, shared with no other box (made by the box's first run, removed by its
    cleanup: `unmount_box_root`). The shared folder when the image has no pack."""
    pack = _pack(identity)
    if not pack:
        return image_dir(identity), False
    memory = in_memory(identity, pack)
    target = layout.root_dir(box)
    os.makedirs(layout.path("roots"), mode=0o755, exist_ok=True)
    flags = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    lock = os.open(layout.path("roots", f".{box}.lock"), flags, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs of one box (a caller's mistake) take turns
        if os.path.ismount(target):
            if _marker(target) == identity:
                return target, False
            layout.unmount(target)  # the box ran another image before: a view of this one
        os.makedirs(target, mode=0o755, exist_ok=True)
        _mount_on_own_loop(memory, target)
    finally:
        os.close(lock)
    os.utime(memory)  # in use: the sweep keeps it
    _check_marker(target, identity)
    return target, True


def warm(root: str) -> None:
    """Read WARM into a fresh view's own cache (into the cgroup of the box, which this
    process has joined: see jail.exec_in_box). Links are followed inside the view only."""
    buffer = bytearray(CHUNK)
    for rel in WARM:
        path = _inside(root, rel)
        if path is None:
            continue
        try:
            if os.path.isdir(path):
                os.listdir(path)
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                while os.readv(fd, [buffer]) == CHUNK:
                    pass
            finally:
                os.close(fd)
        except OSError:
            pass


def _inside(root: str, rel: str) -> str | None:
    """`root`/`rel` with a link in its last part followed within `root` (an absolute target
    is the view's, not the host's); None for a path that leaves it or links on and on."""
    for _ in range(4):
        path = os.path.join(root, rel)
        if not os.path.islink(path):
            return path
        target = os.readlink(path)
        base = "" if target.startswith("/") else os.path.dirname(rel)
        rel = os.path.normpath(os.path.join(base, target.lstrip("/")))
        if rel.startswith(".."):
            return None
    return None


def sweep_packs(keep_seconds: float) -> int:
    """Let go of the packs in memory no box has mounted for `keep_seconds` (an image of a
    version the workers no longer run): the host's mount of each, then its file (its memory
    comes back when the last view still reading it is gone). How many."""
    import time

    folder = layout.path("packs")
    if not os.path.ismount(folder):
        return 0
    removed = 0
    with _images_lock():
        for entry in os.scandir(folder):
            if not entry.name.endswith(".ext4") or entry.name.startswith("."):
                continue
            if time.time() - entry.stat().st_mtime <= keep_seconds:
                continue
            layout.unmount(layout.path("images", entry.name[: -len(".ext4")]))
            for name in (entry.path, entry.path + ".sha256"):
                try:
                    os.unlink(name)
                except FileNotFoundError:
                    pass
            removed += 1
    return removed


def unmount_box_root(box: int) -> None:
    """Detach box `box`'s view of the image (lazily: processes of the box still alive keep it
    until they are gone; then its loop device lets go of the pack by itself)."""
    layout.unmount(layout.root_dir(box))


def _pack(identity: str) -> str | None:
    if not valid_name(identity):
        raise ImageError(f"not an image identity: {identity!r}")
    pack = f"{IMAGES}/{identity}.ext4"
    return pack if os.path.isfile(pack) else None


def _marker(root: str) -> str | None:
    try:
        with open(f"{root}/etc/grass-runtime") as marker:
            return marker.read().strip()
    except OSError:
        return None


def _check_marker(root: str, identity: str) -> None:
    found = _marker(root)
    if found is None:
        raise ImageError(f"the bots' runtime image {identity} is not built on this host")
    if found != identity:
        raise ImageError(f"{root} holds image {found!r}, not {identity}")


def _mounted(identity: str, pack: str) -> str:
    """HOME/images/<identity>, the in-memory pack mounted there if it was not; callers that
    start at once take turns on a lock."""
    target = layout.path("images", identity)
    if os.path.ismount(target):
        return target
    memory = in_memory(identity, pack)
    with _images_lock():
        if not os.path.ismount(target):
            os.makedirs(target, mode=0o755, exist_ok=True)
            _mount_on_own_loop(memory, target)
    return target


class _images_lock:
    """HOME/.images.lock, held: one caller at a time copies a pack or mounts the host's view."""

    def __enter__(self) -> None:
        layout.ensure_home()
        flags = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(layout.path(".images.lock"), flags, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def in_memory(identity: str, pack: str) -> str:
    """HOME/packs/<identity>.ext4: the pack copied into memory the first time after a boot,
    once the copied bytes hash to the sha256 recorded when it was built (a damaged or
    truncated pack is refused before any box runs on it)."""
    folder = layout.path("packs")
    memory = f"{folder}/{identity}.ext4"
    if os.path.isfile(memory):
        return memory
    with _images_lock():
        if os.path.isfile(memory):
            return memory
        if not os.path.ismount(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            options = "mode=0700,nosuid,nodev,noexec,size=75%"
            # noswap (Linux 6.4+): a page swapped out would be slow to the first box that
            # reads it again and fast to the next, the channel this copy closes.
            if layout.run_tool(
                ["/usr/bin/mount", "-t", "tmpfs", "-o", options + ",noswap", "grass-packs", folder]
            ) and layout.run_tool(
                ["/usr/bin/mount", "-t", "tmpfs", "-o", options, "grass-packs", folder]
            ):
                raise ImageError(f"cannot mount a tmpfs at {folder} for the image's pack")
        partial = f"{folder}/.{identity}.partial"
        try:
            os.unlink(partial)
        except FileNotFoundError:
            pass
        try:
            recorded = copy_verified(pack, partial)
            os.rename(partial, memory)
        except BaseException:
            try:
                os.unlink(partial)
            except FileNotFoundError:
                pass
            raise
        layout.write_whole(f"{folder}/.{identity}.sha256.partial", recorded.encode(), 0o600)
        os.rename(f"{folder}/.{identity}.sha256.partial", f"{memory}.sha256")
    return memory


def copy_verified(pack: str, target: str) -> str:
    """Copy `pack` to `target` (a new file; runs of zeros left as holes, which tmpfs reads as
    zeros without keeping a page) and return its sha256, checked against the one recorded
    when it was built (ImageError when the bytes copied are not the bytes built)."""
    import hashlib

    try:
        with open(pack + ".sha256") as file:
            recorded = file.read().split()[0]
    except (OSError, IndexError):
        raise ImageError(f"{pack} has no recorded hash (build it again)") from None
    digest = hashlib.sha256()
    zeros = bytes(CHUNK)
    source = os.open(pack, os.O_RDONLY | os.O_CLOEXEC)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        out = os.open(target, flags, 0o600)
        try:
            size = 0
            while chunk := os.read(source, CHUNK):
                digest.update(chunk)
                size += len(chunk)
                if chunk == zeros[: len(chunk)]:
                    continue
                view = memoryview(chunk)
                at = size - len(chunk)
                while view:
                    written = os.pwrite(out, view, at)
                    view, at = view[written:], at + written
            os.ftruncate(out, size)
        finally:
            os.close(out)
        # The copy is what boxes read; the disk's pages of the pack are not needed again.
        os.posix_fadvise(source, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError as exc:
        raise ImageError(f"cannot copy {pack} into memory: {exc}") from None
    finally:
        os.close(source)
    if digest.hexdigest() != recorded:
        raise ImageError(
            f"{pack} is damaged: its bytes hash to {digest.hexdigest()[:16]}, not to the "
            f"{recorded[:16]} recorded when it was built (build it again)"
        )
    return recorded


def _mount_on_own_loop(pack: str, target: str) -> None:
    """Mount `pack` (ext4, read-only) at `target` on a loop device set up here for it alone.
    Never `mount -o loop`: it reuses a loop device already reading the same file, and one
    block device mounted twice is one file system, one page cache."""
    backing = os.open(pack, os.O_RDONLY | os.O_CLOEXEC)
    try:
        device, loop = _new_loop(backing)
    finally:
        os.close(backing)
    try:
        if layout.run_tool(["/usr/bin/mount", "-t", "ext4", "-o", MOUNT_OPTIONS, device, target]):
            raise ImageError(f"cannot mount the image's pack at {target}")
    finally:
        os.close(loop)  # the mount holds the device now; without one, it is cleared here


def _new_loop(backing: int) -> tuple[str, int]:
    """A free loop device configured read-only over `backing`, and a descriptor holding it
    (another caller may take the free device first: then the next one)."""
    info = struct.pack(
        "=5Q4I64s64s32s2Q", 0, 0, 0, 0, 0, 0, 0, 0,
        LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR, b"grass-image", b"", b"", 0, 0,
    )  # fmt: skip
    config = struct.pack("=II", backing, 0) + info + bytes(64)
    for _ in range(20):
        control = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
        try:
            number = fcntl.ioctl(control, LOOP_CTL_GET_FREE)
        finally:
            os.close(control)
        device = f"/dev/loop{number}"
        loop = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.ioctl(loop, LOOP_CONFIGURE, config)
        except OSError as exc:
            os.close(loop)
            if exc.errno == errno.EBUSY:
                continue
            raise ImageError(f"cannot set up {device} for the image's pack: {exc}") from None
        return device, loop
    raise ImageError("no free loop device for the image's pack")
