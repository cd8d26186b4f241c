"""Building a bot at upload: compiled languages are compiled once, in a sandbox, and every match
of that version runs the result.

A build runs in a box of its own, like a bot, with limits for a compiler: 60 s of CPU, three
minutes of wall time, 1 GiB of memory, 64 processes, no network, a writable /build of 512 MiB
(a tmpfs mounted for this build only, so a build cannot fill the host) and the runtime image
as its root. What the compiler printed is kept for the bot's author. A failed build is the
bot's fault (an invalid version), never an infrastructure fault.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bots.runner import home
from bots.runner.botfiles import BotSource
from bots.runner.languages import Language, detect
from bots.runner.sandbox import Box, Limits, SandboxUnavailable

BUILD_CPU_SECONDS = 60
BUILD_WALL_SECONDS = 180
BUILD_STALL_SECONDS = 30
"""A build that uses under STALL_CPU_SECONDS of CPU in this much wall time is waiting, not
building (a compiler on the busiest host still gets more): it is stopped. A build that slept
held a worker for three minutes before this rule."""
STALL_CPU_SECONDS = 0.5
BUILD_LIMITS = Limits(
    memory_mb=1024,
    address_space_mb=4096,
    pids=64,
    cpus=1.0,
    cpu_seconds=BUILD_CPU_SECONDS,
    file_size_mb=256,
    open_files=256,
    scratch_mb=256,
    build_mb=512,
)
LOG_KEEP = 64 * 1024
"""Bytes of compiler output kept for the author (the start: the first errors matter most)."""
ARTIFACT_MAX = 64 << 20
FETCH_SECONDS = 60
PREPARE = 'mkdir -p /build/src /build/out && cp -R /bot/. /build/src/ && cd /build/src && exec "$@"'
"""A build's first step, in the box: a writable copy of the sources (the box's /bot is
read-only), then the build command, in it."""
FETCH = (
    'f="/build/out/$1"; '
    'if [ "$(cd /build/out 2>/dev/null && pwd -P)" = /build/out ] && [ -f "$f" ] && [ ! -h "$f" ]; '
    'then exec cat -- "$f"; fi; exit 3'
)
"""A build's last step, in the box: its artifact, a regular file of the box's own /build/out
(not a link, nor in a linked folder), handed out on stdout; status 3 if there is none. Root
never opens a path a build could have shaped: the bytes come out through a pipe."""


class BuildUnavailable(RuntimeError):
    """The host cannot run a build (not the bot's fault)."""


@dataclass(frozen=True)
class Build:
    """The outcome of building a bot: its language, whether it built, what the compiler
    printed, and the artifact (None for a language that needs no build, or a failed build)."""

    language: str
    ok: bool
    log: str = ""
    artifact: bytes | None = None
    artifact_name: str | None = None
    cpu_seconds: float = 0.0

    def source(self, source: BotSource) -> BotSource:
        """`source` with the artifact staged beside its files, as a match runs it."""
        if self.artifact is None or self.artifact_name is None:
            return source
        return replace(source, files={**source.files, self.artifact_name: self.artifact})


def build(source: BotSource, *, sandboxed: bool = True) -> Build:
    """Build `source` (detect its language; BadBot if it has none). Sandboxed: in a build box
    (BuildUnavailable if the sandbox cannot start); otherwise with this machine's own tools."""
    lang = detect(source.files)
    if not lang.build:
        return Build(lang.name, ok=True)
    if sandboxed:
        return _build_in_box(source, lang)
    return _build_plain(source, lang)


def _build_in_box(source: BotSource, lang: Language) -> Build:
    assert lang.artifact is not None
    command = ("/bin/sh", f"/sandbox/lib/build/{lang.name}.sh")
    return build_in_box(source.files, command, lang.artifact, language=lang.name)


def build_in_box(
    files: dict[str, bytes],
    command: Sequence[str],
    artifact: str,
    *,
    language: str = "custom",
    cpu_seconds: float = BUILD_CPU_SECONDS,
) -> Build:
    """Run `command` in a build box, in a writable copy of `files` (/build/src, with
    GRASS_BUILD=/build), then take `artifact` out of /build/out through a pipe. Everything made
    for it is released on every path; BuildUnavailable when the host cannot run a build."""
    box: Box | None = None
    try:
        box = Box.open(BUILD_LIMITS)
        box.stage(files)
        proc = box.start_build(["/bin/sh", "-c", PREPARE, "prepare", *command], env=ENV)
        log, cpu, why = _collect(proc, box.cpu_ns, cpu_seconds, stop=box.kill_all)
        box.kill_all()  # whatever the build left running, before its output is read
        failure = why or _exit_failure(proc.returncode)
        data = None if failure else _fetch(box, artifact)
        if failure is None and data is None:
            failure = f"the build made no {artifact}"
        elif data is not None and len(data) > ARTIFACT_MAX:
            failure, data = f"{artifact} is over {ARTIFACT_MAX >> 20} MiB", None
        return _result(language, artifact, log, cpu, failure, data)
    except (SandboxUnavailable, OSError) as exc:
        raise BuildUnavailable(f"cannot run the build: {exc}") from None
    finally:
        if box is not None:
            box.destroy()


ENV = (("GRASS_BUILD", "/build"),)


def _stalled(wall: float, cpu: float) -> bool:
    return wall >= BUILD_STALL_SECONDS and cpu < STALL_CPU_SECONDS


def _exit_failure(code: int | None) -> str | None:
    return None if code == 0 else f"the build failed (exit status {code})"


def _fetch(box: Box, artifact: str) -> bytes | None:
    """The artifact's bytes as the box hands them out (at most ARTIFACT_MAX + 1 of them), or
    None if it made none."""
    proc = box.start_build(["/bin/sh", "-c", FETCH, "fetch", artifact], merge=False)
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    data = bytearray()
    deadline = time.monotonic() + FETCH_SECONDS
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while len(data) <= ARTIFACT_MAX and time.monotonic() < deadline:
            if not selector.select(1.0):
                continue
            try:
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                break
            data += chunk
    box.kill_all()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    proc.stdout.close()
    if proc.returncode != 0 and len(data) <= ARTIFACT_MAX:
        return None
    return bytes(data)


def _collect(
    proc: subprocess.Popen[bytes],
    read_cpu: Callable[[], int] | None,
    cpu_limit: float = BUILD_CPU_SECONDS,
    stop: Callable[[], None] | None = None,
) -> tuple[bytes, float, str | None]:
    """The build's output (capped), its CPU seconds, and why it was stopped (None if it
    ended by itself). Stopped: past its CPU, past its wall time, or when it stalls (uses
    under STALL_CPU_SECONDS of CPU in BUILD_STALL_SECONDS), by `stop` (the box program's kill:
    an unprivileged caller may not signal a box's processes), else by killing `proc`."""
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    output = bytearray()
    skipped = 0
    started = time.monotonic()
    progress = [(started, 0.0)]
    why: str | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            cpu = read_cpu() / 1e9 if read_cpu else 0.0
            progress.append((now, cpu))
            while len(progress) > 2 and progress[1][0] <= now - BUILD_STALL_SECONDS:
                progress.pop(0)
            then, cpu_then = progress[0]
            if cpu > cpu_limit:
                why = f"the build used more than {cpu_limit:g} s of CPU"
            elif now - started > BUILD_WALL_SECONDS:
                why = f"the build took more than {BUILD_WALL_SECONDS} s"
            elif read_cpu and _stalled(now - then, cpu - cpu_then):
                why = (
                    f"the build stalled: {cpu - cpu_then:.1f} s of CPU in {now - then:.0f} s "
                    "(a build must not wait; it has no network)"
                )
            if why:
                (stop or proc.kill)()
                break
            if not selector.select(0.5):
                if proc.poll() is not None:
                    break  # it ended; what it left running (holding the pipe) is killed next
                continue
            try:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                break
            room = LOG_KEEP - len(output)
            output += chunk[: max(room, 0)]
            skipped += max(len(chunk) - max(room, 0), 0)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    proc.stdout.close()
    if skipped:
        output += f"\n[... {skipped} more bytes of output omitted ...]\n".encode()
    cpu = read_cpu() / 1e9 if read_cpu else 0.0
    return bytes(output), cpu, why


def _result(
    language: str,
    name: str,
    log: bytes,
    cpu: float,
    failure: str | None,
    artifact: bytes | None,
) -> Build:
    """The Build for a finished build."""
    text = log.decode("utf-8", errors="replace").replace("\x00", "\\x00")
    if failure is not None or artifact is None:
        why = failure or f"the build made no {name}"
        return Build(language, ok=False, log=f"{text}\n{why}".strip(), cpu_seconds=cpu)
    return Build(
        language, ok=True, log=text, artifact=artifact, artifact_name=name, cpu_seconds=cpu
    )


def _build_plain(source: BotSource, lang: Language) -> Build:
    """The same build script with this machine's compilers (`grass match --no-sandbox`): they
    may differ from the ladder's image, which is why the ladder never builds this way."""
    tools = {"cpp": "g++", "rust": "rustc", "java": "javac"}
    if shutil.which(tools[lang.name]) is None:
        raise BuildUnavailable(
            f"{tools[lang.name]} is not installed here; without the sandbox, bots are built "
            "with this machine's own compilers (the ladder's image has them: run with the sandbox)"
        )
    assert lang.artifact is not None
    runtime = home.plain_runtime_dir()
    with tempfile.TemporaryDirectory(prefix="grass-build-") as scratch:
        folder = Path(scratch)
        (folder / "out").mkdir()
        for rel, content in source.files.items():
            (folder / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / "src" / rel).write_bytes(content)
        proc = subprocess.Popen(
            ["/bin/sh", str(runtime / "lib" / "build" / f"{lang.name}.sh")],
            cwd=folder / "src",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GRASS_BUILD": str(folder),
                "HOME": os.environ.get("HOME", str(folder)),  # rustup finds its toolchains there
            },
            start_new_session=True,
        )
        log, cpu, why = _collect(proc, None)
        failure = why or _exit_failure(proc.returncode)
        made = folder / "out" / lang.artifact
        artifact = None
        if failure is None and made.is_file() and not made.is_symlink():
            artifact = made.read_bytes()
        return _result(lang.name, lang.artifact, log, cpu, failure, artifact)
