"""The sandbox boxes a test made itself, to check that each is gone afterwards; and the box
program's pieces a test looks at directly.

Other processes make and leave boxes too while a test runs (the suite's other processes; a
Celery worker killed on purpose leaves its boxes to the next sweep), so a test that checks
the host-wide `home.leftovers()` could blame itself for theirs. Every box claims its id
through `home.claim_box`; `tests/bots/conftest.py` records the claims made during each test
in this process and in the processes it forks (`grass match`'s job processes).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bots.runner import boxctl, home, pool, runtime

_RECORD = Path(tempfile.mkstemp(prefix="grass-test-claims-")[1])
"""The box ids claimed since the current test began, a line each: a file, so that a process
forked during the test (which runs the same recording `claim_box`) adds its own."""
REPO = boxctl.SOURCE.parents[2]


def record_claim(box: int) -> None:
    fd = os.open(_RECORD, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, f"{box}\n".encode())
    finally:
        os.close(fd)


def forget_claims() -> None:
    _RECORD.write_text("")


def claimed() -> set[int]:
    """The box ids claimed since the current test began, by this process or its children."""
    return {int(line) for line in _RECORD.read_text().split()}


def own_leftovers() -> list[int]:
    """The ids of this test's boxes of which something is left (cgroups, code) while no live
    caller holds them: what `home.leftovers()` would list, for this test's boxes only."""
    left = set(home.leftovers())
    return sorted(box for box in claimed() if box in left)


def seccomp_program() -> bytes:
    """The boxes' compiled seccomp filter, as the box program compiles it (Debian's python3
    and python3-seccomp, this checkout's `bots/sandbox`)."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        "from bots.sandbox.seccomp_filter import program; sys.stdout.buffer.write(program())"
    )
    done = subprocess.run(
        [boxctl.PYTHON, "-I", "-S", "-c", code], capture_output=True, check=True, timeout=60
    )
    return done.stdout


@contextlib.contextmanager
def image_without_python() -> Iterator[Path]:
    """This host's runtime image without its Python, where the box program looks for images
    (a root caller's GRASS_RUNTIME_ROOT): a copy made of hard links, so the shared image is
    untouched, and no pack, so boxes bind the folder as it is now. Boxes made ahead on the whole
    image are destroyed first. Yields the copies' root."""
    real = runtime.image_dir()
    root = Path(tempfile.mkdtemp(prefix="broken-images-", dir=real.parent.parent))
    root.chmod(0o755)  # the boxes' uids read the image
    saved = os.environ.get("GRASS_RUNTIME_ROOT"), runtime.ROOT
    try:
        subprocess.run(["cp", "-al", str(real), str(root / real.name)], check=True)
        for python in (root / real.name / "usr" / "bin").glob("python3*"):
            python.unlink()
        pool.POOL.close()
        os.environ["GRASS_RUNTIME_ROOT"] = str(root)
        runtime.ROOT = root
        yield root
    finally:
        pool.POOL.close()
        if saved[0] is None:
            os.environ.pop("GRASS_RUNTIME_ROOT", None)
        else:
            os.environ["GRASS_RUNTIME_ROOT"] = saved[0]
        runtime.ROOT = saved[1]
        shutil.rmtree(root, ignore_errors=True)


def as_worker(code: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run Python `code` as the worker's unprivileged user (`grass`), as a ladder worker runs
    the runner: through the box program's sudo rule, with the installed program this
    checkout's. Fails (not skips) when this checkout cannot be run that way."""
    import pwd
    import sys

    import pytest

    try:
        user = pwd.getpwnam(os.environ.get("GRASS_WORKER_USER", "grass"))
    except KeyError:
        pytest.fail("no worker user: run deploy/setup.sh")
    installed = subprocess.run(
        [boxctl.INSTALLED, "version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if installed != f"version:{boxctl.source_version()}":
        subprocess.run(["bash", str(REPO / "deploy" / "install-box.sh")], check=True)
    prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]
    reachable = subprocess.run(
        [*prefix, "--", "test", "-r", str(REPO / "manage.py"), "-a", "-x", sys.executable],
        check=False,
    )
    if reachable.returncode != 0:
        pytest.fail(
            f"the worker's user cannot run {sys.executable} on {REPO}: make .venv on "
            "/usr/bin/python3 (deploy/setup.sh)"
        )
    return subprocess.run(
        [*prefix, "--", sys.executable, "-c", code],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
