"""The bots' runtime image: its identity is a function of its package lock and recipe only
(the same list gives the same identity, on every host), the Python side and the build script
agree on it, and the image built on this machine holds exactly the locked packages."""

from __future__ import annotations

import os
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


def test_boxes_run_on_the_pack_whose_bytes_are_what_was_built(sandbox_ready: None) -> None:
    """The pack's sha256, recorded when it was built, is checked when the box program mounts
    it: the identity of what was built, not only of the recipe."""
    from bots.runner import home

    recorded = (runtime.ROOT / f"{runtime.identity()}.ext4.sha256").read_text().split()[0]
    facts = home.layout()
    assert facts["image-sha256"] == recorded
    assert Path(facts["image"]) != runtime.image_dir()  # the pack's mount, not the folder
    marker = Path(facts["image"]) / "etc" / "grass-runtime"
    assert marker.read_text().strip() == runtime.identity()


@pytest.mark.parametrize("damage", ["flipped", "cut", "no-hash"])
def test_a_damaged_pack_is_refused_before_any_box_runs_on_it(
    sandbox_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """A small image packed the way deploy/runtime-image.sh packs one, then damaged: the box
    program will not mount it (a worker once ran on an image that had lost python3 and still
    passed its identity check, which hashed only the recipe)."""
    from bots.runner import boxctl

    identity = f"test-{damage}-{tmp_path.name[-8:]}"
    tree = tmp_path / "tree"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc" / "grass-runtime").write_text(identity + "\n")
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "bin" / "python3").write_bytes(b"\x7fELF" + b"x" * 100_000)
    images = tmp_path / "images"
    images.mkdir()
    pack = images / f"{identity}.ext4"
    subprocess.run(
        ["mke2fs", "-q", "-t", "ext4", "-O", "^has_journal", "-d", str(tree), str(pack), "4M"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    digest = subprocess.run(["sha256sum", str(pack)], capture_output=True, text=True, check=True)
    (images / f"{identity}.ext4.sha256").write_text(digest.stdout.split()[0] + "\n")
    data = bytearray(pack.read_bytes())
    if damage == "flipped":
        data[len(data) // 2] ^= 0xFF
        pack.write_bytes(data)
    elif damage == "cut":
        pack.write_bytes(data[: len(data) // 2])
    else:
        (images / f"{identity}.ext4.sha256").unlink()
    monkeypatch.setenv("GRASS_RUNTIME_ROOT", str(images))
    with pytest.raises(boxctl.BoxProgramError, match=r"damaged|no recorded hash"):
        boxctl.call("check", "--image", identity)
    assert not os.path.ismount(Path(home_layout()["home"]) / "images" / identity)


def home_layout() -> dict[str, str]:
    from bots.runner import home

    return home.layout()
