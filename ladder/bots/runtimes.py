"""Which bots' runtime image the site plays on, and whether this worker may play on it.

The image (`bots.runner.runtime`) decides what a bot can use; a site plays on exactly one at a
time (GRASS_RUNTIME_IMAGE, by default the image of this code). A worker with another image
refuses matches and validations, so no match and no verdict mixes two images.
"""

from __future__ import annotations

from django.conf import settings

from bots.runner import runtime


def expected_runtime() -> str:
    """The image the site plays on: GRASS_RUNTIME_IMAGE, or this code's."""
    configured: str = settings.GRASS_RUNTIME_IMAGE
    return configured or runtime.identity()


def runtime_refusal() -> str | None:
    """Why this worker must not run bots for the site (its image is another), or None."""
    if not settings.GRASS_SANDBOXED:
        return None  # development without the sandbox: bots run on this machine's tools
    here, expected = runtime.identity(), expected_runtime()
    if here == expected:
        return None
    return (
        f"this worker's bots' runtime image is {here}, but the site plays on {expected} "
        "(GRASS_RUNTIME_IMAGE): deploy the code of that image to this worker "
        "(deploy/README.md, 'Rolling out a new runtime image')"
    )
