"""What a bot author downloads from the site itself (the servers reach no other site, and an
author who has only the website must be able to start): the rules, the protocol, a starter per
language, the JavaScript SDK, and the kit that installs the `grass` command with the Python SDK
and the engine. Every file comes from the installed `engine` and `bots` packages, so what the
site hands out is what its workers run.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

from bots.runner.languages import LANGUAGES

TEXTS = {"RULES.md": ("engine", "RULES.md"), "PROTOCOL.md": ("bots", "PROTOCOL.md")}
"""The references, served by their own names: the rules as the engine plays them, and the
protocol a bot speaks."""

KIT_NAME = "grass-kit.zip"
KIT_VERSION = "1.0"
KIT_PYPROJECT = f'''# The Grass bot author's kit, from a Grass ladder: `pip install {KIT_NAME}`
# installs the `grass` command, the Python SDK (bots.sdk) and the rules engine (engine).
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "grass-kit"
version = "{KIT_VERSION}"
description = "The Grass rules engine, bot SDK, sandboxed local runner and the grass command."
requires-python = ">=3.11"
dependencies = ["rich>=13.7,<15", "httpx>=0.27,<1"]

[project.scripts]
grass = "bots.cli:main"

[tool.setuptools.packages.find]
include = ["engine*", "bots*"]

[tool.setuptools.package-data]
engine = ["RULES.md"]
bots = [
    "PROTOCOL.md",
    "runtime/*",
    "sdk/js/*.js",
    "runner/buildscripts/*.sh",
    "starters/**/*",
    "examples/**/*",
]
'''


@dataclass(frozen=True)
class Starter:
    """One language's starter: a bot that plays a random legal action, to copy and change."""

    language: str
    filename: str
    summary: str
    entries: tuple[str, ...]


def starters() -> list[Starter]:
    """The starter of every language the ladder runs, in the ladder's order of languages."""
    found = []
    for name, language in LANGUAGES.items():
        folder = resources.files("bots") / "starters" / name
        if not folder.is_dir():
            continue
        for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
            if item.is_file():
                found.append(Starter(name, item.name, language.summary, language.entries))
    return found


def starter_file(language: str, filename: str) -> bytes | None:
    """The bytes of one starter file, or None when there is no such starter."""
    for starter in starters():
        if (starter.language, starter.filename) == (language, filename):
            return (resources.files("bots") / "starters" / language / filename).read_bytes()
    return None


def text(name: str) -> bytes | None:
    """RULES.md or PROTOCOL.md, or None for any other name."""
    if name not in TEXTS:
        return None
    package, filename = TEXTS[name]
    return (resources.files(package) / filename).read_bytes()


def javascript_sdk() -> bytes:
    """bots/sdk/js/grass.js: the one-file SDK a JavaScript bot requires as 'grass'."""
    return (resources.files("bots") / "sdk" / "js" / "grass.js").read_bytes()


def _add_tree(archive: zipfile.ZipFile, folder: Traversable, prefix: str) -> None:
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if item.name in ("__pycache__",) or item.name.endswith((".pyc", ".pyo")):
            continue
        path = f"{prefix}/{item.name}"
        if item.is_dir():
            _add_tree(archive, item, path)
        else:
            # A fixed date: the same packages give the same bytes (and the same checksum).
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, item.read_bytes())


@cache
def grass_kit() -> bytes:
    """A source archive that pip installs: the engine and bots packages as installed here,
    with a pyproject.toml of their own (the ladder's Django site stays out). Built once per
    process: the packages do not change while it runs."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        root = "grass-kit"
        info = zipfile.ZipInfo(f"{root}/pyproject.toml", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        archive.writestr(info, KIT_PYPROJECT)
        for package in ("engine", "bots"):
            _add_tree(archive, resources.files(package), f"{root}/{package}")
    return buffer.getvalue()
