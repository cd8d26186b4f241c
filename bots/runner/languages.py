"""The languages a bot may be written in: how an upload says which, how it is built, how it runs.

The entry file picks the language (or a small manifest, `grass.json` with {"language": ...},
when an upload holds more than one entry file):

- python: `bot.py`; runs on python3 3.11 with NumPy, the engine and the SDK importable.
- javascript: `bot.js`; runs on Node.js 18, the one-file SDK as `require("grass")`.
- cpp: `bot.cpp` (and any other .cpp); built with `g++ -O2 -std=c++17` into `bot`.
- rust: `Cargo.toml` (cargo, offline: no crates) or `main.rs` (rustc -O); built into `bot`.
- java: `Bot.java` (and any other .java); built with javac into `bot.jar`, runs class Bot.
- binary: `bot`, a static x86-64 Linux executable; run as it is.

Everything runs in the runtime image (`bots.runner.runtime`): the same compilers and
interpreters on every worker, and on an author's machine with `grass match`.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from bots.runner.botfiles import BadBot


@dataclass(frozen=True)
class Language:
    name: str
    entries: tuple[str, ...]
    """Files whose presence (at the top of the upload) says the bot is in this language."""
    command: tuple[str, ...]
    """The bot's command inside its box."""
    build: bool = False
    """Built at upload: `bots/runner/buildscripts/<name>.sh` runs in the build box, in the
    sources' folder, and leaves `artifact` in $GRASS_BUILD/out."""
    artifact: str | None = None
    """The file the build leaves in /build/out, staged beside the sources at /bot."""
    env: tuple[tuple[str, str], ...] = ()
    pids: int = 16
    """Processes and threads the box allows: a JVM needs more than a Python bot."""
    address_space_mb: int = 1024
    summary: str = ""


JAVA_FLAGS = (
    # A JVM's defaults reserve more address space and start more threads than a box allows:
    # a small heap, one GC thread, the client compiler only, modest code and class caches.
    "-Xmx160m",
    "-Xss1m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:CICompilerCount=1",
    "-XX:ReservedCodeCacheSize=32m",
    "-XX:MaxMetaspaceSize=64m",
    "-XX:CompressedClassSpaceSize=32m",
    "-XX:-UsePerfData",
)

LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language(
            "python",
            ("bot.py",),
            ("/usr/bin/python3", "-I", "-S", "-B", "/sandbox/launch.py", "/bot", "/sandbox/lib"),
            summary="Python 3.11 with NumPy; the engine and the SDK importable (bots.sdk)",
        ),
        Language(
            "javascript",
            ("bot.js",),
            ("/usr/bin/node", "--max-old-space-size=160", "/bot/bot.js"),
            env=(("NODE_PATH", "/sandbox/lib/js"),),
            summary="Node.js 18; the one-file SDK as require('grass')",
        ),
        Language(
            "cpp",
            ("bot.cpp",),
            ("/bot/bot",),
            build=True,
            artifact="bot",
            summary="C++17 with g++ 12, compiled at upload",
        ),
        Language(
            "rust",
            ("Cargo.toml", "main.rs"),
            ("/bot/bot",),
            build=True,
            artifact="bot",
            summary="Rust 1.63 (rustc, or cargo offline: no crates), compiled at upload",
        ),
        Language(
            "java",
            ("Bot.java",),
            ("/usr/bin/java", *JAVA_FLAGS, "-cp", "/bot/bot.jar", "Bot"),
            build=True,
            artifact="bot.jar",
            pids=48,
            address_space_mb=2048,
            summary="Java 17 (OpenJDK), compiled at upload; class Bot's main",
        ),
        Language(
            "binary",
            ("bot",),
            ("/bot/bot",),
            summary="a static x86-64 Linux executable named bot",
        ),
    )
}
MANIFEST = "grass.json"


def accepted() -> str:
    """What an upload may be, for error messages."""
    return "; ".join(
        f"{lang.name}: {' or '.join(lang.entries)} ({lang.summary})" for lang in LANGUAGES.values()
    )


