"""The sandbox on cgroup v2, tested where it runs: a Debian 13 guest (which boots the unified
hierarchy only, as current distributions do) under QEMU runs the sandbox's cgroup tests (the
`cgroups` marker: memory, fork and thread bombs, CPU spin, the CPU quota and CPU-time clocks,
off-turn freezing, teardown of everything a bot started, leaks) from a systemd unit with
`Delegate=yes`, as the worker runs, and reports back on its serial console.

The guest image (tests/vm/guest-image.sh, about a minute) is cached per machine by the
script's hash in GRASS_VM_CACHE (/var/cache/grass/vm); the project and the bots' runtime image
are shared into the guest read-only (9p). This machine's KVM fails with nested guests, so QEMU
emulates (TCG): about five minutes in all once the image is cached (2.5 on a faster host).

The test is collected first (tests/conftest.py), so one test process runs it while the others
share out the rest of the suite. An emulated guest's clock runs on while the host gives its
vCPUs no time (the guest cannot tell: no steal time under TCG), so the emulator runs ahead of
the host's other work (nice -10) and the guest's tests allow bots a long start-up
(`tests/bots/test_hostile.STARTUP_MS`): with 5 s, three of them failed on a slower host even
alone. Counting guest time in instructions instead (`-icount`) was tried: QEMU 7.2 then needs
one thread for both vCPUs, ran several times slower, and its guest kernel crashed.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.runner import runtime

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
CACHE = Path(os.environ.get("GRASS_VM_CACHE", "/var/cache/grass/vm"))
BUILD_SECONDS = 900
BOOT_SECONDS = 1200
"""Generous: the whole run takes about 150 s emulated on an idle 2-core machine."""


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the cgroup v2 VM test must run on CI: {why}")
    pytest.skip(why)


def guest_image() -> Path:
    """The cached guest (disk.ext4, vmlinuz, initrd), built if missing."""
    recipe = (HERE / "guest-image.sh").read_bytes()
    folder = CACHE / hashlib.sha256(recipe).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time on this machine
        if not (folder / "initrd").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            done = subprocess.run(
                ["bash", str(HERE / "guest-image.sh"), str(folder)],
                capture_output=True,
                text=True,
                timeout=BUILD_SECONDS,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder


@contextlib.contextmanager
def image_share() -> Iterator[Path]:
    """A folder to share into the guest as its runtime images: this image's folder alone (a
    read-only bind), not the host's whole image store, whose packed image (a 1.2 GB file the
    box program would hash and loop-mount) is far too slow to read through 9p under emulation.
    The guest's boxes bind the folder, as on a host without a pack."""
    image = runtime.image_dir()
    share = Path(tempfile.mkdtemp(prefix="grass-vm-images-", dir=image.parent.parent))
    # The guest sees the host's modes (security_model=none): mkdtemp's 0700 would keep the
    # boxes' users out of the guest's whole image store.
    share.chmod(0o755)
    target = share / image.name
    target.mkdir()
    try:
        subprocess.run(["mount", "--bind", "-o", "ro", str(image), str(target)], check=True)
        yield share
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)
        shutil.rmtree(share, ignore_errors=True)


def run_guest(image: Path, tests: list[str], console: Path) -> str:
    """Boot the guest to run `tests` (pytest arguments); its serial console's text.

    The emulated guest's kernel once panicked 24 s into its boot (in the scheduler, under TCG):
    a fault of the emulator, not of the sandbox. `panic=-1` makes such a guest reboot, which
    ends the emulator at once (`-no-reboot`) instead of leaving it to BOOT_SECONDS, and the
    guest is booted once more."""
    for attempt in (1, 2):
        with image_share() as images:
            guest = subprocess.Popen(
                guest_command(image, tests, console, images),
                stdout=subprocess.DEVNULL,
                preexec_fn=_ahead,
            )
            atexit.register(_stop, guest)  # an interrupted run leaves no emulator behind
            try:
                code = guest.wait(BOOT_SECONDS)
            finally:
                _stop(guest)
        assert code == 0, f"qemu exited with {code}"
        text = console.read_bytes().decode(errors="replace").replace("\r", "")
        if "Kernel panic" not in text or attempt == 2:
            return text
        console.rename(console.with_name(f"{console.name}.panicked"))
    raise AssertionError("unreachable")


