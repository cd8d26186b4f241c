"""The bots' runtime image: which one this code expects, and where it is on this host.

What a bot may use is a property of the ladder, not of a worker host: every box's `/` is one
read-only root filesystem built from Debian's packages by `deploy/runtime-image.sh`, from the
exact versions in `bots/runtime/packages.lock`, by `bots/runtime/recipe.sh`. Its identity is
`VERSION-<hash>`, the first 12 hex digits of the sha256 of the lock and the recipe: the same
lock and recipe give the same identity on every host, and a match log records the identity
its bots ran on.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

DEFINITION = Path(__file__).resolve().parent.parent / "runtime"
"""bots/runtime: packages.txt (what was asked for), packages.lock (what is built), VERSION."""
ROOT = Path(os.environ.get("GRASS_RUNTIME_ROOT", "/var/lib/grass/runtime"))
BUILD_COMMAND = "sudo bash deploy/runtime-image.sh"


class RuntimeMissing(RuntimeError):
    """This host does not have the image this code expects."""


@lru_cache(maxsize=1)
def identity() -> str:
    """The identity of the image this code expects: VERSION, then the first 12 hex digits of
    the sha256 of packages.lock and recipe.sh (what is installed, and how)."""
    version = (DEFINITION / "VERSION").read_text().strip()
    recipe = (DEFINITION / "packages.lock").read_bytes() + (DEFINITION / "recipe.sh").read_bytes()
    return f"{version}-{hashlib.sha256(recipe).hexdigest()[:12]}"


def packages() -> dict[str, str]:
    """Every package of the image, name to version (the lock)."""
    lines = (DEFINITION / "packages.lock").read_text().split()
    return dict(line.split("=", 1) for line in lines)


def image_dir() -> Path:
    """The image of `identity()` on this host; raises RuntimeMissing, saying how to build it."""
    image = ROOT / identity()
    marker = image / "etc" / "grass-runtime"
    try:
        found = marker.read_text().strip()
    except OSError:
        raise RuntimeMissing(
            f"the bots' runtime image {identity()} is not built on this host "
            f"(looked in {image}); build it with `{BUILD_COMMAND}`"
        ) from None
    if found != identity():
        raise RuntimeMissing(f"{image} holds image {found!r}, not {identity()}")
    return image