def detect(files: dict[str, bytes]) -> Language:
    """The bot's language from its files; raises BadBot when it is unknown or ambiguous."""
    if MANIFEST in files:
        try:
            manifest = json.loads(files[MANIFEST])
            name = manifest["language"]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise BadBot(f'{MANIFEST} must be a JSON object like {{"language": "cpp"}}') from None
        if name not in LANGUAGES:
            raise BadBot(f"{MANIFEST}: unknown language {name!r}; known: {', '.join(LANGUAGES)}")
        lang = LANGUAGES[name]
        if not any(entry in files for entry in lang.entries):
            raise BadBot(f"{MANIFEST} says {name}, but there is no {' or '.join(lang.entries)}")
        return lang
    found = [lang for lang in LANGUAGES.values() if any(e in files for e in lang.entries)]
    if len(found) > 1:
        # `bot` is also what a compiled language's build leaves beside its sources: an
        # executable alone is a binary bot; with sources, it is their build.
        found = [lang for lang in found if lang.name != "binary"]
    if not found:
        raise BadBot(f"no entry file at the top of the upload. Accepted: {accepted()}")
    if len(found) > 1:
        names = ", ".join(
            f"{lang.name} ({'/'.join(e for e in lang.entries if e in files)})" for lang in found
        )
        raise BadBot(
            f"more than one language's entry file: {names}. Keep one, or say which in "
            f'{MANIFEST}: {{"language": "..."}}'
        )
    return found[0]


def check_upload(files: dict[str, bytes]) -> Language:
    """`detect`, and what an upload must not be: a file with the name of the build's output
    (the build writes it), a binary that is not static."""
    lang = detect(files)
    if lang.artifact is not None and lang.artifact in files:
        raise BadBot(f"{lang.artifact!r} is the name of the build's output; rename that file")
    if lang.name == "binary":
        check_static_binary(files["bot"])
    return lang


ELF_MAGIC = b"\x7fELF"
PT_LOAD = 1
PT_INTERP = 3
PHENTSIZE = 56
"""The size of a 64-bit program header, the only one Linux accepts."""
MAX_PHNUM = 4096 // PHENTSIZE
"""Linux reads the program headers into one page at most."""


def check_static_binary(data: bytes) -> None:
    """Refuse anything but a statically linked x86-64 Linux ELF executable: a dynamically
    linked one would depend on the libraries of whatever host it was built on."""
    if data[:4] != ELF_MAGIC:
        raise BadBot("bot is not a Linux executable (no ELF header)")
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise BadBot("bot must be a 64-bit little-endian executable")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    if e_machine != 62:
        raise BadBot("bot must be built for x86-64")
    if e_type not in (2, 3):  # EXEC, or DYN (static PIE)
        raise BadBot("bot is not an executable (an object file or a core?)")
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    # What Linux refuses to load with ENOEXEC (fs/binfmt_elf.c): the C library's execvp then
    # runs the file as a shell script, so an ELF header over shell commands would run as a
    # script in one start path and fail in another (a ready box execs from dash, which does
    # not fall back). Refused here, both paths see only loadable executables.
    if phentsize != PHENTSIZE or not 1 <= phnum <= MAX_PHNUM:
        raise BadBot("bot is a damaged executable (no valid program headers)")
    loads = 0
    for index in range(phnum):
        start = phoff + index * phentsize
        if start + max(phentsize, 4) > len(data):
            raise BadBot("bot is a damaged executable (program headers cut short)")
        (p_type,) = struct.unpack_from("<I", data, start)
        loads += p_type == PT_LOAD
        if p_type == PT_INTERP:
            raise BadBot(
                "bot is dynamically linked; link it statically "
                "(gcc -static, or Rust's x86_64-unknown-linux-musl target)"
            )
    if not loads:
        raise BadBot("bot is a damaged executable (nothing to load: no PT_LOAD segment)")
