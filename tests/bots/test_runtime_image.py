"""The bots' runtime image: its identity is a function of its package lock and recipe only
(the same list gives the same identity, on every host), the Python side and the build script
agree on it, and the image built on this machine holds exactly the locked packages."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bots.runner import runtime

ROOT = Path(__file__).resolve().parents[2]


def script_identity(definition: Path) -> str:
    """The identity as deploy/runtime-image.sh computes it, for a copy of bots/runtime."""
    source = (ROOT / "deploy" / "runtime-image.sh").read_text()
    line = next(x for x in source.splitlines() if x.startswith("identity() {"))
    done = subprocess.run(
        ["bash", "-c", f'RUNTIME="{definition}"; {line}; identity'],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_python_and_the_build_script_agree_on_the_identity() -> None:
    assert script_identity(runtime.DEFINITION) == runtime.identity()


def test_the_identity_follows_the_lock_and_the_recipe(tmp_path: Path) -> None:
    copy = tmp_path / "runtime"
    shutil.copytree(runtime.DEFINITION, copy)
    same = script_identity(copy)
    assert same == runtime.identity()  # the same list, the same identity
    (copy / "packages.lock").write_text((copy / "packages.lock").read_text() + "extra=1\n")
    assert script_identity(copy) != same
    shutil.copy(runtime.DEFINITION / "packages.lock", copy / "packages.lock")
    (copy / "recipe.sh").write_text((copy / "recipe.sh").read_text() + "\n# changed\n")
    assert script_identity(copy) != same


def test_the_built_image_holds_exactly_the_locked_packages(sandbox_ready: None) -> None:
    image = runtime.image_dir()
    assert (image / "etc" / "grass-runtime").read_text().strip() == runtime.identity()
    status = (image / "var" / "lib" / "dpkg" / "status").read_text()
    installed = {}
    for block in status.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != " "
        )
        if fields.get("Status", "").endswith(" installed"):
            installed[fields["Package"]] = fields["Version"]
    assert installed == runtime.packages()


def test_a_missing_image_says_how_to_build_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(runtime, "ROOT", tmp_path)
    with pytest.raises(runtime.RuntimeMissing, match=r"deploy/runtime-image\.sh"):
        runtime.image_dir()
