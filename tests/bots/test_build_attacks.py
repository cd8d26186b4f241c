"""Builds that hand back bytes: what an upload's build can do, it does inside its box.

Tried on a site: a C++ upload named a file `x.cpp -wrapper /bin/sh,/build/src/w .cpp`; the build
script expanded `$(find ...)` unquoted, so g++ ran the upload's own script `w` at every stage;
`w` replaced /build/out with a link to a host folder, and the worker, as root, read whatever
file there was called `bot` as the version's artifact: another user's stored binary came back as
the attacker's valid version, and played every match as that program. The same trick read a
root-only file. javac ran annotation processors that came with an upload. Every Cargo.toml
upload failed (cargo could not lock Cargo.lock). A build that slept held a worker 183 s.

Now a file name reaches a compiler as one argument; javac runs with -proc:none; the artifact is
read out of the box by a program inside it, and only as a regular file of the box's own
/build/out; a build that waits is stopped; cargo builds.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.runner import build as builds
from bots.runner.botfiles import BotSource
from bots.runner.build import build, build_in_box

STARTERS = Path(__file__).resolve().parents[2] / "bots" / "starters"
CPP = (STARTERS / "cpp" / "bot.cpp").read_bytes()


@pytest.fixture
def host_secret() -> Iterator[Path]:
    """A root-only folder on the host holding a file named `bot` (mode 0600 in 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="grass-secret-"))
    (folder / "bot").write_bytes(b"SECRET-BINARY-" + os.urandom(8).hex().encode())
    (folder / "bot").chmod(0o600)
    yield folder
    shutil.rmtree(folder)


def test_a_file_name_is_never_a_compiler_option(sandbox_ready: None) -> None:
    wrapper = b'#!/bin/sh\necho WRAPPER-RAN >&2\nexec "$@"\n'
    built = build(
        BotSource(
            "names",
            {
                "bot.cpp": CPP,
                "x.cpp -wrapper /bin/sh,/build/src/w .cpp": b"",
                "w": wrapper,
                "-o.cpp": b"",
            },
        )
    )
    assert "WRAPPER-RAN" not in built.log
    assert built.ok, built.log  # the odd names are compiled as the (empty) sources they are


@pytest.mark.parametrize("target", ["host-folder", "etc", "fifo", "symlinked-file"])
def test_the_artifact_is_a_regular_file_of_the_boxs_own_tree(
    sandbox_ready: None, host_secret: Path, target: str
) -> None:
    """A build that links its output away gets no artifact: the box hands out only a regular
    file of its own /build/out (before, root followed the link on the host)."""
    make = {
        "host-folder": f'rm -rf "$GRASS_BUILD/out"; ln -s {host_secret} "$GRASS_BUILD/out"',
        "etc": 'rm -rf "$GRASS_BUILD/out"; ln -s /etc "$GRASS_BUILD/out"',
        "fifo": 'mkfifo "$GRASS_BUILD/out/bot"',
        "symlinked-file": f'ln -s {host_secret}/bot "$GRASS_BUILD/out/bot"',
    }[target]
    built = build_in_box({"x": b""}, ("/bin/sh", "-c", make), "bot")
    assert not built.ok and built.artifact is None
    assert built.log.endswith("the build made no bot")
    assert b"SECRET" not in (built.artifact or b"") and "SECRET" not in built.log


def test_javac_runs_no_annotation_processor_of_the_upload(sandbox_ready: None) -> None:
    processor = b"""
import java.util.Set;
import javax.annotation.processing.*;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;

@SupportedAnnotationTypes("*")
public class Evil extends AbstractProcessor {
    public synchronized void init(ProcessingEnvironment env) {
        System.err.println("PROCESSOR-RAN");
        super.init(env);
    }
    public boolean process(Set<? extends TypeElement> types, RoundEnvironment round) {
        return false;
    }
    public SourceVersion getSupportedSourceVersion() { return SourceVersion.latestSupported(); }
}
"""
    made = build_in_box(
        {"Evil.java": processor},
        # The build script's own JVM settings: javac's default heap (a quarter of the host's
        # memory) and its parallel collector's threads ran out of the box's 1 GiB on CI.
        (
            "/bin/sh",
            "-c",
            "javac -J-Xmx256m -J-XX:+UseSerialGC -d . Evil.java"
            ' && cp Evil.class "$GRASS_BUILD/out/Evil.class"',
        ),
        "Evil.class",
    )
    assert made.ok and made.artifact is not None, made.log
    built = build(
        BotSource(
            "processor",
            {
                "Bot.java": (STARTERS / "java" / "Bot.java").read_bytes(),
                "Evil.class": made.artifact,
                "META-INF/services/javax.annotation.processing.Processor": b"Evil\n",
            },
        )
    )
    assert built.ok, built.log
    assert "PROCESSOR-RAN" not in built.log


def test_a_cargo_project_builds_offline(sandbox_ready: None) -> None:
    toml = b'[package]\nname = "bot"\nversion = "0.1.0"\nedition = "2021"\n'
    main = (STARTERS / "rust" / "main.rs").read_bytes()
    built = build(BotSource("cargo", {"Cargo.toml": toml, "src/main.rs": main}))
    assert built.ok and built.artifact is not None, built.log
    assert built.artifact[:4] == b"\x7fELF"


def test_a_build_that_waits_is_stopped(
    sandbox_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sleeping costs no CPU, so the CPU limit never stopped it: it held a worker for the
    whole wall limit. A build that makes no progress in BUILD_STALL_SECONDS is stopped."""
    monkeypatch.setattr(builds, "BUILD_STALL_SECONDS", 3)
    built = build_in_box({"x": b""}, ("/bin/sh", "-c", "sleep 600"), "bot")
    assert not built.ok
    assert "the build stalled" in built.log
