"""The bots' runtime image on this host: the read-only root of every box.

`deploy/runtime-image.sh` builds each image as a folder, IMAGES/<identity>/ (its identity in
`etc/grass-runtime`), and packs that folder into IMAGES/<identity>.ext4, with the sha256
of the packed bytes beside it (`.ext4.sha256`): the identity of what was built, not only of
its recipe. The first box of an image after a boot mounts the pack (ext4, read-only, a loop device)
at HOME/images/<identity>, once its bytes hash to what was recorded: a damaged or truncated
image is refused there, before any bot runs on it. Boxes bind that mount, a filesystem of its
own, so their /proc/self/mountinfo shows `/`, not where the image lives on the host.

A host with only the folder (an image built before the pack, a test's copy) binds the folder:
its boxes then see the folder's host path in mountinfo. A caller names the identity it
expects (the project computes it from `bots/runtime`); the program looks only here.
"""

from __future__ import annotations

import fcntl
import os

from bots.sandbox import layout

IMAGES = os.environ.get("GRASS_RUNTIME_ROOT", "/var/lib/grass/runtime")
"""Settable only by a root caller (sudo clears an unprivileged caller's environment)."""
NAME_CHARACTERS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-")


class ImageError(OSError):
    """The image the caller asked for is not here, or not what it says it is."""


def valid_name(name: str) -> bool:
    """A name of letters, digits, `.`, `_` and `-` that starts with a letter or digit."""
    return 0 < len(name) <= 64 and name[0].isalnum() and set(name) <= NAME_CHARACTERS


def image_dir(identity: str) -> str:
    """The root of the image of `identity` for a box: its pack, mounted (and checked when
    mounted), or its folder when it has no pack (ImageError saying why not)."""
    if not valid_name(identity):
        raise ImageError(f"not an image identity: {identity!r}")
    pack = f"{IMAGES}/{identity}.ext4"
    root = _mounted(identity, pack) if os.path.isfile(pack) else f"{IMAGES}/{identity}"
    try:
        with open(f"{root}/etc/grass-runtime") as marker:
            found = marker.read().strip()
    except OSError:
        raise ImageError(f"the bots' runtime image {identity} is not built on this host") from None
    if found != identity:
        raise ImageError(f"{root} holds image {found!r}, not {identity}")
    return root


def _mounted(identity: str, pack: str) -> str:
    """HOME/images/<identity>, the pack mounted there if it was not (after its hash check);
    callers that start at once take turns on a lock."""
    target = layout.path("images", identity)
    if os.path.ismount(target):
        return target
    layout.ensure_home()
    flags = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW
    lock = os.open(layout.path(".images.lock"), flags, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.ismount(target):
            verify(pack)
            os.makedirs(target, mode=0o755, exist_ok=True)
            options = "loop,ro,noload,nodev,nosuid"
            if layout.run_tool(["/usr/bin/mount", "-t", "ext4", "-o", options, pack, target]):
                raise ImageError(f"cannot mount {pack}")
    finally:
        os.close(lock)
    return target


def verify(pack: str) -> str:
    """The pack's sha256, checked against the one recorded when it was built."""
    import hashlib

    try:
        with open(pack + ".sha256") as file:
            recorded = file.read().split()[0]
    except (OSError, IndexError):
        raise ImageError(f"{pack} has no recorded hash (build it again)") from None
    digest = hashlib.sha256()
    with open(pack, "rb") as packed:
        while chunk := packed.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != recorded:
        raise ImageError(
            f"{pack} is damaged: its bytes hash to {digest.hexdigest()[:16]}, not to the "
            f"{recorded[:16]} recorded when it was built (build it again)"
        )
    return recorded
