"""The bots' runtime image: its identity is a function of its package lock and recipe only
(the same list gives the same identity, on every host), the Python side and the build script
agree on it, and the image built on this machine holds exactly the locked packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
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


def test_the_sweep_lets_go_of_a_pack_in_memory_no_box_used_for_a_day(sandbox_ready: None) -> None:
    """Each box reads the image from a copy in memory (`bots/sandbox/image.py`): a copy of an
    image no box has mounted for a day (a version the workers no longer run) is let go of,
    the image boxes run on is kept."""
    from bots.runner import home, sandbox

    packs = Path(home_layout()["home"]) / "packs"
    current = packs / f"{runtime.identity()}.ext4"
    assert current.is_file()
    stale = packs / "test-stale.ext4"
    stale.write_bytes(b"\0" * 4096)
    (packs / "test-stale.ext4.sha256").write_text("0" * 64 + "\n")
    day_ago = time.time() - 2 * 86400
    os.utime(stale, (day_ago, day_ago))
    assert sandbox.sweep()["images"] >= 1
    assert not stale.exists() and not (packs / "test-stale.ext4.sha256").exists()
    assert current.is_file()
    assert home.layout()["image"]


def test_the_warm_up_follows_links_inside_the_view_only(tmp_path: Path) -> None:
    """The program (root) reads a fresh view's files before its box starts: a link in the
    image is followed within the view (an absolute target is the view's), never to the host."""
    from bots.sandbox import image

    view = tmp_path / "view"
    (view / "usr" / "bin").mkdir(parents=True)
    (view / "usr" / "bin" / "python3.11").write_bytes(b"x")
    (view / "usr" / "bin" / "python3").symlink_to("python3.11")
    (view / "usr" / "bin" / "absolute").symlink_to("/usr/bin/python3.11")
    (view / "usr" / "bin" / "out").symlink_to("../../../outside")
    (view / "usr" / "bin" / "loop").symlink_to("loop")
    inside = image._inside
    assert inside(str(view), "usr/bin/python3") == str(view / "usr/bin/python3.11")
    assert inside(str(view), "usr/bin/absolute") == str(view / "usr/bin/python3.11")
    assert inside(str(view), "usr/bin/out") is None
    assert inside(str(view), "usr/bin/loop") is None
    image.warm(str(view))  # what the image does not hold is skipped
