"""The caller's end of the box program (`bots/sandbox`, `grass-box`): how to reach it, and its
answers read back.

The program is the only code that runs as root. An unprivileged caller (the Celery worker)
reaches it through the narrow sudo rule that `deploy/install-box.sh` writes: `sudo -n
/usr/local/sbin/grass-box`, a root-owned copy of `bots/sandbox`. A root caller (the test suite,
`grass match` run as root) runs this checkout's copy with Debian's python3 directly.
GRASS_BOX_PROGRAM overrides both (a command line, split like a shell's).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

PYTHON = "/usr/bin/python3"
"""Debian's python3: it runs the box program (and has python3-seccomp)."""
SOURCE = Path(__file__).resolve().parent.parent / "sandbox" / "grassbox.py"
INSTALLED = "/usr/local/sbin/grass-box"
CALL_SECONDS = 60


class BoxProgramError(OSError):
    """The box program refused or failed; the message is its own (one line)."""


def prefix() -> list[str]:
    """The command line that starts the box program, for this process."""
    configured = os.environ.get("GRASS_BOX_PROGRAM")
    if configured:
        return shlex.split(configured)
    if os.geteuid() == 0:
        return [PYTHON, "-I", "-S", "-B", str(SOURCE)]
    return ["sudo", "-n", INSTALLED]


PASSED = ("GRASS_BOX_HOME", "GRASS_RUNTIME_ROOT", "GRASS_CGROUP_PARENT")
"""The box program's settings, passed on from this process's environment (they reach it only
from a root caller: sudo clears an unprivileged caller's environment)."""


def environment() -> dict[str, str]:
    """The box program's environment: a plain PATH and its own settings, nothing else."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    env.update({name: os.environ[name] for name in PASSED if name in os.environ})
    return env


def source_version() -> str:
    """The digest the box program of this checkout gives as its `version`."""
    digest = hashlib.sha256()
    for path in sorted(SOURCE.parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def command(verb: str, *args: str) -> list[str]:
    return [*prefix(), verb, *args]


def call(verb: str, *args: str, stdin: bytes | None = None) -> list[tuple[str, str]]:
    """Run one verb and return its answer's `key:value` lines, in order; BoxProgramError with
    the program's own words when it fails."""
    try:
        done = subprocess.run(
            command(verb, *args),
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=CALL_SECONDS,
            env=environment(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise BoxProgramError(f"cannot run the box program ({' '.join(prefix())}): {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        if "a password is required" in reason or "may not run sudo" in reason:
            reason += " (install the box program's sudo rule: deploy/install-box.sh)"
        raise BoxProgramError(reason.removeprefix("grass-box: "))
    lines = done.stdout.decode(errors="replace").splitlines()
    return [(key, value) for key, _, value in (line.partition(":") for line in lines)]


def facts(verb: str, *args: str, stdin: bytes | None = None) -> dict[str, str]:
    """`call`, with the answer as a dict (its keys are unique)."""
    return dict(call(verb, *args, stdin=stdin))


def run_command(
    box: int,
    *,
    image: str,
    runtime: str,
    limits: Sequence[tuple[str, int]],
    env: Sequence[tuple[str, str]] = (),
    build: bool = False,
    chdir: str | None = None,
    argv: Sequence[str],
) -> list[str]:
    """The command line that runs `argv` in box `box` (the caller starts it: the process it
    holds becomes the box's first)."""
    args = ["--box", str(box), "--image", image, "--runtime", runtime]
    for name, value in limits:
        args += [f"--{name}", str(value)]
    for name, text in env:
        args += ["--env", f"{name}={text}"]
    if build:
        args.append("--build")
    if chdir is not None:
        args += ["--chdir", chdir]
    return command("run", *args, "--", *argv)