def _ahead() -> None:
    """Run the emulator ahead of the host's other work (as root; otherwise as it is): the
    guest's clock runs on while the host gives its vCPUs no time, so on a busy host its bots
    miss deadlines that they would meet on a real machine of its speed."""
    with contextlib.suppress(PermissionError):
        os.nice(-10)


def _stop(guest: subprocess.Popen[bytes]) -> None:
    if guest.poll() is None:
        guest.kill()
        guest.wait()


def guest_command(image: Path, tests: list[str], console: Path, images: Path) -> list[str]:
    command = [
        "qemu-system-x86_64",
        "-accel", "tcg",
        "-m", "3G",
        "-smp", "2",
        "-display", "none",
        "-monitor", "none",
        "-no-reboot",
        "-serial", f"file:{console}",
        "-kernel", str(image / "vmlinuz"),
        "-initrd", str(image / "initrd"),
        "-append", f"root=/dev/vda rw console=ttyS0 quiet panic=-1 grass.tests={','.join(tests)}",
        "-drive", f"file={image / 'disk.ext4'},format=raw,if=virtio",
        "-snapshot",  # the cached disk stays as built
        "-virtfs", f"local,path={PROJECT},mount_tag=project,security_model=none,readonly=on",
        "-virtfs", f"local,path={images},mount_tag=runtime,security_model=none,readonly=on",
    ]  # fmt: skip
    return command


def cgroup_test_files() -> list[str]:
    """The test files that hold cgroup tests, named one by one.

    The guest has only what the sandbox's tests import (no NumPy, no Django): collecting the
    whole of tests/bots would fail on the files that need more, such as the RL tests."""
    files = sorted(
        str(path.relative_to(PROJECT))
        for path in (PROJECT / "tests" / "bots").glob("test_*.py")
        if "pytest.mark.cgroups" in path.read_text()
    )
    assert files, "no test in tests/bots is marked cgroups"
    return files


def missing() -> str | None:
    """Why the guest cannot run here, or None."""
    for tool in ("qemu-system-x86_64", "mmdebstrap", "mke2fs"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (deploy/setup.sh installs it)"
    try:
        runtime.image_dir()
    except runtime.RuntimeMissing as exc:
        return str(exc)
    return None


def boot_and_test(console: Path) -> str:
    # Bots in boxes made ahead (`box_made`) run on the host; the guest, where every minute
    # counts, runs them in boxes made as they start (the cgroups are the same).
    tests = ["-m", "cgroups", "-k", "not(ahead)", "--durations=20", *cgroup_test_files()]
    return run_guest(guest_image(), tests, console)


# The suite's 300 s per test is too short for an emulated guest on a busy host.
@pytest.mark.timeout(BUILD_SECONDS + 2 * BOOT_SECONDS + 60)
def test_the_sandbox_passes_its_cgroup_tests_on_cgroup_v2(tmp_path: Path) -> None:
    why = missing()
    if why is not None:
        _unavailable(why)
    output = boot_and_test(tmp_path / "console.log")
    booted = re.search(r"GRASS-VM-BOOTED (\S+) (\S+) (\S+)", output)
    assert booted, output[-3000:]
    kernel, filesystem, cgroup = booted.groups()
    # The unified hierarchy only, and the test run as the worker runs: a delegated unit.
    assert filesystem == "cgroup2fs"
    assert cgroup == "0::/system.slice/grass-vm-test.service"
    summary = re.search(r"(\d+) passed", output)
    result = re.search(r"GRASS-VM-RESULT (\S+)", output)
    assert result and result.group(1) == "0", output[-5000:]
    assert summary and int(summary.group(1)) >= 14, output[-3000:]
    assert "failed" not in output.split("GRASS-VM-MOUNTED", 1)[1], output[-5000:]
    print(f"cgroup v2 guest (kernel {kernel}): {summary.group(0)}")
