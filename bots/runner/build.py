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

BUILD_LIMITS = Limits(
    memory_mb=1024,
    address_space_mb=4096,
    pids=64,
    cpus=1.0,
    cpu_seconds=60,
    file_size_mb=256,
    open_files=256,
    scratch_mb=256,
)
BUILD_CPU_SECONDS = 60
BUILD_WALL_SECONDS = 180
BUILD_SPACE = "512m"
LOG_KEEP = 64 * 1024
"""Bytes of compiler output kept for the author (the start: the first errors matter most)."""
ARTIFACT_MAX = 64 << 20


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
    """Run `command` in a build box, in a writable copy of `files` (/build/src), and take
    `artifact` from /build/out ($GRASS_BUILD/out). Everything made for it is released on
    every path; BuildUnavailable when the host cannot run a build."""
    box: Box | None = None
    folder: Path | None = None
    try:
        box = Box.open(BUILD_LIMITS)
        box.stage(files)
        folder = _mount_build_dir(box.uid)
        _write_sources(folder / "src", files, owner=box.uid)
        proc = box.start_build(command, folder, env=(("GRASS_BUILD", "/build"),))
        log, cpu, why = _collect(proc, box.cpu_ns, cpu_seconds)
        return _result(language, artifact, proc.returncode, log, cpu, why, folder / "out")
    except (SandboxUnavailable, OSError) as exc:
        raise BuildUnavailable(f"cannot run the build: {exc}") from None
    finally:
        if box is not None:
            box.kill_all()
            if folder is not None:
                unmount_build_dir(box.uid)
            box.destroy()


def _mount_build_dir(uid: int) -> Path:
    folder = home.HOME / "builds" / str(uid)
    folder.parent.mkdir(mode=0o711, exist_ok=True)
    unmount_build_dir(uid)
    folder.mkdir(mode=0o700)
    options = f"size={BUILD_SPACE},mode=0700,uid={uid},gid={uid},nosuid,nodev"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "grass-build", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"cannot mount the build folder: {done.stderr.strip()}")
    for sub in ("src", "out"):
        (folder / sub).mkdir()
        os.chown(folder / sub, uid, uid)
    return folder


def unmount_build_dir(uid: int) -> None:
    """Remove the build folder of `uid` (its tmpfs too), whatever a dead build left."""
    folder = home.HOME / "builds" / str(uid)
    if os.path.ismount(folder):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)
    shutil.rmtree(folder, ignore_errors=True)


def _write_sources(target: Path, files: dict[str, bytes], owner: int) -> None:
    for rel, data in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for path in [target, *target.rglob("*")]:
        os.chown(path, owner, owner)


def _collect(
    proc: subprocess.Popen[bytes],
    read_cpu: Callable[[], int] | None,
    cpu_limit: float = BUILD_CPU_SECONDS,
) -> tuple[bytes, float, str | None]:
    """The build's output (capped), its CPU seconds, and why it was stopped (None if it
    ended by itself)."""
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    output = bytearray()
    skipped = 0
    started = time.monotonic()
    why: str | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            cpu = read_cpu() / 1e9 if read_cpu else 0.0
            if cpu > cpu_limit:
                why = f"the build used more than {cpu_limit:g} s of CPU"
            elif time.monotonic() - started > BUILD_WALL_SECONDS:
                why = f"the build took more than {BUILD_WALL_SECONDS} s"
            if why:
                proc.kill()
                break
            if not selector.select(0.5):
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
    if skipped:
        output += f"\n[... {skipped} more bytes of output omitted ...]\n".encode()
    cpu = read_cpu() / 1e9 if read_cpu else 0.0
    return bytes(output), cpu, why


def _result(
    language: str,
    name: str,
    code: int | None,
    log: bytes,
    cpu: float,
    why: str | None,
    out: Path,
) -> Build:
    """The Build for a finished build: `name` from `out` if the build made it."""
    text = log.decode("utf-8", errors="replace").replace("\x00", "\\x00")
    artifact = out / name
    failure = why
    if failure is None and code != 0:
        failure = f"the build failed (exit status {code})"
    elif failure is None and (artifact.is_symlink() or not artifact.is_file()):
        failure = f"the build made no {name}"
    elif failure is None and artifact.stat().st_size > ARTIFACT_MAX:
        failure = f"{name} is over {ARTIFACT_MAX >> 20} MiB"
    if failure is not None:
        return Build(language, ok=False, log=f"{text}\n{failure}".strip(), cpu_seconds=cpu)
    return Build(
        language,
        ok=True,
        log=text,
        artifact=artifact.read_bytes(),
        artifact_name=name,
        cpu_seconds=cpu,
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
    runtime = home.plain_runtime_dir()
    with tempfile.TemporaryDirectory(prefix="grass-build-") as scratch:
        folder = Path(scratch)
        (folder / "out").mkdir()
        _write_sources(folder / "src", source.files, owner=os.getuid())
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
        assert lang.artifact is not None
        return _result(lang.name, lang.artifact, proc.returncode, log, cpu, why, folder / "out")
